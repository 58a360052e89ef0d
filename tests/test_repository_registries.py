"""No name-keyed table outside the registry (issue 38, deliverable 6): everything about a method, a
scoring kind, a label-scheme kind, an import or export format or a job kind is declared in its own
module and registered in the one ``Registry``, so no module keeps a table of them by name.

The rule: no module- or class-level literal of ``annotation/``, ``workers/`` or ``alignapp/`` — a dict,
tuple, list or set, also inside a comprehension or a call — holds two or more registered names of one
registry as its keys or items (a table of ``{"jaccard": …, "tfidf": …}`` or ``("sbert", "muss", …)``).
"""
from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("annotation", "workers", "alignapp")
ALLOWED = {  # (module, the name assigned) → why its names are not a registry's, though spelled alike
    ("workers/engine/similarity.py", "SimilarityName"): "similarity backends (jaccard, tfidf, ...), not methods",
    ("workers/engine/similarity.py", "SIMILARITY_NAMES"): "similarity backends (jaccard, tfidf, ...), not methods",
    ("annotation/services/alignment/paragraph_alignment.py", "LEXICAL"): "the lexical similarity backends",
    ("annotation/services/alignment/paragraph_alignment.py", "measures"): "similarity backends of candidate selection",
    ("annotation/services/audit.py", "ACTIONS"): "audit actions (import, export), not the job kinds of those names",
}


def registered_names() -> dict[str, set[str]]:
    """Every registry's names, by what the registry holds."""
    from annotation import label_schemes
    from annotation.services.alignment.run_options import available_methods
    from annotation.services.background import registry
    from annotation.services.corpus.importing import formats as import_formats
    from annotation.services.export import formats as export_formats
    from annotation.services.scoring import kinds as scoring_kinds

    return {"method": set(available_methods()), "scoring kind": set(scoring_kinds.names()),
            "label-scheme kind": {k.name for k in label_schemes.kinds()},
            "import format": set(import_formats.names()), "export format": set(export_formats.names()),
            "job kind": {kind for kind, _ in registry.jobs()}}


def _literal_names(node: ast.AST) -> list[str]:
    """The string keys of a dict literal, or the string items of a tuple, list or set literal."""
    if isinstance(node, ast.Dict):
        items: Iterable[ast.AST | None] = node.keys
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        items = node.elts
    else:
        return []
    return [item.value for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)]


def _declared_values(tree: ast.Module) -> Iterable[tuple[str, ast.AST]]:
    """``(name, value)`` of the assignments at module level and in class bodies (not inside functions)."""
    bodies = [tree.body, *(node.body for node in ast.walk(tree) if isinstance(node, ast.ClassDef))]
    for body in bodies:
        for statement in body:
            if isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                yield ",".join(t.id for t in targets if isinstance(t, ast.Name)), statement.value


def name_keyed_tables(root: Path, names: dict[str, set[str]], tops: Iterable[str] = PRODUCT) -> list[str]:
    """``path:line`` and what is listed, for every declared literal keyed by (or listing) two or more
    names of one registry."""
    found = []
    for top in tops:
        for path in sorted((root / top).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            shown = path.relative_to(root).as_posix()
            for name, value in _declared_values(tree):
                if (shown, name) in ALLOWED:
                    continue
                for node in ast.walk(value):
                    listed = _literal_names(node)
                    for what, registered in names.items():
                        hits = sorted(set(listed) & registered)
                        if len(hits) >= 2:
                            found.append(f"{shown}:{node.lineno} lists {what}s {', '.join(hits)}")
    return found


@pytest.mark.django_db
def test_no_module_keeps_a_table_keyed_by_registered_names():
    assert name_keyed_tables(ROOT, registered_names()) == []


def test_the_rule_finds_a_table_a_dict_comprehension_over_names_and_a_class_attribute(tmp_path):
    """The check fails on what issue 38 found (run_options.MODEL_KINDS, run_setup.CALIBRATED_OPTIONS, scoring's
    KEYS, background JOBS …), here in a module of their shapes; names once in a function do not count."""
    package = tmp_path / "annotation"
    package.mkdir()
    (package / "tables.py").write_text(
        'KINDS = {"crf": ("crf",), **{m: ("bi-encoder",) for m in ("sbert", "muss")}}\n'
        'ONE = {"wivico": ("threshold",)}\n'
        'class Job:\n    KINDS = ("pivot-select", "access-attributes")\n'
        'def read(project):\n    return {"jaccard": 1, "tfidf": 2}\n')
    names = {"method": {"crf", "sbert", "muss", "wivico", "jaccard", "tfidf"},
             "scoring kind": {"pivot-select", "access-attributes"}}
    assert name_keyed_tables(tmp_path, names, ["annotation"]) == [
        "annotation/tables.py:1 lists methods muss, sbert",
        "annotation/tables.py:4 lists scoring kinds access-attributes, pivot-select",
    ]
