"""A long parse does not hold the single writer (issue 30, item 5): an upload or ingest job parses
on the ingest lane and takes the writer's turn only to write, so creating a collection, removing a
document or deleting a collection completes while a file is still being parsed.

The slow file is read by a reader registered for the `.slow` extension through the reader
registry: it says when it has started (a file in a control folder) and blocks until the test lets
it finish (another file there), so "still parsing" is a state the test holds, not a guess about
timing.  The parse runs in a forked parse worker, which inherits the registration.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from docqa.errors import IngestError
from docqa.ingest.readers import registry
from docqa.ingest.readers.base import Reader
from docqa.types import Document

from api.conftest import job_done, wait_for

BOTH_BACKENDS = True  # api/conftest.py: each test runs on SQLite and on PostgreSQL
RELEASE_AFTER = 120.0  # seconds a blocked parse waits for the test at most (then it fails the file)


class BlockingReader(Reader):
    """Reads a `.slow` file whose content names a control folder: touches `started` there, then
    waits until `release` exists."""

    type = "slowtest"
    extensions = (".slow",)

    def read(self, path: Path, data: bytes) -> Document:
        control = Path(data.decode().strip())
        (control / "started").touch()
        deadline = time.monotonic() + RELEASE_AFTER
        while not (control / "release").exists():
            if time.monotonic() > deadline:
                raise IngestError(str(path), "the test never released this parse")
            time.sleep(0.01)
        return Document(path=str(path), type=self.type, text="The zebra quartz manual: released at last.")


@pytest.fixture
def slow_reader(monkeypatch):
    monkeypatch.setitem(registry._BY_EXTENSION, ".slow", BlockingReader)


@pytest.fixture
def control(tmp_path) -> Path:
    folder = tmp_path / "control"
    folder.mkdir()
    return folder


def _upload_slow(c: TestClient, control: Path):
    r = c.post("/api/v1/documents", files=[("files", ("big.slow", str(control).encode(), "text/plain"))],
               data={"collection": "slow"})
    assert r.status_code == 202, r.text
    wait_for(lambda: (control / "started").exists(), timeout=60)  # the parse is running, and cannot end yet
    return r


def test_small_writes_complete_while_an_upload_is_parsed(make_app, slow_reader, control):
    with TestClient(make_app(), raise_server_exceptions=False) as c:
        ops = next(d for d in c.get("/api/v1/documents").json()["documents"] if d["path"].endswith("ops.md"))
        job = _upload_slow(c, control)
        assert c.post("/api/v1/collections", json={"name": "fresh"}).status_code == 201
        assert c.delete(f"/api/v1/documents/{ops['document_id']}").status_code == 200
        assert c.delete("/api/v1/collections/fresh").status_code == 200
        assert not (control / "release").exists()  # by construction the parse is still running
        assert c.get(job.headers["location"]).json()["status"] == "running"
        (control / "release").touch()
        done = job_done(c, job)
        assert done["status"] == "succeeded" and len(done["result"]["added"]) == 1
        hits = c.post("/api/v1/search", json={"query": "zebra quartz", "collection": "slow"}).json()["hits"]
        assert hits and hits[0]["path"].endswith("big.slow")
        names = {x["name"] for x in c.get("/api/v1/collections").json()["collections"]}
        assert "fresh" not in names and "slow" in names
        assert not c.post("/api/v1/search", json={"query": "rotated every 90 days"}).json()["hits"]


def test_an_ingest_behind_a_parsing_upload_is_parsed_after_it(make_app, slow_reader, control, docs):
    """Lane jobs still run one at a time, in order: the second waits for the first, the writer does not."""
    with TestClient(make_app(), raise_server_exceptions=False) as c:
        first = _upload_slow(c, control)
        (docs / "new.md").write_text("# New\n\nThe walrus index is rebuilt nightly.\n", encoding="utf-8")
        second = c.post("/api/v1/documents:ingest", json={"paths": [str(docs / "new.md")]})
        assert second.status_code == 202
        assert c.post("/api/v1/collections", json={"name": "meanwhile"}).status_code == 201
        assert c.get(second.headers["location"]).json()["status"] == "queued"
        (control / "release").touch()
        assert job_done(c, first)["status"] == "succeeded"
        assert job_done(c, second)["status"] == "succeeded"
        assert c.post("/api/v1/search", json={"query": "walrus nightly"}).json()["hits"]
