"""Minimal but valid PDF / DOCX / XLSX / PPTX / ODT / ODS / RTF files for read_document tests."""

from __future__ import annotations

import zipfile
from pathlib import Path

W_NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
S_NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
A_NS = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'
ODF_NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
          'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
          'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"')


def _zip(path: Path, parts: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, body in parts.items():
            z.writestr(name, body)
    return path


def make_docx(path: Path) -> Path:
    body = (f'<w:document {W_NS}><w:body><w:p><w:r><w:t>Hello</w:t></w:r><w:r><w:tab/><w:t>world</w:t></w:r></w:p>'
            '<w:p><w:r><w:t>Second paragraph</w:t></w:r></w:p></w:body></w:document>')
    return _zip(path, {"[Content_Types].xml": "<Types/>", "word/document.xml": body})


def make_xlsx(path: Path) -> Path:
    return _zip(path, {
        "xl/workbook.xml": f'<workbook {S_NS}><sheets><sheet name="Budget" sheetId="1"/></sheets></workbook>',
        "xl/sharedStrings.xml": f'<sst {S_NS}><si><t>item</t></si><si><t>cost</t></si><si><t>tea</t></si></sst>',
        "xl/worksheets/sheet1.xml": (
            f'<worksheet {S_NS}><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>'
            '<row r="2"><c r="A2" t="s"><v>2</v></c><c r="C2"><v>4.5</v></c></row></sheetData></worksheet>'),
    })


def make_pptx(path: Path) -> Path:
    slide = (f'<p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" {A_NS}><p:cSld><p:spTree>'
             '<p:sp><p:txBody><a:p><a:r><a:t>Quarterly </a:t></a:r><a:r><a:t>review</a:t></a:r></a:p></p:txBody>'
             '</p:sp></p:spTree></p:cSld></p:sld>')
    return _zip(path, {"ppt/slides/slide1.xml": slide, "ppt/slides/slide2.xml": slide.replace("review", "plan")})


def make_odt(path: Path) -> Path:
    content = (f'<office:document-content {ODF_NS}><office:body><office:text><text:h>Title</text:h>'
               '<text:p>Body<text:s text:c="2"/>text</text:p></office:text></office:body></office:document-content>')
    return _zip(path, {"mimetype": "application/vnd.oasis.opendocument.text", "content.xml": content})


def make_ods(path: Path) -> Path:
    content = (f'<office:document-content {ODF_NS}><office:body><office:spreadsheet><table:table>'
               '<table:table-row><table:table-cell><text:p>a</text:p></table:table-cell>'
               '<table:table-cell><text:p>b</text:p></table:table-cell></table:table-row>'
               '</table:table></office:spreadsheet></office:body></office:document-content>')
    return _zip(path, {"content.xml": content})


def make_pdf(path: Path, text: str = "Hello PDF world") -> Path:
    stream = f"BT /F1 24 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))
    return path


def make_rtf(path: Path) -> Path:
    path.write_text(r"{\rtf1\ansi{\fonttbl\f0\fswiss Helvetica;}\f0\pard Hello {\b bold} RTF.\par}")
    return path
