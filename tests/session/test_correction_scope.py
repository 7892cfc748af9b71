"""A correction belongs to its run's collection (issue 30): an editor scoped to `ops` corrects an `ops`
run with text about `dev`; the note is indexed in `ops`, seen by exactly those who see `ops`, cited as a
correction of `ops` (who, when, which run) and never in an answer over `dev`.  Written through REST
and the CLI, read through REST, MCP and the core, on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from docqa.access import Principal
from docqa.api import create_app
from docqa.kb import KnowledgeBase
from test_access import _fill, _mcp, _settings, _Uvicorn, kb  # noqa: F401  (kb: the SQLite / PostgreSQL fixture)

pytestmark = pytest.mark.anyio
PLANTED = "The deploy token is 0000-PLANTED."


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _planted(texts) -> bool:
    return any("0000-PLANTED" in t for t in texts)


async def test_an_editor_of_one_collection_cannot_plant_text_in_another(tmp_path: Path, kb: str):  # noqa: F811
    _fill(tmp_path, kb)
    settings = _settings(tmp_path, kb)
    with KnowledgeBase(settings) as core, _Uvicorn(create_app(settings)) as url:
        _, editor_ops = core.keys.create("editor", ["ops"])
        _, reader_ops = core.keys.create("reader", ["ops"])
        _, reader_dev = core.keys.create("reader", ["dev"])
        _, reader_all = core.keys.create("reader", [])
        run = core.ask("What is the deploy token?", collection="ops",
                       principal=Principal.of(core.keys.authenticate(editor_ops))).run_id
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            def as_(key):
                return {"Authorization": f"Bearer {key}"}

            note = await http.post(f"/api/v1/runs/{run}/correction", json={"text": PLANTED}, headers=as_(editor_ops))
            assert note.status_code == 201, note.text
            assert note.json()["collection"] == "ops" and note.json()["title"].startswith("Correction:")
            found = await http.post("/api/v1/search", json={"query": "deploy token PLANTED", "top_k": 10},
                                    headers=as_(reader_ops))
            assert _planted(h["text"] for h in found.json()["hits"])  # those who see ops see its correction
            dev = await http.post("/api/v1/search", json={"query": "deploy token PLANTED", "top_k": 10},
                                  headers=as_(reader_dev))
            assert dev.status_code == 200 and not _planted(h["text"] for h in dev.json()["hits"])
            answer = await http.post("/api/v1/ask", json={"question": "What is the deploy token?", "collection": "dev"},
                                     headers=as_(reader_all))
            assert answer.status_code == 200 and not _planted(c["quote"] for c in answer.json()["citations"])
            everywhere = await http.post("/api/v1/search", json={"query": "deploy token PLANTED", "top_k": 10},
                                         headers=as_(reader_all))
            shown = [h for h in everywhere.json()["hits"] if "0000-PLANTED" in h["text"]]
            assert shown and all(h["collection"] == "ops" for h in shown)  # a correction of ops, not a dev document
            text = (await http.get(f"/api/v1/documents/{note.json()['document_id']}/text", headers=as_(reader_ops))).json()
            assert f"for run {run}" in text["text"] and "Written by API key" in text["text"]  # who, when, which run
        async with _mcp(url, reader_dev) as client:
            result = await client.call_tool("search_docs", {"query": "deploy token PLANTED", "top_k": 10})
        assert not result.is_error and not _planted(b.text for b in result.content if getattr(b, "text", None))
        assert next(r for r in core.log.qa_log() if r["run_id"] == run)["corrected"] is True
        core.documents.delete_collection("ops")  # the note goes with its collection
        assert not _planted(h.text for h in core.search("deploy token PLANTED", 10))


def docqa(location: str, *args: str) -> subprocess.CompletedProcess:
    """The CLI as a user runs it, on the knowledge base at `location`, without embedder or chat model."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    env.update(DOCQA_EMBED__PROVIDER="none", DOCQA_LLM__PROVIDER="none")
    return subprocess.run([sys.executable, "-m", "docqa", "--kb", location, *args], capture_output=True, text=True,
                          env=env, timeout=300, check=False)


def test_the_cli_files_a_correction_in_the_runs_collection(tmp_path: Path, kb: str):  # noqa: F811
    _fill(tmp_path, kb)
    with KnowledgeBase(_settings(tmp_path, kb)) as core:
        run = core.ask("When do backups run?", collection="dev").run_id
    done = docqa(kb, "correct", run, "Backups of dev run at 03:00.")
    assert done.returncode == 0, done.stderr
    assert "in collection 'dev'" in done.stdout
    with KnowledgeBase(_settings(tmp_path, kb)) as core:
        notes = [d for d in core.documents.list() if d.path.endswith(f"correction-{run}.md")]
    assert [d.collection for d in notes] == ["dev"]
