"""One gold reading (issue 34, deliverable 1): only ``review/gold_reading.py`` (with the rule in
``review/gold_rule.py`` and the imported meaning in ``review/exhaustive.py``) gathers votes, completions,
adjudications and imported gold to decide gold; every consumer reads it from there."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

READING = ("annotation/services/review/gold_reading.py", "annotation/services/review/gold_rule.py",
           "annotation/services/review/exhaustive.py",
           # the same evidence as agreement's votes (split from gold_reading.py for its size); decides no gold
           "annotation/services/review/agreement_votes.py",
           # per-article marks of the evidence the reading reads (which stored per-article results are stale);
           # decides no gold
           "annotation/services/review/gold_marks.py")
RULE_PIECES = {"resolve", "vote_gold", "majority_value", "qualifies", "imported_exhaustive", "decide", "rest_of"}
"""The rule and its evidence-gathering pieces: applied outside the reading, they decide gold a second way."""
CONSUMERS = (
    "annotation/services/export/source.py", "annotation/services/export/breakdown.py",
    "annotation/services/export/completeness.py",
    "annotation/services/export/manifest.py", "annotation/services/export/__init__.py",
    "annotation/services/export/preview_parts.py",
    "annotation/services/export/formats", "annotation/services/training/dataset.py",
    "annotation/services/training/run_scores.py", "annotation/services/training/metrics.py",
    "annotation/services/scoring/calibration.py", "annotation/services/editing/curation.py",
    "annotation/services/review/agreement.py", "annotation/services/review/dashboard.py",
    "annotation/services/review/qc.py", "annotation/services/review/adjudication.py",
    "annotation/views", "client",
)
"""Every consumer of gold the issue lists (files, or folders of them)."""
EVIDENCE_MODELS = {"Adjudication", "Label", "ArticleCompletion"}
EVIDENCE_CALLS = {"counted_labels"}
ALLOWED: dict[tuple[str, str], str] = {
    # (module, function): why it reads evidence without deciding gold
    ("annotation/services/export/source.py", "_pair_rows"): "which pairs to list (any evidence), not their value",
    ("annotation/services/export/source.py", "_stored_gold"): "the stored row's reviewer and note, as displayed",
    ("annotation/services/export/source.py", "_votes"): "each vote as displayed in the vote columns",
    ("annotation/services/export/source.py", "_may_have_gold"): "whether a chunk has any evidence to read at all",
    ("annotation/services/training/dataset.py", "sparse_gold"): "counts imported pairs for the refusal message",
    ("annotation/services/scoring/calibration.py", "_labelled"): "which pairs may have gold (pair_gold decides)",
    ("annotation/services/editing/curation.py", "gold_links"): "the stored row's reviewer, as displayed",
    ("annotation/services/editing/curation.py", "_labels"): "one annotator's own labels, not gold",
    ("annotation/services/editing/curation.py", "judgements"): "one annotator's judgements (their links, their "
                                                                "completion's nots), shown beside the gold",
    ("annotation/services/editing/curation.py", "annotators"): "who labelled or completed the document pair",
    ("annotation/services/editing/curation.py", "decide_links"): "the stored value before a write, for the audit",
    ("annotation/services/review/dashboard.py", "label_counts"): "votes per value; Likert ratings gold",
    ("annotation/services/review/dashboard.py", "project_progress"): "how many votes, not gold",
    ("annotation/services/review/dashboard.py", "run_statuses"): "pairs with a vote, not gold",
    ("annotation/services/review/dashboard.py", "annotator_progress"): "each annotator's own labels",
    ("annotation/views/api_labels.py", "get_queryset"): "the user's own labels (the API's label list)",
    ("annotation/views/api_runs.py", "get_queryset"): "runs with the user's labels",
    ("annotation/views/my_labels.py", "my_labels"): "the user's own labels",
    ("annotation/services/review/qc.py", "*"): "defines the counted labels and quality control (reads pair_gold)",
    ("annotation/services/review/adjudication.py", "*"): "writes adjudications; its queue and 'decided' read pair_gold",
}
"""Functions that read evidence for something other than a gold value; ``*``: the whole module."""


def _files(root: Path, entry: str) -> list[Path]:
    path = root / entry
    return sorted(path.rglob("*.py")) if path.is_dir() else [path]


def _functions(tree: ast.AST) -> dict[ast.AST, str]:
    """Each node → the name of the outermost function (or class) it is in ("" at module level)."""
    owner: dict[ast.AST, str] = {}
    for top in getattr(tree, "body", []):
        name = top.name if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else ""
        for node in ast.walk(top):
            owner[node] = name
            if isinstance(node, ast.ClassDef) and node is not top:
                continue
        if isinstance(top, ast.ClassDef):  # a method: its own name
            for item in top.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    for node in ast.walk(item):
                        owner[node] = item.name
    return owner


def gold_deciders(root: Path = ROOT) -> list[str]:
    """``path:line what`` for each place outside the reading that applies the rule's pieces, and each
    place in a consumer that queries votes, completions or adjudications (``Model.objects``, a related
    ``gold__``/``labels__`` lookup, ``counted_labels``) outside :data:`ALLOWED`."""
    problems = []
    for path in sorted((root / "annotation").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel in READING or "/migrations/" in rel:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith(("review.gold_rule",
                                                                                 "review.exhaustive",
                                                                                 "review.gold_reading")):
                for alias in node.names:
                    if alias.name in RULE_PIECES:
                        problems.append(f"{rel}:{node.lineno} imports the rule's piece {alias.name}")
            if isinstance(node, ast.Attribute) and node.attr in RULE_PIECES and isinstance(node.value, ast.Name) \
                    and node.value.id in ("gold_rule", "gold_reading", "exhaustive"):
                problems.append(f"{rel}:{node.lineno} applies {node.value.id}.{node.attr}")
    for entry in CONSUMERS:
        for path in _files(root, entry):
            if not path.exists():
                continue
            rel = path.relative_to(root).as_posix()
            if (rel, "*") in ALLOWED:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            owner = _functions(tree)
            for node in ast.walk(tree):
                what = None
                if isinstance(node, ast.Attribute) and node.attr == "objects" and isinstance(node.value, ast.Name) \
                        and node.value.id in EVIDENCE_MODELS:
                    what = f"{node.value.id}.objects"
                elif isinstance(node, ast.Attribute) and node.attr in EVIDENCE_CALLS:
                    what = node.attr
                elif isinstance(node, ast.keyword) and node.arg and any(
                        node.arg.startswith(p) or f"__{p}" in node.arg for p in ("gold__", "labels__", "completions__")):
                    what = f"lookup {node.arg}"
                if what and (rel, owner.get(node, "")) not in ALLOWED:
                    problems.append(f"{rel}:{getattr(node, 'lineno', 0)} {owner.get(node, '') or '<module>'}: {what}")
    return problems


def test_only_the_gold_reading_gathers_what_decides_gold():
    assert gold_deciders() == []


def test_the_check_catches_a_consumer_that_decides_gold_itself(tmp_path):
    """The check is not vacuous: a consumer that counts votes itself, or applies the rule, is reported."""
    for rel in READING + ("annotation/services/training/run_scores.py",):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "annotation/services/training/run_scores.py").write_text(
        "from annotation.services.review.gold_rule import resolve\n"
        "def gold_pairs(project):\n"
        "    votes = qc.counted_labels(project).filter(pair__gold__isnull=True)\n"
        "    return [resolve(None, v, 'majority') for v in Adjudication.objects.all()]\n")
    found = gold_deciders(tmp_path)
    assert any("imports the rule's piece resolve" in p for p in found)
    assert any("gold_pairs: counted_labels" in p for p in found)
    assert any("gold_pairs: Adjudication.objects" in p for p in found)
    assert any("lookup pair__gold__isnull" in p for p in found)
