"""Rules for a command's input (issue 38): options are declared once with the engine's ``Option`` schema and parsed
once at the edge into a request object, so

* no validator lives outside the schema: no function named like the old hand validators (``validate``,
  ``check_options``, ``_number``) and no function that checks a number by hand (``isinstance(v, bool)`` beside
  ``isinstance(v, (int, float))``) and raises — a declared ``Option`` (its type, range, ``clean``) does that;
* no service function takes more than six parameters: options travel as one request object, not by name through
  every signature.

Each rule has an explicit allow-list ``{qualified name: reason}``; the scans are run on the old code's shapes below
to show they catch them.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: where options are declared and checked: the one place a hand check of a value's type belongs
SCHEMA_MODULES = ("workers/engine/options.py",)
VALIDATOR_NAMES = ("validate", "check_options", "_number")
#: hand checks of a value that are not an option's check (each says whose input it reads)
VALIDATORS_ALLOWED = {
    "annotation/label_schemes/likert.py:_point": "a label's rating, checked by the scheme kind (label input)",
    "annotation/services/editing/own_links.py:checked_seconds": "a label's time (label input)",
    "annotation/services/editing/curation.py:_parse": "a curation decision's links (label input's part of issue 38)",
    "annotation/services/editing/paragraph_correction.py:parse_paragraph_links": "a list of paragraph links",
    "annotation/services/export/splits.py:validate_policy": "a split policy's ratio/counts, the export's "
        "split_policy option's clean",
    "annotation/services/review/label_input.py:clean_seconds": "a label's time (label input)",
    "workers/engine/io.py:parse_alignment": "a JSONL record of the engine's contract (SPEC §4), not an option",
    # the scoring request object is another part of issue 38 (its engineer removes these)
    "annotation/services/scoring/jobs.py:validate": "scoring's part of issue 38",
    "annotation/services/scoring/jobs.py:_number": "scoring's part of issue 38",
}
MAX_PARAMETERS = 6
#: service functions over six parameters, each with why its parameters are not one request object
PARAMETERS_ALLOWED = {
    "annotation/services/editing/article_alignment.py:save_links": "label input's part of issue 38",
    "annotation/services/review/label_input.py:parse": "label input's part of issue 38",
    "annotation/services/review/queue_progress.py:estimate": "counts of one queue state, all keyword-only numbers",
    "annotation/services/review/queue_progress.py:progress_of": "a queue state's parts, loaded once by the caller",
    "annotation/services/export/formats/tsv.py:row": "one output row's cells (the wiki-manual TSV's columns)",
    "annotation/services/export/hf_articles.py:article_row": "one output row's columns",
    "annotation/services/export/__init__.py:run_export": "the options are one ExportOptions; the rest are the "
        "caller's knobs (row, user, progress, archive, visibility, chunk size)",
    "annotation/services/settings/project_settings.py:update_general": "the general settings form's fields",
    "annotation/services/editing/curation.py:decide_links": "curation's decision (label input's part)",
    "annotation/services/corpus/importing/hf_layouts.py:id_pair_articles": "a dataset's columns, read once",
    "annotation/services/corpus/importing/formats/wiki_manual.py:sentence": "one TSV row's cells",
    "annotation/services/corpus/importing/formats/wiki_manual.py:add": "one TSV row's cells",
    "annotation/services/corpus/importing/formats/__init__.py:register": "a format's declaration (the registry's "
        "keywords)",
    "annotation/services/export/formats/__init__.py:register": "a format's declaration (the registry's keywords)",
    "annotation/services/alignment/alignment_runs.py:start_run": "the run request is the registries' part of 38",
    "annotation/services/alignment/mining.py:mine_paraphrases": "mining's part of issue 38",
    "annotation/services/review/gold_reading.py:_read": "the one reading of gold: its inputs, loaded once",
    "annotation/services/projects/creation.py:create_project": "the new-project form's fields",
}


def _functions(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _isinstance_of(node: ast.AST, kinds: tuple[str, ...]) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
            and len(node.args) == 2 and ast.unparse(node.args[1]) in kinds)


def checks_a_number_by_hand(func: ast.AST) -> bool:
    """``isinstance(v, bool)`` beside ``isinstance(v, (int, float))`` and a ``raise``: a hand-written option check."""
    nodes = list(ast.walk(func))
    return (any(isinstance(n, ast.Raise) for n in nodes) and any(_isinstance_of(n, ("bool",)) for n in nodes)
            and any(_isinstance_of(n, ("(int, float)", "(float, int)", "int", "float")) for n in nodes))


def validator_problems(root: Path, folders: tuple[str, ...] = ("annotation", "workers"),
                       allowed: dict[str, str] | None = None) -> list[str]:
    allowed = VALIDATORS_ALLOWED if allowed is None else allowed
    found = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel in SCHEMA_MODULES or "/migrations/" in rel:
                continue
            for func in _functions(path):
                name = f"{rel}:{func.name}"
                is_method = func.args.args and func.args.args[0].arg in ("self", "cls")
                named = func.name in VALIDATOR_NAMES and not is_method  # a scheme kind's validate(label) is its own
                if (named or checks_a_number_by_hand(func)) and name not in allowed:
                    found.append(name)
    return found


def parameter_count(func: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = func.args
    names = [x.arg for x in a.posonlyargs + a.args]
    count = len(names) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)
    return count - (1 if names and names[0] in ("self", "cls") else 0)


def parameter_problems(root: Path, folder: str = "annotation/services",
                       allowed: dict[str, str] | None = None) -> list[str]:
    allowed = PARAMETERS_ALLOWED if allowed is None else allowed
    found = []
    for path in sorted((root / folder).rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for func in _functions(path):
            n = parameter_count(func)
            if n > MAX_PARAMETERS and f"{rel}:{func.name}" not in allowed:
                found.append(f"{rel}:{func.name} ({n} parameters)")
    return found


def test_no_option_validator_outside_the_option_schema():
    assert validator_problems(ROOT) == []


def test_no_service_function_takes_more_than_six_parameters_without_a_reason():
    assert parameter_problems(ROOT) == []


def _others(allowed: dict[str, str]) -> set[str]:
    """Entries left to another part of issue 38 (they may go when that part is merged)."""
    return {k for k, why in allowed.items() if "part of issue 38" in why or "'s part" in why}


def test_the_allow_lists_name_only_functions_that_exist_and_need_it():
    """An entry whose function went (or shrank) is removed, so the lists only shrink."""
    flagged = set(validator_problems(ROOT, allowed={}))
    assert {k for k in VALIDATORS_ALLOWED if k not in flagged} <= _others(VALIDATORS_ALLOWED)
    over = {p.split(" (")[0] for p in parameter_problems(ROOT, allowed={})}
    assert {k for k in PARAMETERS_ALLOWED if k not in over} <= _others(PARAMETERS_ALLOWED)


OLD_QC = '''
def _number(config: dict, name: str, kind: type, low: float, high: float | None) -> int | float:
    raw = config.get(name, DEFAULTS[name])
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or (kind is int and raw != int(raw)):
        raise ValueError(f"project config qc.{name} must be a number, got {raw!r}")
    return kind(raw)


def validate(config: dict | None) -> QcConfig:
    return QcConfig(overlap=_number(config, "overlap", int, 1, MAX_OVERLAP))
'''
OLD_EXPORT = '''
def _bleu_band(band) -> list[float]:
    if not (isinstance(band, list) and all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in band)):
        raise ExportError("bleu_band must be [low, high]")
    return [float(band[0]), float(band[1])]
'''
OLD_IMPORT = '''
def check_options(fmt="auto", *, language=None, on_conflict="error", gold_meaning="sparse") -> None:
    pass


def import_inputs(project, files, fmt="auto", *, language=None, source="", on_conflict="error",
                  gold_meaning="sparse", test_questions=False, actor=None, progress=None, checkpoint=None,
                  token=None, columns=None):
    pass
'''


def test_the_rules_catch_the_old_hand_validators_and_long_signatures(tmp_path):
    services = tmp_path / "annotation" / "services"
    services.mkdir(parents=True)
    (services / "qc.py").write_text(OLD_QC)
    (services / "options.py").write_text(OLD_EXPORT)
    (services / "importing.py").write_text(OLD_IMPORT)
    assert validator_problems(tmp_path, ("annotation",)) == [
        "annotation/services/importing.py:check_options", "annotation/services/options.py:_bleu_band",
        "annotation/services/qc.py:_number", "annotation/services/qc.py:validate"]
    assert parameter_problems(tmp_path) == ["annotation/services/importing.py:import_inputs (13 parameters)"]
