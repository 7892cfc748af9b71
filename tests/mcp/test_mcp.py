"""The MCP server, driven by the official SDK's own client: over stdio (`docqa mcp` as a real
subprocess), in process, and over streamable HTTP on a real uvicorn on loopback with API keys."""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
import uvicorn
from fastapi import FastAPI
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from docqa.access import Principal
from docqa.api import create_app
from docqa.api.auth import Access
from docqa.kb import KnowledgeBase
from docqa.mcp import build_server, mount
from docqa.settings import Settings
from api.conftest import sse_events
from llm.scripted_server import ScriptedServer

TOOLS = {"ingest_files", "remove_document", "query_knowledge", "verify_claims", "list_knowledge", "search_docs",
         "fetch_doc", "grep_docs", "estimate_cost", "list_skills", "steer_run", "follow_up", "cancel_run"}
OFFLINE = {"DOCQA_EMBED__PROVIDER": "none", "DOCQA_LLM__PROVIDER": "none"}
BACKUP = """# Backups

Backups run every night at 02:00 with restic. They are kept for 30 days.

## Restore

To restore, run `restic restore latest --target /srv/restore`.
"""
DEPLOY = "# Deploy\n\nThe service is deployed with Ansible on Ubuntu 22.04. A deploy takes about 5 minutes.\n"
pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _settings(tmp_path: Path, **extra) -> Settings:
    return Settings(**{"kb": str(tmp_path / "kb.db"), "embed": {"provider": "none"}, "llm": {"provider": "none"}, **extra})


@pytest.fixture
def kb_path(tmp_path: Path) -> Path:
    """A knowledge base with ops/backup.md (collection 'ops') and dev/deploy.md (collection 'dev')."""
    for folder, name, text in (("ops", "backup.md", BACKUP), ("dev", "deploy.md", DEPLOY)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_text(text, encoding="utf-8")
    with KnowledgeBase(_settings(tmp_path)) as kb:
        kb.add([tmp_path / "ops"], "ops")
        kb.add([tmp_path / "dev"], "dev")
    return tmp_path / "kb.db"


def _text(result) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "text", None))


# -- stdio: `docqa mcp` as an MCP client starts it ------------------------------------------------

@pytest.mark.slow
async def test_stdio_server_answers_and_survives_a_failing_tool(kb_path: Path, tmp_path: Path):
    env = {**os.environ, **OFFLINE, "DOCQA_KB": str(kb_path)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "docqa", "--kb", str(kb_path), "mcp"],
                                   env=env, cwd=str(tmp_path))
    with open(tmp_path / "stderr.log", "w"):
        async with Client(params, read_timeout_seconds=60) as client:
            tools = (await client.list_tools()).tools
            assert {t.name for t in tools} == TOOLS
            for tool in tools:  # the docstrings' source indentation and line breaks stay out of the client
                assert tool.description == tool.description.strip() and len(tool.description) > 40, tool.name
                assert "\n " not in tool.description and "  " not in tool.description, tool.description

            found = await client.call_tool("search_docs", {"query": "restore backup", "top_k": 2})
            assert not found.is_error
            assert found.structured_content["hits"][0]["path"].endswith("backup.md")

            answer = await client.call_tool("query_knowledge", {"question": "When do backups run?"})
            assert not answer.is_error, _text(answer)
            data = answer.structured_content
            assert data["answerable"] is True and "02:00" in data["answer"]
            assert data["citations"][0]["path"].endswith("backup.md") and data["run_id"]

            bad = await client.call_tool("fetch_doc", {"doc_id": "no-such-document"})
            assert bad.is_error and "no document 'no-such-document'" in _text(bad)

            invalid = await client.call_tool("search_docs", {"query": "x", "top_k": 0})
            assert invalid.is_error and "top_k" in _text(invalid)

            # still serving after the failures
            doc_id = found.structured_content["hits"][0]["document_id"]
            page = await client.call_tool("fetch_doc", {"doc_id": doc_id, "limit": 3})
            assert not page.is_error and "02:00" in page.structured_content["text"]

            (tmp_path / "ops" / "rotate.md").write_text("# Rotation\n\nLogs rotate weekly with logrotate.\n")
            report = await client.call_tool("ingest_files", {"paths": [str(tmp_path / "ops")], "collection": "ops"})
            assert not report.is_error and report.structured_content["added"] == [str(tmp_path / "ops" / "rotate.md")]
            listed = await client.call_tool("list_knowledge", {"grep": "rotation"})
            assert listed.structured_content["total"] == 1


