"""One label gate (issue 17, deliverable 1): only ``review/labelling.py`` writes Label and LabelChange rows."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# --- issue 17, deliverable 1: one label gate ------------------------------------------------------

GATE_MODULES = ("annotation/services/review/labelling.py",)
GATE_MODELS = {"Label", "LabelChange"}
GATE_RELATED = {"labels", "label_changes", "history"}  # related managers of Label / LabelChange rows
GATE_WRITES = {"create", "bulk_create", "update", "bulk_update", "update_or_create", "get_or_create", "delete",
               "save", "_do_insert", "_do_update"}
GATE_PIECES = {"insert_label", "store_existing", "record_change", "apply_change", "store", "mark_done"}


def gate_label_writes(root: Path) -> list[str]:
    """``path:line what`` for every place under ``root`` (the ``annotation`` package, migrations left
    out) outside the gate that writes Label / LabelChange rows, or reaches into the gate's pieces.

    Writes: constructing ``Label(...)`` / ``LabelChange(...)``; a write method (create, update,
    delete, save, ...) on a chain rooted at either model (``Label.objects.filter(...).update()``), at a
    related manager (``pair.labels.all().delete()``), or at a name bound to such a chain, a label
    parameter (``label: Label``) or named ``label``/``labels``/``*_label(s)``. Pieces: the gate's
    internals (``labelling._insert_label``, ``store_existing``...), by attribute or import."""
    import ast

    def root_of(node):
        while True:
            if isinstance(node, ast.Call):
                node = node.func
            elif isinstance(node, (ast.Attribute, ast.Subscript)):
                if isinstance(node, ast.Attribute) and node.attr in GATE_RELATED:
                    return "related:" + node.attr
                node = node.value
            else:
                return node.id if isinstance(node, ast.Name) else None

    def labelish(name: str | None) -> bool:
        return bool(name) and (name in GATE_MODELS or name in ("label", "labels") or name.endswith(("_label", "_labels"))
                               or name.startswith("related:"))

    problems = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        if "/migrations/" in rel or rel in GATE_MODULES or rel.startswith("annotation/models"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        bound: set[str] = set()
        for _ in range(2):  # names bound to label rows or querysets (per module: pragmatic, not per scope)
            for node in ast.walk(tree):
                if isinstance(node, (ast.For, ast.comprehension)):
                    value, targets = node.iter, [node.target]
                elif isinstance(node, ast.Assign):
                    value, targets = node.value, node.targets
                elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                    value, targets = node.value, [node.target]
                elif isinstance(node, ast.arg) and node.annotation is not None:
                    if {n.id for n in ast.walk(node.annotation) if isinstance(n, ast.Name)} & GATE_MODELS:
                        bound.add(node.arg)
                    continue
                else:
                    continue
                origin = root_of(value) or ""
                if origin in bound or origin in GATE_MODELS or origin.startswith("related:"):
                    bound.update(t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name))
        for node in ast.walk(tree):
            where = f"{rel}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
                if name in GATE_MODELS:
                    problems.append(f"{where} constructs {name}")
                elif isinstance(func, ast.Attribute) and func.attr in GATE_WRITES:
                    origin = root_of(func.value)
                    if origin in bound or labelish(origin):
                        problems.append(f"{where} .{func.attr}() on {origin}")
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "labelling" \
                    and node.attr.lstrip("_") in GATE_PIECES | {n.lstrip("_") for n in GATE_PIECES}:
                problems.append(f"{where} uses the gate's piece labelling.{node.attr}")
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "labelling" \
                    and node.attr.startswith("_"):
                problems.append(f"{where} uses the gate's private labelling.{node.attr}")
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("labelling"):
                for alias in node.names:
                    if alias.name.startswith("_") or alias.name in GATE_PIECES:
                        problems.append(f"{where} imports the gate's piece {alias.name}")
    return sorted(set(problems))


def test_only_the_label_gate_writes_label_rows():
    """Issue 17: ``services/review/labelling.py`` is the one writer of Label and LabelChange rows;
    the queue, the views, undo, My labels and the whole-article view all call it."""
    assert gate_label_writes(ROOT / "annotation") == []


def test_the_label_gate_scan_sees_a_write_outside_the_gate(tmp_path):
    """The scan is real: the queue as it was before the gate (it stored labels from the gate's pieces)
    and a few direct writes are all reported."""
    package = tmp_path / "annotation"
    package.mkdir()
    (package / "writer.py").write_text(
        "from annotation.models import Label, LabelChange\n"
        "from annotation.services.review import labelling\n"
        "def f(user, pair, fields, old: Label, token):\n"
        "    Label(pair=pair, annotator=user).save()\n"
        "    LabelChange.objects.create(pair=pair)\n"
        "    qs = Label.objects.filter(pair=pair)\n"
        "    qs.update(value='x')\n"
        "    pair.labels.all().delete()\n"
        "    old.delete()\n"
        "    label = labelling.insert_label(user, pair.pk, fields, token)\n"
        "    labelling.store_existing(user, pair.pk, fields, token)\n")
    found = gate_label_writes(package)
    assert [p.split(" ", 1)[0].rsplit(":", 1)[1] for p in found] == ["10", "11", "4", "4", "5", "7", "8", "9"], found


# --- issue 29, item 2: a label's inputs and its annotator once ---------------------------------------

LABEL_PATH = ("annotation/services/review/labelling.py", "annotation/services/review/queue.py",
              "annotation/services/review/label_input.py", "annotation/services/review/annotator.py",
              "annotation/services/editing/article_alignment.py", "annotation/views/api_queue.py",
              "annotation/views/api_labels.py", "annotation/views/annotate.py")
LABEL_SERIALIZERS = ("annotation/views/api_queue.py", "annotation/views/api_labels.py", "annotation/serializers.py")
GATE_AND_QUEUE = ("annotation/services/review/labelling.py", "annotation/services/review/queue.py")
MAX_LABEL_PATH_PARAMETERS = 6  # before issue 29: submit_and_next took 13, submit_served 12, _submit 11, checked_fields 9
# a label's text, once (the list's query filters: mixins.text_param)
CLEAN_TEXT_CALLERS = {("label_input.py", "from_data")}


def label_path_problems(root: Path) -> list[str]:
    """``path:line what`` for each place of the label path (:data:`LABEL_PATH` under ``root``) that
    checks an input or loads the annotator a second time: the ``NOT_LOADED`` sentinel or an
    ``exclusion`` parameter (the annotator context carries it), a function with more than
    :data:`MAX_LABEL_PATH_PARAMETERS` parameters in the gate or the queue, a call of ``clean_text``
    other than the one in ``LabelInput.from_data`` (and the list's query filters), a look-up of the exclusion
    or the QC settings (``qc.exclusion_reason`` /
    ``qc.qc_config`` / ``qc.ensure_not_excluded``) outside the context's module, and a label
    serializer's ``value`` / ``comment`` field with its own ``max_length`` (the scheme's limits hold)."""
    import ast

    problems = []
    for rel in LABEL_PATH:
        path = root / rel
        if not path.exists():
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            where = f"{rel}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Name) and node.id == "NOT_LOADED" or \
                    isinstance(node, ast.Attribute) and node.attr == "NOT_LOADED":
                problems.append(f"{where} NOT_LOADED sentinel")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and rel in GATE_AND_QUEUE:
                params = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                          if a.arg not in ("self", "cls")]
                if len(params) > MAX_LABEL_PATH_PARAMETERS:
                    problems.append(f"{where} {node.name} takes {len(params)} parameters")
                if "exclusion" in params:
                    problems.append(f"{where} {node.name} takes the exclusion apart from the annotator context")
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                owner = parents.get(node)
                while owner is not None and not isinstance(owner, ast.FunctionDef):
                    owner = parents.get(owner)
                if name == "clean_text" and (rel.rsplit("/", 1)[1], getattr(owner, "name", "")) not in CLEAN_TEXT_CALLERS:
                    problems.append(f"{where} clean_text outside LabelInput.from_data")
                if name in ("exclusion_reason", "qc_config", "ensure_not_excluded") and not rel.endswith("annotator.py") \
                        and isinstance(func, ast.Attribute):
                    problems.append(f"{where} qc.{name} outside the annotator context")
    for rel in LABEL_SERIALIZERS:
        path = root / rel
        if not path.exists():
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and "Label" in n.name or
                    isinstance(n, ast.ClassDef) and n.name == "SubmitInput"):
            for stmt in cls.body:
                if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) \
                        and any(isinstance(t, ast.Name) and t.id in ("value", "comment") for t in stmt.targets) \
                        and any(k.arg == "max_length" for k in stmt.value.keywords):
                    problems.append(f"{rel}:{stmt.lineno} {cls.name} limits a label's text itself")
    return sorted(problems)


def test_a_labels_input_is_checked_once_and_its_annotator_loaded_once():
    """Issue 29, item 2: the views build a ``LabelInput`` (the scheme's limits) and an ``Annotator``
    context once; the gate and the queue take those, with no sentinel and no long signatures."""
    assert label_path_problems(ROOT) == []


def test_the_label_path_scan_sees_the_old_ways(tmp_path):
    """The scan is real: the label path as it was before issue 29 is reported."""
    review = tmp_path / "annotation" / "services" / "review"
    views = tmp_path / "annotation" / "views"
    review.mkdir(parents=True)
    views.mkdir(parents=True)
    (review / "labelling.py").write_text(
        "def checked_fields(user, project, *, value, ratings, comment, seconds, assignment, exclusion=qc.NOT_LOADED,\n"
        "                   source=QUEUE):\n"
        "    value = clean_text('value', value, 50)\n"
        "    qc.check_seconds(qc.qc_config(project), seconds, assignment)\n")
    (views / "api_queue.py").write_text(
        "class SubmitInput(serializers.Serializer):\n"
        "    value = serializers.CharField(max_length=50)\n")
    found = label_path_problems(tmp_path)
    assert sorted(p.split(" ", 1)[1] for p in found) == sorted([
        "checked_fields takes 9 parameters", "checked_fields takes the exclusion apart from the annotator context",
        "NOT_LOADED sentinel", "clean_text outside LabelInput.from_data", "qc.qc_config outside the annotator context",
        "SubmitInput limits a label's text itself"]), found
