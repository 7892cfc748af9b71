"""A document's original for the viewer, over real HTTP on loopback: the file download (a source file,
an archive member, an upload), a PDF page as a PNG, where a span stands on the page, and the layout the
text endpoint gives.  A key scoped to A meets B's documents as missing ones."""

from __future__ import annotations

import struct
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from api.conftest import LiveServer, job_done
from docqa.api import create_app
from docqa.errors import UnreadableFileError
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from test_access import kb  # noqa: F401  (the SQLite / PostgreSQL fixture)
from web.viewer_docs import PDF_PAGES, PDF_QUOTE, SLIDES, STAFF, make_pdf, make_pptx, make_xlsx, make_zip, quote_rect


@pytest.fixture
def kb_docs(tmp_path: Path):
    settings = Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"},
                        api={"upload_dir": str(tmp_path / "uploads")})
    a, b = tmp_path / "A", tmp_path / "B"
    a.mkdir(), b.mkdir()
    files = {"pdf": make_pdf(a / "handbook.pdf", PDF_PAGES), "deck": make_pptx(a / "review.pptx", SLIDES),
             "sheet": make_xlsx(a / "staff.xlsx", STAFF), "zh": make_pdf(a / "报告 \"final\".pdf", ["Quarterly report."]),
             "md": a / "notes.md", "b": make_pdf(b / "secret.pdf", ["Salaries are confidential."])}
    files["md"].write_text("# Notes\n\nNothing to see.\n", encoding="utf-8")
    member = make_pdf(tmp_path / "guide.pdf", ["The guide inside the archive."]).read_bytes()
    files["zip"] = make_zip(a / "manuals.zip", {"manuals/guide.pdf": member, "readme.md": b"# Manuals\n\nTwo files.\n"})
    with KnowledgeBase(settings) as base:
        base.add([a], "A")
        base.add([b], "B")
        ids = {d.path: d.document_id for d in base.documents.list()}
        _, reader_a = base.keys.create("reader", ["A"], "reader of A")
        _, editor_a = base.keys.create("editor", ["A"], "editor of A")
    app = create_app(settings, kb_factory=lambda: KnowledgeBase(settings))
    with LiveServer(app) as server:
        yield server, files, ids, member, {"reader": reader_a, "editor": editor_a}


V = "/api/v1"


def _client(server, key: str) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=30)


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.mark.slow
def test_a_reader_downloads_its_collections_files_and_never_another(kb_docs):
    server, files, ids, member, keys = kb_docs
    with _client(server, keys["reader"]) as c:
        r = c.get(f"{V}/documents/{ids[str(files['pdf'])]}/file")
        assert r.status_code == 200 and r.content == files["pdf"].read_bytes()
        assert r.headers["content-type"] == "application/pdf"
        assert r.headers["content-disposition"].startswith('attachment; filename="handbook.pdf"')
        assert r.headers["x-content-type-options"] == "nosniff" and r.headers["content-security-policy"] == "sandbox"
        zh = c.get(f"{V}/documents/{ids[str(files['zh'])]}/file")  # a quote and non-ASCII in the name
        assert zh.status_code == 200
        assert f"filename*=UTF-8''{quote(files['zh'].name, safe='')}" in zh.headers["content-disposition"]
        assert '"final"' not in zh.headers["content-disposition"]
        inner = c.get(f"{V}/documents/{ids[str(files['zip']) + '!/manuals/guide.pdf']}/file")  # an archive member
        assert inner.status_code == 200 and inner.content == member
        assert inner.headers["content-disposition"].startswith('attachment; filename="guide.pdf"')

        secret = ids[str(files["b"])]
        for path in (f"/documents/{secret}/file", f"/documents/{secret}/pages/1",
                     f"/documents/{secret}/pages/1/boxes?char_start=0&char_end=5", f"/documents/{secret}/text"):
            theirs, missing = c.get(V + path), c.get(V + path.replace(secret, "0123456789abcdef"))
            assert theirs.status_code == missing.status_code == 404, path
            assert theirs.json()["error"]["code"] == missing.json()["error"]["code"] == "not_found"
            assert "Salaries" not in theirs.text
    assert httpx.get(f"{server.url}/api/v1/documents/{ids[str(files['pdf'])]}/file").status_code == 401


@pytest.mark.slow
def test_an_uploaded_file_downloads_as_uploaded(kb_docs):
    server, _, _, _, keys = kb_docs
    data = "# Uploaded\n\nKept as sent: ünïcode.\n".encode()
    with _client(server, keys["editor"]) as c:
        job = job_done(c, c.post(f"{V}/documents", files={"files": ("upload.md", data, "text/markdown")},
                                 data={"collection": "A"}))
        assert job["status"] == "succeeded", job
        doc = next(d for d in c.get(f"{V}/documents?collection=A").json()["documents"] if d["path"].endswith("upload.md"))
        r = c.get(f"{V}/documents/{doc['document_id']}/file")
        assert r.status_code == 200 and r.content == data