async def _stdio_ingest(kb_path: Path, tmp_path: Path, paths: list[str], **env: str):
    params = StdioServerParameters(command=sys.executable, args=["-m", "docqa", "--kb", str(kb_path), "mcp"],
                                   env={**os.environ, **OFFLINE, "DOCQA_KB": str(kb_path), **env}, cwd=str(tmp_path))
    async with Client(params, read_timeout_seconds=60) as client:
        result = await client.call_tool("ingest_files", {"paths": paths, "collection": "ops"})
        fetched = await client.call_tool("fetch_doc", {"doc_id": "secret.txt"})
    return result, fetched


async def test_stdio_ingest_files_reads_only_under_the_mcp_ingest_roots(kb_path: Path, tmp_path: Path):
    """An agent steered by an injected document asks to index a file outside the folders added (as it
    would /etc/passwd), then to fetch it: refused, and nothing of it is indexed."""
    outside = tmp_path / "home"
    outside.mkdir()
    (outside / "secret.txt").write_text("the private key is HUNTER2\n", encoding="utf-8")
    (tmp_path / "ops" / "sub").mkdir()
    (tmp_path / "ops" / "sub" / "new.md").write_text("# New\n\nA new runbook.\n", encoding="utf-8")
    (tmp_path / "ops" / "sub" / "out.md").symlink_to(outside / "secret.txt")  # a link out of the roots
    for target in (outside / "secret.txt", outside, tmp_path / "ops" / "sub" / "out.md", tmp_path / "ops" / ".." / "home"):
        refused, fetched = await _stdio_ingest(kb_path, tmp_path, [str(target)])
        assert refused.is_error and "is not under a folder in mcp.ingest_roots" in _text(refused), _text(refused)
        assert fetched.is_error and "HUNTER2" not in _text(fetched)
    added, _ = await _stdio_ingest(kb_path, tmp_path, [str(tmp_path / "ops" / "sub" / "new.md")])  # inside: as before
    assert not added.is_error and added.structured_content["added"] == [str(tmp_path / "ops" / "sub" / "new.md")]
    opened, fetched = await _stdio_ingest(kb_path, tmp_path, [str(outside / "secret.txt")],
                                          DOCQA_MCP__INGEST_ROOTS=f'["{outside}"]')  # the owner opens a folder
    assert not opened.is_error and "HUNTER2" in _text(fetched)
    empty = tmp_path / "empty.db"
    with KnowledgeBase(_settings(tmp_path, kb=str(empty))):
        pass
    nothing, _ = await _stdio_ingest(empty, tmp_path, [str(tmp_path / "ops")])
    assert nothing.is_error and "add a folder with 'docqa add', or list folders in mcp.ingest_roots" in _text(nothing)


# -- in process ----------------------------------------------------------------------------------

@pytest.mark.slow
async def test_tool_errors_are_results_in_process(kb_path: Path, tmp_path: Path):
    with KnowledgeBase(_settings(tmp_path)) as kb:
        async with Client(build_server(kb)) as client:
            missing = await client.call_tool("ingest_files", {"paths": [str(tmp_path / "nowhere")]})
            assert missing.is_error and "no such file or folder" in _text(missing)
            empty = await client.call_tool("query_knowledge", {"question": "   "})
            assert empty.is_error and "the question is empty" in _text(empty)
            catalog = await client.call_tool("list_knowledge", {"collection": "dev"})
            assert not catalog.is_error and catalog.structured_content["total"] == 1


@pytest.mark.slow
async def test_verify_claims_gives_each_claim_its_verdict_and_span_in_process(kb_path: Path, tmp_path: Path):
    with KnowledgeBase(_settings(tmp_path)) as kb:
        async with Client(build_server(kb)) as client:
            checked = await client.call_tool("verify_claims", {"text": "Backups are kept for 90 days. They run with restic."})
            assert not checked.is_error, _text(checked)
            data = checked.structured_content
            assert data["verdict"] == "contradicted" and [c["verdict"] for c in data["claims"]] == ["contradicted", "supported"]
            assert "kept for 30 days" in data["claims"][0]["citation"]["quote"]
            assert data["claims"][0]["reasons"] == ["the passage gives 30, not 90"]
            assert data["claims"][1]["citation"]["path"].endswith("backup.md")
            answered = await client.call_tool("verify_claims", {"text": "Yes", "question": "Are backups kept for 30 days?"})
            assert answered.structured_content["verdict"] == "supported"
            scoped = await client.call_tool("verify_claims", {"text": "A deploy takes about 5 minutes.", "collection": "ops"})
            assert scoped.structured_content["verdict"] == "not_found"
            nothing = await client.call_tool("verify_claims", {"text": "How long are backups kept?"})
            assert nothing.is_error and "nothing to check" in _text(nothing)


