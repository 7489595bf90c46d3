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


def is_service_contract(module: str) -> bool:
    """`atomic_agent.plugins.<plugin>.<name>_contract`: a service's name and Protocol, which any
    plugin may import (docs/plugin-api.md, "Services")."""
    parts = module.split(".")
    return len(parts) == 4 and parts[:2] == ["atomic_agent", "plugins"] and parts[3].endswith("_contract")


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
                if is_service_contract(module):
                    continue
                offenders.append(f"{path.relative_to(REPO)}:{line} imports {module}")
    assert not offenders, ("plugins must import only atomic_agent.api (and other plugins' *_contract "
                           "modules):\n" + "\n".join(offenders))


CONTRACT_IMPORTS = {"__future__", "typing", "collections.abc", "contextlib", "pathlib"}  # contextlib: its ABCs


def test_service_contracts_hold_only_names_and_protocols() -> None:
    """A `*_contract` module is what another plugin may import, so it holds no implementation:
    it imports only typing helpers (other contracts and atomic_agent.api under TYPE_CHECKING),
    and defines string constants and Protocol classes whose methods have no body."""
    contracts = sorted((REPO / "plugins").glob("*/*_contract.py"))
    assert contracts, "no service contracts found"
    problems = []
    for path in contracts:
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in tree.body:
            where = f"{path.relative_to(REPO)}:{node.lineno}"
            if isinstance(node, ast.ImportFrom) and node.module in CONTRACT_IMPORTS:
                continue
            if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
                problems += [f"{where} imports {module} for the type checker" for _line, module in
                             imported_modules_of(node) if module != "atomic_agent.api" and not is_service_contract(module)]
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):  # the docstring
                continue
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                continue
            if isinstance(node, ast.ClassDef) and [ast.unparse(b) for b in node.bases] == ["Protocol"]:
                bodies = [f for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
                problems += [f"{where} {node.name}.{f.name} has a body" for f in bodies
                             if not all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) for s in f.body)]
                continue
            problems.append(f"{where}: {ast.unparse(node).splitlines()[0]}")
    assert not problems, "service contracts hold only names and Protocols:\n" + "\n".join(problems)


def imported_modules_of(node: ast.AST) -> list[tuple[int, str]]:
    found = []
    for child in ast.walk(node):
        if isinstance(child, ast.ImportFrom) and child.module:
            found.append((child.lineno, child.module))
        elif isinstance(child, ast.Import):
            found += [(child.lineno, alias.name) for alias in child.names]
    return found


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
    users = plugin_users(["hookimpl", "trace_replay", "not_a_name"])
    assert "contrib/example_tool" in users["hookimpl"] and "plugins/trace_cli" in users["trace_replay"]
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
