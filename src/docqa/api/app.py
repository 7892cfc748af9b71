"""`create_app(settings)`: the FastAPI application over one knowledge base (OpenAPI docs at /docs).

    request ─► ErrorBoundary ─► metrics ─► HostGuard (421) ─► OriginGuard (403) ─► RequestGuard (413 / 415) ─► CORS ─► route
                                                                                               │ get_principal (auth) → reader / editor / admin
                                                                                               ├ reads  → WorkerPool (bounded; full → 503 + Retry-After)
                                                                                               └ writes → Writer (one thread; jobs with progress)
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager

import anyio
from fastapi import APIRouter, Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware

from docqa.api import errors
from docqa.api import auth
from docqa.api.deps import get_principal
from docqa.api.guard import HostGuard, IsolationHeaders, OriginGuard, RequestGuard
from docqa.api.metrics import MetricsMiddleware
from docqa.api.routes import ask, collections, documents, health, jobs, keys, login, runs, search
from docqa.api.routes import estimate
from docqa.api.schemas import no_nul_params

from docqa.api.routes import skills
from docqa.api.routes import openai_compat
from docqa.api.routes import verify  # fact-check any text against the documents
from docqa.api.routes import originals  # the source viewer: a document's file, its PDF pages and boxes
from docqa.api.runtime import Runtime
from docqa.api.routes import log as qa_log, status  # the people who keep the documents: the log, the status
from docqa.api.watching import WatchSpec
from docqa.kb import KnowledgeBase
from docqa.settings import Settings, load_settings
import docqa.web as web
from docqa.version import __version__

log = logging.getLogger("docqa.api")
ROUTERS: tuple[APIRouter, ...] = (health.router, collections.router, documents.router, search.router, ask.router, runs.router, jobs.router,
           keys.router, login.router)

ROUTERS += (qa_log.router, status.router)
ROUTERS += (originals.router,)
ROUTERS += (estimate.router,)  # docqa estimate: per question (the log permission) and per folder (editors)

ROUTERS += (skills.router,)  # the agent's procedures
ROUTERS += (openai_compat.router,)  # /v1: chat apps ask the documents as an OpenAI-compatible model
ROUTERS += (verify.router,)


def create_app(settings: Settings | None = None, *, kb_factory: Callable[[], KnowledgeBase] | None = None,
               insecure: bool = False, watch: Sequence[str] = (), watch_collection: str | None = None) -> FastAPI:
    """The API over `settings.kb`.  `kb_factory` makes one KnowledgeBase per worker thread (default: the
    configured one, then siblings sharing its models); `insecure`: a non-loopback bind without keys was allowed;
    `watch`: folders kept in step while it runs, into `watch_collection` (a job of kind "watch")."""
    settings = settings or load_settings()
    runtime = Runtime(settings, kb_factory, WatchSpec(tuple(map(str, watch)), watch_collection))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(runtime.start)  # opens the knowledge base and loads the models
        _install_auth(app, runtime, insecure)
        api = settings.api
        log.info("the page: http://%s:%s/ (API docs at /docs)", f"[{api.host}]" if ":" in api.host else api.host, api.port)
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(runtime.stop)

    app = FastAPI(title="docqa", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,  # web: offline
                  description="Ask questions of your own documents, answered only from them, with exact citations. "
                              "Errors are always `{\"error\": {\"code\", \"message\"}}`.")
    app.state.runtime = runtime
    errors.install(app, runtime.redact)
    if settings.api.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=settings.api.cors_origins, allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["Authorization", "X-API-Key", "Content-Type", "Accept"])
    app.add_middleware(RequestGuard, uploads={documents.UPLOAD_PATH: int(settings.api.max_upload_mb * 1024 * 1024)})
    app.add_middleware(OriginGuard, allowed_hosts=settings.api.allowed_hosts, allowed_origins=settings.api.cors_origins,
                       cookie=auth.COOKIE)  # CSRF: writes only from docqa's own page
    if auth.is_loopback(settings.api.host):  # no keys needed there: refuse names rebound to 127.0.0.1
        app.add_middleware(HostGuard, allowed=settings.api.allowed_hosts, bind=settings.api.host)
    app.add_middleware(MetricsMiddleware, metrics=runtime.metrics)
    app.add_middleware(errors.ErrorBoundary)
    app.add_middleware(IsolationHeaders)  # added last: the outermost of ours, so errors carry the headers too
    for router in ROUTERS:
        app.include_router(router, dependencies=[Depends(no_nul_params)])
    _mount_mcp(app, runtime)
    web.mount(app)  # the page at / and its assets at /static; /docs and /redoc with assets served from here
    return app


def _mount_mcp(app: FastAPI, runtime: Runtime) -> None:
    """The MCP tools over streamable HTTP at /mcp, on the same workers, writer and keys (skipped without
    the `mcp` extra)."""
    if importlib.util.find_spec("mcp") is None:
        return
    import docqa.mcp as mcp

    backend = mcp.future_backend(lambda work: runtime.pool.submit(work), lambda work: runtime.writer.call(work),
                                 runtime.settings, runtime.redact, runtime.settings.api.request_timeout,
                                 lambda work: runtime.writer.call(work, lane=True))
    mcp.mount(app, backend, host=runtime.settings.api.host,
              authenticate=lambda headers: app.state.access.authenticate(headers))


def _install_auth(app: FastAPI, runtime: Runtime, insecure: bool) -> None:
    """Authenticate with API keys: every route depends on `get_principal`, which this replaces."""
    app.state.access = auth.Access(runtime.make_kb(), runtime.settings.api.host, insecure)
    app.dependency_overrides[get_principal] = auth.dependency(lambda request: request.app.state.access)
