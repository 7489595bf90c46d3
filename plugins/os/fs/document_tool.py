"""os.fs.read_document: PDF, DOCX, XLSX, PPTX, ODT/ODS/ODP and RTF as plain text.

PDF goes through pypdf and RTF through striprtf (both pure Python, imported only when such
a file is read); the office formats are parsed from their zipped XML with the standard
library. Anything else gets a clear "unsupported" answer naming the kinds that work.
"""

from __future__ import annotations

import asyncio
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from atomic_agent.api import ResourceClass, Tier, ToolContext, ToolResult, ToolSpec
from atomic_agent.plugins.os.fs.fs_env import FsEnv
from atomic_agent.plugins.os.fs.office_text import DocumentError, docx_text, odf_text, pptx_text, xlsx_text
from atomic_agent.plugins.os.fs.path_args import PathArgError, display_path, resolve_path
from atomic_agent.plugins.os.fs.read_guard import ReadRefused, admit_read
from atomic_agent.plugins.os.fs_approval.trust_config_paths import trust_config_paths

NAME = "os.fs.read_document"
DEFAULT_CHARS = 20_000
MAX_CHARS = 200_000
MAX_RTF_BYTES = 32 * 1024 * 1024
MAX_PDF_PAGES = 2000
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


class MissingLibrary(DocumentError):
    pass


def pdf_text(path: Path, max_chars: int) -> str:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError:
        raise MissingLibrary("reading PDF needs the pypdf package: pip install pypdf") from None
    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted:
            raise DocumentError("the PDF is encrypted; it cannot be read without its password")
        pages, total = [], 0
        for number, page in enumerate(reader.pages[:MAX_PDF_PAGES], 1):
            text = page.extract_text() or ""
            pages.append(f"## page {number}\n{text.strip()}")
            total += len(text)
            if total > max_chars:
                break
        return "\n\n".join(pages)
    except PdfReadError as exc:
        raise DocumentError(f"the PDF is damaged ({exc})") from None


def rtf_text(path: Path) -> str:
    try:
        from striprtf.striprtf import rtf_to_text
    except ImportError:
        raise MissingLibrary("reading RTF needs the striprtf package: pip install striprtf") from None
    if path.stat().st_size > MAX_RTF_BYTES:
        raise DocumentError(f"the RTF file is over {MAX_RTF_BYTES // (1024 * 1024)} MiB")
    return rtf_to_text(path.read_text(encoding="latin-1"), errors="ignore")


_BY_SUFFIX = {".docx": docx_text, ".xlsx": xlsx_text, ".xlsm": xlsx_text, ".pptx": pptx_text,
              ".odt": odf_text, ".ods": odf_text, ".odp": odf_text}


def extract_text(path: Path, max_chars: int) -> tuple[str, str]:
    """(kind, text); DocumentError for damaged, unsupported or unreadable documents."""
    with open(path, "rb") as handle:
        head = handle.read(8)
    suffix = path.suffix.lower()
    if head.startswith(b"%PDF-"):
        return "pdf", pdf_text(path, max_chars)
    if head.startswith(b"{\\rtf"):
        return "rtf", rtf_text(path)
    if head.startswith(b"\xd0\xcf\x11\xe0"):
        raise DocumentError(f"legacy binary Office files ({suffix or 'doc/xls/ppt'}) are not supported; save it as "
                            f"{'.docx' if suffix == '.doc' else '.xlsx' if suffix == '.xls' else '.pptx'} first")
    if head.startswith(b"PK") and suffix in _BY_SUFFIX:
        try:
            return suffix.lstrip("."), _BY_SUFFIX[suffix](path)
        except zipfile.BadZipFile as exc:
            raise DocumentError(f"the {suffix} file is damaged ({exc})") from None
    raise DocumentError(f"{suffix or 'this file type'} is not a supported document kind ({SUPPORTED}); "
                        "for plain text use os.fs.read")


def make_read_document(env: FsEnv) -> ToolSpec:
    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
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
