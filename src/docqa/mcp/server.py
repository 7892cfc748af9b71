"""The MCP server: five tools, each a thin wrapper over KnowledgeBase, served over stdio or HTTP.

A tool that fails returns an MCP error result (`isError`) with docqa's message (what went wrong
and what to do); the server keeps serving.  Over HTTP each call runs as the principal the
request's API key names (`http.py` puts it on the request); over stdio the caller is the local
user, who may do everything.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from docqa.access import LOCAL, Principal, require, scope
from docqa.errors import DocqaError, NotFoundError, PermissionDeniedError
from docqa.kb import KnowledgeBase

INSTRUCTIONS = (
    "docqa answers questions from the user's own documents, with citations. Use query_knowledge for a "
    "question (it retrieves, answers and checks the answer against the sources); search_docs for passages; "
    "list_knowledge for the catalog of documents; fetch_doc to read one by its doc-id; ingest_files to add "
    "files or folders."
)
_READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)

Collection = Annotated[str | None, Field(description="Collection name; default: every collection the caller may see.")]


def build_server(kb: KnowledgeBase) -> MCPServer:
    """An MCP server whose tools call `kb` (one KnowledgeBase for the server's lifetime)."""
    server = MCPServer("docqa", instructions=INSTRUCTIONS, version=_version(), log_level="WARNING")
    ingesting = threading.Lock()  # one ingest at a time; reads run beside it

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, idempotent_hint=True, open_world_hint=False))
    def ingest_files(
        paths: Annotated[list[str], Field(min_length=1, description="Files and folders on the server's disk (folders are walked).")],
        collection: Annotated[str | None, Field(description="Collection to add to (default: the configured one).")] = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> dict[str, Any]:
        """Add files and folders to the knowledge base, incrementally: unchanged files are skipped, changed
        ones replaced, vanished ones removed. Returns the ingest report (added, updated, failed with reasons)."""
        with _tool_errors():
            who, remote = _caller(ctx)
            require(who, "editor")
            collection = scope(who, collection)
            if missing := [p for p in paths if not os.path.exists(p)]:
                raise ToolError(f"no such file or folder on the server: {', '.join(missing)} (give absolute paths)")
            if remote:  # these are paths on the server: over HTTP only inside the folders it opens
                _check_roots(paths, kb.settings.api.ingest_roots)
            with ingesting:
                return kb.add(paths, collection).to_dict()

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False))
    def query_knowledge(
        question: Annotated[str, Field(min_length=1, description="The question, in any language.")],
        collection: Collection = None,
        session_id: Annotated[str | None, Field(description="A previous answer's session_id, to ask a follow-up in the same conversation.")] = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> dict[str, Any]:
        """Answer a question from the documents only: the answer text with [n] citation markers, the
        citations (file, section, page, lines, exact quoted span), whether the check verified it, the
        confidence, and whether the documents hold the answer at all (answerable)."""
        with _tool_errors():
            answer = kb.ask(question, session_id=session_id, collection=scope(_caller(ctx)[0], collection))
            if answer.status == "FAILED":
                raise ToolError(answer.error or "the question could not be answered")
            data = answer.to_dict()
            return {key: data[key] for key in ("answer", "answerable", "confidence", "citations", "verification",
                                               "notes", "status", "run_id", "session_id")}

    @server.tool(annotations=_READ)
    def list_knowledge(
        grep: Annotated[str | None, Field(description="Only documents whose path, title, keywords or summary contain this.")] = None,
        page: Annotated[int, Field(ge=1, description="Page of the catalog, from 1.")] = 1,
        collection: Collection = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> dict[str, Any]:
        """The catalog of documents, one line per document: `- [folder / title](doc-id): summary`, paged,
        optionally filtered. A doc-id goes to fetch_doc."""
        with _tool_errors():
            return kb.list_docs(grep, page, collection=scope(_caller(ctx)[0], collection)).to_dict()

    @server.tool(annotations=_READ)
    def search_docs(
        query: Annotated[str, Field(min_length=1, description="Words or a question to look for.")],
        top_k: Annotated[int | None, Field(ge=1, le=100, description="How many passages (default: the configured search.top_k).")] = None,
        collection: Collection = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> dict[str, Any]:
        """The passages that best match a query (hybrid keyword + semantic search), best first, each with its
        file, section, page, lines, score (0..1) and text; low_relevance is true when even the best is weak."""
        with _tool_errors():
            return kb.search(query, top_k, scope(_caller(ctx)[0], collection)).to_dict()

    @server.tool(annotations=_READ)
    def fetch_doc(
        doc_id: Annotated[str, Field(min_length=1, description="A doc-id from list_knowledge or search_docs (document_id), or a file path.")],
        offset: Annotated[int, Field(ge=1, description="First line to return, from 1.")] = 1,
        limit: Annotated[int, Field(ge=1, le=2000, description="Most lines to return.")] = 200,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> dict[str, Any]:
        """Read a document's text in numbered lines, from line `offset`, at most `limit` lines; the note
        says how to read on."""
        with _tool_errors():
            text = kb.fetch_doc(doc_id, offset, limit)
            who = _caller(ctx)[0]
            if who.collections and not who.can_see(kb.store.document_record(text.doc_id).collection):
                raise NotFoundError(f"no document {doc_id!r}: list_knowledge shows the documents you can read")
            return text.to_dict()

    return server


@contextmanager
def _tool_errors() -> Iterator[None]:
    """docqa's own errors become tool errors with their message (an isError result, never a crash)."""
    try:
        yield
    except DocqaError as exc:
        raise ToolError(str(exc)) from exc


def _caller(ctx: Context | None) -> tuple[Principal, bool]:
    """(principal, over HTTP): the principal http.py authenticated for this request; the local user over
    stdio or in process."""
    try:
        request = ctx.request_context.request if ctx is not None else None
    except ValueError:  # no request context: called in process
        request = None
    if request is None:
        return LOCAL, False
    principal = getattr(request, "state", None) and getattr(request.state, "principal", None)
    if not isinstance(principal, Principal):  # over HTTP without http.py in front: refuse, never guess
        raise ToolError("this MCP endpoint is not behind docqa's authentication: mount it with docqa.mcp.mount")
    return principal, True


def _check_roots(paths: list[str], roots: list[str]) -> None:
    """Over HTTP, ingest_files reads only inside api.ingest_roots (the REST API's rule for server paths)."""
    if not roots:
        raise PermissionDeniedError("ingest_files over HTTP reads files on the server, which is off: list the "
                                    "folders it may read in api.ingest_roots, or upload the files through the API")
    allowed = [os.path.realpath(r) for r in roots]
    for path in paths:
        real = os.path.realpath(path)
        if not any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in allowed):
            raise PermissionDeniedError(f"{path} is outside api.ingest_roots ({', '.join(roots)}): over HTTP "
                                        "ingest_files reads only inside those folders")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("docqa")
    except PackageNotFoundError:
        return "0"
