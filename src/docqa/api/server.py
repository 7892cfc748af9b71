"""`docqa serve`: check the address is safe to listen on, then run the app under uvicorn.

One process: every write to SQLite goes through the app's one writer thread, so uvicorn's
multi-process `--workers` is not used (the app's own worker threads do the parallel reading).
"""

from __future__ import annotations

from docqa.api import auth
from docqa.kb import KnowledgeBase
from docqa.settings import Settings


def check_bind(host: str, insecure: bool, settings: Settings) -> None:
    """Refuse a non-loopback address unless API keys protect it or `insecure` was asked for (ConfigError)."""
    with KnowledgeBase(settings, embedder=None) as kb:
        auth.check_bind(host, insecure, kb)


def serve(settings: Settings, host: str | None = None, port: int | None = None, insecure: bool = False) -> None:
    import uvicorn

    from docqa.api.app import create_app

    host, port = host or settings.api.host, port or settings.api.port
    check_bind(host, insecure, settings)
    settings.api.host, settings.api.port = host, port  # the app checks requests against the address it serves
    uvicorn.run(create_app(settings, insecure=insecure), host=host, port=port, log_level="info",
                timeout_graceful_shutdown=5, proxy_headers=False)
