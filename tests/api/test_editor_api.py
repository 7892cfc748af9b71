"""The endpoints for the people who keep the documents: the status (models in use and why, counts,
health), what may be ingested, the document list's filters, uploads keeping a dropped folder's paths,
the log's filters and its CSV download (formula-safe); and who may see what (a reader gets 403, a key
scoped to A never sees B's documents or runs)."""

from __future__ import annotations

import csv
import io

import pytest
from fastapi.testclient import TestClient

from api.conftest import wait_for
from api.test_errors import assert_error
from docqa.api import create_app
from docqa.api.uploads import safe_path
from docqa.errors import InputError
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

FINANCE = "# Finance\n\n## Invoices\n\nInvoices are paid within 30 days of receipt.\n"
FORMULA = '=HYPERLINK("http://example.invalid","x")'


@pytest.fixture
def world(make_app, docs, tmp_path):
    """The app over docs in collection A and finance in B, three runs (one not found, one rated down with a
    formula for a comment), and keys: a reader, an editor scoped to A, an unscoped editor."""
    finance = tmp_path / "finance"
    finance.mkdir()
    (finance / "b.md").write_text(FINANCE, encoding="utf-8")
    app = make_app(index=False)
    settings = Settings(kb=make_app.kb_path, embed={"provider": "none"}, llm={"provider": "none"}, answer={"mode": "pipeline"})
    with KnowledgeBase(settings) as kb:
        kb.add([docs], "A")
        kb.add([finance], "B")
        runs = {"kept": kb.ask("How long are backups kept?", collection="A").run_id,
                "missing": kb.ask("Who signs the backups contract?", collection="A").run_id,
                "paid": kb.ask("When are invoices paid?", collection="B").run_id}
        kb.log.feedback(runs["paid"], "down", FORMULA)
        keys = {role: kb.keys.create(role, scope)[1] for role, scope in
                (("reader", []), ("editor", []))}
        keys["editor of A"] = kb.keys.create("editor", ["A"])[1]
    with TestClient(app, raise_server_exceptions=False) as client:
        def get(path, key="editor", **params):
            return client.get(f"/api/v1{path}", params=params, headers={"Authorization": f"Bearer {keys[key]}"})
        yield client, get, keys, runs


def _csv(response) -> list[dict]:
    return list(csv.DictReader(io.StringIO(response.text)))


@pytest.mark.slow
def test_status_says_which_models_and_why_with_counts_and_health(world):
    _, get, _, _ = world
    body = get("/status").json()
    assert body["chat"] == {"name": None, "source": "extractive", "answers": "extractive", "supports_tools": False,
                            "reason": "llm.provider is 'none': answers are extracted from the documents"}
    assert body["embedder"]["name"] is None and body["embedder"]["search"] == "bm25"
    assert "BM25" in body["embedder"]["reason"]
    index = body["index"]
    assert (index["documents"], index["collections"], index["failed"], index["skipped"]) == (3, 2, 0, 0)
    assert index["chunks"] >= 3 and index["index_bytes"] > 0
    health = body["health"]
    assert health["writer"]["ok"] and health["workers"]["ok"] and health["watch"] is None
    scoped = get("/status", "editor of A").json()["index"]  # counts of its own collection only, no disk size
    assert (scoped["documents"], scoped["collections"], scoped["index_bytes"]) == (2, 1, None)


def test_what_an_editor_may_ingest(world, docs):
    _, get, _, _ = world
    assert get("/documents:ingest").json() == {"ingest_roots": [str(docs)], "ingest_urls": [], "max_upload_mb": 50.0,
                                              "max_files": 100}


def test_document_list_filters_by_text_and_status(world):
    _, get, _, _ = world
    found = get("/documents", q="OPS").json()
    assert found["total"] == 1 and found["documents"][0]["path"].endswith("/ops.md")
    assert get("/documents", status="ok").json()["total"] == 3
    assert get("/documents", status="error").json()["total"] == 0
    assert get("/documents", status="nonsense").status_code == 422


@pytest.mark.slow
def test_an_upload_keeps_a_dropped_folders_relative_paths(world, tmp_path):
    client, get, keys, _ = world
    headers = {"Authorization": f"Bearer {keys['editor']}"}
    files = [("files", ("guide/deep/faq.md", b"# FAQ\n\nAsk the platform team.\n", "text/markdown")),
             ("files", ("guide/faq.md", b"# FAQ\n\nThe other one.\n", "text/markdown"))]
    r = client.post("/api/v1/documents", files=files, data={"keep_paths": "true", "collection": "A"}, headers=headers)
    assert r.status_code == 202 and [f["name"] for f in r.json()["files"]] == ["guide/deep/faq.md", "guide/faq.md"]
    url = f"/jobs/{r.json()['job']['id']}"
    job = wait_for(lambda: (j := get(url).json())["status"] in ("succeeded", "failed") and j, timeout=60)
    assert sorted(job["result"]["added"]) == [str(tmp_path / "uploads" / "A" / "guide" / "deep" / "faq.md"),
                                              str(tmp_path / "uploads" / "A" / "guide" / "faq.md")]
    bad = [("files", ("guide/../../escape.md", b"# x\n", "text/markdown"))]
    assert_error(client.post("/api/v1/documents", files=bad, data={"keep_paths": "true"}, headers=headers), 400,
                 "invalid_input")
    assert not (tmp_path / "escape.md").exists() and not (tmp_path / "uploads" / "escape.md").exists()


