"""os.fs.read_document: PDF, DOCX, XLSX, PPTX, ODT/ODS, RTF to text; clear errors otherwise."""

from __future__ import annotations

from tests.plugins.os import fs_document_kit as kit
from tests.plugins.os.fs_kit import make_world


async def _text(w, name: str) -> str:
    r = await w.call("os.fs.read_document", {"path": name})
    assert r.status == "ok", r.summary
    return r.summary


async def test_docx_paragraphs_and_tabs(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    kit.make_docx(w.ws / "a.docx")
    assert (await _text(w, "a.docx")).splitlines()[1:] == ["Hello\tworld", "Second paragraph"]


async def test_xlsx_sheets_as_tab_separated_rows(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    kit.make_xlsx(w.ws / "b.xlsx")
    assert (await _text(w, "b.xlsx")).splitlines()[1:] == ["## sheet: Budget", "item\tcost", "tea\t\t4.5"]


async def test_pptx_slides(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    kit.make_pptx(w.ws / "c.pptx")
    text = await _text(w, "c.pptx")
    assert "## slide 1\nQuarterly review" in text and "## slide 2\nQuarterly plan" in text


async def test_odt_and_ods(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    kit.make_odt(w.ws / "d.odt")
    kit.make_ods(w.ws / "e.ods")
    assert (await _text(w, "d.odt")).splitlines()[1:] == ["Title", "Body  text"]
    assert (await _text(w, "e.ods")).splitlines()[1:] == ["a\tb"]


async def test_pdf_text(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    kit.make_pdf(w.ws / "f.pdf")
    text = await _text(w, "f.pdf")
    assert "## page 1" in text and "Hello PDF world" in text


async def test_rtf_text(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    kit.make_rtf(w.ws / "g.rtf")
    assert "Hello bold RTF." in await _text(w, "g.rtf")


async def test_unsupported_and_legacy_kinds_are_clear_errors(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.ws / "old.doc").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(100))
    (w.ws / "x.txt").write_text("plain")
    legacy = await w.call("os.fs.read_document", {"path": "old.doc"})
    assert legacy.status == "error" and "legacy binary Office" in legacy.summary and ".docx" in legacy.summary
    plain = await w.call("os.fs.read_document", {"path": "x.txt"})
    assert plain.status == "error" and "not a supported document kind" in plain.summary and ".pdf" in plain.summary


async def test_damaged_document_is_a_clear_error(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.ws / "broken.docx").write_bytes(b"PK\x03\x04garbage")
    r = await w.call("os.fs.read_document", {"path": "broken.docx"})
    assert r.status == "error" and "damaged" in r.summary


async def test_max_chars_truncates(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    kit.make_docx(w.ws / "a.docx")
    r = await w.call("os.fs.read_document", {"path": "a.docx", "maxChars": 100})
    assert r.details["truncated"] is False
