"""How many everyday operator tasks a model does through `atomic-agent run`.

Each task of starter_task_table.py runs as a user would run it: the installed console
script, `atomic-agent run --cwd WORKSPACE --json [--no-approval] MESSAGE`, in a fresh
temp workspace with a fresh state directory, against a real llama-server with greedy
decoding (temperature 0). The task's checker then reads the final reply and the session's
trace. Printed per task: passed/failed (with the reason), steps, prompt tokens (sum over
the steps; `eval` is the part the server did not have cached), wall time; then totals.

Usage:
  .venv/bin/python benchmarks/starter_tasks.py                 # starter model (SmolLM2-135M)
  .venv/bin/python benchmarks/starter_tasks.py --model PATH    # any GGUF
  .venv/bin/python benchmarks/starter_tasks.py --llama-url URL # a server you run yourself
  options: --only NAME (repeatable), --repeat N (runs the suite N times, prints the spread),
           --max-steps N (default 6), --keep DIR (keep each task's workspace and trace),
           --templates DIR (try prompt templates without installing them), --task-timeout S,
           --prompt-style auto|coached|full (default coached: the prompt these tasks were fitted with)

The server is started the way the test fixture starts it (the binary from
ATOMIC_AGENT_LLAMA_BINARY, else the cached `llama install` build; -c 8192 --parallel 2
--threads 2 on a free loopback port). End-of-turn memory reflection is switched off: it
runs after the reply, cannot change a verdict, and would only add time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

sys.path.insert(0, str(Path(__file__).resolve().parent))

from starter_task_table import TASKS, SeenCall, StarterTask, TaskOutcome, Verdict, task_named  # noqa: E402

CLI = Path(sys.executable).with_name("atomic-agent")
RUN_TIMEOUT_S = 240.0


@attrs.frozen
class TaskRun:
    """One task's run: the checker's verdict and what the run cost."""

    task: str
    verdict: Verdict
    steps: int
    prompt_tokens: int
    evaluated_tokens: int
    wall_s: float
    reply: str | None


def run_environment(llama_url: str, max_steps: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ATOMIC_AGENT_STATE_DIR"}
    env.update({"ATOMIC_AGENT_LLAMA_URL": llama_url, "ATOMIC_AGENT_MAX_STEPS": str(max_steps),
                "ATOMIC_AGENT_MEMORY_REFLECTION": "0", "ATOMIC_AGENT_SEED": "1"})
    return env


def read_trace(state: Path, session_id: str) -> list[dict[str, Any]]:
    path = state / "traces" / f"{session_id}.ndjson"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def outcome_of(events: Iterable[Mapping[str, Any]], trace: Sequence[Mapping[str, Any]],
               workspace: Path) -> TaskOutcome:
    """The reply and status from the streamed events, the tool calls from the trace."""
    reply, status = None, "no-turn"
    for event in events:
        if event.get("type") == "assistant_reply":
            reply = str(event.get("text", ""))
        elif event.get("type") == "turn_finished":
            status = str(event.get("status", ""))
    calls = tuple(SeenCall(str(e.get("tool", "")), dict(e.get("args") or {}), str(e.get("status", "")),
                           str(e.get("summary", "")))
                  for e in trace if e.get("type") == "tool_invocation")
    return TaskOutcome(reply, status, calls, workspace)


def costs_of(trace: Sequence[Mapping[str, Any]]) -> tuple[int, int, int]:
    """(steps, prompt tokens summed over the steps, prompt tokens the server evaluated)."""
    steps = sum(1 for e in trace if e.get("type") == "step_started")
    prompt = sum(int((e.get("tokens") or {}).get("total", 0)) for e in trace if e.get("type") == "prompt_captured")
    evaluated = sum(int(e.get("promptN") or 0) for e in trace if e.get("type") == "llm_completion")
    return steps, prompt, evaluated


def run_task(task: StarterTask, llama_url: str, max_steps: int, scratch: Path,
             templates: Path | None = None, timeout_s: float = RUN_TIMEOUT_S, style: str = "coached") -> TaskRun:
    workspace = task.make_workspace(scratch / "work")
    state = scratch / "state"
    state.mkdir()
    if templates is not None:  # the user-override folder: these files win over the packaged templates
        shutil.copytree(templates, state / "templates")
    (state / "config.json").write_text(json.dumps({"llama": {"temperature": 0}, "prompt": {"style": style}}),
                                       encoding="utf-8")
    command = [str(CLI), "--state-dir", str(state), "run", "--cwd", str(workspace), "--json"]
    if task.approve:
        command.append("--no-approval")
    command.append(task.message)
    started = time.perf_counter()
    timed_out = False
    try:
        ran = subprocess.run(command, env=run_environment(llama_url, max_steps), stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=timeout_s)
        stdout, stderr = ran.stdout, ran.stderr
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        stderr, timed_out = "", True
    wall = time.perf_counter() - started
    events = []
    for line in stdout.splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    session = next((e.get("sessionId") for e in events if e.get("sessionId")), None)
    trace = read_trace(state, session) if session else []
    outcome = outcome_of(events, trace, workspace)
    if timed_out:
        verdict = Verdict(False, f"timed out after {timeout_s:.0f} s")
    elif not events:
        verdict = Verdict(False, f"run printed no events: {stderr.strip()[-300:]}")
    else:
        verdict = task.check(outcome)
    steps, prompt, evaluated = costs_of(trace)
    return TaskRun(task.name, verdict, steps, prompt, evaluated, wall, outcome.reply)


def run_suite(tasks: Sequence[StarterTask], llama_url: str, max_steps: int, *, show: bool = True,
              keep: Path | None = None, templates: Path | None = None,
              timeout_s: float = RUN_TIMEOUT_S, style: str = "coached") -> list[TaskRun]:
    """Run `tasks` one after another; with `keep`, each task's workspace and state directory
    (config, sessions, trace) are copied to `keep/<task>` for a look afterwards."""
    runs = []
    if show:
        print(f"{'task':<16} {'result':<6} {'steps':>5} {'prompt':>7} {'eval':>6} {'wall s':>7}  reason / reply")
    for task in tasks:
        with tempfile.TemporaryDirectory(prefix=f"starter-{task.name}-") as tmp:
            run = run_task(task, llama_url, max_steps, Path(tmp), templates, timeout_s, style)
            if keep is not None:
                shutil.copytree(tmp, keep / task.name, symlinks=True, dirs_exist_ok=True)
        runs.append(run)
        if show:
            mark = "pass" if run.verdict.passed else "FAIL"
            said = (run.reply or "").replace("\n", " ")[:60]
            print(f"{run.task:<16} {mark:<6} {run.steps:>5} {run.prompt_tokens:>7} {run.evaluated_tokens:>6} "
                  f"{run.wall_s:>7.1f}  {run.verdict.reason}" + (f" | {said!r}" if said else ""), flush=True)
    if show:
        passed = sum(r.verdict.passed for r in runs)
        print(f"{'total':<16} {passed}/{len(runs):<4} {sum(r.steps for r in runs):>5} "
              f"{sum(r.prompt_tokens for r in runs):>7} {sum(r.evaluated_tokens for r in runs):>6} "
              f"{sum(r.wall_s for r in runs):>7.1f}", flush=True)
    return runs


def print_spread(rounds: Sequence[Sequence[TaskRun]]) -> None:
    scores = [sum(r.verdict.passed for r in runs) for runs in rounds]
    walls = [sum(r.wall_s for r in runs) for runs in rounds]
    n = len(rounds[0])
    print(f"\n{len(rounds)} rounds: passed {' '.join(map(str, scores))} of {n} "
          f"(min {min(scores)}, max {max(scores)}, median {statistics.median(scores)}); "
          f"suite wall {min(walls):.0f}-{max(walls):.0f} s")
    flaky = [runs[i].task for i, runs in enumerate(zip(*rounds, strict=True))
             if len({r.verdict.passed for r in runs}) > 1]
    if flaky:
        print(f"tasks whose verdict changed between rounds: {', '.join(flaky)}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, help="a GGUF to serve instead of the starter model")
    parser.add_argument("--llama-url", help="use this running llama-server instead of starting one")
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="run only this task")
    parser.add_argument("--repeat", type=int, default=1, help="run the suite this many times")
    parser.add_argument("--max-steps", type=int, default=6, help="agent.maxSteps for every run")
    parser.add_argument("--task-timeout", type=float, default=RUN_TIMEOUT_S,
                        help="seconds one `atomic-agent run` may take before it counts as failed")
    parser.add_argument("--keep", type=Path, help="copy each task's workspace and state (trace) here")
    parser.add_argument("--templates", type=Path,
                        help="prompt templates to try (copied to each state's templates/ override folder)")
    parser.add_argument("--prompt-style", default="coached", choices=("auto", "coached", "full"),
                        help="prompt.style for every run (default coached, the starter model's prompt)")
    args = parser.parse_args(argv)
    tasks = [task_named(n) for n in args.only] if args.only else list(TASKS)
    if args.llama_url and args.model:
        parser.error("--model starts a server; with --llama-url the running server's model is used")
    started = time.perf_counter()
    # a plain `kill` unwinds like Ctrl+C, so the finally below stops the server it started
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with tempfile.TemporaryDirectory(prefix="starter-server-") as server_state:
        outcome = None
        if args.llama_url:
            url = args.llama_url.rstrip("/")
            print(f"server: {url} (yours)")
        else:
            from atomic_agent.plugins.llama_server.testing.llama_fixture import start_session_server

            handle, outcome = start_session_server(Path(server_state), args.model)
            url = handle.base_url
            print(f"server: {url}  model {handle.model_path.name}  binary {handle.binary}  "
                  f"n_ctx/slot {handle.n_ctx}  (started in {time.perf_counter() - started:.1f} s)")
        try:
            rounds = []
            for index in range(args.repeat):
                if args.repeat > 1:
                    print(f"\nround {index + 1} of {args.repeat}")
                keep = None if args.keep is None else args.keep / (f"round{index + 1}" if args.repeat > 1 else "")
                rounds.append(run_suite(tasks, url, args.max_steps, keep=keep, templates=args.templates,
                                        timeout_s=args.task_timeout, style=args.prompt_style))
        finally:
            if outcome is not None:
                from atomic_agent.plugins.llama_server.testing.llama_fixture import stop_session_server

                stop_session_server(Path(server_state), outcome)
    if args.repeat > 1:
        print_spread(rounds)
    print(f"whole run: {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