@pytest.mark.slow
def test_log_filters_and_csv(world):
    _, get, _, runs = world
    ids = lambda r: {row["run_id"] for row in r.json()["questions"]}  # noqa: E731
    assert ids(get("/log")) == set(runs.values())
    assert ids(get("/log", attention="true")) == {runs["missing"], runs["paid"]}
    assert ids(get("/log", kind="not_found")) == {runs["missing"]}
    assert ids(get("/log", kind="rated_down")) == {runs["paid"]}
    assert ids(get("/log", collection="B")) == {runs["paid"]}
    assert ids(get("/log", q="contract")) == {runs["missing"]}
    assert ids(get("/log", status="FAILED")) == set()
    assert get("/log", kind="bogus").status_code == 422
    row = get("/log", kind="rated_down").json()["questions"][0]
    assert row["attention"] == ["rated_down"] and row["collection"] == "B"

    r = get("/log.csv", attention="true")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    assert r.headers["content-disposition"] == 'attachment; filename="docqa-attention.csv"'
    rows = _csv(r)
    assert {row["run_id"] for row in rows} == {runs["missing"], runs["paid"]} and all(row["reason"] for row in rows)
    paid = next(row for row in rows if row["run_id"] == runs["paid"])
    assert paid["comments"] == "'" + FORMULA and paid["collection"] == "B"  # shown as text, never run
    assert {row["run_id"] for row in _csv(get("/log.csv", q="invoices"))} == {runs["paid"]}


@pytest.mark.parametrize("method, path", [
    ("GET", "/log"), ("GET", "/log.csv"), ("GET", "/status"), ("GET", "/documents:ingest"),
    ("POST", "/documents"), ("DELETE", "/documents/some-id"),
])
@pytest.mark.slow
def test_a_reader_may_not(world, method, path):
    client, _, keys, _ = world
    r = client.request(method, f"/api/v1{path}", headers={"Authorization": f"Bearer {keys['reader']}"},
                       files=[("files", ("x.md", b"# x\n", "text/markdown"))] if method == "POST" else None)
    assert_error(r, 403, "forbidden")


@pytest.mark.slow
def test_a_key_scoped_to_a_never_sees_b(world):
    _, get, _, runs = world
    documents = get("/documents", "editor of A").json()["documents"]
    assert documents and {d["collection"] for d in documents} == {"A"}
    assert get("/documents", "editor of A", q="b.md").json()["total"] == 0
    seen = {row["run_id"] for row in get("/log", "editor of A").json()["questions"]}
    assert seen == {runs["kept"], runs["missing"]}
    assert {row["run_id"] for row in _csv(get("/log.csv", "editor of A"))} == seen
    assert runs["paid"] not in get("/log.csv", "editor of A", kind="rated_down").text
    assert_error(get("/log", "editor of A", collection="B"), 404)
    assert_error(get(f"/runs/{runs['paid']}", "editor of A"), 404)


def test_status_shows_the_watch_job_to_who_may_see_it(tmp_path, docs):
    settings = Settings(kb=str(tmp_path / "watched.db"), embed={"provider": "none"}, llm={"provider": "none"},
                        api={"upload_dir": str(tmp_path / "uploads"), "allowed_hosts": ["testserver"]})
    with KnowledgeBase(settings) as kb:
        kb.documents.create_collection("B")
        keys = {"editor": kb.keys.create("editor")[1], "editor of B": kb.keys.create("editor", ["B"])[1]}
    app = create_app(settings, kb_factory=lambda: KnowledgeBase(settings), watch=[str(docs)], watch_collection="A")
    with TestClient(app, raise_server_exceptions=False) as client:
        def health(key):
            return client.get("/api/v1/status", headers={"Authorization": f"Bearer {keys[key]}"}).json()["health"]

        watch = health("editor")["watch"]
        assert watch["ok"] and watch["status"] == "running" and watch["collection"] == "A" and watch["job"]
        assert health("editor of B")["watch"] == {"ok": True}  # another collection's job: only that it runs


@pytest.mark.parametrize("raw, kept", [
    ("guide/deep/faq.md", "guide/deep/faq.md"), ("guide\\win\\a.md", "guide/win/a.md"), ("/abs/a.md", "abs/a.md"),
    (".hidden/a.md", "hidden/a.md"), ("a<b>/c.md", "a_b_/c.md"),
])
def test_safe_paths_keep_folders(raw, kept):
    assert safe_path(raw) == kept


@pytest.mark.parametrize("raw", ["", "a/../b.md", "./a.md", "a//b.md", "../a.md", "/".join(["d"] * 17) + "/a.md"])
def test_unsafe_paths_are_refused(raw):
    with pytest.raises(InputError):
        safe_path(raw)
