"""Issue 29 §1, one run executor: the architecture that keeps it one.

* The modules of the alignment area import each other at module level only, and without cycles (an
  import inside a function that dodges a cycle is still the cycle).
* A run's result is written in one module (``run_result``), so every way of running a run describes
  it alike; aligners are loaded in one (``run_setup``), so no caller loads a model just to decide.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AREA = ROOT / "annotation" / "services" / "alignment"
PACKAGE = "annotation.services.alignment"
RESULT_WRITER = "annotation/services/alignment/run_result.py"
ALIGNER_LOADER = "annotation/services/alignment/run_setup.py"


def _area_imports(path: Path, area: Path) -> list[tuple[str, int, bool]]:
    """``(module of the area, line, inside a function)`` for every import by ``path`` of another module of the area."""
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom) and child.module:
                base = child.module if not child.level else f"{PACKAGE}.{child.module}"
                names = [base, *(f"{base}.{alias.name}" for alias in child.names)]
            for name in names:
                if name.startswith(PACKAGE + ".") and (area / f"{name.split('.')[3]}.py").is_file():
                    found.append((name.split(".")[3], child.lineno, in_function))
            visit(child, inside)

    visit(ast.parse(path.read_text(), str(path)), False)
    return [(m, line, inner) for m, line, inner in found if m != path.stem]


def alignment_import_problems(area: Path) -> list[str]:
    """Imports inside functions between modules of the area, and cycles of their module-level imports."""
    problems: list[str] = []
    graph: dict[str, set[str]] = {}
    for path in sorted(area.glob("*.py")):
        for module, line, inner in _area_imports(path, area):
            if inner:
                problems.append(f"{path.name}:{line} imports {module} inside a function")
            graph.setdefault(path.stem, set()).add(module)

    def walk(module: str, trail: list[str]) -> None:
        for target in sorted(graph.get(module, ())):
            if target in trail:
                problems.append("cycle " + " -> ".join([*trail[trail.index(target):], target]))
            elif len(trail) < len(graph) + 1:
                walk(target, [*trail, target])

    for module in sorted(graph):
        walk(module, [module])
    return sorted(set(problems))


def _calls(root: Path):
    for path in sorted([*(root / "annotation").rglob("*.py"), root / "workers" / "tasks.py"]):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call):
                yield path.relative_to(root).as_posix(), node


def run_result_writers(root: Path) -> list[str]:
    """Calls outside ``run_result`` that write an ``AlignmentRun``'s ``result``."""
    return [f"{where}:{node.lineno}" for where, node in _calls(root)
            if any(k.arg == "result" for k in node.keywords) and "AlignmentRun" in ast.unparse(node)
            and where != RESULT_WRITER]


def aligner_loaders(root: Path) -> list[str]:
    """Calls of the engine's ``get_aligner`` outside ``run_setup``."""
    return [f"{where}:{node.lineno}" for where, node in _calls(root)
            if getattr(node.func, "id", getattr(node.func, "attr", "")) == "get_aligner" and where != ALIGNER_LOADER]


def test_the_modules_of_the_alignment_area_import_each_other_at_module_level_without_cycles():
    assert alignment_import_problems(AREA) == []


def test_the_import_check_sees_an_import_inside_a_function_and_a_cycle(tmp_path):
    (tmp_path / "a.py").write_text(f"from {PACKAGE} import b\n")
    (tmp_path / "b.py").write_text(f"def f():\n    from {PACKAGE}.a import g\n")
    (tmp_path / "c.py").write_text("")
    assert alignment_import_problems(tmp_path) == ["b.py:2 imports a inside a function", "cycle a -> b -> a",
                                                   "cycle b -> a -> b"]


def test_only_run_result_writes_a_runs_result_and_only_run_setup_loads_an_aligner():
    assert run_result_writers(ROOT) == []
    assert aligner_loaders(ROOT) == []


def test_the_result_and_loader_checks_see_a_write_elsewhere(tmp_path):
    (tmp_path / "annotation").mkdir()
    (tmp_path / "workers").mkdir()
    (tmp_path / "workers" / "tasks.py").write_text("")
    (tmp_path / "annotation" / "x.py").write_text(
        "progress.succeed(AlignmentRun, 1, result={})\nAlignmentRun.objects.filter(pk=1).update(result={})\n"
        "progress.succeed(Job, 1, result={})\naligner = engine.get_aligner('crf')\n")
    assert run_result_writers(tmp_path) == ["annotation/x.py:1", "annotation/x.py:2"]
    assert aligner_loaders(tmp_path) == ["annotation/x.py:4"]
