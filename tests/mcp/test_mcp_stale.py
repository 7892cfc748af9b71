"""MCP query_knowledge says whether the answer it returns is stale (a source it cites changed since), and a
repeated question after its cited span changed is answered anew from the new text, never from the
stale answer (the official SDK's client, in process)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from docqa.kb import KnowledgeBase
from docqa.mcp import build_server
from docqa.settings import Settings

pytestmark = pytest.mark.anyio
DB = "# Database\n\nThe database listens on port 5432 by default.\n"


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.slow
async def test_query_knowledge_carries_stale_and_never_repeats_a_stale_answer(tmp_path: Path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "db.md").write_text(DB, encoding="utf-8")
    settings = Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"},
                        answer={"mode": "pipeline", "recall": True})
    question = {"question": "Which port does the database listen on?"}
    with KnowledgeBase(settings) as kb:
        kb.add([folder])
        async with Client(build_server(kb)) as client:
            first = (await client.call_tool("query_knowledge", question)).structured_content
            assert first["stale"] is False and first["stale_at"] is None and "5432" in first["answer"]
            (folder / "db.md").write_text(DB.replace("5432", "6543"), encoding="utf-8")
            kb.add([folder])
            assert kb.log.run(first["run_id"]).stale
            again = (await client.call_tool("query_knowledge", question)).structured_content
            assert again["stale"] is False and "6543" in again["answer"] and again["run_id"] != first["run_id"]
