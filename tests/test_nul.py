"""A NUL character in a question or a collection name (issue 30): PostgreSQL cannot store it, so it
is refused before any database sees it — 422 at the schema over REST (bodies, query and path
parameters, an upload's form), a clear error from the core for MCP and the CLI — the same on SQLite
and PostgreSQL."""

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
from test_access import _fill, _mcp, _settings, _Uvicorn, kb  # noqa: F401  (kb: the SQLite / PostgreSQL fixture)



@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_a_nul_is_refused_at_every_door_on_every_backend(tmp_path: Path, kb: str):  # noqa: F811
    _fill(tmp_path, kb)
    settings = _settings(tmp_path, kb)
    with KnowledgeBase(settings) as core:
        for call in (lambda: core.ask("When do\0 backups run?"), lambda: core.search("backups\0"),
                     lambda: core.search("backups", collection="o\0ps"), lambda: core.ask("When?", collection="o\0ps"),
                     lambda: core.documents.delete_collection("o\0ps"), lambda: core.documents.create_collection("o\0ps")):
            with pytest.raises(InputError, match="NUL|cannot name a collection"):
                call()
        _, admin = core.keys.create("admin", [])
    with _Uvicorn(create_app(settings)) as url:
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {admin}"}, timeout=60) as http:
            for response in (
                await http.post("/api/v1/ask", json={"question": "When do\0 backups run?"}),
                await http.post("/api/v1/ask", json={"question": "When?", "collection": "o\0ps"}),
                await http.post("/api/v1/search", json={"query": "backups\0"}),
                await http.post("/api/v1/search", json={"query": "backups", "collection": "o\0ps"}),
                await http.post("/api/v1/collections", json={"name": "o\0ps"}),
                await http.get("/api/v1/documents", params={"collection": "o\0ps"}),
                await http.get("/api/v1/log", params={"collection": "o\0ps"}),
                await http.delete("/api/v1/collections/o%00ps"),
                await http.post("/api/v1/documents", data={"collection": "o\0ps"},
                                files={"files": ("a.md", b"# A\n\nText.\n", "text/markdown")}),
            ):
                assert "NUL" in assert_error(response, 422, "invalid_request")["message"], response.request.url
            assert (await http.post("/api/v1/search", json={"query": "backups"})).status_code == 200  # still serving
        async with _mcp(url, admin) as client:
            results = [await client.call_tool("query_knowledge", {"question": "When do\0 backups run?"}),
                       await client.call_tool("search_docs", {"query": "backups", "collection": "o\0ps"}),
                       await client.call_tool("list_knowledge", {"collection": "o\0ps"})]
        for result in results:
            text = "\n".join(b.text for b in result.content if getattr(b, "text", None))
            assert result.is_error and "NUL" in text, text


def test_a_nul_in_a_question_piped_to_docqa_chat_is_a_clear_error(tmp_path: Path, kb: str):  # noqa: F811
    _fill(tmp_path, kb)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    env.update(DOCQA_EMBED__PROVIDER="none", DOCQA_LLM__PROVIDER="none")
    chat = subprocess.run([sys.executable, "-m", "docqa", "--kb", kb, "chat"], input="When do\0 backups run?\n",
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert chat.returncode != 0 and "NUL" in chat.stderr and "Traceback" not in chat.stderr, chat.stderr
