"""`trace replay --rerun`: recorded sessions re-run byte-identically, a template change is a
named drift, and damaged, foreign or orphaned traces are refused with a clear error."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from atomic_agent.cli.cli_state import CliState
from atomic_agent.cli.main import build_app
from atomic_agent.prompt.prompt_assets import core_templates_dir
from atomic_agent.prompt.prompt_style import templates_of
from atomic_agent.runtime.boot_context import boot
from atomic_agent.runtime.trace_replay import RerunReport, UnreplayableTraceError, rerun_trace_async
from atomic_agent.testing.runtime_kit import fresh_plugin_host

from .replay_scenarios import FIXTURES, RE_RECORD, SCENARIOS, record_scenario


def fixture_trace(state: Path) -> Path:
    traces = sorted((state / "traces").glob("*.ndjson"))
    assert len(traces) == 1, f"{state} should hold one recorded trace; re-record with {RE_RECORD}"
    return traces[0]


async def rerun(state: Path) -> RerunReport:
    return await rerun_trace_async(state, fixture_trace(state).stem)


@pytest.fixture
def copied(tmp_path: Path) -> Callable[[str], Path]:
    """A writable copy of one recorded session's state dir."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(FIXTURES / name, target)
        return target

    return copy


def edit_events(trace: Path, change: Callable[[list[dict]], None]) -> None:
    events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    change(events)
    trace.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
async def test_recorded_session_reruns_byte_identically(scenario):
    report = await rerun(FIXTURES / scenario.name)
    drifts = "\n".join(d.describe() for d in report.drifts)
    assert not report.drifted, (
        f"re-running the recorded session {scenario.name!r} drifted:\n{drifts}\n"
        f"If this change of prompt bytes is intended (a template or prompt-builder change), re-record the "
        f"sessions with `{RE_RECORD}` and commit tests/tracing/replay_sessions/")
    assert report.turns == len(scenario.turns) and report.steps >= len(scenario.turns)


async def test_a_fresh_recording_reruns_identically(tmp_path: Path):
    scenario = next(s for s in SCENARIOS if s.name == "retry-and-batch")
    await record_scenario(scenario, tmp_path / "fresh")
    events = [json.loads(line) for line in fixture_trace(tmp_path / "fresh").read_text().splitlines()]
    assert [e["type"] for e in events].count("parse_retry") == 1  # the scenario exercises the retry
    report = await rerun(tmp_path / "fresh")
    assert (report.turns, report.steps, report.drifts) == (1, 2, ())


def override_template(state: Path, name: str, change: Callable[[str], str]) -> None:
    original = (core_templates_dir() / name).read_text(encoding="utf-8")
    changed = change(original)
    assert changed != original
    (state / "templates").mkdir(exist_ok=True)
    (state / "templates" / name).write_text(changed, encoding="utf-8")


async def test_a_stable_prefix_template_change_names_its_section(copied):
    state = copied("read-then-reply")
    override_template(state, "tool_catalog.j2", lambda t: t.replace("### tools\n", "### tools\nUse tools wisely.\n", 1))
    report = await rerun(state)
    assert report.first is not None
    assert (report.first.turn_index, report.first.step, report.first.part, report.first.section) == \
        (0, 0, "stable prefix", "### tools")
    assert len(report.drifts) == 3  # every step of both turns, each named once


async def test_a_tail_template_change_names_its_section(copied):
    state = copied("reply-only")
    style = next(json.loads(line)["promptStyle"] for line in fixture_trace(state).read_text().splitlines()
                 if '"prompt_captured"' in line)
    tail_template = templates_of(style)[1]  # the recorded style's tail (variable_tail*.j2)
    override_template(state, tail_template, lambda t: t.replace("### respond\n", "### respond\nBe brief.\n", 1))
    first = (await rerun(state)).first
    assert first is not None and (first.part, first.section) == ("tail", "### respond")
    assert first.replayed == "Be brief." and first.recorded != first.replayed


