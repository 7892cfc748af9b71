"""The HTTP API: REST + SSE over the one KnowledgeBase core (`pip install 'docqa[api]'`).

`create_app(settings)` builds the FastAPI application; `serve(settings, host, port)` runs it under
uvicorn (what `docqa serve` does).  This module imports neither, so a missing extra is reported
with the command that installs it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from docqa.errors import MissingExtraError

if TYPE_CHECKING:
    from fastapi import FastAPI

    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings

INSTALL = "pip install 'docqa[api]'"
_MODULES = ("fastapi", "uvicorn", "sse_starlette", "python_multipart", "prometheus_client")


def require() -> None:
    """MissingExtraError (naming the pip command) unless the [api] extra is installed."""
    missing = [m for m in _MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingExtraError(f"The HTTP API ({', '.join(missing)})", INSTALL)


def create_app(settings: Settings | None = None, *, kb_factory: Callable[[], KnowledgeBase] | None = None,
               insecure: bool = False, watch: Sequence[str] = (), watch_collection: str | None = None) -> FastAPI:
    """The FastAPI application (see docqa.api.app.create_app); `watch`: folders kept in step while it runs."""
    require()
    from docqa.api.app import create_app as build

    return build(settings, kb_factory=kb_factory, insecure=insecure, watch=watch, watch_collection=watch_collection)


def serve(settings: Settings, host: str | None = None, port: int | None = None, insecure: bool = False,
          watch: Sequence[str] = (), watch_collection: str | None = None) -> None:
    """Run the API under uvicorn until stopped (see docqa.api.server.serve)."""
    require()
    from docqa.api.server import serve as run

    run(settings, host, port, insecure, watch, watch_collection)


__all__ = ["INSTALL", "create_app", "require", "serve"]
