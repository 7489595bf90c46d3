"""os.fs.hash: a file's md5 / sha1 / sha256 / sha512, streamed in 1 MiB blocks."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from atomic_agent.api import ResourceClass, Tier, ToolContext, ToolResult, ToolSpec
from atomic_agent.plugins.os.fs.fs_env import FsEnv

NAME = "os.fs.hash"
ALGORITHMS = ("md5", "sha1", "sha256", "sha512")
BLOCK = 1 << 20

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to hash."},
        "algorithm": {"enum": list(ALGORITHMS), "description": "Digest (default sha256)."},
    },
    "required": ["path"],
    "additionalProperties": False,
}


def hash_file(path: Path, algorithm: str, cancelled: asyncio.Event | None = None) -> tuple[str, int]:
    digest = hashlib.new(algorithm)
    total = 0
    with open(path, "rb") as handle:
        while block := handle.read(BLOCK):
            if cancelled is not None and cancelled.is_set():
                raise InterruptedError("cancelled")
            digest.update(block)
            total += len(block)
    return digest.hexdigest(), total


def make_hash(env: FsEnv) -> ToolSpec:
    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        from atomic_agent.plugins.os.fs.path_args import PathArgError, display_path, resolve_path
        from atomic_agent.plugins.os.fs.read_guard import ReadRefused, admit_read
        from atomic_agent.plugins.os.fs_approval.trust_config_paths import trust_config_paths

        try:
            path = resolve_path(ctx, args.get("path"))
        except PathArgError as exc:
            return ToolResult.error(str(exc))
        shown = display_path(path, ctx)
        algorithm = str(args.get("algorithm") or "sha256")
        try:
            await admit_read(ctx, path, shown, (*trust_config_paths(ctx.state_dir), *env.extra_trust()), NAME)
            hexdigest, size = await asyncio.to_thread(hash_file, path, algorithm, ctx.cancelled)
        except ReadRefused as exc:
            return ToolResult.error(str(exc))
        except InterruptedError:
            return ToolResult("cancelled", f"hashing {shown} was cancelled")
        except OSError as exc:
            return ToolResult.error(f"{shown}: cannot be read ({exc.strerror or exc})")
        return ToolResult.ok(f"{algorithm} {hexdigest}  {shown} ({size} bytes)", algorithm=algorithm,
                             digest=hexdigest, size=size, path=str(path))

    return ToolSpec(NAME, "Checksum a file (md5, sha1, sha256, sha512), streamed.", SCHEMA,
                    ResourceClass.PURE_READ, run, durable=True, tier=Tier.RARE,
                    example='{"tool": "os.fs.hash", "args": {"path": "dist/app.tar.gz", "algorithm": "sha256"}}')