async def test_a_changed_decision_is_named(copied):
    state = copied("read-then-reply")

    def call_list_instead(events: list[dict]) -> None:
        first = next(e for e in events if e["type"] == "llm_completion")
        first["content"] = first["content"].replace("os.fs.read", "os.fs.list")

    edit_events(fixture_trace(state), call_list_instead)
    first = (await rerun(state)).first
    assert first is not None and (first.turn_index, first.step, first.part, first.section) == \
        (0, 0, "decisions", "tool calls")
    assert "os.fs.read" in first.recorded and "os.fs.list" in first.replayed


async def test_a_changed_tool_result_shows_in_the_next_prompt(copied):
    state = copied("read-then-reply")

    def other_result(events: list[dict]) -> None:
        call = next(e for e in events if e["type"] == "tool_invocation")
        call["summary"] = call["summary"].replace("09:40", "11:15")

    edit_events(fixture_trace(state), other_result)
    first = (await rerun(state)).first
    # the rerun hands the edited result back, so the step that reads it sees other bytes than recorded
    assert first is not None and (first.turn_index, first.step, first.part, first.section) == \
        (0, 1, "tail", "### conversation")
    assert "11:15" in first.replayed and "09:40" in first.recorded


async def test_a_trace_whose_tools_are_gone_is_refused(copied):
    state = copied("read-then-reply")

    def rename(events: list[dict]) -> None:
        for event in events:
            if event["type"] == "tool_invocation":
                event["tool"] = "removed.plugin.read"

    edit_events(fixture_trace(state), rename)
    with pytest.raises(UnreplayableTraceError, match=r"removed\.plugin\.read.*not registered now"):
        await rerun(state)


@pytest.mark.parametrize("damage, message", [
    (lambda raw: raw[: len(raw) - 40], "cut off"),
    (lambda raw: raw.replace(b'"type":"turn_started"', b'"type":"turn_started"\x00{', 1), "damaged"),
    (lambda raw: b"\n".join(line for i, line in enumerate(raw.split(b"\n")) if i != 3), "lines are missing"),
    (lambda raw: raw.replace(b'"traceFormat":2', b'"traceFormat":99', 1), "newer atomic-agent"),
    (lambda raw: raw.replace(b',"traceFormat":2', b"", 1), "record the session again"),
], ids=["truncated", "corrupt-line", "missing-line", "newer-format", "older-format"])
async def test_bad_traces_are_refused_with_what_to_do(copied, damage, message):
    state = copied("reply-only")
    trace = fixture_trace(state)
    trace.write_bytes(damage(trace.read_bytes()))
    with pytest.raises(UnreplayableTraceError, match=message):
        await rerun(state)


def invoke_trace(state: Path, *args: str):
    from atomic_agent.plugins import trace_cli

    host = fresh_plugin_host()
    host.register(trace_cli, "trace_cli")
    ctx = boot(state, environ={}, host=host)
    app = build_app(CliState(host=host, boot_context=ctx, boot_error=None, state_dir=ctx.state_dir))
    return CliRunner().invoke(app, ["trace", "replay", *args])


def test_cli_rerun_reports_identical_then_a_named_drift_then_a_refusal(copied):
    state = copied("reply-only")
    session = fixture_trace(state).stem
    same = invoke_trace(state, session[:8], "--rerun")
    assert same.exit_code == 0, same.output
    assert "1 turn(s), 1 step(s) re-run; every prompt, grammar and decision is byte-identical" in same.stdout
    override_template(state, "tool_catalog.j2", lambda t: t.replace("### tools\n", "### tools\nNew line.\n", 1))
    drifted = invoke_trace(state, session, "--rerun", "--json")
    assert drifted.exit_code == 1, drifted.output
    assert json.loads(drifted.stdout)["drifts"][0]["section"] == "### tools"
    fixture_trace(state).write_bytes(fixture_trace(state).read_bytes()[:-30])
    refused = invoke_trace(state, session, "--rerun")
    assert refused.exit_code == 2 and "cut off" in refused.stderr
