"""Every hookspec is documented and exercised: one `test_hook_<name>` per hook."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from atomic_agent import hookspecs
from atomic_agent.hook_records import (
    ApprovalCategory,
    ChannelSpec,
    ConfigBlock,
    MemoryPhase,
    ProviderCapabilities,
    ProviderKind,
    ResourceClass,
    ServiceSpec,
    TickSpec,
    ToolResult,
    ToolSpec,
)
from atomic_agent.hookspecs import hookimpl
from atomic_agent.plugin_host.collect_registrations import call_lifecycle, collect_records
from atomic_agent.testing.runtime_kit import fresh_plugin_host, registered_plugin

HOOKS = sorted(name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
               if hasattr(fn, "atomic_agent_spec"))


def test_hooks_are_few_and_named_verb_first():
    assert HOOKS == sorted(["register_approval_categories", "register_channels", "register_commands",
                            "register_config_blocks", "register_memory_phases", "register_providers",
                            "register_services", "register_ticks", "register_tools", "report_doctor_findings",
                            "report_status", "runtime_started",
                            "runtime_stopping"])


@pytest.mark.parametrize("name", HOOKS)
def test_every_hookspec_has_a_full_docstring(name: str):
    doc = " ".join((inspect.getdoc(getattr(hookspecs, name)) or "").split())
    assert "Called" in doc and ("Returns" in doc or "Return" in doc), name
    # when, what it receives, and whether every plugin's answer counts (none is first-result)
    assert "receives" in doc.lower() or "Receives" in doc, name
    assert "every plugin's collected" in doc or "Returns nothing" in doc, name


@pytest.mark.parametrize("name", HOOKS)
def test_every_hook_has_a_named_test(name: str):
    assert f"def test_hook_{name}" in Path(__file__).read_text()


async def _noop(args, ctx) -> ToolResult:
    return ToolResult.ok("")


class Everything:
    @hookimpl
    def register_config_blocks(self):
        import attrs

        @attrs.frozen
        class C:
            x: int = 1

        return [ConfigBlock(key="everything", cls=C)]

    @hookimpl
    def register_providers(self):
        return [ProviderKind("fake-kind", lambda entry, rt: None, ProviderCapabilities(transport="native_tools"))]

    @hookimpl
    def register_services(self):
        return [ServiceSpec("everything.counter", lambda rt: {"count": 0})]

    @hookimpl
    def register_tools(self, runtime):
        return [ToolSpec("e.tool", "x", {"type": "object"}, ResourceClass.PURE_READ, _noop)]

    @hookimpl
    def register_channels(self, runtime):
        return [ChannelSpec("fake-channel", lambda rt: None)]

    @hookimpl
    def register_memory_phases(self, runtime):
        return [MemoryPhase("fake-phase")]

    @hookimpl
    def register_ticks(self, runtime):
        async def tick() -> None:
            return None

        return [TickSpec("fake-tick", 5, tick)]

    @hookimpl
    def register_approval_categories(self):
        return [ApprovalCategory("e_cat", 2, "everything")]

    @hookimpl
    def register_commands(self, app):
        app.command("everything-cmd")(lambda: None)

    calls: list[str] = []

    @hookimpl
    def runtime_started(self, runtime):
        self.calls.append("started")

    @hookimpl
    def runtime_stopping(self, runtime):
        self.calls.append("stopping")


@pytest.fixture
def host():
    h = fresh_plugin_host()
    with registered_plugin(h, Everything(), "everything"):
        yield h


def test_hook_register_config_blocks(host):
    blocks = collect_records(host, "register_config_blocks", ConfigBlock, key=lambda b: b.key)
    assert [(b.key, b.plugin) for b in blocks if b.plugin != "core"] == [("everything", "everything")]


def test_hook_register_providers(host):
    kinds = collect_records(host, "register_providers", ProviderKind)
    assert [k.name for k in kinds] == ["fake-kind"] and kinds[0].plugin == "everything"


def test_hook_register_services(host):
    specs = collect_records(host, "register_services", ServiceSpec)
    assert [(s.name, s.plugin) for s in specs] == [("everything.counter", "everything")]


def test_hook_register_tools(host):
    tools = collect_records(host, "register_tools", ToolSpec, runtime=None)
    assert {"e.tool", "reply", "finish", "tool.view"} <= {t.name for t in tools}


def test_hook_register_channels(host):
    assert [c.name for c in collect_records(host, "register_channels", ChannelSpec, runtime=None)] == ["fake-channel"]


def test_hook_register_ticks(host):
    ticks = collect_records(host, "register_ticks", TickSpec, runtime=None)
    assert [(t.name, t.interval_s, t.plugin) for t in ticks] == [("fake-tick", 5, "everything")]


def test_hook_register_memory_phases(host):
    assert [p.name for p in collect_records(host, "register_memory_phases", MemoryPhase, runtime=None)] == ["fake-phase"]


def test_hook_register_approval_categories(host):
    cats = {c.name: c for c in collect_records(host, "register_approval_categories", ApprovalCategory)}
    assert cats["e_cat"].auto_approve_level == 2 and len(cats) == 11


def test_hook_register_commands(host):
    import typer

    from atomic_agent.cli.main import add_plugin_commands

    app = typer.Typer()
    add_plugin_commands(host, app)
    assert "everything-cmd" in [c.name for c in app.registered_commands]


def test_hook_runtime_started(host):
    Everything.calls.clear()
    call_lifecycle(host, "runtime_started", runtime=None)
    assert Everything.calls == ["started"]


def test_hook_runtime_stopping(host):
    Everything.calls.clear()
    call_lifecycle(host, "runtime_stopping", runtime=None)
    assert Everything.calls == ["stopping"]


def test_tool_without_a_resource_class_is_refused():
    with pytest.raises(TypeError, match="resource_class"):
        ToolSpec("x", "x", {}, "pure_read", _noop)  # type: ignore[arg-type]


def test_hook_report_doctor_findings(tmp_path: Path):
    from atomic_agent.api import DoctorFinding, call_each_plugin

    class Checks:
        @hookimpl
        def report_doctor_findings(self, state_dir: Path):
            return [DoctorFinding("thing", "warn", f"looked at {state_dir.name}", "do this")]

    class Raises:
        @hookimpl
        def report_doctor_findings(self, state_dir: Path):
            raise RuntimeError("broken check")

    host = fresh_plugin_host()
    host.register(Checks(), "checks")
    host.register(Raises(), "raises")
    answers = {a.plugin: a for a in call_each_plugin(host, "report_doctor_findings", state_dir=tmp_path)}
    assert answers["checks"].value == [DoctorFinding("thing", "warn", f"looked at {tmp_path.name}", "do this")]
    assert answers["raises"].error == "RuntimeError: broken check" and answers["raises"].value is None
    with pytest.raises(ValueError):
        DoctorFinding("thing", "fine", "not a level")


def test_hook_report_status(tmp_path: Path):
    from atomic_agent.api import call_each_plugin

    class Lines:
        @hookimpl
        def report_status(self, state_dir: Path, config):
            return [{"section": "channels", "name": "pager", "state": "ok", "summary": f"paging from {state_dir.name}",
                     "problems": [], "detail": {"config": type(config).__name__}}]

    class Raises:
        @hookimpl
        def report_status(self, state_dir: Path):
            raise RuntimeError("broken status")

    host = fresh_plugin_host()
    host.register(Lines(), "lines")
    host.register(Raises(), "raises")
    answers = {a.plugin: a for a in call_each_plugin(host, "report_status", state_dir=tmp_path, config=object(),
                                                        plugin_host=host)}
    assert answers["lines"].value == [{"section": "channels", "name": "pager", "state": "ok",
                                       "summary": f"paging from {tmp_path.name}", "problems": [],
                                       "detail": {"config": "object"}}]
    assert answers["raises"].error == "RuntimeError: broken status" and answers["raises"].value is None


def test_a_generator_answer_that_raises_while_read_is_that_plugins_error_only(tmp_path: Path):
    from atomic_agent.api import DoctorFinding, call_each_plugin

    class Yields:
        @hookimpl
        def report_doctor_findings(self, state_dir: Path):
            yield DoctorFinding("first", "ok", "fine")
            raise RuntimeError("broken half-way")

    class Checks:
        @hookimpl
        def report_doctor_findings(self, state_dir: Path):
            yield DoctorFinding("thing", "ok", "fine")

    host = fresh_plugin_host()
    host.register(Yields(), "yields")
    host.register(Checks(), "checks")
    answers = {a.plugin: a for a in call_each_plugin(host, "report_doctor_findings", state_dir=tmp_path)}
    assert answers["yields"].error == "RuntimeError: broken half-way" and answers["yields"].value is None
    assert answers["checks"].value == [DoctorFinding("thing", "ok", "fine")]
