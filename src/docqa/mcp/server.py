"""The MCP server: seven tools, each a thin wrapper over KnowledgeBase, served over stdio or HTTP.

A tool that fails returns an MCP error result (`isError`) with docqa's message (what went wrong
and what to do); the server keeps serving.  Over HTTP each call runs as the principal the
request's API key names (`http.py` puts it on the request); over stdio the caller is the local
user, who may do everything.

Where the work runs is a `Backend`: `Direct` (one KnowledgeBase, worker threads, one write at a
time) for stdio, or the API's worker pool and writer when mounted on the API (`FutureBackend`).
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Annotated, Any, Literal, Protocol, TypeVar

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from docqa.access import LOCAL, Principal
from docqa.errors import DocqaError, PermissionDeniedError
from docqa.kb import KnowledgeBase
from docqa.run.control import Control
from docqa.settings import Settings
from docqa.version import __version__

T = TypeVar("T")
INSTRUCTIONS = (
    "docqa answers questions from the user's own documents, with citations. Use query_knowledge for a "
    "question (it retrieves, answers and checks the answer against the sources); search_docs for passages; "
    "list_knowledge for the catalog of documents; fetch_doc to read one by its doc-id; ingest_files to add "
    "files or folders; estimate_cost for what a question will cost before asking it."
)
_READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)

Collection = Annotated[str | None, Field(description="Collection name; default: every collection the caller may see.")]


class Backend(Protocol):
    """Where tool work runs: `read` and `write` call `work(kb)` off the event loop and return its result."""

    settings: Settings

    async def read(self, work: Callable[[KnowledgeBase], T]) -> T: ...

    async def write(self, work: Callable[[KnowledgeBase], T]) -> T: ...

    async def ingest(self, work: Callable[[KnowledgeBase], T]) -> T:
        """`write` for an add: a server runs it where it parses without holding its writer."""
        ...

    def redact(self, message: str) -> str: ...


class Direct:
    """One KnowledgeBase: reads in worker threads side by side, writes (ingest) one at a time."""

    def __init__(self, kb: KnowledgeBase):
        self.kb, self.settings = kb, kb.settings
        self._writing = threading.Lock()

    async def read(self, work: Callable[[KnowledgeBase], T]) -> T:
        # a cancelled call does not wait for its thread (an answer stops itself once told to)
        return await anyio.to_thread.run_sync(work, self.kb, abandon_on_cancel=True)

    async def write(self, work: Callable[[KnowledgeBase], T]) -> T:
        def locked(kb: KnowledgeBase) -> T:
            with self._writing:
                return work(kb)

        return await anyio.to_thread.run_sync(locked, self.kb)

    async def ingest(self, work: Callable[[KnowledgeBase], T]) -> T:
        return await self.write(work)

    def redact(self, message: str) -> str:
        return message


class FutureBackend:
    """Work handed to executors that return concurrent futures (the API's worker pool and writer).
    An executor that refuses the work (busy) raises an exception whose message is passed on."""

    def __init__(self, submit_read: Callable[[Callable[[KnowledgeBase], Any]], Future],
                 submit_write: Callable[[Callable[[KnowledgeBase], Any]], Future], settings: Settings,
                 redact: Callable[[str], str] = str,
                 submit_ingest: Callable[[Callable[[KnowledgeBase], Any]], Future] | None = None):
        self._read, self._write, self.settings, self._redact = submit_read, submit_write, settings, redact
        self._ingest = submit_ingest or submit_write

    async def read(self, work: Callable[[KnowledgeBase], T]) -> T:
        return await _wait(self._read, work)

    async def write(self, work: Callable[[KnowledgeBase], T]) -> T:
        return await _wait(self._write, work)

    async def ingest(self, work: Callable[[KnowledgeBase], T]) -> T:
        return await _wait(self._ingest, work)

    def redact(self, message: str) -> str:
        return self._redact(message)


async def _wait(submit: Callable[[Callable[[KnowledgeBase], Any]], Future], work: Callable[[KnowledgeBase], T]) -> T:
    try:
        future = submit(work)
    except DocqaError:
        raise
    except Exception as exc:  # the executor's own refusal (busy, stopping): its message is for people
        raise DocqaError(str(exc)) from exc
    return await asyncio.wrap_future(future)


def described(doc: str | None) -> str:
    """A docstring as a tool description: dedented, each paragraph on one line (no source layout)."""
    return "\n\n".join(" ".join(p.split()) for p in inspect.cleandoc(doc or "").split("\n\n"))


def _tool(server: MCPServer, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`server.tool(...)` with the function's docstring, `described`, as the description."""
    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        return server.tool(description=described(function.__doc__), **options)(function)
    return register


def build_server(source: KnowledgeBase | Backend, local: Principal = LOCAL) -> MCPServer:
    """An MCP server whose tools call a KnowledgeBase (directly, or through the API's `Backend`);
    `local`: who a call without an HTTP request is (over stdio: `STDIO`, whose ingest_files is confined)."""
    backend: Backend = Direct(source) if isinstance(source, KnowledgeBase) else source
    server = MCPServer("docqa", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")

    @_tool(server, annotations=ToolAnnotations(read_only_hint=False, idempotent_hint=True, open_world_hint=False))
    async def ingest_files(
        paths: Annotated[list[str], Field(min_length=1, max_length=100, description="Files and folders on the server's disk (folders are walked).")],
        collection: Annotated[str | None, Field(description="Collection to add to (default: the configured one).")] = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> dict[str, Any]:
        """Add files and folders to the knowledge base, incrementally: unchanged files are skipped, changed
        ones replaced, vanished ones removed. Returns the ingest report (added, updated, failed with reasons)."""
        with _tool_errors(backend):
            who = _caller(ctx, local)
            # the core checks the paths before anything is read: a remote caller's inside api.ingest_roots, a stdio
            # client's inside mcp.ingest_roots (an agent steered by a document it read exfiltrates nothing), and
            # every one named must exist (a tool's caller reads an error, not a failed entry of a report)
            return await backend.ingest(lambda kb: kb.documents.add(paths, collection, principal=who, missing_ok=False).to_dict())

    @_tool(server, annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False))
    async def query_knowledge(
        question: Annotated[str, Field(min_length=1, max_length=4000, description="The question, in any language.")],
        collection: Collection = None,
        session_id: Annotated[str | None, Field(description="A previous answer's session_id, to ask a follow-up in the same conversation.")] = None,
        fresh: Annotated[bool, Field(description="Answer anew even when an earlier verified answer to the same question holds.")] = False,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> dict[str, Any]:
        """Answer a question from the documents only: the answer text with [n] citation markers, the
        citations (file, section, page, lines, exact quoted span), whether the check verified it, the
        confidence, and whether the documents hold the answer at all (answerable)."""
        with _tool_errors(backend):
            who = _caller(ctx, local)
            control = Control()  # the run is iterated in the backend's thread; this one may cancel it
            try:
                answer = await backend.read(lambda kb: kb.start(question, session_id=session_id, collection=collection,
                                                                control=control, principal=who, fresh=fresh).wait())
            except BaseException:  # the client cancelled the call or went away: no further model calls
                control.cancel()
                raise
            if answer.status == "FAILED":
                raise DocqaError(answer.error or "the question could not be answered")
            data = answer.to_dict()
            return {key: data[key] for key in ("answer", "answerable", "confidence", "citations", "verification",
                                               "notes", "status", "run_id", "session_id")}

    @_tool(server, annotations=_READ)
    async def list_knowledge(
        grep: Annotated[str | None, Field(description="Only documents whose path, title, keywords or summary contain this.")] = None,
        page: Annotated[int, Field(ge=1, description="Page of the catalog, from 1.")] = 1,
        collection: Collection = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> dict[str, Any]:
        """The catalog of documents, one line per document: `- [folder / title](doc-id): summary`, paged,
        optionally filtered. A doc-id goes to fetch_doc."""
        with _tool_errors(backend):
            who = _caller(ctx, local)
            return await backend.read(lambda kb: kb.browse.list_docs(grep, page, collection=collection, principal=who).to_dict())

    @_tool(server, annotations=_READ)
    async def search_docs(
        query: Annotated[str, Field(min_length=1, max_length=2000, description="Words or a question to look for.")],
        top_k: Annotated[int | None, Field(ge=1, le=100, description="How many passages (default: the configured search.top_k).")] = None,
        collection: Collection = None,
        rerank: Annotated[Literal["none", "llm"] | None, Field(description="llm: the chat model reorders the best passages (slower); default: the configured search.rerank.")] = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> dict[str, Any]:
        """The passages that best match a query (hybrid keyword + semantic search), best first, each with its
        file, section, page, lines, score (0..1) and text; low_relevance is true when even the best is weak."""
        with _tool_errors(backend):
            who = _caller(ctx, local)
            return await backend.read(lambda kb: kb.search(query, top_k, collection, rerank=rerank, principal=who).to_dict())

    @_tool(server, annotations=_READ)
    async def fetch_doc(
        doc_id: Annotated[str, Field(min_length=1, description="A doc-id from list_knowledge or search_docs (document_id), or a file path.")],
        offset: Annotated[int, Field(ge=1, description="First line to return, from 1.")] = 1,
        limit: Annotated[int, Field(ge=1, le=2000, description="Most lines to return.")] = 200,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> dict[str, Any]:
        """Read a document's text in numbered lines, from line `offset`, at most `limit` lines; the note
        says how to read on."""
        with _tool_errors(backend):
            who = _caller(ctx, local)
            return await backend.read(lambda kb: kb.browse.fetch_doc(doc_id, offset, limit, principal=who).to_dict())

    @_tool(server, annotations=_READ)
    async def estimate_cost(
        question: Annotated[str | None, Field(max_length=4000, description="The question (auto mode routes it as an answer would).")] = None,
        mode: Annotated[Literal["pipeline", "agent", "extractive", "auto"] | None, Field(description="The answering mode (default: the configured one).")] = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> dict[str, Any]:
        """What one question is expected to cost before asking it: prompt and completion tokens, model calls,
        seconds and money, from the averages of recent runs (or stated defaults when there are none). For
        the people who keep the documents: it reads the question-and-answer log."""
        with _tool_errors(backend):
            who = _caller(ctx, local)
            data = await backend.read(lambda kb: kb.estimates.question(question, mode, principal=who))
            data["chat"]["reason"] = backend.redact(data["chat"]["reason"])
            return data

    @_tool(server, annotations=_READ)
    async def list_skills(ctx: Context = None) -> dict[str, Any]:  # type: ignore[assignment]
        """The skills docqa's agent may load when answering (procedures such as comparing two versions of a
        document or writing a step-by-step procedure): name, description, triggers, where each comes from."""
        with _tool_errors(backend):
            who = _caller(ctx, local)
            found = await backend.read(lambda kb: kb.answers.skills(principal=who))
            return {"skills": [{k: v for k, v in s.summary().items() if k != "path"} for s in found],
                    "problems": found.shown_problems()}

    return server


@contextmanager
def _tool_errors(backend: Backend) -> Iterator[None]:
    """docqa's own errors become tool errors with their message (an isError result, never a crash)."""
    try:
        yield
    except DocqaError as exc:
        raise ToolError(backend.redact(str(exc))) from exc


def _caller(ctx: Context | None, local: Principal = LOCAL) -> Principal:
    """The principal http.py authenticated for this request (remote); `local` over stdio or in process."""
    try:
        request = ctx.request_context.request if ctx is not None else None
    except ValueError:  # no request context: called in process
        request = None
    if request is None:
        return local
    principal = getattr(request, "state", None) and getattr(request.state, "principal", None)
    if not isinstance(principal, Principal):  # over HTTP without http.py in front: refuse, never guess
        raise PermissionDeniedError("this MCP endpoint is not behind docqa's authentication: mount it with docqa.mcp.mount")
    return principal
