"""The MCP server: thirteen tools, each a thin wrapper over KnowledgeBase, the documents as resources
(resources.py) and prompts (prompts.py), served over stdio or HTTP.

Every reading tool is annotated `readOnlyHint` (query_knowledge too: it records the question in the
log, and changes no document); ingest_files (it removes the documents of files gone from disk) and
remove_document are `destructiveHint`.  Each tool's structured result has an output schema (schemas.py).  After an
ingest_files that changed the index, or a remove_document, the server says the resource list changed; so
it does (within WATCH_SECONDS, to `subscriptions/listen` streams) for documents added or removed elsewhere.

A tool that fails returns an MCP error result (`isError`) with docqa's message (what went wrong
and what to do); the server keeps serving.  Over HTTP each call runs as the principal the
request's API key names (`http.py` puts it on the request); over stdio the caller is the local
user, who may do everything.

Where the work runs is a `Backend`: `Direct` (one KnowledgeBase, worker threads, one write at a
time) for stdio, or the API's worker pool and writer when mounted on the API (`FutureBackend`, whose
answers have the API's time limit, api.request_timeout).  A run started by query_knowledge says its
id in a progress notification as it starts (`run_id=… session_id=…`, when the call asked for progress); steer_run, follow_up and cancel_run act on it (or on any live run
the caller may see: one asked through the API or the web page) through `kb.runs`, as REST does.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Annotated, Any, Literal, Protocol, TypeVar, cast

import anyio
import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourcesListChanged
from mcp_types import (INTERNAL_ERROR, INVALID_PARAMS, GetPromptRequestParams, GetPromptResult, ListPromptsResult,
                       ListResourcesResult, ListResourceTemplatesResult, PaginatedRequestParams, ReadResourceRequestParams,
                       ReadResourceResult, TextResourceContents, ToolAnnotations)
from pydantic import Field

from docqa.access import LOCAL, Principal
from docqa.errors import DocqaError, InputError, NotFoundError, PermissionDeniedError
from docqa.events import Metadata
from docqa.kb import KnowledgeBase
from docqa.mcp import prompts, resources
from docqa.mcp.schemas import (AnswerOut, CatalogOut, DocTextOut, FactCheckOut, GrepOut, IngestOut, RemovedOut, SearchOut,
                               SkillsOut)
from docqa.flow.control import Control
from docqa.settings import Settings
from docqa.types import CANCELLED, FAILED, Answer, RunRecord
from docqa.version import __version__

T = TypeVar("T")
log = logging.getLogger(__name__)
INSTRUCTIONS = (
    "docqa answers questions from the user's own documents, with citations. Use query_knowledge for a "
    "question (it retrieves, answers and checks the answer against the sources); search_docs for passages; "
    "verify_claims to fact-check a text (a draft, another tool's answer) against the documents; "
    "list_knowledge for the catalog of documents; fetch_doc to read one by its doc-id; grep_docs for exact words or "
    "patterns; ingest_files to add files or folders (remove_document to take one out); estimate_cost for what a "
    "question will cost before asking it. "
    "The documents are also resources (docqa://COLLECTION/DOC_ID), and the prompts ask with citations, summarise a "
    "collection, compare two documents, or follow one of docqa's skills. "
    "steer_run, follow_up and cancel_run act on a question still being answered (query_knowledge reports its "
    "run_id as progress when it starts)."
)
_READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WATCH_SECONDS = 5.0  # how often the server looks for documents added or removed elsewhere

Collection = Annotated[str | None, Field(description="Collection name; default: every collection the caller may see.")]
RunId = Annotated[str, Field(min_length=1, max_length=64, description="A live run's id (reported by query_knowledge as progress when it starts, or from the API's metadata event).")]
_LIVE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)


class Backend(Protocol):
    """Where tool work runs: `read` and `write` call `work(kb)` off the event loop and return its result."""

    settings: Settings
    timeout: float | None  # an answer's time limit (its run's one deadline); None: none

    async def read(self, work: Callable[[KnowledgeBase], T]) -> T: ...

    async def write(self, work: Callable[[KnowledgeBase], T]) -> T: ...

    async def ingest(self, work: Callable[[KnowledgeBase], T]) -> T:
        """`write` for an add: a server runs it where it parses without holding its writer."""
        ...

    def redact(self, message: str) -> str: ...


class Direct:
    """One KnowledgeBase: reads in worker threads side by side, writes (ingest) one at a time."""

    def __init__(self, kb: KnowledgeBase, timeout: float | None = None):
        self.kb, self.settings, self.timeout = kb, kb.settings, timeout
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
                 redact: Callable[[str], str] = str, timeout: float | None = None,
                 submit_ingest: Callable[[Callable[[KnowledgeBase], Any]], Future] | None = None):
        self._read, self._write, self.settings, self._redact = submit_read, submit_write, settings, redact
        self.timeout = timeout
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


class DocqaServer(MCPServer):
    """MCPServer whose resources and prompts are made for each request's caller: the documents it may
    read (resources.py), docqa's prompts and skills (prompts.py)."""

    def __init__(self, backend: Backend, local: Principal):
        super().__init__("docqa", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
        self.backend, self.local = backend, local

    async def watch_index(self, every: float = WATCH_SECONDS) -> None:
        """Until cancelled: announce (on `subscriptions/listen` streams) that the resource list changed when
        documents come or go elsewhere — `docqa add`, the web page, another client — seen by their counts
        per collection every `every` seconds."""
        last: dict[str, int] | None = None
        while True:
            try:
                # on the writer: it queues rather than refuses, and leaves the readers' places to questions
                counts = await self.backend.write(lambda kb: kb.documents.collections())
            except Exception:  # noqa: BLE001 - busy, stopping or unavailable for a moment: look again next time
                counts = last
            if last is not None and counts != last:
                await self._subscriptions.publish(ResourcesListChanged())
            last = counts
            await anyio.sleep(every)

    async def serve_stdio(self) -> None:
        """Serve on standard input and output until the client disconnects, watching the index meanwhile."""
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self.watch_index)
            await self.run_stdio_async()
            tasks.cancel_scope.cancel()

    async def _handle_list_resources(self, ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListResourcesResult:
        who = _principal(ctx.request, self.local)
        cursor = params.cursor if params is not None else None
        with _resource_errors(self.backend):
            return await self.backend.read(lambda kb: resources.listing(kb, who, cursor))

    async def _handle_list_resource_templates(self, ctx: ServerRequestContext,
                                              params: PaginatedRequestParams | None) -> ListResourceTemplatesResult:
        return ListResourceTemplatesResult(resource_templates=resources.TEMPLATES)

    async def _handle_read_resource(self, ctx: ServerRequestContext, params: ReadResourceRequestParams) -> ReadResourceResult:
        uri = str(params.uri)
        with _resource_errors(self.backend, uri):
            who = _principal(ctx.request, self.local)
            ref = resources.parse(uri)
            text = await self.backend.read(lambda kb: resources.read(kb, ref, who))
        return ReadResourceResult(contents=[TextResourceContents(uri=uri, text=text, mime_type="text/plain")])

    async def _handle_list_prompts(self, ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListPromptsResult:
        with _resource_errors(self.backend):
            return ListPromptsResult(prompts=prompts.listing(await self._skills(ctx)))

    async def _handle_get_prompt(self, ctx: ServerRequestContext, params: GetPromptRequestParams) -> GetPromptResult:
        with _resource_errors(self.backend):
            return prompts.render(params.name, params.arguments, await self._skills(ctx))

    async def _skills(self, ctx: ServerRequestContext) -> list[prompts.SkillText]:
        who = _principal(ctx.request, self.local)
        found = await self.backend.read(lambda kb: kb.answers.skills(principal=who))
        return [prompts.SkillText(s.name, s.description, s.body) for s in found]


@contextmanager
def _resource_errors(backend: Backend, uri: str | None = None) -> Iterator[None]:
    """docqa's errors on resources and prompts become JSON-RPC errors with their message: bad input or
    nothing there is invalid params, anything else of ours an internal error."""
    try:
        yield
    except DocqaError as exc:
        code = INVALID_PARAMS if isinstance(exc, (InputError, NotFoundError, PermissionDeniedError)) else INTERNAL_ERROR
        raise MCPError(code, prompts.mcp_words(backend.redact(str(exc))), {"uri": uri} if uri else None) from exc


def build_server(source: KnowledgeBase | Backend, local: Principal = LOCAL) -> DocqaServer:
    """An MCP server whose tools call a KnowledgeBase (directly, or through the API's `Backend`);
    `local`: who a call without an HTTP request is (over stdio: `STDIO`, whose ingest_files is confined)."""
    backend: Backend = Direct(source) if isinstance(source, KnowledgeBase) else source
    server = DocqaServer(backend, local)

    @_tool(server, annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                                               open_world_hint=False))
    async def ingest_files(
        paths: Annotated[list[str], Field(min_length=1, max_length=100, description="Files and folders on the server's disk (folders are walked).")],
        collection: Annotated[str | None, Field(description="Collection to add to (default: the configured one).")] = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> IngestOut:
        """Add files and folders to the knowledge base, incrementally: unchanged files are skipped, changed
        ones replaced, vanished ones removed. Returns the ingest report (added, updated, failed with reasons)."""
        with _tool_errors(backend):
            who = _caller(ctx, local)
            # the core checks the paths before anything is read: a remote caller's inside api.ingest_roots, a stdio
            # client's inside mcp.ingest_roots (an agent steered by a document it read exfiltrates nothing), and
            # every one named must exist (a tool's caller reads an error, not a failed entry of a report)
            report = await backend.ingest(lambda kb: kb.documents.add(paths, collection, principal=who, missing_ok=False).to_dict())
        if any(report.get(k) for k in ("added", "updated", "removed", "moved")):
            await _resources_changed(ctx)
        return cast(IngestOut, report)

    @_tool(server, annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                                               open_world_hint=False))
    async def remove_document(
        doc_id: Annotated[str, Field(min_length=1, max_length=200, description="The doc-id of the document to remove (list_knowledge, search_docs).")],
        ctx: Context = None,  # type: ignore[assignment]
    ) -> RemovedOut:
        """Remove one document from the knowledge base: its text, passages and vectors leave the index (the file
        itself is not touched; ingest_files adds it again). For editors. Returns the document removed."""
        with _tool_errors(backend):
            who = _caller(ctx, local)
            removed = await backend.write(lambda kb: kb.documents.remove_one(doc_id, principal=who).to_dict())
        await _resources_changed(ctx)
        return cast(RemovedOut, {"removed": removed})

    @_tool(server, annotations=_READ)  # it records the question in the log; it changes no document
    async def query_knowledge(
        question: Annotated[str, Field(min_length=1, max_length=4000, description="The question, in any language.")],
        collection: Collection = None,
        session_id: Annotated[str | None, Field(description="A previous answer's session_id, to ask a follow-up in the same conversation.")] = None,
        fresh: Annotated[bool, Field(description="Answer anew even when an earlier verified answer to the same question holds.")] = False,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> AnswerOut:
        """Answer a question from the documents only: the answer text with [n] citation markers, the
        citations (file, section, page, lines, exact quoted span), whether the check verified it, the
        confidence, whether the documents hold the answer at all (answerable), and whether it is stale
        (a source it cites changed while it was answered: stale_at says when)."""
        with _tool_errors(backend):
            who = _caller(ctx, local)
            control = Control()  # the run is iterated in the backend's thread; this one may cancel it
            started = _announce(ctx)

            def answer_it(kb: KnowledgeBase) -> list[Answer]:
                run = kb.start(question, session_id=session_id, collection=collection, control=control, principal=who,
                               fresh=fresh, timeout=backend.timeout, origin="mcp")
                with run:
                    for event in run:
                        if isinstance(event, Metadata):
                            started(event)
                return run.answers

            try:
                answers = await backend.read(answer_it)
            except BaseException:  # the client cancelled the call or went away: no further model calls
                control.cancel()
                raise
            if not answers or answers[0].status == FAILED:  # a time limit included: the run's own error
                raise DocqaError((answers[0].error if answers else None) or "the question could not be answered")
            stale = await backend.read(lambda kb: {a.run_id: kb.log.run(a.run_id, principal=who)
                                                   for a in answers if a.run_id})
            data = _answer_data(answers[0], stale.get(answers[0].run_id or ""))
            follow_ups = [_answer_data(a, stale.get(a.run_id or "")) for a in answers[1:] if a.status != CANCELLED]
            return cast(AnswerOut, {**data, "follow_ups": follow_ups} if follow_ups else data)

    @_tool(server, annotations=_READ)
    async def verify_claims(
        text: Annotated[str, Field(min_length=1, max_length=20000, description="The text to fact-check: a draft, a reply, another tool's answer.")],
        question: Annotated[str | None, Field(max_length=4000, description="The question the text answers, if any.")] = None,
        collection: Collection = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> FactCheckOut:
        """Fact-check a text against the documents, claim by claim, with the same checks as query_knowledge's
        answers: each claim is supported (with the exact quoted span), contradicted (with the span that says
        otherwise) or not_found; verdict is supported only when every claim is."""
        with _tool_errors(backend):
            who = _caller(ctx, local)
            data = (await backend.read(lambda kb: kb.verify(text, question=question, collection=collection,
                                                            principal=who))).to_dict()
            data["notes"] = [backend.redact(note) for note in data["notes"]]
            return cast(FactCheckOut, data)

    @_tool(server, annotations=_LIVE)
    async def steer_run(
        run_id: RunId,
        message: Annotated[str, Field(min_length=1, max_length=4000, description="What to tell the agent, e.g. 'only the 2024 policy'.")],
        ctx: Context = None,  # type: ignore[assignment]
    ) -> dict[str, Any]:
        """Steer a question still being answered: the message joins the agent's conversation after its
        current tool round. Refused when the run has ended; only runs the caller may see."""
        with _tool_errors(backend):
            who = _caller(ctx, local)
            await backend.read(lambda kb: kb.runs.steer(run_id, message, principal=who))
            return {"run_id": run_id, "accepted": "steer"}

    @_tool(server, annotations=_LIVE)
    async def follow_up(
        run_id: RunId,
        question: Annotated[str, Field(min_length=1, max_length=4000, description="The next question, in any language.")],
        ctx: Context = None,  # type: ignore[assignment]
    ) -> dict[str, Any]:
        """Queue a question to answer after a run still being answered, in the same conversation: its answer
        comes with the run's (query_knowledge's follow_ups). Refused when the run has ended: ask with its
        session_id then."""
        with _tool_errors(backend):
            who = _caller(ctx, local)
            await backend.read(lambda kb: kb.runs.follow_up(run_id, question, principal=who))
            return {"run_id": run_id, "accepted": "follow_up"}

    @_tool(server, annotations=_LIVE)
    async def cancel_run(run_id: RunId, ctx: Context = None) -> dict[str, Any]:  # type: ignore[assignment]
        """Cancel a question still being answered: it stops before its next model call and is recorded
        CANCELLED. Refused when the run has ended; only runs the caller may see."""
        with _tool_errors(backend):
            who = _caller(ctx, local)
            await backend.read(lambda kb: kb.runs.cancel(run_id, principal=who))
            return {"run_id": run_id, "accepted": "cancel"}

    @_tool(server, annotations=_READ)
    async def list_knowledge(
        grep: Annotated[str | None, Field(description="Only documents whose path, title, keywords or summary contain this.")] = None,
        page: Annotated[int, Field(ge=1, description="Page of the catalog, from 1.")] = 1,
        collection: Collection = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> CatalogOut:
        """The catalog of documents, one line per document: `- [folder / title](doc-id): summary`, paged,
        optionally filtered. A doc-id goes to fetch_doc."""
        with _tool_errors(backend):
            who = _caller(ctx, local)
            found = await backend.read(lambda kb: kb.browse.list_docs(grep, page, collection=collection, principal=who).to_dict())
            return cast(Any, {**found, "note": prompts.mcp_words(found["note"])})

    @_tool(server, annotations=_READ)
    async def search_docs(
        query: Annotated[str, Field(min_length=1, max_length=2000, description="Words or a question to look for.")],
        top_k: Annotated[int | None, Field(ge=1, le=100, description="How many passages (default: the configured search.top_k).")] = None,
        collection: Collection = None,
        rerank: Annotated[Literal["none", "llm"] | None, Field(description="llm: the chat model reorders the best passages (slower); default: the configured search.rerank.")] = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> SearchOut:
        """The passages that best match a query (hybrid keyword + semantic search), best first, each with its
        file, section, page, lines, score (0..1) and text; low_relevance is true when even the best is weak."""
        with _tool_errors(backend):
            who = _caller(ctx, local)
            found = await backend.read(lambda kb: kb.search(query, top_k, collection, rerank=rerank, principal=who).to_dict())
            return cast(SearchOut, found)

    @_tool(server, annotations=_READ)
    async def fetch_doc(
        doc_id: Annotated[str, Field(min_length=1, description="A doc-id from list_knowledge or search_docs (document_id), or a file path.")],
        offset: Annotated[int, Field(ge=1, description="First line to return, from 1.")] = 1,
        limit: Annotated[int, Field(ge=1, le=2000, description="Most lines to return.")] = 200,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> DocTextOut:
        """Read a document's text in numbered lines, from line `offset`, at most `limit` lines; the note
        says how to read on."""
        with _tool_errors(backend):
            who = _caller(ctx, local)
            text = await backend.read(lambda kb: kb.browse.fetch_doc(doc_id, offset, limit, principal=who).to_dict())
            return cast(DocTextOut, {**text, "note": prompts.mcp_words(text["note"])})

    @_tool(server, annotations=_READ)
    async def grep_docs(
        pattern: Annotated[str, Field(min_length=1, max_length=500, description="A regular expression (or plain words) to find in the documents' text.")],
        path_glob: Annotated[str | None, Field(max_length=500, description="Only documents whose path matches this glob, e.g. *.md or docs/**.")] = None,
        context: Annotated[int, Field(ge=0, le=10, description="Lines shown before and after each match.")] = 1,
        collection: Collection = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> GrepOut:
        """Exact words, names, numbers or a regular expression in the documents' text (case-insensitive), as
        ripgrep shows them: each matching line with its line number, grouped by document (doc-id for fetch_doc)."""
        with _tool_errors(backend):
            who = _caller(ctx, local)
            found = await backend.read(lambda kb: kb.browse.grep_docs(pattern, path_glob, context, collection=collection,
                                                                      principal=who).to_dict())
            return cast(Any, {**found, "note": prompts.mcp_words(found["note"])})

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
    async def list_skills(ctx: Context = None) -> SkillsOut:  # type: ignore[assignment]
        """The skills docqa's agent may load when answering (procedures such as comparing two versions of a
        document or writing a step-by-step procedure): name, description, triggers, where each comes from."""
        with _tool_errors(backend):
            who = _caller(ctx, local)
            found = await backend.read(lambda kb: kb.answers.skills(principal=who))
            return cast(SkillsOut, {"skills": [{k: v for k, v in s.summary().items() if k != "path"} for s in found],
                                    "problems": found.shown_problems()})

    return server


def _answer_data(answer: Answer, run: RunRecord | None = None) -> dict[str, Any]:
    """What query_knowledge returns of an answer, with whether its run is stale (a cited source changed since)."""
    data = answer.to_dict()
    return {**{key: data[key] for key in ("answer", "answerable", "confidence", "citations", "verification", "notes",
                                          "status", "run_id", "session_id")},
            "stale": bool(run and run.stale), "stale_at": run.stale_at if run else None}


def _announce(ctx: Context | None) -> Callable[[Metadata], None]:
    """From the thread answering: tell the client the run's id as it starts (a progress notification, when
    the call asked for progress), so that it may steer, follow up or cancel the run meanwhile."""
    loop = asyncio.get_running_loop()

    async def tell(message: str) -> None:
        try:
            await ctx.report_progress(0, None, message)  # type: ignore[union-attr]
        except Exception as exc:  # noqa: BLE001 - a note the client may miss never fails the answer
            log.warning("could not tell the MCP client the run's id: %s", exc)

    def started(metadata: Metadata) -> None:
        if ctx is None:
            return
        message = (f"run_id={metadata.run_id} session_id={metadata.session_id}: answering; steer_run, "
                   "follow_up or cancel_run may act on this run meanwhile")
        try:
            asyncio.run_coroutine_threadsafe(tell(message), loop)
        except RuntimeError:  # the event loop has stopped: nobody to tell
            pass
    return started


@contextmanager
def _tool_errors(backend: Backend) -> Iterator[None]:
    """docqa's own errors become tool errors with their message (an isError result, never a crash)."""
    try:
        yield
    except DocqaError as exc:
        raise ToolError(prompts.mcp_words(backend.redact(str(exc)))) from exc


async def _resources_changed(ctx: Context | None) -> None:
    """Tell clients the resource list changed: on `subscriptions/listen` streams, and on the session of a
    client of an earlier protocol version."""
    if ctx is None:
        return
    for notify in (ctx.notify_resources_changed, lambda: ctx.session.send_resource_list_changed()):
        try:
            await notify()
        except Exception:  # noqa: BLE001, PERF203 - no request context (in process), or the session is gone: nobody to tell
            continue


def _caller(ctx: Context | None, local: Principal = LOCAL) -> Principal:
    """The principal http.py authenticated for this request (remote); `local` over stdio or in process."""
    try:
        request = ctx.request_context.request if ctx is not None else None
    except ValueError:  # no request context: called in process
        request = None
    return _principal(request, local)


def _principal(request: Any, local: Principal) -> Principal:
    if request is None:
        return local
    principal = getattr(request, "state", None) and getattr(request.state, "principal", None)
    if not isinstance(principal, Principal):  # over HTTP without http.py in front: refuse, never guess
        raise PermissionDeniedError("this MCP endpoint is not behind docqa's authentication: mount it with docqa.mcp.mount")
    return principal
