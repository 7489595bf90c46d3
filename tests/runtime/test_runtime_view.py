"""`RuntimeView` is the whole face of the runtime a plugin uses, and it holds:

- the concrete Runtime has every member the protocol lists;
- no plugin (built-in or contrib) reaches an attribute of the runtime that the protocol does
  not list, assigns or deletes anything on it, or takes a `runtime` parameter typed as
  anything but `RuntimeView`.

The second is a static scan of the plugin sources: a runtime expression is a name or
attribute called `runtime`/`_runtime` (the convention every plugin follows: `runtime`,
`self.runtime`, `ctx.runtime`) or a name annotated `RuntimeView`. The scan is proven on a
source that breaks each rule.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import attrs

from atomic_agent.api import RuntimeView
from atomic_agent.testing.runtime_kit import runtime_for_test

REPO = Path(__file__).resolve().parents[2]
PLUGIN_ROOTS = (REPO / "plugins", REPO / "contrib")
RUNTIME_NAMES = frozenset({"runtime", "_runtime"})
VIEW = "RuntimeView"


def protocol_members() -> frozenset[str]:
    return frozenset(name for name in vars(RuntimeView) if not name.startswith("_"))


@attrs.frozen
class Violation:
    path: str
    line: int
    what: str


def _annotation_names_view(annotation: ast.expr | None) -> bool:
    """`RuntimeView`, `"RuntimeView"`, `RuntimeView | None`, `api.RuntimeView`."""
    if annotation is None:
        return False
    text = annotation.value if isinstance(annotation, ast.Constant) else ast.unparse(annotation)
    return isinstance(text, str) and VIEW in re.split(r"[\s|\[\],.'\"]+", text)


class _Scanner(ast.NodeVisitor):
    def __init__(self, path: str, members: frozenset[str]) -> None:
        self.path = path
        self.members = members
        self.view_names: set[str] = set()
        self.found: list[Violation] = []

    def _report(self, node: ast.AST, what: str) -> None:
        self.found.append(Violation(self.path, getattr(node, "lineno", 0), what))

    def is_runtime(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return node.id in RUNTIME_NAMES or node.id in self.view_names
        return isinstance(node, ast.Attribute) and node.attr in RUNTIME_NAMES

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        args = node.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            if _annotation_names_view(arg.annotation):
                self.view_names.add(arg.arg)
            elif arg.arg in RUNTIME_NAMES:
                annotation = ast.unparse(arg.annotation) if arg.annotation is not None else "no annotation"
                self._report(arg, f"parameter `{arg.arg}` of {node.name}() is typed {annotation}, not {VIEW}")
        self.generic_visit(node)

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if isinstance(node.target, ast.Name) and _annotation_names_view(node.annotation):
            self.view_names.add(node.target.id)
        self._check_target(node.target)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._check_target(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_target(node.target)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._check_target(target)
        self.generic_visit(node)

    def _check_target(self, target: ast.expr) -> None:
        """A write whose target lies inside a runtime expression (`runtime.x = …`,
        `runtime.boot.config = …`, `runtime.cache[k] = …`) mutates the runtime."""
        node = target
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            inner = node.value
            if self.is_runtime(inner):
                self._report(target, f"assigns `{ast.unparse(target)}` on the runtime")
                return
            node = inner

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if self.is_runtime(node.value) and node.attr not in self.members:
            self._report(node, f"reaches `{ast.unparse(node)}`: `{node.attr}` is not on {VIEW}")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        fn = node.func
        if (isinstance(fn, ast.Name) and fn.id in {"getattr", "hasattr", "setattr"} and len(node.args) >= 2
                and self.is_runtime(node.args[0]) and isinstance(node.args[1], ast.Constant)):
            name = node.args[1].value
            if fn.id == "setattr":
                self._report(node, f"setattr({name!r}) on the runtime")
            elif name not in self.members:
                self._report(node, f"{fn.id}(runtime, {name!r}): `{name}` is not on {VIEW}")
        self.generic_visit(node)


def scan_source(source: str, path: str, members: frozenset[str]) -> list[Violation]:
    scanner = _Scanner(path, members)
    scanner.visit(ast.parse(source, filename=path))
    return scanner.found


def scan_plugins(members: frozenset[str]) -> list[Violation]:
    found: list[Violation] = []
    for root in PLUGIN_ROOTS:
        for path in sorted(root.rglob("*.py")):
            found += scan_source(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)), members)
    return found


def test_plugins_reach_only_what_runtime_view_lists_and_assign_nothing() -> None:
    violations = scan_plugins(protocol_members())
    assert violations == [], "\n".join(f"{v.path}:{v.line}: {v.what}" for v in violations)


def test_the_scan_catches_each_way_past_the_protocol() -> None:
    source = '''
from typing import Any

def register_tools(runtime: Any):
    return runtime.host

class Server:
    def set_tracing(self, enabled):
        self.runtime.boot.config = enabled

def hurry(ctx, view: "RuntimeView"):
    ctx.runtime.lifecycle.park_all(hard=True)
    view.channels.status()
    getattr(view, "boot")
    del ctx.runtime.gate
    view.registry = None
    return view.config, view.service("x"), ctx.runtime.stop("s")
'''
    found = [v.what for v in scan_source(source, "probe.py", protocol_members())]
    assert len(found) == 9, found
    assert any("parameter `runtime` of register_tools() is typed Any" in w for w in found)
    assert any("`host` is not on" in w for w in found)
    assert any("assigns `self.runtime.boot.config`" in w for w in found)
    assert any("`boot` is not on" in w for w in found)
    assert any("`lifecycle` is not on" in w for w in found)
    assert any("`channels` is not on" in w for w in found)
    assert any("getattr(runtime, 'boot')" in w for w in found)
    assert any("assigns `ctx.runtime.gate`" in w for w in found)
    assert any("assigns `view.registry`" in w for w in found)
    # reads of listed members (config, service, stop) are fine


async def test_the_runtime_has_every_member_of_the_view(tmp_path: Path) -> None:
    runtime = await runtime_for_test(tmp_path / "state")
    try:
        missing = sorted(name for name in protocol_members() if not hasattr(runtime, name))
        assert missing == []
        assert isinstance(runtime, RuntimeView)
    finally:
        await runtime.close()
