"""The core's import structure: it never imports a plugin (plugins depend on the core through
`atomic_agent.api`, never the other way), and its packages form no import cycle.

Imports are read statically from the source (AST), counting those inside functions too (a
function-level import is still a dependency, only a later one) and skipping those under
`if TYPE_CHECKING:` (annotations only: nothing is imported at run time)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "core"


def _runtime_imports(tree: ast.AST) -> Iterator[str]:
    """Every absolute module imported, skipping `if TYPE_CHECKING:` blocks."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (m for child in node.orelse for m in _runtime_imports(ast.Module([child], [])))
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            if node.module == "atomic_agent":  # `from atomic_agent import core_plugin` imports a module
                yield from (f"atomic_agent.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        yield from _runtime_imports(node)


def _package_of(path: Path) -> str:
    rel = path.relative_to(CORE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def test_the_core_imports_no_plugin() -> None:
    offenders = []
    for path in sorted(CORE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        named = [m for m in _runtime_imports(tree)]
        named += [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                  and n.value.startswith(("atomic_agent.plugins", "atomic_agent.contrib"))]  # importlib by name
        for module in named:
            if module.startswith(("atomic_agent.plugins", "atomic_agent.contrib")):
                offenders.append(f"{path.relative_to(CORE.parent)} -> {module}")
    assert not offenders, "the core must not depend on a plugin:\n" + "\n".join(offenders)


def _package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in CORE.rglob("*.py"):
        source = _package_of(path)
        for module in _runtime_imports(ast.parse(path.read_text())):
            parts = module.split(".")
            if parts[0] == "atomic_agent" and len(parts) > 1 and parts[1] not in ("plugins", "contrib"):
                if parts[1] != source:
                    graph.setdefault(source, set()).add(parts[1])
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components with more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_between_core_packages() -> None:
    cycles = sorted(sorted(c) for c in _cycles(_package_graph()))
    assert not cycles, f"core packages that import each other (directly or round about): {cycles}"


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset({"a", "b", "c"})]


def test_a_module_imported_from_the_top_package_counts_as_an_import() -> None:
    """`from atomic_agent import core_plugin` (lazily, in a function) is an edge to core_plugin."""
    tree = ast.parse("def f():\n    from atomic_agent import core_plugin, hookimpl\n")
    assert {"atomic_agent.core_plugin", "atomic_agent.hookimpl"} <= set(_runtime_imports(tree))


def test_the_agent_loop_imports_neither_the_runtime_nor_the_turn_lifecycle() -> None:
    """`agent/` is the pure loop: it gets what it uses as one explicit object (TurnDeps, and a
    StepContext per step), so not even an annotation names the runtime or the turns package."""
    offenders = []
    for path in sorted((CORE / "agent").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            offenders += [f"{path.name} -> {n}" for n in names
                          if n.startswith(("atomic_agent.runtime", "atomic_agent.turns"))]
    assert not offenders, offenders
