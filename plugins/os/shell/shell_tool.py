"""`os.shell.run`: run a program, guarded, gated, capped and cancellable.

The spec (name, schema, example, categories) is built from this module's constants at
start-up; the guard, the runner and the rest of the run path are imported by the functions
that use them, so listing the tool in the prompt does not load them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.api import ResourceClass, Tier, ToolResult, ToolSpec

from .exec_config import exec_config

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView
    from atomic_agent.plugins.sandbox.sandbox_contract import ShellSandbox

    from .exec_config import ExecConfig
    from .guard_records import GuardVerdict
    from .process_runner import ProcessOutcome
    from .shell_args import ShellCall
    from .shell_interpretation import ExecPlan

TOOL_NAME = "os.shell.run"
CATEGORY = "shell"
DANGEROUS_CATEGORY = "shell_dangerous"  # asks below level 5: level 4 still shows what the guard flagged
UNDECIDABLE_CATEGORY = "shell_undecidable"  # asks at every level, 5 included
PERSISTENCE_CATEGORY = "persistence"  # plants something that runs later (the file tools' category)
PERSISTENCE_RULES = ("dangerous.persistence",)
STDOUT_SHOWN = 700  # chars of stdout in the summary (the executor caps the whole summary)
STDERR_SHOWN = 300

ARGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "cmd": {"type": "string", "description": "program to run, e.g. \"git\" (a whole command line here runs "
                                                 "under sh -c)"},
        "args": {"type": ["array", "string"], "items": {"type": ["string", "number"]},
                 "description": "arguments as an array, one element each; literal unless one is a bare operator "
                                "like | or >"},
        "cwd": {"type": "string", "description": "directory to run in, relative to the session's (default)"},
        "timeout_s": {"type": "number", "exclusiveMinimum": 0, "description": "seconds before the process group "
                                                                             "is killed"},
        "stdin": {"type": "string", "description": "text fed to the program's standard input"},
    },
    "required": ["cmd"],
    "additionalProperties": False,
}
EXAMPLE = '{"tool": "os.shell.run", "args": {"cmd": "ls", "args": ["-la", "src"]}}'


def _home() -> str:
    return os.environ.get("HOME") or str(Path.home())


def _resolve_cwd(call: ShellCall, working_dir: Path) -> Path:
    from .shell_args import ShellArgsError

    base = Path(working_dir)
    if call.cwd is None:
        return base
    target = Path(os.path.expanduser(call.cwd))
    target = target if target.is_absolute() else base / target
    if not target.is_dir():
        raise ShellArgsError(f"cwd {call.cwd!r} is not a directory (resolved to {target}); pass an existing "
                             "directory, relative to the session's working dir or absolute")
    return target


def _check_limits(call: ShellCall, config: ExecConfig) -> None:
    from .shell_args import ShellArgsError

    if len(call.args) > config.max_args:
        raise ShellArgsError(f"too many arguments ({len(call.args)} > exec.maxArgs {config.max_args}); write the "
                             "list to a file and read it with xargs or a script instead")
    size = len(call.cmd) + sum(len(a) + 1 for a in call.args)
    if size > config.max_command_chars:
        raise ShellArgsError(f"the command line is {size} chars (> exec.maxCommandChars {config.max_command_chars}); "
                             "pass large data on stdin or in a file")
    if call.stdin is not None and len(call.stdin.encode("utf-8", "surrogatepass")) > config.max_stdin_bytes:
        raise ShellArgsError(f"stdin is larger than exec.maxStdinBytes ({config.max_stdin_bytes}); write it to a "
                             "file and pass the path")


def judge(plan: ExecPlan, cwd: Path, session_cwd: Path, environment: dict[str, str] | None = None,
          secrets: tuple[str, ...] = ()) -> GuardVerdict:
    """The guard's verdict; `environment` is the child's (so unset variables are known to be empty),
    `secrets` the runtime's secret paths (`runtime_secrets.secret_roots`)."""
    from .shell_guard import guard_scope, inspect_argv, inspect_line

    scope = guard_scope(str(cwd), str(session_cwd), _home(), environment, secrets)
    return inspect_line(plan.argv[2], scope) if plan.via_shell else inspect_argv(list(plan.argv), scope)


