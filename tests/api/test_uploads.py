"""Uploads and server-side ingestion: safe names, size limits, type checks, empty files, the
ingest allow-list; a background job with progress; removing a document removes its upload."""

from __future__ import annotations

import os

import httpx
import pytest
from fastapi.testclient import TestClient

from docqa.api.uploads import safe_name
from docqa.errors import InputError

from api.conftest import job_done
from api.test_errors import assert_error

BOTH_BACKENDS = True  # the tests that make an app run on SQLite and PostgreSQL (api/conftest.py)

MD = b"# Rotation\n\nAPI keys are rotated every 90 days.\n"


def upload(c, *files, collection: str | None = None):
    data = {"collection": collection} if collection else {}
    return c.post("/api/v1/documents", files=[("files", f) for f in files], data=data)


@pytest.mark.parametrize("raw,safe", [
    ("report.pdf", "report.pdf"),
    ("../../etc/passwd", "passwd"),
    ("..\\..\\windows\\win.ini", "win.ini"),
    ("/abs/path/notes.md", "notes.md"),
    (".env", "env"),
    ("a\x00b\x1fc.txt", "abc.txt"),
    ('what?<>:"|*.md', "what_______.md"),
    ("运维 手册.md", "运维 手册.md"),
    ("trailing. . ", "trailing"),
    ("x" * 300 + ".md", "x" * 197 + ".md"),
])
def test_safe_names(raw, safe):
    assert safe_name(raw) == safe


@pytest.mark.parametrize("raw", ["", "..", "...", "/", "../", " . ", "\x00"])
def test_unusable_names(raw):
    with pytest.raises(InputError):
        safe_name(raw)


def test_upload_is_indexed_by_a_job_with_progress(client, tmp_path):
    r = upload(client, ("keys.md", MD, "text/markdown"), collection="team")
    assert r.status_code == 202 and r.json()["files"] == [{"name": "keys.md", "size": len(MD), "type": "markdown"}]
    assert r.headers["location"] == f"/api/v1/jobs/{r.json()['job']['id']}"
    job = job_done(client, r)
    assert job["status"] == "succeeded" and job["progress"]["done"] == job["progress"]["total"] == 1
    assert job["result"]["added"] == [str(tmp_path / "uploads" / "team" / "keys.md")]
    hits = client.post("/api/v1/search", json={"query": "rotated", "collection": "team"}).json()["hits"]
    assert hits and hits[0]["path"].endswith("team/keys.md")
    doc = client.get("/api/v1/documents", params={"collection": "team"}).json()["documents"][0]
    removed = client.delete(f"/api/v1/documents/{doc['document_id']}")
    assert removed.status_code == 200 and not (tmp_path / "uploads" / "team" / "keys.md").exists()
    assert client.get("/api/v1/documents", params={"collection": "team"}).json()["total"] == 0


def test_path_traversal_names_stay_in_the_upload_folder(client, tmp_path):
    r = upload(client, ("../../../escaped.md", MD, "text/markdown"), ("..\\evil.txt", b"plain text", "text/plain"))
    assert r.status_code == 202 and [f["name"] for f in r.json()["files"]] == ["escaped.md", "evil.txt"]
    assert job_done(client, r)["status"] == "succeeded"
    assert (tmp_path / "uploads" / "default" / "escaped.md").is_file()
    assert not (tmp_path / "escaped.md").exists() and not (tmp_path.parent / "escaped.md").exists()
    assert_error(upload(client, ("..", MD, "text/markdown")), 400, "invalid_input")


def test_oversize_uploads_are_refused(make_app, tmp_path):
    with TestClient(make_app(max_upload_mb=0.01)) as c:  # 10 KB
        assert_error(upload(c, ("big.md", b"# x\n" + b"a" * 20_000, "text/markdown")), 413, "too_large")

        def chunks():  # no Content-Length: refused while it streams in
            for _ in range(200):
                yield b"a" * 1024

        r = c.post("/api/v1/documents", content=chunks(),
                   headers={"content-type": "multipart/form-data; boundary=x", "transfer-encoding": "chunked"})
        assert_error(r, 413, "too_large")
    assert not list((tmp_path / "uploads").rglob("*.md"))


