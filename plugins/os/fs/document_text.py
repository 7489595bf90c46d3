"""A document's plain text, by kind: what `os.fs.read_document` returns.

PDF goes through pypdf and RTF through striprtf (both pure Python, imported only when such
a file is read); the office formats are parsed from their zipped XML with the standard
library (`office_text`). Anything else gets a clear "unsupported" answer naming the kinds
that work.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from atomic_agent.plugins.os.fs.document_tool import SUPPORTED
from atomic_agent.plugins.os.fs.office_text import DocumentError, docx_text, odf_text, pptx_text, xlsx_text

MAX_RTF_BYTES = 32 * 1024 * 1024
MAX_PDF_PAGES = 2000


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
