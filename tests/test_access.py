"""Who may see what is decided in the core, once: one table of (role, scope, action, resource) run
through the core directly, through REST and through MCP over HTTP — all three must give the same
outcome and the same message; and agent mode, with a scripted model that asks for every other
collection with every tool, over REST and MCP, must show nothing of it anywhere.

Real SQLite and PostgreSQL (each test runs on both), a real uvicorn on loopback serving the API and /mcp, real API keys; the one fake is
the scripted OpenAI-compatible model server.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from docqa.access import Principal
from docqa.api import create_app
from docqa.errors import DocqaError, InputError, NotFoundError, PermissionDeniedError
from docqa.kb import KnowledgeBase
from docqa.mcp.prompts import mcp_words
from docqa.settings import Settings
from llm.scripted_server import ScriptedServer
from store.backends import BACKENDS, kb_url

pytestmark = pytest.mark.anyio
SECRET = "ZEBRA-7731"  # appears only in collection dev
BACKUP = "# Backups\n\nBackups run every night at 02:00 with restic. They are kept for 30 days.\n"
DEPLOY = f"# Deploy\n\nThe service is deployed with Ansible on Ubuntu 22.04. The deploy token is {SECRET}.\n"


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(params=BACKENDS)
def kb(request, tmp_path) -> str:
    """The knowledge base's location: a SQLite file, or a fresh PostgreSQL database."""
    return kb_url(request.param, request, tmp_path)


def _settings(tmp_path: Path, kb: str, server: ScriptedServer | None = None) -> Settings:
    llm = ({"provider": "openai", "base_url": server.base_url, "model": "scripted", "timeout": 20, "max_retries": 0}
           if server else {"provider": "none"})
    return Settings(kb=kb, embed={"provider": "none"}, llm=llm,
                    answer={"mode": "agent" if server else "pipeline"}, agent={"check": False},
                    api={"ingest_roots": [str(tmp_path / "ops")], "upload_dir": str(tmp_path / "up")})


