"""Plain text from the zip-of-XML office formats with the standard library only:
DOCX (word/document.xml), XLSX (shared strings + sheets, one TSV block per sheet),
PPTX (one block per slide) and OpenDocument ODT/ODS/ODP (content.xml).

Each XML part is read with a size cap, so a zip bomb dressed as a document cannot exhaust
memory; expat's entity-expansion limits cover the billion-laughs case.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree

PART_CAP = 64 * 1024 * 1024

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
S = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
R_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
TEXT_NS = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
TABLE_NS = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"


class DocumentError(ValueError):
    pass


def _part(archive: zipfile.ZipFile, name: str) -> ElementTree.Element:
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise DocumentError(f"the document has no {name} part (damaged or not this format)") from None
    if info.file_size > PART_CAP:
        raise DocumentError(f"{name} declares {info.file_size} bytes; over the {PART_CAP}-byte cap")
    with archive.open(info) as stream:
        data = stream.read(PART_CAP + 1)
    if len(data) > PART_CAP:
        raise DocumentError(f"{name} inflates past {PART_CAP} bytes; refusing a possible zip bomb")
    try:
        return ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        raise DocumentError(f"{name} is not well-formed XML ({exc})") from None


def docx_text(path: Path) -> str:
    with zipfile.ZipFile(path) as archive:
        root = _part(archive, "word/document.xml")
    paragraphs = []
    for para in root.iter(f"{W}p"):
        pieces = []
        for node in para.iter():
            if node.tag == f"{W}t" and node.text:
                pieces.append(node.text)
            elif node.tag == f"{W}tab":
                pieces.append("\t")
            elif node.tag in (f"{W}br", f"{W}cr"):
                pieces.append("\n")
        paragraphs.append("".join(pieces))
    return "\n".join(paragraphs)


def _column_index(ref: str) -> int:
    letters = re.match(r"[A-Z]+", ref or "")
    index = 0
    for ch in letters.group(0) if letters else "A":
        index = index * 26 + (ord(ch) - 64)
    return index - 1


def xlsx_text(path: Path) -> str:
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
        shared: list[str] = []
        if "xl/sharedStrings.xml" in names:
            for item in _part(archive, "xl/sharedStrings.xml").iter(f"{S}si"):
                shared.append("".join(t.text or "" for t in item.iter(f"{S}t")))
        workbook = _part(archive, "xl/workbook.xml")
        sheet_names = [s.get("name", f"sheet{i + 1}") for i, s in enumerate(workbook.iter(f"{S}sheet"))]
        sheet_parts = sorted((n for n in names if re.fullmatch(r"xl/worksheets/sheet\d+\.xml", n)),
                             key=lambda n: int(re.findall(r"\d+", n)[-1]))
        blocks = []
        for index, part in enumerate(sheet_parts):
            rows = []
            for row in _part(archive, part).iter(f"{S}row"):
                cells: dict[int, str] = {}
                for cell in row.iter(f"{S}c"):
                    kind = cell.get("t")
                    value = cell.find(f"{S}v")
                    if kind == "s" and value is not None and value.text is not None:
                        text = shared[int(value.text)] if int(value.text) < len(shared) else ""
                    elif kind == "inlineStr":
                        text = "".join(t.text or "" for t in cell.iter(f"{S}t"))
                    else:
                        text = value.text if value is not None and value.text is not None else ""
                    cells[_column_index(cell.get("r", ""))] = text
                if cells:
                    rows.append("\t".join(cells.get(i, "") for i in range(max(cells) + 1)))
            title = sheet_names[index] if index < len(sheet_names) else part.rsplit("/", 1)[-1]
            blocks.append(f"## sheet: {title}\n" + "\n".join(rows))
    return "\n\n".join(blocks)


def pptx_text(path: Path) -> str:
    with zipfile.ZipFile(path) as archive:
        slides = sorted((n for n in archive.namelist() if re.fullmatch(r"ppt/slides/slide\d+\.xml", n)),
                        key=lambda n: int(re.findall(r"\d+", n)[-1]))
        blocks = []
        for number, part in enumerate(slides, 1):
            paragraphs = ["".join(t.text or "" for t in p.iter(f"{A}t")) for p in _part(archive, part).iter(f"{A}p")]
            blocks.append(f"## slide {number}\n" + "\n".join(p for p in paragraphs if p))
    return "\n\n".join(blocks)


def _odf_node_text(node: ElementTree.Element) -> str:
    out = [node.text or ""]
    for child in node:
        if child.tag == f"{TEXT_NS}s":
            out.append(" " * int(child.get(f"{TEXT_NS}c", "1")))
        elif child.tag == f"{TEXT_NS}tab":
            out.append("\t")
        elif child.tag == f"{TEXT_NS}line-break":
            out.append("\n")
        else:
            out.append(_odf_node_text(child))
        out.append(child.tail or "")
    return "".join(out)


def odf_text(path: Path) -> str:
    with zipfile.ZipFile(path) as archive:
        root = _part(archive, "content.xml")
    lines: list[str] = []

    def visit(node: ElementTree.Element) -> None:
        if node.tag in (f"{TEXT_NS}p", f"{TEXT_NS}h"):
            lines.append(_odf_node_text(node))
            return
        if node.tag == f"{TABLE_NS}table-row":
            cells = [" ".join(_odf_node_text(p) for p in cell.iter(f"{TEXT_NS}p"))
                     for cell in node.iter(f"{TABLE_NS}table-cell")]
            while cells and not cells[-1]:
                cells.pop()  # spreadsheets pad rows with empty repeated cells
            if cells:
                lines.append("\t".join(cells))
            return
        for child in node:
            visit(child)

    visit(root)
    return "\n".join(lines)
