"""`atomic-agent doctor` lines for the sandbox: whether bubblewrap can box a program when
`sandbox.mode` asks for it, and which sessions hold worktree edits not yet applied."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.api import ConfigError, DoctorFinding, read_raw_config

from .sandbox_config import MODES, SANDBOX_BLOCK

PLUGIN = "sandbox"


def sandbox_findings(state_dir: Path) -> list[DoctorFinding]:
    from .bwrap_probe import bwrap_problem_now
    from .session_worktree import WorktreeError, list_records

    try:
        block = read_raw_config(state_dir / "config.json").get(SANDBOX_BLOCK) or {}
    except ConfigError:
        return []  # the core's own check reports a broken config.json
    mode = block.get("mode", "off") if isinstance(block, dict) else "off"
    findings = []
    if mode in MODES and mode != "off":
        problem = bwrap_problem_now(str(block.get("bwrapPath", "bwrap")))
        if problem is None:
            findings.append(DoctorFinding("sandbox", "ok", f"sandbox.mode {mode}: bubblewrap boxes commands",
                                          plugin=PLUGIN))
        else:
            consequence = ("every os.shell.run call fails until this is fixed" if mode == "always"
                           else "shell commands ask as with the sandbox off")
            findings.append(DoctorFinding("sandbox", "error" if mode == "always" else "warn",
                                          f"sandbox.mode {mode}: {consequence}", advice=problem, plugin=PLUGIN))
    try:
        pending = list_records(state_dir)
    except WorktreeError as exc:
        return [*findings, DoctorFinding("sandbox worktrees", "warn", str(exc), plugin=PLUGIN)]
    if pending:
        sessions = ", ".join(r.session_id for r in pending[:10]) + (" ..." if len(pending) > 10 else "")
        findings.append(DoctorFinding("sandbox worktrees", "warn", f"{len(pending)} session worktree(s) not applied "
                                      f"or discarded: {sessions}",
                                      advice="atomic-agent sandbox diff|apply|discard SESSION",
                                      path=str(state_dir / "worktrees"), plugin=PLUGIN))
    return findings