def test_wrong_types_are_refused(client):
    elf = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 200
    assert_error(upload(client, ("tool", elf, "application/octet-stream")), 415, "unsupported_type")
    assert_error(upload(client, ("notes.md", elf, "text/markdown")), 415, "unsupported_type")
    assert_error(upload(client, ("fake.pdf", b"just some text, not a PDF", "application/pdf")), 415, "unsupported_type")
    assert_error(client.post("/api/v1/documents", json={"files": ["x"]}), 415, "unsupported_media_type")
    assert_error(client.post("/api/v1/documents", content=b"x", headers={"content-type": "text/plain"}), 415)


def test_empty_and_missing_files_are_refused(client):
    assert_error(upload(client, ("empty.md", b"", "text/markdown")), 422, "empty_file")
    assert_error(client.post("/api/v1/documents", files=[("collection", (None, b"x"))]), 422, "no_files")
    assert_error(client.post("/api/v1/documents", data={"collection": "x"}), 415)  # a form, but not multipart
    assert_error(upload(client, ("a.md", MD, "text/markdown"), ("b/a.md", MD, "text/markdown")), 422, "duplicate_names")
    broken = client.post("/api/v1/documents", content=b"--x\r\ngarbage",
                         headers={"content-type": "multipart/form-data; boundary=x"})
    assert broken.status_code in (400, 422) and set(broken.json()) == {"error"}


def test_server_side_ingest_only_under_allowed_roots(client, docs, tmp_path):
    r = client.post("/api/v1/documents:ingest", json={"paths": [str(docs)], "collection": "server"})
    assert r.status_code == 202 and job_done(client, r)["result"]["chunks"] > 0
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "secret.md").write_text("# secret\n", encoding="utf-8")
    os.symlink(outside, docs / "link")
    assert_error(client.post("/api/v1/documents:ingest", json={"paths": [str(outside)]}), 403, "path_not_allowed")
    assert_error(client.post("/api/v1/documents:ingest", json={"paths": [str(docs / ".." / "private")]}), 403)
    assert_error(client.post("/api/v1/documents:ingest", json={"paths": [str(docs / "link")]}), 403)
    assert_error(client.post("/api/v1/documents:ingest", json={"paths": [str(docs / "missing.md")]}), 404)
    assert_error(client.post("/api/v1/documents:ingest", json={"paths": ["docs"]}), 400, "invalid_path")  # bad input from the core: 400, as every InputError


def test_ingest_is_off_without_roots(make_app, docs):
    with TestClient(make_app(ingest_roots=[])) as c:
        assert_error(c.post("/api/v1/documents:ingest", json={"paths": [str(docs)]}), 403, "ingest_disabled")


@pytest.mark.slow
def test_uploads_over_real_http(make_app, live):
    url = live(make_app()).url
    with httpx.Client(base_url=url, timeout=30) as c:
        r = upload(c, ("../keys.md", MD, "text/markdown"))
        assert r.status_code == 202 and job_done(c, r)["status"] == "succeeded"
        big = c.post("/api/v1/documents", files=[("files", ("big.md", b"a" * (51 * 1024 * 1024), "text/markdown"))])
        assert_error(big, 413, "too_large")


@pytest.mark.slow
def test_an_uploaded_zip_bomb_is_refused_before_it_is_unpacked(client):
    import io
    import resource
    import zipfile

    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as docx:
        with docx.open("word/document.xml", "w", force_zip64=True) as member:
            for _ in range(120):
                member.write(b"\0" * 2**20)  # 120 MB of zeros in ~120 KB
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r = upload(client, ("bomb.docx", packed.getvalue(), "application/octet-stream"))
    job = job_done(client, r)
    [failed] = job["result"]["failed"]
    assert failed["kind"] == "too-large" and "word/document.xml" in failed["reason"]
    assert "ingest.max_member_mb" in failed["reason"]
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 100 * 1024  # KB: never unpacked