def test_missing_extra_names_the_install_command(monkeypatch):
    import docqa.mcp as front
    from docqa.errors import MissingExtraError

    for name in [n for n in sys.modules if n.split(".")[0] in ("mcp", "mcp_types")]:
        monkeypatch.setitem(sys.modules, name, None)  # as if the SDK were not installed
    monkeypatch.delitem(sys.modules, "docqa.mcp.server", raising=False)
    with pytest.raises(MissingExtraError, match=r"docqa\[mcp\]"):
        front._server()


# -- streamable HTTP, mounted on an app, behind API keys --------------------------------------------

class _Uvicorn:
    """A real uvicorn on 127.0.0.1 (a free port) in a thread, running the app's lifespan."""

    def __init__(self, app):
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "uvicorn did not start"
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/mcp"

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@asynccontextmanager
async def _client(url: str, key: str | None = None) -> AsyncIterator[Client]:
    """The SDK's client over streamable HTTP, sending `key` as a bearer token."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:  # the transport leaves a given client open
        async with Client(streamable_http_client(url, http_client=http)) as client:
            yield client


@pytest.fixture(params=["api", "bare"])
def served(request, kb_path: Path, tmp_path: Path):
    """(url, kb) of the MCP tools at /mcp on loopback: of the API app (`create_app`: its worker pool, writer
    and keys), or mounted on a bare FastAPI app over one KnowledgeBase; `kb` makes the keys."""
    settings = _settings(tmp_path, api={"ingest_roots": [str(tmp_path / "ops")], "upload_dir": str(tmp_path / "up")})
    kb = KnowledgeBase(settings)
    if request.param == "api":
        app = create_app(settings)
    else:
        app = FastAPI()
        mount(app, kb, authenticate=Access(kb, "127.0.0.1").authenticate)
    with _Uvicorn(app) as url:
        yield url, kb
    kb.close()


async def _post(url: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    """A bare JSON-RPC request, to see the HTTP status (the SDK's client turns it into an MCPError)."""
    async with httpx2.AsyncClient() as http:
        return await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                               headers={"Accept": "application/json, text/event-stream", **(headers or {})})


@pytest.mark.slow
async def test_http_needs_a_key_once_keys_exist(served):
    url, kb = served
    kb.keys.create("admin")
    refused = await _post(url)
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "unauthorized"
    assert "requires an API key" in refused.json()["error"]["message"]
    assert refused.headers["www-authenticate"].startswith("Bearer")
    assert (await _post(url, {"Authorization": "Bearer dq_wrong"})).status_code == 401


@pytest.mark.slow
async def test_http_reader_searches_and_asks_but_cannot_ingest(served, tmp_path: Path):
    url, kb = served
    _, key = kb.keys.create("reader")
    async with _client(url, key) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        hits = await client.call_tool("search_docs", {"query": "restic"})
        assert not hits.is_error and hits.structured_content["hits"]
        answer = await client.call_tool("query_knowledge", {"question": "How is the service deployed?"})
        assert not answer.is_error and "Ansible" in answer.structured_content["answer"]
        checked = await client.call_tool("verify_claims", {"text": "The service is deployed with Ansible on Ubuntu 22.04."})
        assert not checked.is_error and checked.structured_content["verdict"] == "supported"
        assert checked.structured_content["claims"][0]["citation"]["path"].endswith("deploy.md")
        denied = await client.call_tool("ingest_files", {"paths": [str(tmp_path / "ops")], "collection": "ops"})
        assert denied.is_error and "editor key" in _text(denied)


