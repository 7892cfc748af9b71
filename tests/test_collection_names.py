"""Collection names (issue 30): letters of any script, digits, '-', '_' and '.', no leading dot, at most 64
characters.  Others are refused with a clear error at every door — the core, REST (create, ingest,
upload), MCP and the CLI — and names stored before the rule stay reachable: listed, added to, and
deleted (DELETE /collections/{name} takes any name, percent-encoded).  SQLite and PostgreSQL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from api.test_errors import assert_error
from docqa.api import create_app
from docqa.errors import InputError
from docqa.kb import KnowledgeBase
from docqa.names import is_valid
from test_access import _fill, _mcp, _settings, _Uvicorn, kb  # noqa: F401  (kb: the SQLite / PostgreSQL fixture)

pytestmark = pytest.mark.anyio
BAD = ["team/ops", "..", ".hidden", "a b", "a\\b", "x" * 65, "ops:1", "<b>", "a\tb", "运维，文档"]


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.parametrize("name", ["ops", "Team-Ops_2.1", "运维", "ドキュメント", "문서", "Отдел", "a", "x" * 64, "v1.2."])
def test_good_names(name):
    assert is_valid(name)


@pytest.mark.parametrize("name", ["", *BAD])
def test_bad_names(name):
    assert not is_valid(name)


async def test_bad_names_are_refused_at_every_door_and_old_ones_stay_reachable(tmp_path: Path, kb: str):  # noqa: F811
    _fill(tmp_path, kb)
    settings = _settings(tmp_path, kb)
    with KnowledgeBase(settings) as core:
        for name in BAD:
            with pytest.raises(InputError, match="cannot name a collection"):
                core.documents.create_collection(name)
            with pytest.raises(InputError, match="cannot name a collection"):
                core.add([tmp_path / "ops"], name)
        core.store.documents.create_collection("team/ops")  # made before names were checked
        core.store.documents.create_collection("..")
        core.add([tmp_path / "ops"], "team/ops")  # an existing collection keeps its name
        assert core.documents.collections()["team/ops"] == 1 and ".." in core.documents.collections()
        _, admin = core.keys.create("admin", [])
    with _Uvicorn(create_app(settings)) as url:
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {admin}"}, timeout=60) as http:
            for name in ("team/x", "..x", ".x", "a b"):
                made = await http.post("/api/v1/collections", json={"name": name})
                assert "cannot name a collection" in assert_error(made, 400, "invalid_input")["message"], name
            ingest = await http.post("/api/v1/documents:ingest", json={"paths": [str(tmp_path / "ops")], "collection": "x/y"})
            assert "cannot name a collection" in assert_error(ingest, 400, "invalid_input")["message"]
            upload = await http.post("/api/v1/documents", data={"collection": "../up"},
                                     files={"files": ("a.md", b"# A\n\nText.\n", "text/markdown")})
            assert "cannot name a collection" in assert_error(upload, 400, "invalid_input")["message"]
            assert {"team/ops", ".."} <= {c["name"] for c in (await http.get("/api/v1/collections")).json()["collections"]}
            gone = await http.delete("/api/v1/collections/team%2Fops")
            assert gone.status_code == 200 and gone.json() == {"name": "team/ops", "removed_documents": 1}
            dots = await http.delete("/api/v1/collections/%2E%2E")
            assert dots.status_code == 200 and dots.json()["name"] == ".."
            names = {c["name"] for c in (await http.get("/api/v1/collections")).json()["collections"]}
            assert "team/ops" not in names and ".." not in names and {"ops", "dev"} <= names
        async with _mcp(url, admin) as client:
            result = await client.call_tool("ingest_files", {"paths": [str(tmp_path / "ops")], "collection": "team/x"})
        text = "\n".join(b.text for b in result.content if getattr(b, "text", None))
        assert result.is_error and "cannot name a collection" in text
    cli = _docqa(kb, "add", str(tmp_path / "ops"), "-c", "team/x")
    assert cli.returncode != 0 and "cannot name a collection" in cli.stderr + cli.stdout and "Traceback" not in cli.stderr
    with KnowledgeBase(settings) as core:
        assert "team/x" not in core.documents.collections() and "x/y" not in core.documents.collections()


def _docqa(location: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    env.update(DOCQA_EMBED__PROVIDER="none", DOCQA_LLM__PROVIDER="none")
    return subprocess.run([sys.executable, "-m", "docqa", "--kb", location, *args], capture_output=True, text=True,
                          env=env, timeout=300, check=False)
