"""Folders a plugin ships beside its code (`templates/`, `grammars/`), found by convention.

A plugin that is a package (its module is an `__init__.py`) and has such a folder next to
it contributes that folder; in-process plugins without a file contribute nothing. Plugins
are taken in name order, so which folder wins between two plugins never depends on load
order.
"""

from __future__ import annotations

from pathlib import Path

from atomic_agent.plugin_host.plugin_host import PluginHost


def plugin_asset_dirs(host: PluginHost, folder: str) -> list[Path]:
    found = []
    for name, plugin in sorted(host.pm.list_name_plugin(), key=lambda pair: str(pair[0])):
        source = getattr(plugin, "__file__", None)
        if not source or Path(source).name != "__init__.py":
            continue
        candidate = Path(source).parent / folder
        if candidate.is_dir():
            found.append(candidate)
    return found