def _approval_summary(plan: ExecPlan, cwd: Path, verdict: GuardVerdict) -> str:
    from .guard_records import UNDECIDABLE
    from .shown_text import escape_for_prompt

    where = "sh -c" if plan.via_shell else "direct exec"
    text = f"run `{escape_for_prompt(plan.line)}` in {escape_for_prompt(str(cwd), 200)} ({where})"
    if verdict.kind == UNDECIDABLE:
        text += f" — cannot be judged before it runs: {escape_for_prompt(verdict.reasons(), 300)}"
    elif verdict.hits:
        text += f" — dangerous: {escape_for_prompt(verdict.reasons(), 300)}"
    return text


def _guard_details(verdict: GuardVerdict) -> dict[str, Any]:
    return {"verdict": verdict.kind, "rules": [h.rule for h in verdict.hits], "commandShape": verdict.command_shape}


def _summary(plan: ExecPlan, out: ProcessOutcome, timeout_s: float) -> str:
    from .shown_text import escape_for_prompt, excerpt, fenced

    lines = [f"$ {escape_for_prompt(plan.line, 200)}"]
    if out.timed_out:
        lines.append(f"timed out after {timeout_s:g}s; the process group was killed")
    elif out.cancelled:
        lines.append("cancelled; the process group was killed")
    else:
        lines.append(f"exit {out.exit_code}")
    for name, capture, budget in (("stdout", out.stdout, STDOUT_SHOWN), ("stderr", out.stderr, STDERR_SHOWN)):
        if capture.total == 0:
            continue
        label = f"{name} ({capture.total} bytes"
        label += f", kept first {len(capture.head)} + last {len(capture.tail)}" if capture.truncated else ""
        label += ", non-UTF-8 bytes replaced" if not capture.is_utf8() else ""
        lines.append(fenced(excerpt(capture.text(), budget), label + ")"))
    if out.stdout.total == 0 and out.stderr.total == 0:
        lines.append("(no output)")
    if out.killed_stragglers:
        lines.append("background processes kept the output open and were killed")
    return "\n".join(lines)


def _result(plan: ExecPlan, out: ProcessOutcome, timeout_s: float, verdict: GuardVerdict,
            call: ShellCall) -> ToolResult:
    details = {
        "exitCode": out.exit_code, "mode": "sh -c" if plan.via_shell else "direct", "argv": list(plan.argv),
        "stdout": out.stdout.text(), "stderr": out.stderr.text(), "stdoutBytes": out.stdout.total,
        "stderrBytes": out.stderr.total, "stdoutTruncated": out.stdout.truncated,
        "stderrTruncated": out.stderr.truncated, "nonUtf8": not (out.stdout.is_utf8() and out.stderr.is_utf8()),
        "timedOut": out.timed_out, "guard": _guard_details(verdict), "argsCoerced": call.args_coerced,
    }
    summary = _summary(plan, out, timeout_s)
    if out.cancelled:
        return ToolResult("cancelled", summary, details)
    return ToolResult("ok" if out.ok else "error", summary, details)


def _secrets(ctx: Any, state_dir: Path | None) -> tuple[str, ...]:
    from atomic_agent.plugins.os.fs_approval.runtime_secrets import secret_roots

    dirs = [d for d in (state_dir, getattr(ctx, "state_dir", None)) if d]
    return secret_roots(dict.fromkeys(str(d) for d in dirs))