@pytest.mark.slow
async def test_http_estimate_cost_is_for_maintainers_not_readers(served):
    url, kb = served
    _, reader = kb.keys.create("reader")
    _, editor = kb.keys.create("editor")
    async with _client(url, editor) as client:
        est = await client.call_tool("estimate_cost", {"question": "How is the service deployed?", "mode": "pipeline"})
        assert not est.is_error and est.structured_content["basis"] == "defaults"
        assert est.structured_content["mode"] == "extractive" and est.structured_content["cost"] == 0  # no chat model
    async with _client(url, reader) as client:
        denied = await client.call_tool("estimate_cost", {"question": "How is the service deployed?"})
        assert denied.is_error and "editor key" in _text(denied)


@pytest.mark.slow
async def test_http_editor_ingests_only_inside_ingest_roots(served, tmp_path: Path):
    url, kb = served
    _, key = kb.keys.create("editor")
    (tmp_path / "ops" / "rotate.md").write_text("# Rotation\n\nLogs rotate weekly.\n")
    async with _client(url, key) as client:
        report = await client.call_tool("ingest_files", {"paths": [str(tmp_path / "ops")], "collection": "ops"})
        assert not report.is_error, _text(report)
        outside = await client.call_tool("ingest_files", {"paths": [str(tmp_path / "dev")], "collection": "dev"})
        assert outside.is_error and "not under a folder in api.ingest_roots" in _text(outside)


@pytest.mark.slow
async def test_http_collection_scoped_key_sees_only_its_collection(served):
    url, kb = served
    _, key = kb.keys.create("reader", ["ops"])
    deploy_id = next(d.document_id for d in kb.documents.list("dev"))
    async with _client(url, key) as client:
        hits = await client.call_tool("search_docs", {"query": "deployed Ansible restic"})
        assert {h["collection"] for h in hits.structured_content["hits"]} == {"ops"}
        catalog = await client.call_tool("list_knowledge", {})
        assert catalog.structured_content["total"] == 1
        other = await client.call_tool("search_docs", {"query": "Ansible", "collection": "dev"})
        assert other.is_error and "cannot use collection 'dev'" in _text(other)
        hidden = await client.call_tool("fetch_doc", {"doc_id": deploy_id})
        assert hidden.is_error and "no document" in _text(hidden)
        answer = await client.call_tool("query_knowledge", {"question": "How is the service deployed?"})
        assert not answer.is_error and answer.structured_content["answerable"] is False
        claim = {"text": "The service is deployed with Ansible on Ubuntu 22.04."}  # supported only by dev/deploy.md
        hidden = await client.call_tool("verify_claims", claim)
        assert not hidden.is_error and hidden.structured_content["verdict"] == "not_found"
        assert hidden.structured_content["claims"][0]["citation"] is None


@pytest.mark.slow
async def test_http_revoked_key_is_refused(served):
    url, kb = served
    record, key = kb.keys.create("reader")
    async with _client(url, key) as client:
        assert not (await client.call_tool("list_knowledge", {})).is_error
    kb.keys.revoke(record.id)
    refused = await _post(url, {"X-API-Key": key})
    assert refused.status_code == 401 and "revoked" in refused.json()["error"]["message"]


@pytest.mark.slow
async def test_http_on_loopback_without_keys_is_the_local_user(served, tmp_path: Path):
    url, _ = served
    async with Client(url) as client:  # the SDK's plain URL transport: no key at all
        report = await client.call_tool("ingest_files", {"paths": [str(tmp_path / "ops")], "collection": "ops"})
        assert not report.is_error, _text(report)
    rebound = await _post(url, {"Host": "attacker.example"})  # a DNS-rebinding page reaching 127.0.0.1
    assert rebound.status_code == 421  # the SDK checks Host (and Origin) on a loopback server


# -- a cancelled call stops the answer ---------------------------------------------------------------

@pytest.mark.parametrize("script,question,expected,absent", [
    ([{"text": "Backups run every night at 03:00 [1]."}, {"text": "Backups run every night at 02:00 [1]."},
      {"text": "VERIFIED"}], "When do backups run?", "Backups run every night at 02:00 [1].", "03:00"),
    ([{"text": "NOT_FOUND."}], "Who approves the backup policy?", "The documents do not contain an answer", "NOT_FOUND"),
])
async def test_query_knowledge_returns_only_the_checked_answer(kb_path: Path, tmp_path: Path, script, question,
                                                               expected, absent):
    """Issue 28: a rejected draft is not the answer, and the model's NOT_FOUND is the not-found answer, no token."""
    with ScriptedServer(script) as server:
        settings = _slow_model_settings(tmp_path, server).model_copy(update={"answer": Settings(
            answer={"mode": "pipeline", "accept_share": 0}).answer})
        with KnowledgeBase(settings) as kb:
            async with Client(build_server(kb)) as client:
                result = await client.call_tool("query_knowledge", {"question": question})
        calls = len(server.requests)
    assert not result.is_error and calls == len(script)
    data = result.structured_content
    assert data["answer"].startswith(expected) and data["answerable"] is (absent != "NOT_FOUND")
    assert absent not in _text(result) and absent not in str(data)


