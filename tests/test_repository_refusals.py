"""Rules for refusals (issue 38): a service refuses a user's request with a :class:`~annotation.errors.DomainError`
that carries its own status and machine code, and the API's one exception handler answers it, so

* no view declares that a plain exception is a refusal (``Refusals(plain=ValueError)``, ``@refuses(plain=...)``):
  a plain ``ValueError`` reaching a view is a bug, a 500;
* no service raises a bare ``ValueError``, except inside an ``Option``'s ``clean`` (the schema turns its message
  into the option's located refusal: that is the contract of ``clean``) and in the allow-list below, each with why
  it is no refusal of a user's request (a programming error, an impossible state).

The scans are run on the old code's shapes below to show they catch them.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: ``raise ValueError`` in services that is no refusal of a user's request, each with why (the code says so too)
RAISES_ALLOWED = {
    "annotation/services/audit.py:record": "a programming error: the callers name a constant action",
    "annotation/services/review/agreement.py:cohen_kappa": "a programming error: the callers pair the items up and "
        "pass a constant weighting",
    "annotation/services/review/gold_rule.py:_check": "a programming error: a gold policy is a declared choice of "
        "an option before it gets here",
    "annotation/services/corpus/importing/formats/__init__.py:wrap": "a programming error at import: two format "
        "modules claim one name or extension",
}


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def clean_functions(tree: ast.Module) -> set[ast.AST]:
    """The functions of a module that are an ``Option``'s ``clean``: those named in a ``clean=`` argument (directly,
    or a factory called there and the functions it defines), and those they call in the same module."""
    functions: dict[str, list[ast.AST]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.setdefault(node.name, []).append(node)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "clean":
                    names |= _names_in(kw.value)
    clean: set[ast.AST] = set()
    todo = [f for name in names for f in functions.get(name, ())]
    while todo:
        func = todo.pop()
        if func in clean:
            continue
        clean.add(func)
        inner = [n for n in ast.walk(func) if n is not func and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        called = {n.func.id for n in ast.walk(func) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        todo += inner + [f for name in called for f in functions.get(name, ())]
    return clean


def _raises_value_error(node: ast.AST) -> bool:
    if not isinstance(node, ast.Raise) or node.exc is None:
        return False
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    return isinstance(exc, ast.Name) and exc.id == "ValueError"


def value_error_raises(root: Path, folder: str = "annotation/services",
                       allowed: dict[str, str] | None = None) -> list[str]:
    """``path:function:line`` of each ``raise ValueError`` outside a ``clean`` function and the allow-list."""
    allowed = RAISES_ALLOWED if allowed is None else allowed
    found = []
    for path in sorted((root / folder).rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        clean = clean_functions(tree)
        allowed_here = set()
        enclosing: dict[ast.AST, ast.AST] = {}
        for func in ast.walk(tree):
            if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for n in ast.walk(func):
                    enclosing[n] = func  # the innermost function wins (ast.walk is breadth-first)
                if func in clean or f"{rel}:{func.name}" in allowed:
                    allowed_here |= set(ast.walk(func))
        for node in ast.walk(tree):
            if _raises_value_error(node) and node not in allowed_here:
                func = enclosing.get(node)
                found.append(f"{rel}:{func.name if func else '<module>'}:{node.lineno}")
    return sorted(found)


def plain_refusals(root: Path, folders: tuple[str, ...] = ("annotation", "alignapp", "workers")) -> list[str]:
    """``path:line`` of each call with a ``plain=`` argument naming an exception class (the old ``Refusals(plain=
    ValueError)``)."""
    found = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and any(kw.arg == "plain" and "Error" in ast.unparse(kw.value)
                                                      for kw in node.keywords):
                    found.append(f"{rel}:{node.lineno}")
    return found


def test_no_view_declares_a_plain_exception_a_refusal():
    assert plain_refusals(ROOT) == []


def test_services_raise_no_bare_value_error_outside_option_cleans_and_the_allow_list():
    assert value_error_raises(ROOT) == []


def test_the_allow_list_names_only_functions_that_still_raise_one():
    """An entry whose raise went is removed, so the list only shrinks."""
    flagged = {p.rsplit(":", 1)[0] for p in value_error_raises(ROOT, allowed={})}
    assert set(RAISES_ALLOWED) <= flagged


OLD_VIEWS = '''
class LabelViewSet(viewsets.ModelViewSet):
    refusals = Refusals(plain=ValueError, code="invalid")


class JobViewSet(viewsets.ModelViewSet):
    @refuses(plain=ValueError)
    def retry(self, request, pk=None):
        pass
'''
OLD_SERVICES = '''
def start_run(project, method):
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}")


def _ids(value):
    if not isinstance(value, list):
        raise ValueError("must be a list of ids")
    return value


def _model_version(value):
    return _ids(value)[0]


def _names(valid):
    def clean(value):
        if value not in valid:
            raise ValueError("unknown")
        return value
    return clean


OPTIONS = (Option("runs", "json", clean=_ids), Option("model_version", "json", clean=_model_version),
           Option("splits", "json", clean=_names(("train", "test"))))
'''


def test_the_rules_catch_the_old_plain_refusals_and_a_services_value_error(tmp_path):
    views = tmp_path / "annotation" / "views"
    services = tmp_path / "annotation" / "services"
    views.mkdir(parents=True)
    services.mkdir(parents=True)
    (views / "api_labels.py").write_text(OLD_VIEWS)
    (services / "runs.py").write_text(OLD_SERVICES)
    assert plain_refusals(tmp_path, ("annotation",)) == ["annotation/views/api_labels.py:3",
                                                         "annotation/views/api_labels.py:7"]
    assert value_error_raises(tmp_path, allowed={}) == ["annotation/services/runs.py:start_run:4"]
