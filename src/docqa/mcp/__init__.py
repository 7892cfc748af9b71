"""The MCP server over the same core: `docqa mcp` (stdio) and streamable HTTP mounted on the API.

Tools: ingest_files, remove_document, query_knowledge, verify_claims, list_knowledge, search_docs, fetch_doc,
grep_docs, estimate_cost, list_skills, steer_run, follow_up, cancel_run;
the documents as resources (resources.py); prompts (prompts.py); see server.py.
Needs the `mcp` extra: pip install 'docqa[mcp]'.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from docqa.access import LOCAL
from docqa.errors import MissingExtraError
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

if TYPE_CHECKING:
    from docqa.mcp.server import Backend, DocqaServer

_INSTALL = "pip install 'docqa[mcp]'"
log = logging.getLogger(__name__)


def build_server(source: KnowledgeBase | Backend) -> DocqaServer:
    """The MCP server (not yet running) whose tools call a KnowledgeBase, directly or through a Backend."""
    return _server().build_server(source)


def future_backend(submit_read: Callable, submit_write: Callable, settings: Settings,
                   redact: Callable[[str], str] = str, timeout: float | None = None,
                   submit_ingest: Callable | None = None) -> Backend:
    """Tools' work handed to executors returning concurrent futures (the API's worker pool and writer);
    `timeout`: an answer's time limit (the API's api.request_timeout); `submit_ingest`: where an add goes,
    the writer's ingest lane."""
    return _server().FutureBackend(submit_read, submit_write, settings, redact, timeout, submit_ingest)


def serve_stdio(settings: Settings) -> None:
    """Serve the tools on standard input and output until the client disconnects.  While the client
    connects, a second connection loads the embedding model and the stored vectors (shared with the
    first: see KnowledgeBase.warm), so the first search does not."""
    import anyio  # with the SDK (the `mcp` extra)

    server = _server()
    with KnowledgeBase(settings) as kb, KnowledgeBase(settings, embedder=kb.models.embedder) as warmer:
        warming = threading.Thread(target=_warm, args=(warmer,), name="docqa-warm", daemon=True)
        warming.start()
        try:
            mcp = server.build_server(kb, LOCAL.over_stdio())  # ingest_files only under mcp.ingest_roots
            anyio.run(mcp.serve_stdio)
        finally:
            warming.join()  # before its connection closes


def _warm(kb: KnowledgeBase) -> None:
    try:
        kb.models.warm()
    except Exception as exc:  # noqa: BLE001 - the first search raises it again, where the client sees it
        log.warning("could not load the embedding model or the vectors ahead of the first search: %s", exc)


def mount(app: Any, source: KnowledgeBase | Settings | Backend, **options: Any) -> DocqaServer:
    """Serve the tools over streamable HTTP at /mcp of the API app (see http.py)."""
    _server()
    from docqa.mcp.http import mount as mount_http

    return mount_http(app, source, **options)


def _server():
    try:
        return importlib.import_module("docqa.mcp.server")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("mcp", "mcp_types"):
            raise MissingExtraError("the MCP server", _INSTALL) from exc
        raise


__all__ = ["build_server", "future_backend", "mount", "serve_stdio"]