@pytest.mark.slow
def test_a_file_gone_from_disk_or_changed_is_a_clear_error(kb_docs):
    server, files, ids, _, keys = kb_docs
    files["pdf"].unlink()
    with files["deck"].open("ab") as deck:
        deck.write(b"\0")  # changed since it was indexed: its citations may point elsewhere now
    with _client(server, keys["reader"]) as c:
        for path in ("file", "pages/2"):
            r = c.get(f"{V}/documents/{ids[str(files['pdf'])]}/{path}")
            assert r.status_code == 422 and r.json()["error"]["code"] == "unreadable_file"
            assert "no longer on disk" in r.json()["error"]["message"]
        changed = c.get(f"{V}/documents/{ids[str(files['deck'])]}/file")
        assert changed.status_code == 422 and "changed since it was indexed" in changed.json()["error"]["message"]


@pytest.mark.slow
def test_pdf_pages_render_bounded_and_bad_numbers_are_refused(kb_docs):
    server, files, ids, _, keys = kb_docs
    doc = ids[str(files["pdf"])]
    with _client(server, keys["reader"]) as c:
        r = c.get(f"{V}/documents/{doc}/pages/2")
        assert r.status_code == 200 and r.headers["content-type"] == "image/png"
        width, height = _png_size(r.content)
        assert (width, height) == (round(595.28 * 1.5), round(841.89 * 1.5))  # A4 at the default scale
        assert _png_size(c.get(f"{V}/documents/{doc}/pages/2?scale=0.5").content)[0] == round(595.28 * 0.5)
        assert c.get(f"{V}/documents/{doc}/pages/2").content == r.content  # the cached image
        past = c.get(f"{V}/documents/{doc}/pages/4")
        assert past.status_code == 404 and "has 3 pages" in past.json()["error"]["message"]
        for bad in ("0", "-1", "two", "100001"):
            assert c.get(f"{V}/documents/{doc}/pages/{bad}").status_code == 422, bad
        assert c.get(f"{V}/documents/{doc}/pages/1?scale=10").status_code == 422
        not_pdf = c.get(f"{V}/documents/{ids[str(files['md'])]}/pages/1")
        assert not_pdf.status_code == 404 and "only PDF documents" in not_pdf.json()["error"]["message"]
        assert c.get(f"{V}/documents/{doc}/pages/1/boxes?char_start=9&char_end=9").status_code == 422


@pytest.mark.slow
def test_boxes_stand_where_the_quote_is_on_its_page(kb_docs):
    server, files, ids, _, keys = kb_docs
    doc = ids[str(files["pdf"])]
    with _client(server, keys["reader"]) as c:
        text = c.get(f"{V}/documents/{doc}/text").json()["text"]
        start = text.index(PDF_QUOTE)
        span = f"char_start={start}&char_end={start + len(PDF_QUOTE)}"
        boxes = c.get(f"{V}/documents/{doc}/pages/2/boxes?{span}").json()["boxes"]
        assert c.get(f"{V}/documents/{doc}/pages/1/boxes?{span}").json()["boxes"] == []
        assert c.get(f"{V}/documents/{doc}/pages/5/boxes?{span}").status_code == 404
    assert 1 <= len(boxes) <= 3  # one per line the sentence wraps over
    left, top, right, bottom = quote_rect(files["pdf"], 2, PDF_QUOTE)
    first = boxes[0]
    assert abs(first["top"] - top) < 0.01 and abs(first["bottom"] - bottom) < 0.01
    assert first["left"] <= left + 0.01 and first["right"] >= right - 0.01
    assert all(0 <= b["left"] < b["right"] <= 1 and 0 <= b["top"] < b["bottom"] <= 1 for b in boxes)


@pytest.mark.slow
def test_the_text_endpoint_gives_pages_slides_and_sheets(kb_docs):
    server, files, ids, _, keys = kb_docs
    with _client(server, keys["reader"]) as c:
        pdf = c.get(f"{V}/documents/{ids[str(files['pdf'])]}/text").json()
        deck = c.get(f"{V}/documents/{ids[str(files['deck'])]}/text").json()
        sheet = c.get(f"{V}/documents/{ids[str(files['sheet'])]}/text").json()
        notes = c.get(f"{V}/documents/{ids[str(files['md'])]}/text").json()
    assert pdf["layout"]["kind"] == "page" and pdf["layout"]["count"] == 3
    page2 = pdf["layout"]["units"][1]
    assert page2["n"] == 2 and PDF_QUOTE in pdf["text"][page2["char_start"]:page2["char_end"]]
    assert deck["layout"]["kind"] == "slide" and deck["layout"]["count"] == 3
    assert [u["title"] for u in deck["layout"]["units"]] == [title for title, _ in SLIDES]
    slide2 = deck["layout"]["units"][1]
    assert "3 million euros" in deck["text"][slide2["char_start"]:slide2["char_end"]]
    assert "Agenda" not in deck["text"][slide2["char_start"]:slide2["char_end"]]
    assert sheet["layout"] == {"kind": "sheet", "count": 1, "units": [
        {"name": "Staff", "rows": [[1, 3], [5, 2]], "line_start": 1, "line_end": 6, "char_start": 0,
         "char_end": len(sheet["text"])}]}  # rows 1-3, then 5-6: row 4 is blank
    assert notes["layout"] is None and notes["type"] == "markdown"


