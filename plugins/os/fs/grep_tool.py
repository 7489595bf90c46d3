"""os.fs.grep: lines matching a regular expression, as `path:line:text`.

ripgrep runs when it is on PATH; otherwise (or when ripgrep rejects the pattern, e.g. a
look-around it does not support) the pure-Python searcher gives the same output.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from atomic_agent.api import ResourceClass, Tier, ToolContext, ToolResult, ToolSpec
from atomic_agent.plugins.os.fs.fs_env import FsEnv

if TYPE_CHECKING:
    from atomic_agent.plugins.os.fs.grep_query import GrepOutcome, GrepQuery

NAME = "os.fs.grep"
DEFAULT_LIMIT = 100

SCHEMA = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "minLength": 1, "description": "Regular expression to search for."},
        "path": {"type": "string", "description": "File or directory to search (default: the session cwd)."},
        "glob": {"type": "string", "description": "Only files matching this glob, e.g. \"*.py\"."},
        "ignoreCase": {"type": "boolean", "description": "Case-insensitive (default false)."},
        "fixedStrings": {"type": "boolean", "description": "Treat pattern as literal text (default false)."},
        "hidden": {"type": "boolean", "description": "Search dot-files too (default false)."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 2000,
                  "description": f"Most matching lines (default {DEFAULT_LIMIT})."},
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


async def run_grep(query: GrepQuery, cancelled: asyncio.Event | None = None,
                   environ: dict[str, str] | None = None) -> GrepOutcome:
    from atomic_agent.plugins.os.fs.grep_python import compile_query, search_python
    from atomic_agent.plugins.os.fs.grep_ripgrep import RipgrepError, ripgrep_binary, search_ripgrep

    compile_query(query)  # one error message for a bad pattern, whichever engine runs
    binary = ripgrep_binary(environ)
    if binary is not None:
        try:
            return await search_ripgrep(binary, query, cancelled)
        except (RipgrepError, OSError):
            pass
    return await asyncio.to_thread(search_python, query, cancelled)


def render(outcome: GrepOutcome, query: GrepQuery, shown: str) -> str:
    files = len({m.path for m in outcome.matches})
    if not outcome.matches:
        return f"no matches for {query.pattern!r} in {shown}"
    head = f"{len(outcome.matches)} match(es) in {files} file(s) under {shown}"
    if outcome.truncated:
        head += " (stopped at limit; narrow the pattern, path or glob)"
    return "\n".join([head, *(f"{m.path}:{m.line}:{m.text}" for m in outcome.matches)])


def make_grep(env: FsEnv) -> ToolSpec:
    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        from atomic_agent.plugins.os.fs.glob_pattern import GlobPatternError, compile_glob
        from atomic_agent.plugins.os.fs.grep_guard import guard_matches
        from atomic_agent.plugins.os.fs.grep_python import GrepPatternError
        from atomic_agent.plugins.os.fs.grep_query import GrepQuery
        from atomic_agent.plugins.os.fs.path_args import PathArgError, display_path, resolve_path
        from atomic_agent.plugins.os.fs.read_guard import ReadRefused, ask_sensitive, sensitive_store
        from atomic_agent.plugins.os.fs_approval.trust_config_paths import trust_config_paths

        try:
            root = resolve_path(ctx, args.get("path") or ".")
            glob = args.get("glob")
            if glob:
                compile_glob(glob)
        except (PathArgError, GlobPatternError) as exc:
            return ToolResult.error(str(exc))
        shown = display_path(root, ctx)
        if not root.exists():
            return ToolResult.error(f"no such file or directory: {shown}")
        query = GrepQuery(str(args.get("pattern")), root, glob or None, bool(args.get("ignoreCase")),
                          bool(args.get("fixedStrings")), bool(args.get("hidden")),
                          int(args.get("limit") or DEFAULT_LIMIT))
        store = await asyncio.to_thread(sensitive_store, root)
        try:
            if store is not None:  # a search rooted in a credential store is one sensitive read
                await ask_sensitive(ctx, NAME, f"search {shown}", store, [str(root)])
            outcome = await run_grep(query, ctx.cancelled)
        except (GrepPatternError, ReadRefused) as exc:
            return ToolResult.error(str(exc))
        trust = (*trust_config_paths(ctx.state_dir), *env.extra_trust())
        guarded = await asyncio.to_thread(guard_matches, outcome, query, trust, store)
        outcome = guarded.outcome
        text = render(outcome, query, shown) + (f"\n({guarded.note()})" if guarded.note() else "")
        return ToolResult.ok(text, engine=outcome.engine, truncated=outcome.truncated,
                             withheldSecretFiles=guarded.secret_files, withheldStoreFiles=guarded.store_files,
                             matches=[{"path": m.path, "line": m.line, "text": m.text} for m in outcome.matches])

    return ToolSpec(NAME, "Search file contents by regex; prints path:line:text (ripgrep when installed).",
                    SCHEMA, ResourceClass.PURE_READ, run, durable=True, tier=Tier.FREQUENT,
                    example='{"tool": "os.fs.grep", "args": {"pattern": "def main", "glob": "*.py"}}')
