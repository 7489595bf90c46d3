"""Who uses each name of `atomic_agent.api`: the plugins (plugins/*, contrib/*) that import it.

Run `python -m tests.api_usage` for the table (names by number of plugins, then the
counts); `tests/test_public_api_boundary.py` uses the same scan to keep the surface small.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PLUGIN_ROOTS = ("plugins", "contrib")
API_MODULE = "atomic_agent.api"


def _api_names_imported(path: Path) -> Iterator[str]:
    """Names taken from the api: `from atomic_agent.api import x` and `atomic_agent.api.x`."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == API_MODULE and node.level == 0:
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.Attribute) and ast.unparse(node.value) == API_MODULE:
            yield node.attr


def plugin_users(names: list[str], include_tests: bool = False) -> dict[str, set[str]]:
    """Each name -> the plugins ("plugins/memory", "contrib/example_tool") whose code imports it."""
    users: dict[str, set[str]] = {name: set() for name in names}
    for root in PLUGIN_ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            rel = path.relative_to(REPO / root)
            if len(rel.parts) < 2 or ("tests" in rel.parts and not include_tests):
                continue
            for name in _api_names_imported(path):
                if name in users:
                    users[name].add(f"{root}/{rel.parts[0]}")
    return users


def main() -> None:
    import atomic_agent.api as api

    users = plugin_users(list(api.__all__))
    for name in sorted(users, key=lambda n: (len(users[n]), n)):
        print(f"{len(users[name]):3d}  {name:32s} {' '.join(sorted(users[name]))}")
    counts = [len(u) for u in users.values()]
    print(f"\n{len(users)} names; used by no plugin: {counts.count(0)}, by exactly one: {counts.count(1)}, "
          f"by two or more: {sum(c >= 2 for c in counts)}")


if __name__ == "__main__":
    main()
