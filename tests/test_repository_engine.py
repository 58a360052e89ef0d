"""The engine's public API and its import graph (issue 17, deliverable 5): the app imports the engine only
as ``workers.engine``, and the engine's modules import each other without cycles."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# --- the engine's public API and its import graph (issue 17, deliverable 5) --------------------

def engine_all(root: Path) -> set[str]:
    """The names of ``workers.engine.__all__``, read from the source (no import)."""
    import ast

    tree = ast.parse((root / "workers" / "engine" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return {e.value for e in node.value.elts}  # type: ignore[attr-defined]
    return set()


def engine_api_problems(root: Path) -> list[str]:
    """Imports of the engine from ``annotation/`` and ``alignapp/`` that bypass ``workers.engine``
    (its submodules, in-function imports and ``import_module`` strings included) or take a name
    that is not in its ``__all__``."""
    import ast

    public = engine_all(root)
    problems: list[str] = []
    for top in ("annotation", "alignapp"):
        for path in sorted((root / top).rglob("*.py")):
            shown = path.relative_to(root).as_posix()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                where = f"{shown}:{getattr(node, 'lineno', 0)}"
                if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    if node.module.startswith("workers.engine."):
                        problems.append(f"{where} imports the submodule {node.module}")
                    elif node.module == "workers.engine":
                        problems += [f"{where} imports {a.name!r}, not in workers.engine.__all__"
                                     for a in node.names if a.name not in public]
                elif isinstance(node, ast.Import):
                    problems += [f"{where} imports the submodule {a.name}"
                                 for a in node.names if a.name.startswith("workers.engine.")]
                elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) in (
                        "import_module", "__import__") and node.args:
                    arg = node.args[0]
                    text = arg.value if isinstance(arg, ast.Constant) else (
                        arg.values[0].value if isinstance(arg, ast.JoinedStr) and arg.values
                        and isinstance(arg.values[0], ast.Constant) else "")
                    if isinstance(text, str) and text.startswith("workers.engine."):
                        problems.append(f"{where} imports the submodule {text}... by name")
    return problems


def engine_import_graph(root: Path) -> dict[str, dict[str, str]]:
    """module -> {imported engine module: where}, for every module of ``workers/engine`` (imports
    inside functions included; ``from pkg import name`` counts as importing ``pkg.name`` when that
    is a module, else ``pkg``)."""
    import ast

    engine = root / "workers" / "engine"
    modules = {}
    for path in engine.rglob("*.py"):
        name = ".".join(path.relative_to(root).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path
    graph: dict[str, dict[str, str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        edges = graph.setdefault(name, {})
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module for a in node.names]
            for target in targets:
                if target in modules and target != name:
                    edges.setdefault(target, f"{path.relative_to(root).as_posix()}:{node.lineno}")
    return graph


def engine_cycles(root: Path) -> list[str]:
    """Each import cycle among the engine's modules, with the import line of every step."""
    graph = engine_import_graph(root)
    cycles: list[str] = []
    done: set[str] = set()

    def walk(module: str, path: list[str]) -> None:
        for target in sorted(graph.get(module, {})):
            if target in path:
                cycle = path[path.index(target):] + [target]
                cycles.append(" -> ".join(cycle) + " (" + "; ".join(
                    graph[a][b] for a, b in zip(cycle, cycle[1:])) + ")")
            elif target not in done:
                walk(target, [*path, target])
        done.add(module)

    for module in sorted(graph):
        if module not in done:
            walk(module, [module])
    return cycles


def test_annotation_and_alignapp_use_only_the_engines_public_api():
    problems = engine_api_problems(ROOT)
    assert not problems, "\n".join(problems)


def test_every_name_in_the_engines_all_exists():
    import workers.engine

    assert sorted(n for n in workers.engine.__all__ if not hasattr(workers.engine, n)) == []


def test_the_engines_modules_import_each_other_without_cycles():
    cycles = engine_cycles(ROOT)
    assert not cycles, "import cycles in workers/engine:\n" + "\n".join(cycles)
