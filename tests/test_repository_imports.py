"""No import circles (issue 38, item 5): the file-level import graph of the product (``annotation/``,
``alignapp/``, ``workers/``) and of the client (``client/alignapp_client``) has no cycle.

An edge ``a → b`` is any import of ``b`` anywhere in ``a`` — at the top, inside a function (a lazy import is
still an import: it only hides the circle until run time) or in a ``try`` — except under
``if TYPE_CHECKING:``, which never runs. ``from pkg import name`` is an edge to ``pkg/name.py`` when that is a
module, else to ``pkg``; the packages above an imported module are not edges of their own (importing
``a.b.c`` runs ``a/__init__`` and ``a/b/__init__``, but a cycle through them is a cycle through what they
import, which the graph already holds). When two modules need each other, the shared piece belongs in a
lower module.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("annotation", "alignapp", "workers")
CLIENT = ("client/alignapp_client",)


def _module_name(path: Path, base: Path) -> str:
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(root: Path, folders: tuple[str, ...]) -> dict[str, Path]:
    """Module name → file, for every ``.py`` under ``folders`` (a folder's parent is the import root)."""
    found = {}
    for folder in folders:
        top = root / folder
        for path in sorted(top.rglob("*.py")):
            if "migrations" in path.parts:
                continue
            found[_module_name(path, top.parent)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every Import/ImportFrom node outside ``if TYPE_CHECKING:`` blocks (their ``else`` still counts)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _targets(node: ast.Import | ast.ImportFrom, name: str, is_package: bool, known: dict[str, Path]) -> set[str]:
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in known}
    if node.level:
        package = name.split(".") if is_package else name.split(".")[:-1]
        package = package[:len(package) - (node.level - 1)]
        base = ".".join(package + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    out = set()
    for alias in node.names:
        if f"{base}.{alias.name}" in known:
            out.add(f"{base}.{alias.name}")
        elif base in known:
            out.add(base)
    return out


def import_graph(root: Path, folders: tuple[str, ...]) -> dict[str, set[str]]:
    """Module → the modules (of ``folders``) it imports anywhere in its file, TYPE_CHECKING blocks left out."""
    known = _modules(root, folders)
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        edges: set[str] = set()
        for node in _imports(tree):
            edges |= _targets(node, name, path.name == "__init__.py", known)
        graph[name] = edges - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each as one cycle through them
    (``a → b → … → a``), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[set[str]] = []
    counter = 0

    def visit(start: str) -> None:  # iterative, so a deep graph never hits the recursion limit
        nonlocal counter
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(_one_cycle(graph, component) for component in components)


def _one_cycle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest cycle through the component's first module (breadth-first), to name in the failure."""
    start = min(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & component):
            if child == start:
                return paths[node] + [start]
            if child not in paths:
                paths[child] = paths[node] + [child]
                queue.append(child)
    return sorted(component)


def _describe(found: list[list[str]]) -> str:
    return "\n".join(" → ".join(cycle) for cycle in found)


def test_the_product_has_no_import_circle():
    found = cycles(import_graph(ROOT, PRODUCT))
    assert not found, "import circles (move the shared piece to a lower module):\n" + _describe(found)


def test_the_client_has_no_import_circle():
    found = cycles(import_graph(ROOT, CLIENT))
    assert not found, "import circles (move the shared piece to a lower module):\n" + _describe(found)


def test_the_check_finds_a_circle_closed_by_a_lazy_import_but_not_by_type_checking(tmp_path):
    """The check is not vacuous: a function-level import closes a circle; one under TYPE_CHECKING does not."""
    pkg = tmp_path / "app"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from app.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from .. import c\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from app import d\n"
                              "import app.a\n")
    (pkg / "d.py").write_text("from app.c import x\n")
    assert cycles(import_graph(tmp_path, ("app",))) == [["app.a", "app.sub.b", "app.c", "app.a"]]