def _slow_model_settings(tmp_path: Path, server) -> Settings:
    return _settings(tmp_path, llm={"provider": "openai", "base_url": server.base_url, "timeout": 20, "max_retries": 0},
                     answer={"mode": "pipeline"}, api={"upload_dir": str(tmp_path / "up")})


def _finished(kb: KnowledgeBase):
    runs = kb.log.runs()
    return runs if runs and all(r.status != "RUNNING" for r in runs) else None


@pytest.mark.parametrize("where", ["in process", "api over http"])
@pytest.mark.slow
async def test_a_cancelled_query_makes_no_further_model_calls(kb_path: Path, tmp_path: Path, where: str):
    """The client gives up (its read timeout sends notifications/cancelled): the run is recorded
    CANCELLED, its streamed answer is cut off and the fact-check call never happens."""
    from mcp.shared.exceptions import MCPError

    slow = {"text": "Backups run every night at 02:00 [1]. " * 10, "chunk_delay": 0.1}  # ~7 s of streaming
    with ScriptedServer([slow, {"text": "VERIFIED"}]) as server:
        settings = _slow_model_settings(tmp_path, server)
        with KnowledgeBase(settings) as kb:
            if where == "in process":
                async with Client(build_server(kb)) as client:
                    with pytest.raises(MCPError, match="(?i)timed out|timeout"):
                        await client.call_tool("query_knowledge", {"question": "When do backups run?"},
                                               read_timeout_seconds=1.5)
            else:
                with _Uvicorn(create_app(settings)) as url:
                    async with _client(url) as client:
                        with pytest.raises(MCPError, match="(?i)timed out|timeout"):
                            await client.call_tool("query_knowledge", {"question": "When do backups run?"},
                                                   read_timeout_seconds=1.5)
                        runs = await _poll(lambda: _finished(kb))
            runs = await _poll(lambda: _finished(kb))
            calls = len(server.requests)  # the run has ended (recorded last): a fact-check call would have come before
    assert [r.status for r in runs] == ["CANCELLED"]
    assert calls == 1


async def _poll(probe, timeout: float = 15):
    deadline = time.monotonic() + timeout
    while (found := probe()) is None:
        assert time.monotonic() < deadline, "timed out waiting"
        await anyio.sleep(0.1)
    return found


# -- steer, follow up and cancel a live run; one time limit ---------------------------------------------

def _gated(release: threading.Event, text: str):
    """A model reply that waits until the test has acted on the live run."""
    def reply(_body: dict) -> dict:
        assert release.wait(30), "the test never released the model"
        return {"text": text}
    return reply


@asynccontextmanager
async def _asking(client: Client, question: str) -> AsyncIterator[tuple[str, dict]]:
    """query_knowledge in the background: (its run id, from the progress it reports as it starts; its result
    once the block ends)."""
    result: dict = {}
    notes: list[str] = []

    async def progress(_done: float, _total: float | None, message: str | None) -> None:
        notes.append(message or "")

    async def ask() -> None:
        result["call"] = await client.call_tool("query_knowledge", {"question": question}, progress_callback=progress)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(ask)
        found = await _poll(lambda: next((m for n in notes if (m := re.match(r"run_id=(\w+) session_id=\w+: ", n))), None))
        yield found.group(1), result


