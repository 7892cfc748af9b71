"""`docqa serve`: check the address is safe to listen on, then run the app under uvicorn.

One process: every write to SQLite goes through the app's one writer thread, so uvicorn's
multi-process `--workers` is not used (the app's own worker threads do the parallel reading).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from docqa.api import auth
from docqa.errors import InputError
from docqa.kb import KnowledgeBase
from docqa.settings import Settings


def check_bind(host: str, insecure: bool, settings: Settings) -> None:
    """Refuse a non-loopback address unless API keys protect it or `insecure` was asked for (ConfigError)."""
    with KnowledgeBase(settings, embedder=None) as kb:
        auth.check_bind(host, insecure, kb)


def serve(settings: Settings, host: str | None = None, port: int | None = None, insecure: bool = False,
          watch: Sequence[str] = (), watch_collection: str | None = None) -> None:
    import uvicorn
    from uvicorn.config import LOGGING_CONFIG

    from docqa.api.app import create_app

    host, port = host or settings.api.host, port or settings.api.port
    check_bind(host, insecure, settings)
    not_folders = [str(p) for p in watch if not Path(p).is_dir()]
    if not_folders:
        raise InputError(f"--watch takes folders, and these are not: {', '.join(not_folders)}")
    settings.api.host, settings.api.port = host, port  # the app checks requests against the address it serves
    logs = {**LOGGING_CONFIG, "loggers": {**LOGGING_CONFIG["loggers"],  # our lines (the watch job) beside uvicorn's
                                          "docqa": {"handlers": ["default"], "level": "INFO", "propagate": False}}}
    uvicorn.run(create_app(settings, insecure=insecure, watch=watch, watch_collection=watch_collection), host=host,
                port=port, log_level="info", log_config=logs, timeout_graceful_shutdown=5, proxy_headers=False)