def _fill(tmp_path: Path, where: str) -> dict[str, str]:
    """ops/backup.md in collection ops, dev/deploy.md in dev; returns their document ids."""
    for folder, name, text in (("ops", "backup.md", BACKUP), ("dev", "deploy.md", DEPLOY), ("elsewhere", "x.md", BACKUP)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_text(text, encoding="utf-8")
    with KnowledgeBase(_settings(tmp_path, where)) as kb:
        kb.add([tmp_path / "ops"], "ops")
        kb.add([tmp_path / "dev"], "dev")
        return {r.collection: r.document_id for r in kb.documents.list()}


class _Uvicorn:
    def __init__(self, app):
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "uvicorn did not start"
            time.sleep(0.02)
        return f"http://127.0.0.1:{self.server.servers[0].sockets[0].getsockname()[1]}"

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@asynccontextmanager
async def _mcp(url: str, key: str) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
        async with Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
            yield client


# -- the table ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    role: str
    scope: tuple[str, ...]
    action: str  # search | list | fetch | ingest | ask | delete | reindex | log | grant
    resource: str  # a collection name, "ops-doc" / "dev-doc", a folder name, or "" (none)
    expect: str  # ok | denied | missing | invalid


OPS, DEV, ALL = ("ops",), ("dev",), ()
CASES = [
    Case("reader", OPS, "search", "ops", "ok"),
    Case("reader", OPS, "search", "dev", "denied"),
    Case("reader", OPS, "search", "nowhere", "denied"),  # a collection that does not exist: the same answer
    Case("reader", OPS, "list", "dev", "denied"),
    Case("reader", OPS, "list", "ops", "ok"),
    Case("reader", OPS, "fetch", "ops-doc", "ok"),
    Case("reader", OPS, "fetch", "dev-doc", "missing"),
    Case("reader", OPS, "fetch", "deploy.md", "missing"),  # a path suffix of another collection's document
    Case("reader", OPS, "fetch", "nothing.md", "missing"),  # ... and of no document at all: the same
    Case("reader", OPS, "ask", "dev", "denied"),
    Case("reader", OPS, "ask", "ops", "ok"),
    Case("reader", OPS, "ingest", "ops", "denied"),
    Case("reader", ALL, "search", "dev", "ok"),
    Case("reader", ALL, "fetch", "dev-doc", "ok"),
    Case("reader", ALL, "reindex", "", "denied"),
    Case("reader", ALL, "log", "", "denied"),
    Case("reader", ALL, "delete", "dev-doc", "denied"),
    Case("reader", ("ops", "dev"), "search", "", "invalid"),  # scoped to two: name one
    Case("reader", ("ops", "dev"), "fetch", "dev-doc", "ok"),
    Case("editor", OPS, "ingest", "ops", "ok"),
    Case("editor", OPS, "ingest", "dev", "denied"),  # dev is outside the ingest roots (and the scope)
    Case("editor", ALL, "ingest", "elsewhere", "denied"),  # outside api.ingest_roots
    Case("editor", OPS, "delete", "dev-doc", "missing"),
    Case("editor", OPS, "reindex", "", "denied"),
    Case("editor", OPS, "log", "", "ok"),
    Case("admin", OPS, "reindex", "", "denied"),  # a scoped admin cannot re-embed every collection
    Case("admin", OPS, "grant", "dev", "denied"),
    Case("admin", OPS, "grant", "ops", "ok"),
    Case("admin", ALL, "reindex", "", "ok"),
]
MCP_ACTIONS = {"search", "list", "fetch", "ingest", "ask"}  # the rest are not MCP tools


def _doc(resource: str, ids: dict[str, str]) -> str:
    return {"ops-doc": ids["ops"], "dev-doc": ids["dev"]}.get(resource, resource)


def _core(kb: KnowledgeBase, who: Principal, case: Case, ids: dict[str, str], tmp_path: Path):
    r = case.resource or None
    match case.action:
        case "search":
            return kb.search("restic Ansible backup deploy", 5, r, principal=who)
        case "list":
            return kb.browse.list_docs(collection=r, principal=who)
        case "fetch":
            return kb.browse.fetch_doc(_doc(case.resource, ids), principal=who)
        case "ingest":
            return kb.add([str(tmp_path / case.resource)], case.resource if case.resource != "elsewhere" else None,
                          principal=who)
        case "ask":
            return kb.ask("When do backups run?", collection=r, principal=who)
        case "delete":
            return kb.documents.remove_one(_doc(case.resource, ids), principal=who)
        case "reindex":
            return kb.documents.reindex(principal=who)
        case "log":
            return kb.log.qa_log(principal=who)
        case "grant":
            return kb.keys.create("reader", [case.resource], principal=who)
    raise AssertionError(case.action)


async def _rest(http: httpx.AsyncClient, case: Case, ids: dict[str, str], tmp_path: Path) -> httpx.Response:
    r = case.resource or None
    match case.action:
        case "search":
            return await http.post("/api/v1/search", json={"query": "restic Ansible backup deploy", "top_k": 5,
                                                           "collection": r})
        case "list":
            return await http.get("/api/v1/documents", params={"collection": r} if r else {})
        case "ingest":
            body = {"paths": [str(tmp_path / case.resource)]}
            if case.resource != "elsewhere":
                body["collection"] = case.resource
            return await http.post("/api/v1/documents:ingest", json=body)
        case "ask":
            return await http.post("/api/v1/ask", json={"question": "When do backups run?", "collection": r})
        case "delete":
            return await http.delete(f"/api/v1/documents/{_doc(case.resource, ids)}")
        case "reindex":
            return await http.post("/api/v1/reindex")
        case "log":
            return await http.get("/api/v1/log")
        case "grant":
            return await http.post("/api/v1/keys", json={"role": "reader", "collections": [case.resource]})
    raise AssertionError(f"no REST door for {case.action}")


async def _tool(client: Client, case: Case, ids: dict[str, str], tmp_path: Path):
    r = case.resource or None
    args = {"search": ("search_docs", {"query": "restic Ansible backup deploy", "top_k": 5, "collection": r}),
            "list": ("list_knowledge", {"collection": r}),
            "fetch": ("fetch_doc", {"doc_id": _doc(case.resource, ids)}),
            "ingest": ("ingest_files", {"paths": [str(tmp_path / case.resource)],
                                        **({"collection": r} if case.resource != "elsewhere" else {})}),
            "ask": ("query_knowledge", {"question": "When do backups run?", "collection": r})}[case.action]
    return await client.call_tool(args[0], {k: v for k, v in args[1].items() if v is not None})


def _kind(exc: BaseException | None) -> str:
    if exc is None:
        return "ok"
    if isinstance(exc, PermissionDeniedError):
        return "denied"
    if isinstance(exc, NotFoundError):
        return "missing"
    if isinstance(exc, InputError):
        return "invalid"
    raise AssertionError(f"unexpected {exc!r}")


_HTTP = {403: "denied", 404: "missing", 400: "invalid", 422: "invalid"}


@pytest.mark.slow
async def test_one_policy_through_core_rest_and_mcp(tmp_path: Path, kb: str):
    ids = _fill(tmp_path, kb)
    settings = _settings(tmp_path, kb)
    problems = []
    with KnowledgeBase(settings) as kb, _Uvicorn(create_app(settings)) as url:
        for case in CASES:
            _, key = kb.keys.create(case.role, list(case.scope))
            who = Principal.of(kb.keys.authenticate(key))  # the principal every door builds from this key
            try:
                done = _core(kb, who, case, ids, tmp_path)
                assert getattr(done, "status", "SUCCESS") != "FAILED", done.error  # an answer that failed is no 'ok'
                core, message = "ok", ""
            except DocqaError as exc:
                core, message = _kind(exc), str(exc)
            if core != case.expect:
                problems.append(f"core: {case} gave {core} ({message})")
            async with httpx.AsyncClient(base_url=url, headers={"X-API-Key": key}, timeout=60) as http:
                if case.action in {"search", "list", "ingest", "ask", "delete", "reindex", "log", "grant"}:
                    response = await _rest(http, case, ids, tmp_path)
                    rest = "ok" if response.status_code < 300 else _HTTP.get(response.status_code, str(response.status_code))
                    if rest != core:
                        problems.append(f"REST: {case} gave {rest} ({response.text[:200]}), core {core}")
                    elif core != "ok" and response.json()["error"]["message"] != message:
                        problems.append(f"REST: {case} said {response.json()['error']['message']!r}, core {message!r}")
            if case.action in MCP_ACTIONS:
                async with _mcp(url, key) as client:
                    result = await _tool(client, case, ids, tmp_path)
                text = "\n".join(b.text for b in result.content if getattr(b, "text", None))
                # the same message, naming the MCP tools where the core names the agent's (list_docs: list_knowledge)
                if result.is_error != (core != "ok") or (core != "ok" and mcp_words(message) not in text):
                    problems.append(f"MCP: {case} gave error={result.is_error} ({text[:200]}), core {core} ({message})")
    assert not problems, "\n".join(problems)


# -- agent mode with a model that asks for everything ------------------------------------------------

def _greedy_script(dev_id: str) -> list[dict]:
    """A model that tries every tool on the other collection, then answers with what it saw."""
    def call(name: str, **arguments) -> dict:
        return {"tool_calls": [{"name": name, "arguments": arguments}]}

    return [call("search_docs", query="deploy token Ansible", collection="dev"),
            call("search_docs", query="backups deploy token Ansible"),
            call("list_docs"),
            call("grep_docs", pattern="ZEBRA|Ansible|token"),
            call("fetch_doc", doc_id=dev_id),
            call("fetch_doc", doc_id="deploy.md"),
            call("fetch_doc", doc_id="dev/deploy.md", offset=1, limit=50),
            call("answer", text="Backups run every night at 02:00 [1]."),
            {"text": "VERIFIED"}]


def _leaks(text: str, tmp_path: Path) -> bool:
    return SECRET in text or "Ubuntu 22.04" in text or str(tmp_path / "dev") in text


@pytest.mark.parametrize("door", ["rest", "mcp"])
@pytest.mark.slow
async def test_agent_with_a_greedy_model_sees_nothing_outside_its_scope(tmp_path: Path, door: str, kb: str):
    ids = _fill(tmp_path, kb)
    with ScriptedServer(_greedy_script(ids["dev"])) as server:
        settings = _settings(tmp_path, kb, server)
        with KnowledgeBase(settings) as kb, _Uvicorn(create_app(settings)) as url:
            _, key = kb.keys.create("reader", ["ops"])
            if door == "rest":
                async with httpx.AsyncClient(base_url=url, headers={"X-API-Key": key}, timeout=60) as http:
                    async with http.stream("POST", "/api/v1/ask", json={"question": "When do backups run?", "mode": "agent"},
                                           headers={"Accept": "text/event-stream"}) as response:
                        assert response.status_code == 200
                        stream = "".join([chunk async for chunk in response.aiter_text()])
                    run_id = next(json.loads(line[5:])["run_id"] for line in stream.splitlines()
                                  if line.startswith("data:") and '"run_id"' in line)
                    shown = (await http.get(f"/api/v1/runs/{run_id}")).text
                    assert SECRET not in shown
            else:
                async with _mcp(url, key) as client:
                    result = await client.call_tool("query_knowledge", {"question": "When do the backups run?"})
                stream = "\n".join(b.text for b in result.content if getattr(b, "text", None))
                assert not result.is_error, stream
                run_id = result.structured_content["run_id"]
            record = kb.log.run(run_id)  # the full audit record, as the local owner sees it
            log = json.dumps(kb.log.qa_log(), ensure_ascii=False)
        to_model = json.dumps(server.requests, ensure_ascii=False)
    tools = [e for e in record.trace if e.get("stage") == "tool"]
    assert [e["name"] for e in tools] == ["search_docs", "search_docs", "list_docs", "grep_docs", "fetch_doc", "fetch_doc",
                                          "fetch_doc", "answer"]
    assert tools[0]["error"] and "cannot use collection 'dev'" in tools[0]["result"]
    assert all(e["error"] and "no document" in e["result"] for e in tools[4:7])
    assert "backup.md" in tools[1]["result"] and "02:00" in tools[2]["result"]  # its own collection it does see
    assert "deploy" not in tools[2]["result"] and "deploy" not in tools[3]["result"]
    for where, text in (("the stream", stream), ("the run record", json.dumps(record.to_dict(), ensure_ascii=False)),
                        ("the log", log), ("what the model was sent", to_model)):
        assert not _leaks(text, tmp_path), f"collection dev leaked into {where}"
    assert "02:00" in record.answer


def test_not_yours_and_not_there_read_the_same(tmp_path: Path, kb: str):
    """A caller cannot probe: another collection's document, run or session gets the very error of one
    that does not exist (by id, by path suffix, by absolute path)."""
    ids = _fill(tmp_path, kb)
    with KnowledgeBase(_settings(tmp_path, kb)) as kb:
        dev_run = kb.ask("How is the service deployed?", collection="dev")
        who = Principal("reader", ("ops",), "k1", remote=True)

        def error(call, *args, by: Principal = who) -> str:
            with pytest.raises(NotFoundError) as caught:
                call(*args, principal=by)
            return str(caught.value)

        for real, fake in ((ids["dev"], "0123456789abcdef"), ("deploy.md", "nothing.md"),
                           (str(tmp_path / "dev" / "deploy.md"), str(tmp_path / "dev" / "nothing.md"))):
            assert error(kb.browse.fetch_doc, real).replace(real, "X") == error(kb.browse.fetch_doc, fake).replace(fake, "X")
        editor = Principal("editor", ("ops",), "k3", remote=True)
        for call, by in ((kb.documents.text, who), (kb.documents.chunks, who), (kb.documents.remove_one, editor)):
            assert (error(call, ids["dev"], by=by).replace(ids["dev"], "X")
                    == error(call, "0123456789abcdef", by=by).replace("0123456789abcdef", "X"))
        assert error(kb.log.run, dev_run.run_id).replace(dev_run.run_id, "X") == error(kb.log.run, "nope").replace("nope", "X")
        assert error(kb.log.session, dev_run.session_id).replace(dev_run.session_id, "X") == \
            error(kb.log.session, "nope").replace("nope", "X")
        with pytest.raises(NotFoundError):  # continuing another collection's conversation
            kb.ask("and how long does it take?", session_id=dev_run.session_id, principal=who)
        assert kb.log.qa_log(principal=Principal("editor", ("ops",), "k2")) == []  # the dev question is not in its log