@pytest.mark.slow
async def test_steer_follow_up_and_cancel_a_live_run_from_mcp(kb_path: Path, tmp_path: Path):
    """Issue 33: an MCP client steers and follows up the run query_knowledge is answering (its id comes as
    progress as it starts), cancels another, and is refused on a run that has ended or that it may not see."""
    release, release_2 = threading.Event(), threading.Event()
    script = [_gated(release, "Backups run every night at 02:00 [1]."), {"text": "How is the service deployed?"},
              {"text": "The service is deployed with Ansible [1]."}, _gated(release_2, "Backups are kept for 30 days [1].")]
    with ScriptedServer(script) as server:
        settings = _settings(tmp_path, llm={"provider": "openai", "base_url": server.base_url, "timeout": 20, "max_retries": 0},
                             answer={"mode": "pipeline", "check": False})
        with KnowledgeBase(settings) as kb:
            async with Client(build_server(kb)) as client:
                async with _asking(client, "When do backups run?") as (run_id, result):
                    steered = await client.call_tool("steer_run", {"run_id": run_id, "message": "be brief"})
                    queued = await client.call_tool("follow_up", {"run_id": run_id, "question": "And how is the service deployed?"})
                    release.set()
                late = await client.call_tool("follow_up", {"run_id": run_id, "question": "too late"})
                unknown = await client.call_tool("cancel_run", {"run_id": "no-such-run"})
                async with _asking(client, "When do backups run?") as (second_id, cancelled):
                    stopped = await client.call_tool("cancel_run", {"run_id": second_id})
                    release_2.set()
            from docqa.mcp.server import build_server as build_as  # in process, as a given principal

            async with Client(build_as(kb, Principal("reader", ("dev",), "key-1"))) as outsider:
                hidden = await outsider.call_tool("cancel_run", {"run_id": run_id})
            records = {r.id: r for r in kb.log.runs()}
    assert steered.structured_content == {"run_id": run_id, "accepted": "steer"}
    assert queued.structured_content == {"run_id": run_id, "accepted": "follow_up"}
    answer = result["call"].structured_content
    assert not result["call"].is_error and answer["run_id"] == run_id and "02:00" in answer["answer"]
    [follow_up] = answer["follow_ups"]
    assert follow_up["session_id"] == answer["session_id"] and "Ansible" in follow_up["answer"]
    assert records[follow_up["run_id"]].question == "And how is the service deployed?"
    assert late.is_error and f"run {run_id} is not running (status SUCCESS)" in _text(late)
    assert unknown.is_error and "no run 'no-such-run'" in _text(unknown)
    assert stopped.structured_content == {"run_id": second_id, "accepted": "cancel"}
    assert cancelled["call"].structured_content["status"] == "CANCELLED" and records[second_id].status == "CANCELLED"
    assert hidden.is_error and f"no run '{run_id}'" in _text(hidden)  # a run over collections it cannot see: none


@pytest.mark.slow
async def test_a_time_limit_reads_the_same_in_the_record_over_sse_json_and_mcp(kb_path: Path, tmp_path: Path):
    """One deadline, the run's (api.request_timeout): the run ends FAILED with one error, and the stream, the
    JSON answer and the MCP tool say that same error."""
    slow = {"text": "Backups run every night at 02:00 [1]. " * 30, "chunk_delay": 0.05}  # ~8 s of streaming
    with ScriptedServer([slow] * 3) as server:
        settings = _settings(tmp_path, llm={"provider": "openai", "base_url": server.base_url, "timeout": 20, "max_retries": 0},
                             answer={"mode": "pipeline"}, api={"upload_dir": str(tmp_path / "up"), "request_timeout": 0.5})
        with KnowledgeBase(settings) as kb, _Uvicorn(create_app(settings)) as url:
            base = url.removesuffix("/mcp")
            async with httpx2.AsyncClient(timeout=30) as http:
                async with http.stream("POST", f"{base}/api/v1/ask", json={"question": "When do backups run?"},
                                       headers={"accept": "text/event-stream"}) as reply:
                    events = sse_events([line async for line in reply.aiter_lines()])
                plain = await http.post(f"{base}/api/v1/ask", json={"question": "When do backups run?"})
            async with _client(url) as client:
                tool = await client.call_tool("query_knowledge", {"question": "When do backups run?"})
            runs = kb.log.runs()
    error = runs[0].error
    assert "time limit (0.5 s)" in error
    assert [(r.status, r.error) for r in runs] == [("FAILED", error)] * 3
    assert events[-2] == ("failure", {"code": "timeout", "message": error}) and events[-1][1]["status"] == "FAILED"
    assert plain.status_code == 504 and plain.json()["error"] == {"code": "timeout", "message": error}
    assert tool.is_error and _text(tool).endswith(f": {error}")  # the SDK names the tool first
