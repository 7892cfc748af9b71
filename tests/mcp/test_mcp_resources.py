"""The MCP server beyond its tools, driven by the official SDK's client: documents as resources (listed,
read whole, by range and by PDF page), the list-changed notice after an ingest, prompts, tool
annotations and output schemas, messages naming the MCP tools — over stdio (`docqa mcp` as a real
subprocess) and over streamable HTTP with a scoped key."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from docqa.kb import KnowledgeBase
from docqa.mcp import build_server
from docqa.mcp.prompts import mcp_words
from docqa.mcp.resources import Ref, parse
from docqa.errors import InputError
from ingest.fixtures import make_pdf

import test_mcp
from test_mcp import OFFLINE, _client, _settings, _text

served = test_mcp.served  # the MCP endpoint on loopback (the API's, and a bare app's), over this module's kb_path

pytestmark = pytest.mark.anyio
READING = {"query_knowledge", "list_knowledge", "search_docs", "fetch_doc", "grep_docs", "estimate_cost", "list_skills", "verify_claims"}


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def kb_path(tmp_path: Path) -> Path:
    """ops/backup.md and ops/manual.pdf (two pages) in 'ops', dev/deploy.md in 'dev'."""
    for folder, name, text in (("ops", "backup.md", "# Backups\n\nBackups run nightly.\nThey are kept for 30 days.\n"),
                               ("dev", "deploy.md", "# Deploy\n\nDeploys use Ansible.\n")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_text(text, encoding="utf-8")
    make_pdf(tmp_path / "ops" / "manual.pdf", ["Page one is about the pumps.", "Page two is about the valves."])
    with KnowledgeBase(_settings(tmp_path)) as kb:
        kb.add([tmp_path / "ops"], "ops")
        kb.add([tmp_path / "dev"], "dev")
    return tmp_path / "kb.db"


def _stdio(kb_path: Path, tmp_path: Path) -> Client:
    params = StdioServerParameters(command=sys.executable, args=["-m", "docqa", "--kb", str(kb_path), "mcp"],
                                   env={**os.environ, **OFFLINE, "DOCQA_KB": str(kb_path)}, cwd=str(tmp_path))
    return Client(params, read_timeout_seconds=60)


@pytest.mark.slow
async def test_stdio_documents_are_resources_and_an_ingest_says_the_list_changed(kb_path: Path, tmp_path: Path):
    async with _stdio(kb_path, tmp_path) as client:
        listed = {r.name: r for r in (await client.list_resources()).resources}
        assert set(listed) == {"backup.md", "manual.pdf", "deploy.md"}
        backup, manual = listed["backup.md"], listed["manual.pdf"]
        assert str(backup.uri).startswith("docqa://ops/") and backup.title == "Backups"
        assert backup.mime_type == "text/markdown" and backup.size == (tmp_path / "ops" / "backup.md").stat().st_size
        assert manual.mime_type == "application/pdf" and str(listed["deploy.md"].uri).startswith("docqa://dev/")

        whole = (await client.read_resource(str(backup.uri))).contents[0].text
        assert "   4| They are kept for 30 days." in whole and "(end of document)" in whole
        lines = (await client.read_resource(f"{backup.uri}/lines/3-3")).contents[0].text
        assert "3| Backups run nightly." in lines and "30 days" not in lines
        page = (await client.read_resource(f"{manual.uri}/page/2")).contents[0].text
        assert "valves" in page and "pumps" not in page
        with pytest.raises(MCPError, match="no page 9: it has pages 1–2"):
            await client.read_resource(f"{manual.uri}/page/9")
        with pytest.raises(MCPError, match="no document"):  # the right id under the wrong collection is not there
            await client.read_resource(str(backup.uri).replace("docqa://ops/", "docqa://dev/"))
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        assert "docqa://{collection}/{doc_id}/page/{page}" in templates

        (tmp_path / "ops" / "rotate.md").write_text("# Rotation\n\nLogs rotate weekly.\n", encoding="utf-8")
        async with client.listen(resources_list_changed=True) as changes:
            report = await client.call_tool("ingest_files", {"paths": [str(tmp_path / "ops")], "collection": "ops"})
            assert not report.is_error, _text(report)
            with anyio.fail_after(20):
                event = await changes.__anext__()
        assert "list_changed" in type(event).__name__.lower() or "listchanged" in type(event).__name__.lower()
        assert "rotate.md" in {r.name for r in (await client.list_resources()).resources}


@pytest.mark.slow
async def test_tools_say_what_they_do_and_what_they_return(kb_path: Path, tmp_path: Path):
    with KnowledgeBase(_settings(tmp_path)) as kb:
        async with Client(build_server(kb)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            bad = await client.call_tool("fetch_doc", {"doc_id": "no-such-document"})
            grep = await client.call_tool("grep_docs", {"pattern": "nightly"})
            catalog = await client.call_tool("list_knowledge", {"page": 9})
    assert all(tools[name].annotations.read_only_hint for name in READING)
    ingest, remove = tools["ingest_files"].annotations, tools["remove_document"].annotations
    assert ingest.read_only_hint is False and ingest.destructive_hint is True and ingest.idempotent_hint is True
    assert remove.read_only_hint is False and remove.destructive_hint is True
    for name in ("query_knowledge", "search_docs", "fetch_doc", "list_knowledge", "grep_docs", "ingest_files", "verify_claims"):
        schema = tools[name].output_schema
        assert schema["type"] == "object" and schema["properties"] and schema["additionalProperties"] is True, name
    assert {"answer", "citations", "answerable"} <= set(tools["query_knowledge"].output_schema["properties"])
    # the agent's tool names never reach an MCP client: its list_docs is list_knowledge here
    assert bad.is_error and "use a doc-id from list_knowledge" in _text(bad) and "list_docs" not in _text(bad)
    assert "call list_knowledge with page=" in catalog.structured_content["note"]
    assert not grep.is_error and grep.structured_content["files"][0]["path"].endswith("backup.md")


@pytest.mark.slow
async def test_prompts_ask_with_citations_summarise_compare_and_follow_the_skills(kb_path: Path, tmp_path: Path):
    with KnowledgeBase(_settings(tmp_path)) as kb:
        async with Client(build_server(kb)) as client:
            names = [p.name for p in (await client.list_prompts()).prompts]
            ask = await client.get_prompt("ask_with_citations", {"question": "How long are backups kept?", "collection": "ops"})
            compare = await client.get_prompt("compare_documents", {"first": "backup.md", "second": "deploy.md"})
            summary = await client.get_prompt("summarise_collection", {"collection": "ops"})
            skill = await client.get_prompt("skill_write-procedure", {"question": "how do I restore a backup?"})
            with pytest.raises(MCPError, match="needs the argument 'second'"):
                await client.get_prompt("compare_documents", {"first": "backup.md"})
            with pytest.raises(MCPError, match="no prompt 'nope'"):
                await client.get_prompt("nope", {})
    assert names[:3] == ["ask_with_citations", "summarise_collection", "compare_documents"]
    assert {"skill_compare-versions", "skill_summarise-collection", "skill_write-procedure"} <= set(names)
    ask_text = ask.messages[0].content.text
    assert "How long are backups kept?" in ask_text and "query_knowledge" in ask_text and "'ops'" in ask_text
    for prompt in (compare, summary, skill):
        text = prompt.messages[0].content.text
        assert "list_docs" not in text and "fetch_doc" in text and "[n]" in text
    assert "list_knowledge" in compare.messages[0].content.text and "list_knowledge" in summary.messages[0].content.text
    assert "'backup.md' and 'deploy.md'" in compare.messages[0].content.text
    assert "compare-versions skill" in compare.messages[0].content.text


@pytest.mark.slow
async def test_http_scoped_key_lists_and_reads_only_its_collections(served):
    url, kb = served
    _, key = kb.keys.create("reader", ["ops"])
    deploy_id = next(d.document_id for d in kb.documents.list("dev"))
    async with _client(url, key) as client:
        names = {r.name for r in (await client.list_resources()).resources}
        with pytest.raises(MCPError, match="no document|cannot use collection 'dev'"):
            await client.read_resource(f"docqa://dev/{deploy_id}")
        backup = next(r for r in (await client.list_resources()).resources if r.name == "backup.md")
        text = (await client.read_resource(str(backup.uri))).contents[0].text
        prompts = {p.name for p in (await client.list_prompts()).prompts}
    assert names == {"backup.md", "manual.pdf"}
    assert "nightly" in text and "ask_with_citations" in prompts


def test_resource_uris():
    assert parse("docqa://ops/abc") == Ref("ops", "abc")
    assert parse("docqa://team%2Fops/abc/lines/3-9") == Ref("team/ops", "abc", (3, 9))
    assert parse("docqa://ops/abc/page/2") == Ref("ops", "abc", page=2)
    for bad in ("file:///etc/passwd", "docqa://ops", "docqa://ops/abc/lines/9-3", "docqa://ops/abc/page/x"):
        with pytest.raises(InputError):
            parse(bad)


def test_messages_name_the_mcp_tools():
    assert mcp_words("use a doc-id from list_docs (or search_docs)") == "use a doc-id from list_knowledge (or search_docs)"
    assert mcp_words("my_list_docs_x") == "my_list_docs_x"


@pytest.mark.slow
async def test_http_an_ingest_says_the_resource_list_changed(served, tmp_path: Path):
    url, kb = served
    _, key = kb.keys.create("editor", ["ops"])
    (tmp_path / "ops" / "rotate.md").write_text("# Rotation\n\nLogs rotate weekly.\n", encoding="utf-8")
    async with _client(url, key) as client:
        before = {r.name for r in (await client.list_resources()).resources}
        async with client.listen(resources_list_changed=True) as changes:
            report = await client.call_tool("ingest_files", {"paths": [str(tmp_path / "ops")], "collection": "ops"})
            assert not report.is_error, _text(report)
            with anyio.fail_after(20):
                await changes.__anext__()
        after = {r.name: r for r in (await client.list_resources()).resources}
        async with client.listen(resources_list_changed=True) as changes:
            removed = await client.call_tool("remove_document", {"doc_id": str(after["rotate.md"].uri).rsplit("/", 1)[1]})
            assert not removed.is_error, _text(removed)
            with anyio.fail_after(20):
                await changes.__anext__()
        last = {r.name for r in (await client.list_resources()).resources}
    _, reader = kb.keys.create("reader")
    async with _client(url, reader) as client:
        refused = await client.call_tool("remove_document", {"doc_id": str(after["backup.md"].uri).rsplit("/", 1)[1]})
    assert set(after) - before == {"rotate.md"} and last == before
    assert removed.structured_content["removed"]["path"].endswith("rotate.md")
    assert refused.is_error and "editor key" in _text(refused)


@pytest.mark.slow
async def test_stdio_documents_added_elsewhere_are_announced(kb_path: Path, tmp_path: Path):
    """`docqa add` in another process while an MCP client is connected: the client hears the list changed."""
    (tmp_path / "ops" / "later.md").write_text("# Later\n\nAdded while the client was connected.\n", encoding="utf-8")
    async with _stdio(kb_path, tmp_path) as client:
        before = {r.name for r in (await client.list_resources()).resources}
        async with client.listen(resources_list_changed=True) as changes:
            with KnowledgeBase(_settings(tmp_path)) as elsewhere:
                elsewhere.add([tmp_path / "ops"], "ops")
            with anyio.fail_after(30):
                await changes.__anext__()
        after = {r.name for r in (await client.list_resources()).resources}
    assert after - before == {"later.md"}


@pytest.mark.slow
async def test_http_documents_removed_elsewhere_are_announced(served):
    url, kb = served
    async with _client(url) as client:
        before = {r.name for r in (await client.list_resources()).resources}
        async with client.listen(resources_list_changed=True) as changes:
            kb.documents.remove_one(next(d.document_id for d in kb.documents.list("dev")))  # as the web page would
            with anyio.fail_after(30):
                await changes.__anext__()
        after = {r.name for r in (await client.list_resources()).resources}
    assert before - after == {"deploy.md"}