async def run_shell(args: Mapping[str, Any], ctx: Any, config: ExecConfig, state_dir: Path | None = None,
                    sandbox: ShellSandbox | None = None) -> ToolResult:
    from .ask_approval import ask_approval, call_binding
    from .exec_config import tool_environment
    from .guard_records import DANGEROUS, UNDECIDABLE
    from .process_runner import run_process
    from .sandbox_placement import BOXED_APPROVED, BOXED_UNASKED, UNBOXED, place_in_box
    from .script_files import script_files
    from .shell_args import ShellArgsError, parse_shell_call
    from .shell_interpretation import plan_exec
    from .shown_text import escape_for_prompt

    try:
        call = parse_shell_call(args)
        _check_limits(call, config)
        cwd = _resolve_cwd(call, ctx.working_dir)
    except ShellArgsError as exc:
        return ToolResult.error(f"{TOOL_NAME}: {exc}", invalidArgs=[str(exc)])
    plan = plan_exec(call.cmd, call.args)
    environment = tool_environment(config)
    verdict = judge(plan, cwd, Path(ctx.working_dir), environment, _secrets(ctx, state_dir))
    if verdict.blocked:
        # before the gate: no level, grant or answer can let this through
        return ToolResult.error(f"blocked by the shell guard (hardline, every approval level): {verdict.reasons()}. "
                                "This command cannot be run by the agent; run it yourself if you really mean it.",
                                guard=_guard_details(verdict), argv=list(plan.argv))
    binding = call_binding(TOOL_NAME, cwd, plan.argv, script_files(plan.argv, plan.via_shell, cwd))
    category = {DANGEROUS: DANGEROUS_CATEGORY, UNDECIDABLE: UNDECIDABLE_CATEGORY}.get(verdict.kind, CATEGORY)
    if verdict.kind == DANGEROUS and any(h.rule.startswith(PERSISTENCE_RULES) for h in verdict.hits):
        category = PERSISTENCE_CATEGORY  # the same question a file tool's write to that spot asks
    placement = await place_in_box(sandbox, ctx, category, verdict.command_shape)
    if isinstance(placement, str):
        return ToolResult.error(f"{TOOL_NAME}: {placement}", sandbox="unavailable", argv=list(plan.argv),
                                guard=_guard_details(verdict))
    if placement is not BOXED_UNASKED and not await ask_approval(
            ctx, category, _approval_summary(plan, cwd, verdict), verdict.command_shape, binding):
        return ToolResult.error(f"not approved: {escape_for_prompt(plan.line, 200)} was not run",
                                denied=True, guard=_guard_details(verdict))
    argv = list(plan.argv)
    if placement is not UNBOXED:
        assert sandbox is not None
        # a call the gate approved may reach the network; one boxed instead of asking may not
        hidden = _secrets(ctx, state_dir)
        if placement is BOXED_UNASKED:  # nobody approved it: the credential stores are not its business either
            from atomic_agent.plugins.os.fs_approval.credential_stores import store_roots

            hidden += tuple(str(root) for _shown, root in store_roots())
        argv = sandbox.boxed_argv(argv, workspace=Path(ctx.working_dir), cwd=cwd,
                                  network=placement is BOXED_APPROVED, hidden=hidden)
    timeout_s = min(call.timeout_s or config.default_timeout_s, config.max_timeout_s)
    outcome = await run_process(argv, cwd=cwd, env=environment, timeout_s=timeout_s,
                                cancelled=ctx.cancelled,
                                stdin=call.stdin.encode("utf-8", "surrogateescape") if call.stdin is not None else None,
                                head_bytes=config.output_head_bytes, tail_bytes=config.output_tail_bytes)
    if outcome.spawn_error:
        return ToolResult.error(f"{TOOL_NAME}: {outcome.spawn_error}", argv=list(plan.argv),
                                guard=_guard_details(verdict))
    result = _result(plan, outcome, timeout_s, verdict, call)
    if placement is UNBOXED:
        return result
    from .sandbox_placement import box_note

    return ToolResult(result.status, f"{result.summary}\n{box_note(placement)}",
                      {**result.details, "sandbox": {"network": placement is BOXED_APPROVED,
                                                     "askedFirst": placement is BOXED_APPROVED}})


def shell_tool_spec(runtime: RuntimeView) -> ToolSpec:
    config = exec_config(runtime)
    state_dir = getattr(runtime, "state_dir", None)

    async def run(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        from atomic_agent.plugins.sandbox.sandbox_contract import SANDBOX_SERVICE

        return await run_shell(args, ctx, config, state_dir, runtime.service(SANDBOX_SERVICE, None))

    return ToolSpec(
        name=TOOL_NAME,
        summary="Run a program (direct exec; sh -c only for pipes, redirects or a whole command line in cmd). "
                "Output is capped head+tail; dangerous commands are named in the approval prompt, catastrophic "
                "ones are refused.",
        args_schema=ARGS_SCHEMA, resource_class=ResourceClass.APPROVAL_GATED, run=run, tier=Tier.FREQUENT,
        approval_category=CATEGORY, example=EXAMPLE)
