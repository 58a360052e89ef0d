"""Errors and permissions declared (issue 29, item 3): the API views catch no refusal (one exception
handler answers them, ``annotation/views/refusals.py``), nor do the page views (one form-error path,
``annotation/views/forms.py``, issue 38), check no role by hand (permission classes
declared per view), and no view module imports another view module's private name."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VIEWS = ROOT / "annotation" / "views"

#: ``except`` clauses the API modules keep, by (module, function): why each must stay.
EXCEPT_ALLOWED = {
    ("api_articles.py", "put"): "a save based on old links answers 409 with the current alignment and its ETag, "
                                "which only the view loads (AlignmentConflict)",
    ("mixins.py", "int_param"): "a query parameter's parse error becomes DRF's 400 naming the parameter",
    ("mixins.py", "text_param"): "a query parameter's parse error becomes DRF's 400 naming the parameter",
    ("mixins.py", "date_param"): "a well-formed date that does not exist (2024-02-30) is no date",
    ("forms.py", "page"): "the page views' one form-error path (refuses_with): a refusal re-renders the form",
    ("errors.py", "server_error"): "the page that reports an error must not raise one itself",
}
#: Role checks that refuse by hand: an API view declares a permission class instead.
ROLE_CHECKS = {"can_research", "can_annotate", "role_in"}


def api_modules(views: Path) -> list[Path]:
    """The DRF modules of the views package: ``api_*.py`` and the helpers they share."""
    return sorted([*views.glob("api_*.py"), *(views / name for name in ("mixins.py", "refusals.py")
                                              if (views / name).exists())])


def _functions(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def caught_errors(views: Path) -> list[str]:
    """``module:line function`` for every ``except`` of a view module (API or page) outside
    :data:`EXCEPT_ALLOWED`: the API's refusals are the exception handler's, the pages' the one form-error
    path's (``views/forms.py``, issue 38)."""
    problems = []
    for path in sorted(views.glob("*.py")):
        tree = ast.parse(path.read_text())
        owner = {id(handler): fn.name for fn in _functions(tree) for handler in ast.walk(fn)
                 if isinstance(handler, ast.ExceptHandler)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ExceptHandler):
                function = owner.get(id(node), "<module>")
                if (path.name, function) not in EXCEPT_ALLOWED:
                    problems.append(f"{path.name}:{node.lineno} {function}")
    return problems


def role_checks(views: Path) -> list[str]:
    """``module:line name`` for every call of a role check (:data:`ROLE_CHECKS`) in an API module."""
    problems = []
    for path in api_modules(views):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
                if name in ROLE_CHECKS:
                    problems.append(f"{path.name}:{node.lineno} {name}")
    return problems


def private_view_imports(views: Path) -> list[str]:
    """``module:line name`` for every ``_``-prefixed name a view module takes from another view module:
    ``from .other import _name`` or ``other._name`` after ``from . import other``."""
    modules = {p.stem for p in views.glob("*.py")}
    problems = []
    for path in sorted(views.glob("*.py")):
        tree = ast.parse(path.read_text())
        siblings = set()
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            source = node.module or ""
            if node.level == 1 and not source:  # from . import other
                siblings |= {a.asname or a.name for a in node.names if a.name in modules}
            elif (node.level == 1 and source in modules) or source.startswith("annotation.views."):
                problems += [f"{path.name}:{node.lineno} {a.name}" for a in node.names if a.name.startswith("_")]
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in siblings
                    and node.attr.startswith("_")):
                problems.append(f"{path.name}:{node.lineno} {node.value.id}.{node.attr}")
    return sorted(problems)


def test_the_api_views_catch_no_refusal():
    """The services' errors carry their status and body (``annotation.errors.DomainError``); the one
    exception handler answers them, so an API view catches nothing beyond :data:`EXCEPT_ALLOWED`."""
    assert caught_errors(VIEWS) == []


def test_the_api_views_check_roles_by_declared_permission_classes():
    assert role_checks(VIEWS) == []


def test_no_view_module_imports_another_view_modules_private_name():
    assert private_view_imports(VIEWS) == []


def test_the_view_scans_see_what_they_forbid(tmp_path):
    """The scans are real: the shapes the views had before issue 29 are all reported."""
    (tmp_path / "api_labels.py").write_text(
        "from ..permissions import can_annotate\n"
        "def refused(exc):\n    return exc\n"
        "def create(request, pair):\n"
        "    if not can_annotate(request.user, pair):\n        raise PermissionError\n"
        "    try:\n        pass\n    except ValueError as exc:\n        return refused(exc)\n")
    (tmp_path / "api_articles.py").write_text(
        "def _problem(exc):\n    return exc\n"
        "def get(self):\n    try:\n        pass\n    except ValueError as exc:\n        return _problem(exc)\n")
    (tmp_path / "api_curation.py").write_text("from .api_articles import ArticleView, _problem\n")
    (tmp_path / "training_page.py").write_text("from . import review\nproject = review._researched_project(1, 2)\n")
    (tmp_path / "review.py").write_text("def _researched_project(request, pk):\n    return pk\n")
    (tmp_path / "settings.py").write_text(  # a page view's own try/except/render (before issue 38)
        "def save_qc(request, project):\n    try:\n        pass\n    except ValueError as exc:\n"
        "        return render(request, exc)\n")
    assert caught_errors(tmp_path) == ["api_articles.py:6 get", "api_labels.py:9 create", "settings.py:4 save_qc"]
    assert role_checks(tmp_path) == ["api_labels.py:5 can_annotate"]
    assert private_view_imports(tmp_path) == ["api_curation.py:1 _problem", "training_page.py:2 review._researched_project"]
