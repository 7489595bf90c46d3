"""os.fs.read_document: PDF, DOCX, XLSX, PPTX, ODT/ODS/ODP and RTF as plain text.

The extraction lives in `document_text` and loads on the first call; this module holds
what the spec shows (name, schema, the supported kinds).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from atomic_agent.api import ResourceClass, Tier, ToolContext, ToolResult, ToolSpec
from atomic_agent.plugins.os.fs.fs_env import FsEnv

NAME = "os.fs.read_document"
DEFAULT_CHARS = 20_000
MAX_CHARS = 200_000
SUPPORTED = ".pdf, .docx, .xlsx, .pptx, .odt, .ods, .odp, .rtf"

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": f"The document ({SUPPORTED})."},
        "maxChars": {"type": "integer", "minimum": 100, "maximum": MAX_CHARS,
                     "description": f"Most characters of text to return (default {DEFAULT_CHARS})."},
    },
    "required": ["path"],
    "additionalProperties": False,
}


def make_read_document(env: FsEnv) -> ToolSpec:
    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        from atomic_agent.plugins.os.fs.document_text import extract_text
        from atomic_agent.plugins.os.fs.office_text import DocumentError
        from atomic_agent.plugins.os.fs.path_args import PathArgError, display_path, resolve_path
        from atomic_agent.plugins.os.fs.read_guard import ReadRefused, admit_read
        from atomic_agent.plugins.os.fs_approval.trust_config_paths import trust_config_paths

        try:
            path = resolve_path(ctx, args.get("path"))
            shown = display_path(path, ctx)
            await admit_read(ctx, path, shown, (*trust_config_paths(ctx.state_dir), *env.extra_trust()), NAME)
            cap = int(args.get("maxChars") or DEFAULT_CHARS)
            kind, text = await asyncio.to_thread(extract_text, path, cap)
        except (PathArgError, ReadRefused) as exc:
            return ToolResult.error(str(exc))
        except DocumentError as exc:
            return ToolResult.error(f"{display_path(path, ctx)}: {exc}")
        except OSError as exc:
            return ToolResult.error(f"cannot be read: {exc.strerror or exc}")
        more = len(text) > cap
        body = text[:cap]
        head = f"{shown} ({kind}, {len(text)} chars of text" + (f"; first {cap} shown)" if more else ")")
        if not text.strip():
            head = f"{shown} ({kind}): no extractable text (a scanned PDF needs OCR, which is not available)"
        return ToolResult.ok(f"{head}\n{body}", kind=kind, chars=len(text), truncated=more)

    return ToolSpec(NAME, f"Extract plain text from a document ({SUPPORTED}).", SCHEMA, ResourceClass.PURE_READ,
                    run, durable=True, tier=Tier.RARE,
                    example='{"tool": "os.fs.read_document", "args": {"path": "report.pdf"}}')