def test_only_the_indexed_file_is_served_never_an_edit_or_a_link_out(kb_docs, tmp_path):
    """An edit of the same size, a symlink (even to identical bytes) and a folder swapped for a link
    out of the collection's folder: 422 with the reason, for the download and the page image."""
    server, files, ids, _, keys = kb_docs
    outside = tmp_path / "outside"
    outside.mkdir()
    md, pdf = files["md"], files["pdf"]
    original_md = md.read_bytes()
    md.write_bytes(original_md.replace(b"Nothing", b"Anythin"))  # same size, other bytes
    assert len(md.read_bytes()) == len(original_md)
    twin = outside / "handbook.pdf"
    twin.write_bytes(pdf.read_bytes())  # the very bytes indexed, but reached through a link
    pdf.unlink()
    pdf.symlink_to(twin)
    with _client(server, keys["reader"]) as c:
        edited = c.get(f"{V}/documents/{ids[str(md)]}/file")
        assert edited.status_code == 422 and edited.json()["error"]["code"] == "unreadable_file"
        assert "changed since it was indexed" in edited.json()["error"]["message"] and "Anythin" not in edited.text
        for path in ("file", "pages/1"):
            linked = c.get(f"{V}/documents/{ids[str(pdf)]}/{path}")
            assert linked.status_code == 422 and "symlink" in linked.json()["error"]["message"], path
            assert linked.headers["content-type"].startswith("application/json")


def test_a_folder_swapped_for_a_link_out_of_the_collection_is_not_served(tmp_path, kb):  # noqa: F811
    settings = Settings(kb=kb, embed={"provider": "none"}, llm={"provider": "none"})  # SQLite and PostgreSQL
    docs, outside = tmp_path / "docs", tmp_path / "outside"
    (docs / "sub").mkdir(parents=True)
    (outside / "sub").mkdir(parents=True)
    (docs / "top.md").write_text("# Top\n\nThe top file.\n", encoding="utf-8")
    secret = "# Plan\n\nThe plan file.\n"
    (docs / "sub" / "plan.md").write_text(secret, encoding="utf-8")
    (outside / "sub" / "plan.md").write_text(secret, encoding="utf-8")  # the same bytes, outside the folder
    with KnowledgeBase(settings) as core:
        core.add([docs], "A")
        plan = core.documents.get(docs / "sub" / "plan.md", "A").document_id
        assert core.viewer.file(plan).read() == secret.encode()
        edited = docs / "top.md"
        edited.write_text("# Top\n\nThe t0p file.\n", encoding="utf-8")  # the same size, another content
        with pytest.raises(UnreadableFileError, match="same size, other content"):
            core.viewer.file(core.documents.get(edited, "A").document_id)
        (docs / "sub" / "plan.md").unlink()
        (docs / "sub").rmdir()
        (docs / "sub").symlink_to(outside / "sub")
        with pytest.raises(UnreadableFileError, match="outside the folder it was added from"):
            core.viewer.file(plan)


def test_every_response_is_for_this_origin_only(kb_docs):
    """Cross-Origin-Resource-Policy and -Opener-Policy on page images, originals, API answers, errors,
    streams and the page: a page of another origin (even another port of this host) cannot embed them."""
    server, files, ids, _, keys = kb_docs
    doc = ids[str(files["pdf"])]
    with _client(server, keys["reader"]) as c:
        responses = [c.get(f"{V}/documents/{doc}/pages/1"), c.get(f"{V}/documents/{doc}/file"), c.get(f"{V}/collections"),
                     c.get(f"{V}/documents/0123456789abcdef/file"), c.post(f"{V}/search", json={"query": ""}),
                     c.post(f"{V}/ask", json={"question": "What is in the handbook?"}, headers={"Accept": "text/event-stream"}),
                     c.get("/"), httpx.get(f"{server.url}{V}/collections")]
    assert [r.status_code for r in responses] == [200, 200, 200, 404, 422, 200, 200, 401]
    for r in responses:
        assert r.headers["cross-origin-resource-policy"] == "same-origin", r.request.url
        assert r.headers["cross-origin-opener-policy"] == "same-origin", r.request.url
