"""How much multi-step operator work a model gets done through the agent.

Each task of operator_task_table.py runs in a fresh temp workspace with a fresh state
directory, through the real runtime (every tool real, the approval gate real: tasks that may
act run at full trust, the destructive one with every approval ask denied), and the tools'
children see a scratch HOME. The task's checker then inspects the workspace, the tasks the
run scheduled and the trace's tool calls, and last the reply. Printed per task: pass/FAIL
with the reason, steps, prompt tokens (summed over the steps), wall time and the prompt
style the steps used; then the total score.

Usage:
  .venv/bin/python benchmarks/operator_tasks.py                  # starter model (SmolLM2-135M)
  .venv/bin/python benchmarks/operator_tasks.py --model PATH     # any GGUF, on a server started here
  .venv/bin/python benchmarks/operator_tasks.py --llama-url URL  # a llama-server you run yourself
  .venv/bin/python benchmarks/operator_tasks.py --provider ID    # a provider from your config (llm.providers)
  .venv/bin/python benchmarks/operator_tasks.py --scripted       # each task's play on the scripted provider
  options: --only NAME (repeatable), --max-steps N (default 12), --prompt-style auto|coached|full
           (default auto), --keep DIR (keep each task's workspace and state), --task-timeout S

`--provider ID` copies that entry (and the state dir's .env, where keys may live) from your
state dir (`--state-dir`, else ATOMIC_AGENT_STATE_DIR, else the default) into each task's
fresh state. `--scripted` is what CI runs: it proves the harness, the checkers and the full
prompt's multi-step path, not any model.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

sys.path.insert(0, str(Path(__file__).resolve().parent))

from operator_task_table import TASKS, Batch, OperatorTask, SeenCall, TaskOutcome, Verdict, task_named  # noqa: E402

RUN_TIMEOUT_S = 300.0
SCRIPTED_ALIAS = "scripted-capable-model"  # no size and no small model's name: auto gives it the full prompt


@attrs.frozen
class Backend:
    """Where the model is: a llama-server URL, a configured provider entry, or the scripted
    provider playing each task's calls (`play_of` picks the play; the table's by default)."""

    llama_url: str | None = None
    provider_entry: Mapping[str, Any] | None = None
    dotenv: Path | None = None
    scripted: bool = False
    play_of: Callable[[OperatorTask], Sequence[Batch]] = lambda task: task.play

    def config(self) -> dict[str, Any]:
        if self.provider_entry is not None:
            return {"llm": {"providers": [dict(self.provider_entry)],
                            "activeTextProvider": self.provider_entry["id"]}}
        return {"llama": {"temperature": 0}}

    def provider(self, task: OperatorTask) -> Any:
        """The provider object to run with (None: the runtime builds the configured one)."""
        if not self.scripted:
            return None
        from atomic_agent.testing.scripted_provider import ScriptedProvider, calls

        return ScriptedProvider([calls(*batch) for batch in self.play_of(task)], model_alias=SCRIPTED_ALIAS,
                                default=calls(("reply", {"text": "(the scripted model has no more calls)"})))


@attrs.frozen
class TaskRun:
    task: str
    verdict: Verdict
    steps: int
    prompt_tokens: int
    wall_s: float
    reply: str | None
    styles: tuple[str, ...]  # the prompt style of every step, from the trace


def read_trace(state: Path, session_id: str) -> list[dict[str, Any]]:
    path = state / "traces" / f"{session_id}.ndjson"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def seen_calls(trace: Sequence[Mapping[str, Any]]) -> tuple[SeenCall, ...]:
    return tuple(SeenCall(str(e.get("tool", "")), dict(e.get("args") or {}), str(e.get("status", "")),
                          str(e.get("summary", "")))
                 for e in trace if e.get("type") == "tool_invocation")


def run_environment(backend: Backend, home: Path, max_steps: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ATOMIC_AGENT_STATE_DIR", "ATOMIC_AGENT_PROMPT_STYLE")}
    env.update({"ATOMIC_AGENT_MAX_STEPS": str(max_steps), "ATOMIC_AGENT_MEMORY_REFLECTION": "0",
                "ATOMIC_AGENT_SEED": "1", "HOME": str(home)})
    if backend.llama_url:
        env["ATOMIC_AGENT_LLAMA_URL"] = backend.llama_url
    return env


async def _deny(_request: Any) -> bool:
    return False  # nobody is at the keyboard: every approval ask is answered no


def _scheduled(runtime: Any) -> tuple[Mapping[str, Any], ...]:
    try:
        store = runtime.service("tasks").store
    except Exception:  # the tasks plugin is disabled: nothing can have been scheduled
        return ()
    return tuple(t.as_json() for t in store.list(statuses=("pending",), limit=50))


async def run_task(task: OperatorTask, backend: Backend, scratch: Path, *, max_steps: int = 12,
                   style: str = "auto", timeout_s: float = RUN_TIMEOUT_S) -> TaskRun:
    from atomic_agent.api import create_runtime
    from atomic_agent.runtime.boot_context import boot

    workspace = task.make_workspace(scratch / "work")
    home, state = scratch / "home", scratch / "state"
    home.mkdir()
    (home / "keep-me.txt").write_text("a file in the home directory the tools see\n", encoding="utf-8")
    state.mkdir()
    from atomic_agent.config.migrate_config import CONFIG_VERSION

    config = {"version": CONFIG_VERSION, **backend.config(), "prompt": {"style": style}}
    (state / "config.json").write_text(json.dumps(config), encoding="utf-8")
    if backend.dotenv is not None and backend.dotenv.is_file():
        shutil.copy2(backend.dotenv, state / ".env")
    env = run_environment(backend, home, max_steps)
    runtime = await create_runtime(boot_context=boot(state, environ=dict(env)), provider=backend.provider(task),
                                   ask=_deny, environ=env)
    started, started_ms = time.perf_counter(), int(time.time() * 1000)
    stop = asyncio.Event()
    timer = asyncio.get_running_loop().call_later(timeout_s, stop.set)
    try:
        if task.approve:
            runtime.gate.set_level(5)
        result = await runtime.run_turn(task.message, working_dir=workspace, cancelled=stop)
        scheduled = _scheduled(runtime)
    finally:
        timer.cancel()
        await runtime.close()
    wall = time.perf_counter() - started
    trace = read_trace(state, result.session_id)
    outcome = TaskOutcome(result.reply if result.status == "done" else None, result.status, seen_calls(trace),
                          workspace, home, scheduled, started_ms)
    verdict = Verdict(False, f"timed out after {timeout_s:.0f} s") if stop.is_set() else task.check(outcome)
    steps = sum(1 for e in trace if e.get("type") == "step_started")
    prompt = sum(int((e.get("tokens") or {}).get("total", 0)) for e in trace if e.get("type") == "prompt_captured")
    styles = tuple(str(e.get("promptStyle", "")) for e in trace if e.get("type") == "prompt_captured")
    return TaskRun(task.name, verdict, steps, prompt, wall, outcome.reply, styles)


async def run_suite(tasks: Sequence[OperatorTask], backend: Backend, *, max_steps: int = 12, style: str = "auto",
                    show: bool = True, keep: Path | None = None, timeout_s: float = RUN_TIMEOUT_S) -> list[TaskRun]:
    """Run `tasks` one after another; with `keep`, each task's scratch folder (workspace,
    state with its trace, home) is copied to `keep/<task>`."""
    runs = []
    if show:
        print(f"{'task':<20} {'result':<6} {'steps':>5} {'prompt':>7} {'wall s':>7} {'style':<8} reason / reply")
    for task in tasks:
        with tempfile.TemporaryDirectory(prefix=f"operator-{task.name}-") as tmp:
            try:
                run = await run_task(task, backend, Path(tmp), max_steps=max_steps, style=style, timeout_s=timeout_s)
            except Exception as exc:  # one broken run must not hide the other tasks' scores
                run = TaskRun(task.name, Verdict(False, f"the run raised {type(exc).__name__}: {exc}"), 0, 0, 0.0,
                              None, ())
            if keep is not None:
                shutil.copytree(tmp, keep / task.name, symlinks=True, dirs_exist_ok=True)
        runs.append(run)
        if show:
            mark = "pass" if run.verdict.passed else "FAIL"
            said = (run.reply or "").replace("\n", " ")[:60]
            used = "/".join(sorted(set(run.styles))) or "-"
            print(f"{run.task:<20} {mark:<6} {run.steps:>5} {run.prompt_tokens:>7} {run.wall_s:>7.1f} {used:<8} "
                  f"{run.verdict.reason}" + (f" | {said!r}" if said else ""), flush=True)
    if show:
        passed = sum(r.verdict.passed for r in runs)
        print(f"{'total':<20} {passed}/{len(runs):<4} {sum(r.steps for r in runs):>5} "
              f"{sum(r.prompt_tokens for r in runs):>7} {sum(r.wall_s for r in runs):>7.1f}")
        print(f"score: {passed}/{len(runs)}", flush=True)
    return runs


def configured_provider(provider_id: str, state_dir: str | None) -> tuple[dict[str, Any], Path]:
    """The `llm.providers` entry `provider_id` of the user's config, and their .env's path."""
    from atomic_agent.config.raw_config import config_path, read_raw_config
    from atomic_agent.config.state_dir import resolve_state_dir

    state = resolve_state_dir(state_dir)
    llm = read_raw_config(config_path(state)).get("llm") or {}
    entries = [e for e in llm.get("providers") or [] if isinstance(e, dict)]
    for entry in entries:
        if entry.get("id") == provider_id:
            return dict(entry), state / ".env"
    known = ", ".join(str(e.get("id")) for e in entries) or "none"
    raise SystemExit(f"no provider {provider_id!r} in {config_path(state)} (configured: {known}); "
                     "add one with `atomic-agent providers add`, or pass --state-dir")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--model", type=Path, help="a GGUF to serve instead of the starter model")
    source.add_argument("--llama-url", help="use this running llama-server")
    source.add_argument("--provider", metavar="ID", help="use this provider from your config's llm.providers")
    source.add_argument("--scripted", action="store_true", help="play each task's calls on the scripted provider")
    parser.add_argument("--state-dir", help="where --provider looks for your config (default: the usual one)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="run only this task")
    parser.add_argument("--max-steps", type=int, default=12, help="agent.maxSteps for every run")
    parser.add_argument("--prompt-style", default="auto", choices=("auto", "coached", "full"),
                        help="prompt.style for every run")
    parser.add_argument("--task-timeout", type=float, default=RUN_TIMEOUT_S, help="seconds one task may take")
    parser.add_argument("--keep", type=Path, help="copy each task's workspace, state and home here")
    args = parser.parse_args(argv)
    tasks = [task_named(n) for n in args.only] if args.only else list(TASKS)
    started = time.perf_counter()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind like Ctrl+C: the server below is stopped

    def suite(backend: Backend) -> list[TaskRun]:
        return asyncio.run(run_suite(tasks, backend, max_steps=args.max_steps, style=args.prompt_style,
                                     keep=args.keep, timeout_s=args.task_timeout))

    if args.scripted:
        print("model: the scripted provider playing each task's calls")
        suite(Backend(scripted=True))
    elif args.provider:
        entry, dotenv = configured_provider(args.provider, args.state_dir)
        print(f"provider: {args.provider} ({entry.get('kind')})")
        suite(Backend(provider_entry=entry, dotenv=dotenv))
    elif args.llama_url:
        print(f"server: {args.llama_url} (yours)")
        suite(Backend(llama_url=args.llama_url.rstrip("/")))
    else:
        from atomic_agent.plugins.llama_server.testing.llama_fixture import start_session_server, stop_session_server

        with tempfile.TemporaryDirectory(prefix="operator-server-") as server_state:
            handle, outcome = start_session_server(Path(server_state), args.model)
            print(f"server: {handle.base_url}  model {handle.model_path.name}  n_ctx/slot {handle.n_ctx}")
            try:
                suite(Backend(llama_url=handle.base_url))
            finally:
                stop_session_server(Path(server_state), outcome)
    print(f"whole run: {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
