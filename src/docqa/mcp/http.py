"""MCP over streamable HTTP, mounted on the API app (default path /mcp), behind the API's keys.

Every HTTP request to the endpoint is authenticated on its own (`authenticate(headers)` is the
API's, e.g. `Access.authenticate`): a missing or bad key is answered 401 in the API's error
shape before the MCP layer sees it; otherwise the principal goes on the request's state, where
each tool call reads it, so a call runs with the rights of the key that sent it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from docqa.access import LOCAL, Principal
from docqa.errors import AuthError, PermissionDeniedError
from docqa.kb import KnowledgeBase
from docqa.mcp.server import Backend, DocqaServer, build_server
from docqa.settings import Settings

Authenticate = Callable[[Mapping[str, str]], Principal]


def mount(app: Any, source: KnowledgeBase | Settings | Backend, *, authenticate: Authenticate | None = None,
          host: str = "127.0.0.1", path: str = "/mcp") -> DocqaServer:
    """Serve the MCP tools at `path` of a Starlette/FastAPI `app`, over streamable HTTP.

    `source`: where the tools' work runs: the API's worker pool and writer (a `FutureBackend`), a
    KnowledgeBase, or settings to open one (closed with the app).
    `authenticate`: the API's; None makes every caller the local user (only for a loopback server
    without keys).  `host`: the address the server is bound to; on loopback, requests whose Host or
    Origin header is not a loopback name are refused (DNS rebinding).
    """
    owned = KnowledgeBase(source) if isinstance(source, Settings) else None
    server = build_server(owned if isinstance(source, Settings) else source)

    async def handle(scope: Scope, receive: Receive, send: Send) -> None:
        await server.session_manager.handle_request(scope, receive, send)

    # First, so a catch-all route (the web page at /) cannot shadow it.
    app.router.routes.insert(0, Route(path, endpoint=_Authenticated(handle, authenticate)))
    outer = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(a: Any) -> AsyncIterator[Any]:
        # A session manager runs once: every start of the app (tests start one app many times) gets a new one.
        server.streamable_http_app(streamable_http_path=path, host=host)
        async with server.session_manager.run():
            async with outer(a) as state, anyio.create_task_group() as tasks:
                tasks.start_soon(server.watch_index)  # documents added or removed elsewhere: say so
                yield state
                tasks.cancel_scope.cancel()
        if owned is not None:
            owned.close()

    app.router.lifespan_context = lifespan
    return server


class _Authenticated:
    """An ASGI app: authenticate the request, then hand it to the MCP session manager."""

    def __init__(self, handle: Callable[[Scope, Receive, Send], Any], authenticate: Authenticate | None):
        self.handle, self.authenticate = handle, authenticate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        try:
            # in a thread: looking a key up reads (and now and then writes) the knowledge base
            principal = LOCAL.over_network() if self.authenticate is None else await anyio.to_thread.run_sync(self.authenticate, headers)
        except AuthError as exc:
            await _refuse(exc, send)
            return
        scope.setdefault("state", {})["principal"] = principal
        await self.handle(scope, receive, send)


async def _refuse(exc: AuthError, send: Send) -> None:
    forbidden = isinstance(exc, PermissionDeniedError)
    body = json.dumps({"error": {"code": exc.code, "message": str(exc)}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if not forbidden:
        headers.append((b"www-authenticate", b'Bearer realm="docqa"'))
    await send({"type": "http.response.start", "status": 403 if forbidden else 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})
