"""The starter-task suite (benchmarks/starter_tasks.py) is sane without a real server: every
checker accepts the run its task describes as correct and rejects an empty or ungrounded one,
the workspaces build, and the runner itself reads replies and traces correctly (driven through
the real console script against a scripted fake llama-server)."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import attrs
import pytest

from atomic_agent.plugins.llama_server.testing.fake_llama_script import Reply
from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
table = importlib.import_module("starter_task_table")
runner = importlib.import_module("starter_tasks")

NAMES = [t.name for t in table.TASKS]


def test_the_suite_has_at_least_twenty_uniquely_named_tasks() -> None:
    assert len(NAMES) >= 20 and len(set(NAMES)) == len(NAMES)


def test_the_suite_covers_the_everyday_kinds_the_issue_names() -> None:
    assert {"list_files", "read_fact", "find_word", "count_lines", "git_status", "last_commit", "file_size",
            "write_denied", "find_then_read"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_checker_accepts_the_sample_of_a_correct_run(name: str, tmp_path: Path) -> None:
    task = table.task_named(name)
    workspace = task.make_workspace(tmp_path / "ws")
    verdict = task.check(table.sample_outcome(task, workspace))
    assert verdict.passed, verdict.reason


@pytest.mark.parametrize("name", NAMES)
def test_checker_rejects_an_empty_reply(name: str, tmp_path: Path) -> None:
    task = table.task_named(name)
    workspace = task.make_workspace(tmp_path / "ws")
    empty = attrs.evolve(table.sample_outcome(task, workspace), reply="")
    assert not task.check(empty).passed
    assert not task.check(attrs.evolve(empty, reply=None, status="failed")).passed


@pytest.mark.parametrize("name", NAMES)
def test_checker_rejects_the_right_words_without_a_tool_call(name: str, tmp_path: Path) -> None:
    task = table.task_named(name)
    guessed = attrs.evolve(table.sample_outcome(task, task.make_workspace(tmp_path / "ws")), calls=())
    assert not task.check(guessed).passed


@pytest.mark.parametrize("name", NAMES)
def test_checker_rejects_the_first_prompt_example_copied(name: str, tmp_path: Path) -> None:
    task = table.task_named(name)
    copied = attrs.evolve(table.sample_outcome(task, task.make_workspace(tmp_path / "ws")),
                          reply="Hello! What should I do?")
    assert not task.check(copied).passed


@pytest.mark.parametrize("name", NAMES)
def test_checker_rejects_tool_calls_that_failed(name: str, tmp_path: Path) -> None:
    task = table.task_named(name)
    sample = table.sample_outcome(task, task.make_workspace(tmp_path / "ws"))
    failed = attrs.evolve(sample, calls=tuple(attrs.evolve(c, status="error") for c in sample.calls))
    if name == "write_denied":  # there the refused call is the point; a write that went through is not
        failed = attrs.evolve(sample, calls=tuple(attrs.evolve(c, status="ok") for c in sample.calls))
    assert not task.check(failed).passed


def test_a_write_that_landed_fails_the_denied_write_task(tmp_path: Path) -> None:
    task = table.task_named("write_denied")
    workspace = task.make_workspace(tmp_path / "ws")
    (workspace / "hello.txt").write_text("hi")
    assert "hello.txt was written" in task.check(table.sample_outcome(task, workspace)).reason


def test_wrong_answers_are_rejected_where_a_guess_is_easy(tmp_path: Path) -> None:
    def verdict(name: str, reply: str) -> bool:
        task = table.task_named(name)
        return task.check(attrs.evolve(table.sample_outcome(task, task.make_workspace(tmp_path / name)),
                                       reply=reply)).passed

    assert not verdict("find_word", "a.txt, b.txt and c.txt")  # naming every file is not finding one
    assert not verdict("count_lines", "poem.txt has 17 lines")
    assert not verdict("file_size", "report.txt is 6120 bytes")
    assert verdict("count_lines", "seven lines")


def test_workspaces_hold_the_facts_the_checkers_expect(tmp_path: Path) -> None:
    assert table.task_named("file_size").make_workspace(tmp_path / "s").joinpath("report.txt").stat().st_size == 612
    poem = table.task_named("count_lines").make_workspace(tmp_path / "p").joinpath("poem.txt")
    assert len(poem.read_text().splitlines()) == 7


def test_git_workspaces_have_the_branch_commit_and_changes(tmp_path: Path) -> None:
    import subprocess

    ws = table.task_named("changed_file").make_workspace(tmp_path / "c")
    status = subprocess.run(["git", "status", "--porcelain"], cwd=ws, capture_output=True, text=True).stdout
    assert status.split() == ["M", "lib.py"]
    ws = table.task_named("last_author").make_workspace(tmp_path / "a")
    log = subprocess.run(["git", "log", "-1", "--format=%an|%s"], cwd=ws, capture_output=True, text=True).stdout
    assert log.strip() == "Grace Hopper|First draft"
    ws = table.task_named("git_branch").make_workspace(tmp_path / "b")
    branch = subprocess.run(["git", "branch", "--show-current"], cwd=ws, capture_output=True, text=True).stdout
    assert branch.strip() == "feature/login"


def test_the_runner_judges_real_cli_runs_from_reply_and_trace(tmp_path: Path, capsys) -> None:
    """Three tasks through the installed console script against a scripted server: one done
    right, one answered without looking, one write the closed stdin refuses."""
    script = [
        Reply('[{"tool": "os.fs.list", "args": {"path": "."}}]'),
        Reply('[{"tool": "reply", "args": {"text": "notes.txt, todo.md and budget.csv"}}]'),
        Reply('[{"tool": "reply", "args": {"text": "The codename is BLUEFIN."}}]'),
        Reply('[{"tool": "os.fs.write", "args": {"path": "hello.txt", "content": "hi"}}]'),
        Reply('[{"tool": "reply", "args": {"text": "The write was denied."}}]'),
    ]
    tasks = [table.task_named(n) for n in ("list_files", "read_fact", "write_denied")]
    with FakeLlamaServer(script) as fake:
        runs = runner.run_suite(tasks, fake.base_url, max_steps=4)
        bodies = fake.completion_bodies
    assert [r.verdict.passed for r in runs] == [True, False, True], [r.verdict for r in runs]
    assert "no successful os.fs.read" in runs[1].verdict.reason
    assert [r.steps for r in runs] == [2, 1, 2] and all(r.prompt_tokens > 0 for r in runs)
    assert all(b["temperature"] == 0 for b in bodies)  # greedy decoding
    assert all("A turn has two steps" in b["prompt"] for b in bodies)  # the coached prompt, as fitted
    out = capsys.readouterr().out
    assert "list_files       pass" in out and "read_fact        FAIL" in out and "total            2/3" in out


def test_trace_reading_takes_calls_in_order_with_their_status(tmp_path: Path) -> None:
    events = [{"type": "assistant_reply", "text": "ok"}, {"type": "turn_finished", "status": "done"}]
    trace = [{"type": "step_started"}, {"type": "prompt_captured", "tokens": {"total": 100}},
             {"type": "llm_completion", "promptN": 40},
             {"type": "tool_invocation", "tool": "os.fs.read", "args": {"path": "a"}, "status": "ok", "summary": "s"},
             {"type": "tool_invocation", "tool": "os.fs.write", "args": {"path": "b"}, "status": "error"}]
    outcome = runner.outcome_of(events, trace, tmp_path)
    assert outcome.reply == "ok" and outcome.status == "done"
    assert [(c.tool, c.status) for c in outcome.calls] == [("os.fs.read", "ok"), ("os.fs.write", "error")]
    assert runner.costs_of(trace) == (1, 100, 40)
    assert json.loads(json.dumps(outcome.calls[0].args)) == {"path": "a"}
