"""docs/hooks.md and core/hookspecs.py stay in step, and the page's examples are one plugin
that loads, registers and runs without a failure."""

from __future__ import annotations

import inspect
import re
import types
from pathlib import Path

import pytest
import typer

from atomic_agent import hookspecs
from atomic_agent.hook_records import ApprovalCategory, ConfigBlock, ProviderKind, ServiceSpec
from atomic_agent.plugin_host.collect_registrations import call_each, call_each_plugin, collect_records
from atomic_agent.testing.runtime_kit import boot_for_test, runtime_for_test

PAGE = Path(__file__).resolve().parents[1] / "docs" / "hooks.md"
HOOK_HEADING = re.compile(r"^### `(\w+)\((.*)\)`$")

SPECS = {name: list(inspect.signature(fn).parameters)
         for name, fn in inspect.getmembers(hookspecs, inspect.isfunction) if hasattr(fn, "atomic_agent_spec")}


def hook_sections(text: str) -> dict[str, tuple[list[str], str]]:
    """Each `### `name(args)`` section: its heading's arguments and its body."""
    sections: dict[str, tuple[list[str], str]] = {}
    current: str | None = None
    for line in text.splitlines():
        if line.startswith("#"):
            match = HOOK_HEADING.match(line)
            current = match.group(1) if match else None
            if match:
                assert current not in sections, f"docs/hooks.md has two sections for {current}"
                args = [arg.strip() for arg in match.group(2).split(",") if arg.strip()]
                sections[current] = (args, "")
            continue
        if current is not None:
            args, body = sections[current]
            sections[current] = (args, body + line + "\n")
    return sections


SECTIONS = hook_sections(PAGE.read_text(encoding="utf-8"))


def test_the_page_finds_the_hookspecs() -> None:
    assert len(SPECS) >= 13 and "register_tools" in SPECS


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_hookspec_has_a_section_headed_by_its_exact_signature(name: str) -> None:
    assert name in SECTIONS, f"docs/hooks.md has no '### `{name}(...)`' section"
    args, body = SECTIONS[name]
    assert args == SPECS[name], f"the heading of {name} says ({', '.join(args)}); the hookspec takes {SPECS[name]}"
    for arg in SPECS[name]:
        assert f"`{arg}`" in body, f"the {name} section does not say what `{arg}` is"


def test_no_section_names_a_hook_that_does_not_exist() -> None:
    assert sorted(set(SECTIONS) - set(SPECS)) == []


def test_the_heading_pattern_sees_a_renamed_argument() -> None:
    renamed = hook_sections("### `report_status(state_dir, cfg, plugin_host)`\n`state_dir` `cfg`\n")
    assert renamed["report_status"][0] != SPECS["report_status"]


def example_plugin() -> types.ModuleType:
    """Every ```python block of the page, run in order in one module (the `weather` plugin)."""
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
    module = types.ModuleType("weather_example")
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), module.__dict__)  # noqa: S102 - the page's own examples
    return module


def test_the_examples_implement_every_hook_and_register_cleanly(tmp_path: Path) -> None:
    boot = boot_for_test(tmp_path, plugins={"weather": example_plugin()})
    report = boot.host.reports["weather"]
    assert (report.status, report.error) == ("loaded", None)
    assert report.hooks == sorted(SPECS)  # one example per hook, each accepted by pluggy
    assert boot.config.block("weather").enabled is True
    host = boot.host
    assert [k.name for k in collect_records(host, "register_providers", ProviderKind) if k.plugin == "weather"] \
        == ["weather-model"]
    assert "weather" in {s.name for s in collect_records(host, "register_services", ServiceSpec)}
    assert "weather_write" in {c.name for c in collect_records(host, "register_approval_categories",
                                                               ApprovalCategory)}
    assert "weather" in {b.key for b in collect_records(host, "register_config_blocks", ConfigBlock,
                                                        key=lambda b: b.key)}
    app = typer.Typer()
    call_each(host, "register_commands", app=app)
    assert "weather" in {info.name for info in app.registered_commands}
    doctor = {a.plugin: a for a in call_each_plugin(host, "report_doctor_findings", state_dir=tmp_path,
                                                     plugin_host=host, config=boot.config)}["weather"]
    assert doctor.error == "" and [f.level for f in doctor.value] == ["ok"]
    status = {a.plugin: a for a in call_each_plugin(host, "report_status", state_dir=tmp_path, config=boot.config,
                                                     plugin_host=host)}["weather"]
    assert status.error == "" and status.value[0]["summary"] == "0 cities saved"
    assert report.status == "loaded"


async def test_the_examples_run_in_a_runtime_and_save_what_the_tool_was_told(tmp_path: Path) -> None:
    from atomic_agent.testing.tool_context_kit import make_tool_context

    runtime = await runtime_for_test(tmp_path, plugins={"weather": example_plugin()}, serving=True)
    try:
        spec = next(s for s in runtime.registry.specs() if s.name == "weather.remember")
        result = await spec.run({"city": "Oslo", "reading": "snow"}, make_tool_context(tmp_path))
        assert result.status == "ok", result.summary
        sections = runtime.memory.sections("s1", "weather?")
        assert [s.body for s in sections if s.heading == "weather"] == ["Oslo: snow"]
        assert runtime.channels.status()["weather-alerts"]["state"] == "running"
        assert await runtime.run_tick("weather.save")
    finally:
        await runtime.close()
    assert (tmp_path / "weather.json").read_text() == '{"Oslo": "snow"}'
    assert runtime.host.reports["weather"].status == "loaded"  # no hook, tick or channel failed
