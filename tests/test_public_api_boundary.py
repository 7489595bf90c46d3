"""Plugins import only the public API (so internals can move without breaking anyone), and
that API stays small and documented: every name is used by a plugin or listed in
docs/plugin-api.md, every listed name exists, and the count does not grow."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.api_usage import plugin_users

REPO = Path(__file__).resolve().parents[1]
ALLOWED = {"atomic_agent", "atomic_agent.api"}
API_DOC = REPO / "docs" / "plugin-api.md"
# issue 30: at most 100; the ceiling only ever comes down (a name that leaves lowers it)
MAX_API_NAMES = 100


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


def documented_names() -> list[str]:
    """The names docs/plugin-api.md lists, one per `- `name` — ...` line."""
    return re.findall(r"^- `([A-Za-z_][A-Za-z0-9_]*)` — ", API_DOC.read_text(), flags=re.M)


def test_the_public_api_does_not_grow() -> None:
    import atomic_agent.api as api

    assert len(api.__all__) <= MAX_API_NAMES, (
        f"atomic_agent.api exports {len(api.__all__)} names (ceiling {MAX_API_NAMES}): a name one plugin "
        "uses belongs in that plugin, or in a service another plugin provides")


def test_every_public_name_is_documented_once_and_every_documented_name_exists() -> None:
    import atomic_agent.api as api

    listed = documented_names()
    duplicates = sorted({name for name in listed if listed.count(name) > 1})
    assert not duplicates, f"listed twice in {API_DOC.name}: {duplicates}"
    missing = sorted(set(api.__all__) - set(listed))
    assert not missing, f"not in {API_DOC.name} (add one line to its group): {missing}"
    stale = sorted(set(listed) - set(api.__all__))
    assert not stale, f"{API_DOC.name} lists names atomic_agent.api does not export: {stale}"


def test_every_public_name_is_used_by_a_plugin_or_documented_for_third_parties() -> None:
    import atomic_agent.api as api

    users = plugin_users(list(api.__all__), include_tests=True)
    orphans = sorted(name for name, who in users.items() if not who and name not in documented_names())
    assert not orphans, f"exported, used by no plugin and undocumented (remove them): {orphans}"


def test_the_usage_scan_sees_imports_and_attribute_reads() -> None:
    users = plugin_users(["hookimpl", "rebuild_stable_prefix", "not_a_name"])
    assert "contrib/example_tool" in users["hookimpl"] and "plugins/trace_cli" in users["rebuild_stable_prefix"]
    assert users["not_a_name"] == set()


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
