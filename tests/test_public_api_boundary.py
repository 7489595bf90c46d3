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
