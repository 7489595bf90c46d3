"""The six read-only git tools: status, log, diff, show, blame, branch."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from atomic_agent.api import Tier, ToolResult, ToolSpec

from ..shell.exec_config import ExecConfig, exec_config
from .git_tool_kit import git_spec, truncation_note

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

PATCH_SHOWN = 2500  # chars of patch text in the summary; details carry more
_DIFF_SAFETY = ("--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=all")


async def git_status(args: Mapping[str, Any], ctx: Any, config: ExecConfig) -> ToolResult:
    from .git_args import repo_dir
    from .git_runner import run_git
    from .git_status_parse import parse_status, status_summary

    cwd = repo_dir(args, ctx.working_dir)
    out = await run_git(["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal",
                         "--ignore-submodules=all"], cwd, config, ctx.cancelled)
    parsed = parse_status(out.text)
    return ToolResult.ok(status_summary(parsed) + truncation_note(out.truncated, out.total_bytes), **parsed)


async def git_log(args: Mapping[str, Any], ctx: Any, config: ExecConfig) -> ToolResult:
    from .git_args import bounded_int, file_arg, repo_dir, revision
    from .git_log_parse import LOG_FORMAT, log_summary, parse_log
    from .git_runner import run_git

    cwd = repo_dir(args, ctx.working_dir)
    limit = bounded_int(args, "limit", 20, 1, 500)
    argv = ["log", f"--format={LOG_FORMAT}", "-n", str(limit), "--no-color"]
    ref = revision(args, "ref")
    if ref:
        argv.append(ref)
    argv.append("--")
    if (file := file_arg(args)) is not None:
        argv.append(file)
    out = await run_git(argv, cwd, config, ctx.cancelled)
    commits = parse_log(out.text)
    return ToolResult.ok(log_summary(commits) + truncation_note(out.truncated, out.total_bytes), commits=commits)


def _diff_base(args: Mapping[str, Any]) -> list[str]:
    from .git_args import revision

    argv = ["diff", *_DIFF_SAFETY]
    if args.get("staged"):
        argv.append("--cached")
    ref = revision(args, "ref")
    if ref:
        argv.append(ref)
    return argv


async def _patch_and_stats(base: list[str], paths: list[str], cwd: Any, config: ExecConfig, ctx: Any,
                           context: int, env: dict[str, str]) -> tuple[list[dict[str, Any]], str, bool]:
    from .git_numstat_parse import parse_numstat
    from .git_runner import run_git

    stats = await run_git([*base, "--numstat", "-z", "--", *paths], cwd, config, ctx.cancelled, env)
    patch = await run_git([*base, f"-U{context}", "--", *paths], cwd, config, ctx.cancelled, env)
    return parse_numstat(stats.text), patch.text, patch.truncated


async def git_diff(args: Mapping[str, Any], ctx: Any, config: ExecConfig) -> ToolResult:
    from ..shell.shown_text import excerpt, fenced
    from .git_args import bounded_int, file_arg, repo_dir
    from .git_numstat_parse import numstat_summary
    from .git_runner import git_environment

    cwd = repo_dir(args, ctx.working_dir)
    context = bounded_int(args, "context", 3, 0, 50)
    file = file_arg(args)
    env = await git_environment(cwd, config, ctx.cancelled)
    files, patch, cut = await _patch_and_stats(_diff_base(args), [file] if file else [], cwd, config, ctx, context,
                                               env)
    summary = numstat_summary(files)
    if patch:
        summary += "\n" + fenced(excerpt(patch, PATCH_SHOWN), "patch")
    return ToolResult.ok(summary, files=files, patch=patch, patchTruncated=cut)


async def git_show(args: Mapping[str, Any], ctx: Any, config: ExecConfig) -> ToolResult:
    from ..shell.shown_text import excerpt, fenced
    from .git_args import file_arg, repo_dir, revision
    from .git_log_parse import LOG_FORMAT, log_summary, parse_log
    from .git_numstat_parse import numstat_summary
    from .git_runner import git_environment, run_git

    cwd = repo_dir(args, ctx.working_dir)
    rev = revision(args, "rev", "HEAD") or "HEAD"
    file = file_arg(args)
    paths = [file] if file else []
    env = await git_environment(cwd, config, ctx.cancelled)
    meta = await run_git(["show", "-s", f"--format={LOG_FORMAT}", rev, "--"], cwd, config, ctx.cancelled, env)
    commits = parse_log(meta.text)
    base = ["show", *_DIFF_SAFETY, "--format=", rev]
    files, patch, cut = await _patch_and_stats(base, paths, cwd, config, ctx, 3, env)
    head = log_summary(commits)
    body = commits[0]["body"] if commits else ""
    summary = head + (f"\n{excerpt(body, 400)}" if body else "") + "\n" + numstat_summary(files)
    if patch:
        summary += "\n" + fenced(excerpt(patch, PATCH_SHOWN), "patch")
    return ToolResult.ok(summary, commit=commits[0] if commits else None, files=files, patch=patch,
                         patchTruncated=cut)


async def git_blame(args: Mapping[str, Any], ctx: Any, config: ExecConfig) -> ToolResult:
    from .git_args import bounded_int, file_arg, repo_dir, revision
    from .git_blame_parse import blame_summary, parse_blame
    from .git_runner import run_git

    cwd = repo_dir(args, ctx.working_dir)
    file = file_arg(args, required=True)
    argv = ["blame", "--porcelain", "--no-textconv"]
    start = args.get("start_line")
    if start is not None:
        first = bounded_int(args, "start_line", 1, 1, 10_000_000)
        last = bounded_int(args, "end_line", first + 199, first, 10_000_000)
        argv.append(f"-L{first},{last}")
    rev = revision(args, "rev")
    if rev:
        argv.append(rev)
    argv += ["--", file or ""]
    out = await run_git(argv, cwd, config, ctx.cancelled)
    lines = parse_blame(out.text)
    return ToolResult.ok(blame_summary(lines) + truncation_note(out.truncated, out.total_bytes), lines=lines)


async def git_branch(args: Mapping[str, Any], ctx: Any, config: ExecConfig) -> ToolResult:
    from .git_args import repo_dir
    from .git_branch_parse import BRANCH_FORMAT, branch_summary, parse_branches
    from .git_runner import run_git

    cwd = repo_dir(args, ctx.working_dir)
    refs = ["refs/heads", "refs/remotes"] if args.get("all") else ["refs/heads"]
    out = await run_git(["for-each-ref", f"--format={BRANCH_FORMAT}", "--sort=-committerdate", *refs], cwd,
                        config, ctx.cancelled)
    branches = parse_branches(out.text)
    current = next((b["name"] for b in branches if b["current"]), None)
    return ToolResult.ok(branch_summary(branches), branches=branches, current=current)


_REF = {"type": "string", "description": "a revision or range, e.g. HEAD~3 or main..feature"}
_FILE = {"type": "string", "description": "limit to this file path"}


def git_tool_specs(runtime: RuntimeView) -> list[ToolSpec]:
    config = exec_config(runtime)
    return [
        git_spec("os.git.status", "Working-tree status of a git repository: branch, upstream, staged, unstaged and "
                 "untracked files.", {}, git_status, config, Tier.FREQUENT, '{"tool": "os.git.status", "args": {}}'),
        git_spec("os.git.log", "Recent commits (sha, author, date, subject), optionally for one ref or file.",
                 {"limit": {"type": "integer", "minimum": 1, "maximum": 500}, "ref": _REF, "file": _FILE},
                 git_log, config, Tier.FREQUENT, '{"tool": "os.git.log", "args": {"limit": 5}}'),
        git_spec("os.git.diff", "Changed files with line counts and the patch: unstaged by default, staged=true for "
                 "the index, ref to compare with a commit.",
                 {"staged": {"type": "boolean"}, "ref": _REF, "file": _FILE,
                  "context": {"type": "integer", "minimum": 0, "maximum": 50}},
                 git_diff, config, Tier.FREQUENT, '{"tool": "os.git.diff", "args": {"staged": true}}'),
        git_spec("os.git.show", "One commit: metadata, changed files and patch (default HEAD).",
                 {"rev": {"type": "string", "description": "commit to show (default HEAD)"}, "file": _FILE},
                 git_show, config, Tier.RARE, '{"tool": "os.git.show", "args": {"rev": "HEAD~1"}}'),
        git_spec("os.git.blame", "Who last changed each line of a file (optionally a line range).",
                 {"file": {"type": "string", "description": "file to blame"},
                  "start_line": {"type": "integer", "minimum": 1}, "end_line": {"type": "integer", "minimum": 1},
                  "rev": {"type": "string"}},
                 git_blame, config, Tier.RARE, '{"tool": "os.git.blame", "args": {"file": "README.md"}}',
                 required=("file",)),
        git_spec("os.git.branch", "Local branches (all=true adds remote ones) with upstream and ahead/behind.",
                 {"all": {"type": "boolean"}}, git_branch, config, Tier.RARE,
                 '{"tool": "os.git.branch", "args": {}}'),
    ]
