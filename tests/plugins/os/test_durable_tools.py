"""Only reads are marked durable (safe to run again after a crash): the os plugin's, and the
core's `tool.view`, which only looks a spec up."""

from __future__ import annotations

import atomic_agent.plugins.os as os_plugin
from atomic_agent.api import ResourceClass, collected_tools, fresh_plugin_host, make_runtime_view, registered_plugin

DURABLE = {
    "os.fs.read", "os.fs.list", "os.fs.glob", "os.fs.grep", "os.fs.hash", "os.fs.diff", "os.fs.locate_project",
    "os.fs.read_document", "os.fs.archive.list", "os.fs.archive.read_entry", "os.proc.list", "os.clipboard.read",
    "os.web.search", "os.web.fetch",
    "tool.view",  # the core's (collected with the plugin's): the step applies the load it names
    "ask_user",  # the core's: changes nothing; asked again after a restart it finds the same question record
}


def test_only_read_only_tools_are_durable(tmp_path) -> None:
    host = fresh_plugin_host()
    with registered_plugin(host, os_plugin, "os"):
        specs = collected_tools(host, make_runtime_view(tmp_path))
    durable = {s.name for s in specs if s.durable}
    git_reads = {s.name for s in specs if s.name.startswith("os.git.")}
    assert durable - git_reads == DURABLE & {s.name for s in specs}  # desktop tools exist only on a desktop
    assert git_reads and git_reads <= durable
    for spec in specs:
        if spec.durable:  # a durable tool is never one that changes anything
            assert spec.resource_class is ResourceClass.PURE_READ and spec.approval_category is None, spec.name
