"""Plugins import only the public API (so internals can move without breaking anyone)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ALLOWED = {"atomic_agent", "atomic_agent.api"}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def test_no_plugin_imports_atomic_agent_internals():
    offenders = []
    for root in ("plugins", "contrib"):
        for path in (REPO / root).rglob("*.py"):
            if "tests" in path.parts:
                continue
            rel = path.relative_to(REPO / root)
            own = f"atomic_agent.{root}.{rel.parts[0]}" if len(rel.parts) > 1 else None
            for line, module in imported_modules(path):
                if not module.startswith("atomic_agent"):
                    continue
                if module in ALLOWED or (own and (module == own or module.startswith(own + "."))):
                    continue
                offenders.append(f"{path.relative_to(REPO)}:{line} imports {module}")
    assert not offenders, "plugins must import only atomic_agent.api:\n" + "\n".join(offenders)


def test_every_public_api_name_resolves():
    import atomic_agent.api as api

    for name in api.__all__:
        assert getattr(api, name) is not None, name


def test_type_checking_imports_match_the_exports():
    """The TYPE_CHECKING block of atomic_agent.api names each export from its module, so the type
    checker sees the real types behind the lazy PEP 562 lookup (not Any)."""
    import atomic_agent.api as api

    source = REPO / "core" / "api.py"
    tree = ast.parse(source.read_text(), filename=str(source))
    block = next(node for node in tree.body if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING")
    declared: dict[str, str] = {}
    for node in block.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:  # a module export reads `from package import module as module`
                name = alias.asname or alias.name
                declared[name] = f"{node.module}.{alias.name}" if name in api._MODULES else node.module or ""
        elif isinstance(node, ast.Import):
            declared.update({alias.asname or alias.name: alias.name for alias in node.names})
    assert declared == api._EXPORTS
