"""A test module for each service module that has logic (issue 38, item 5): tests mirror the code's layout,
so ``annotation/services/<area>/<module>.py`` is tested in ``tests/annotation/services/<area>/test_<module>.py``
(a package's ``__init__.py``: ``tests/…/<package>/test_<package>.py``). A module without a ``def`` (constants,
re-exports) has no logic to test.

:data:`BACKLOG` lists the modules with logic still without their own test module, each with where its
behaviour is tested today. It only shrinks: a module of it that gets its test module must leave the list
(the test says so), and a new module must come with its test module.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVICES = "annotation/services"

BACKLOG: dict[str, str] = {
    # module (under annotation/services) → where it is tested today
    "alignment/pair_filters.py": "through the run and pairs list views (tests/annotation/views)",
    "alignment/paragraph_alignment.py": "editing/test_paragraph_correction.py, browser tests",
    "alignment/run_deletion.py": "test_audit.py, views/test_runs*",
    "alignment/run_options.py": "alignment/test_mining.py, settings/test_config_schema.py, training/test_metrics.py",
    "background/dispatch.py": "workers/ integration tests (a real worker receives what it sends)",
    "background/jobs.py": "alignment/test_alignment_runs.py, test_mining.py, test_run_chunks.py",
    "background/registry.py": "workers/test_queues.py, test_repository.py",
    "corpus/corpus_stats.py": "commands/test_corpus_stats*",
    "corpus/demo.py": "review/test_queue_pair_identity.py, browser tests",
    "corpus/importing/__init__.py": "corpus/importing/**/test_*.py (34 files use it)",
    "corpus/importing/base.py": "corpus/importing/formats/test_formats.py, importing/test_limits.py",
    "corpus/importing/dataset_files.py": "corpus/importing/test_hf_layouts.py",
    "corpus/importing/formats/hf.py": "corpus/importing/test_hf_layouts.py, test_importing_newsela_hf.py",
    "corpus/importing/formats/newsela.py": "corpus/test_importing_newsela_hf.py",
    "corpus/importing/recovery.py": "views/test_import_crash_safety.py",
    "corpus/importing/uploads.py": "views/test_api_import.py, test_api_import_shapes.py",
    "corpus/importing/wiki_manual_sidecar.py": "corpus/importing/formats/test_wiki_manual.py",
    "corpus/importing/writer.py": "corpus/importing/**/test_*.py (every import writes)",
    "editing/workflow.py": "editing/test_curation.py, views/test_articles*",
    "export/__init__.py": "export/test_round_trip*.py, test_formats.py (19 files use it)",
    "export/breakdown.py": "export/test_surfaces.py (the preview)",
    "export/formats/__init__.py": "export/test_export_registry.py",
    "export/formats/articles.py": "export/test_formats.py",
    "export/formats/base.py": "export/test_export_registry.py",
    "export/formats/hf.py": "export/test_formats.py, test_datasets_loading.py",
    "export/formats/jsonl.py": "export/test_formats.py",
    "export/formats/parallel.py": "export/test_formats.py",
    "export/formats/tsv.py": "export/test_formats.py, test_round_trip.py",
    "export/options.py": "export/test_pseudonymity.py, views/test_export*",
    "export/records.py": "export/test_derived.py, test_grouping.py",
    "export/spreadsheet.py": "export/test_formats.py",
    "scoring/kinds/access.py": "scoring/test_jobs.py, scoring/kinds/test_kinds.py",
    "scoring/common.py": "scoring/test_jobs.py, review/test_gold_rule.py",
    "scoring/kinds/gain.py": "scoring/test_jobs.py, scoring/kinds/test_kinds.py",
    "scoring/kinds/pivot.py": "scoring/test_jobs.py, scoring/kinds/test_kinds.py",
    "scoring/kinds/sum4simp.py": "scoring/test_jobs.py, scoring/kinds/test_kinds.py",
    "scoring/kinds/wivico.py": "scoring/test_jobs.py, scoring/kinds/test_kinds.py",
    "training/dataset.py": "training/test_training.py, review/test_gold_reading.py",
    "training/versions.py": "training/test_training.py, test_metrics.py",
}
"""Modules with logic and no test module of their own yet, with where they are tested today."""


def mirror_test(module: Path, root: Path = ROOT) -> Path | None:
    """The test module that mirrors ``module`` (None for ``annotation/services/__init__.py``)."""
    rel = module.relative_to(root / SERVICES)
    if module.name == "__init__.py":
        if rel.parent == Path("."):
            return None
        return root / "tests" / SERVICES / rel.parent / f"test_{rel.parent.name}.py"
    return root / "tests" / SERVICES / rel.parent / f"test_{module.stem}.py"


def has_logic(module: Path) -> bool:
    """Whether the module defines a function or a method (constants and re-exports have nothing to test)."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) for node in ast.walk(tree))


def untested(root: Path = ROOT, backlog: dict[str, str] = BACKLOG) -> list[str]:
    """Each service module with logic and no test module outside ``backlog``, and each ``backlog`` entry that
    has its test module now (or is gone): both must change the list."""
    problems = []
    for module in sorted((root / SERVICES).rglob("*.py")):
        rel = module.relative_to(root / SERVICES).as_posix()
        expected = mirror_test(module, root)
        if expected is None or not has_logic(module):
            continue
        if expected.exists() and rel in backlog:
            problems.append(f"{rel} has {expected.relative_to(root)} now: take it off BACKLOG")
        elif not expected.exists() and rel not in backlog:
            problems.append(f"{rel} has logic and no test module {expected.relative_to(root)}")
    for rel in backlog:
        if not (root / SERVICES / rel).exists():
            problems.append(f"{rel} is on BACKLOG but no longer exists")
    return problems


def test_every_service_module_with_logic_has_its_test_module():
    assert untested() == []


def test_the_check_sees_a_module_without_tests_and_a_stale_backlog(tmp_path):
    services = tmp_path / SERVICES
    (services / "review").mkdir(parents=True)
    (services / "__init__.py").write_text("")
    (services / "review" / "__init__.py").write_text("from .queue import next_item\n")  # no logic
    (services / "review" / "queue.py").write_text("def next_item():\n    return None\n")
    (services / "review" / "rule.py").write_text("def decide():\n    return 1\n")
    (services / "review" / "constants.py").write_text("LIMIT = 3\n")
    tests = tmp_path / "tests" / SERVICES / "review"
    tests.mkdir(parents=True)
    (tests / "test_rule.py").write_text("")
    assert untested(tmp_path, {"review/rule.py": "somewhere", "review/gone.py": "x"}) == [
        "review/queue.py has logic and no test module tests/annotation/services/review/test_queue.py",
        "review/rule.py has tests/annotation/services/review/test_rule.py now: take it off BACKLOG",
        "review/gone.py is on BACKLOG but no longer exists"]
