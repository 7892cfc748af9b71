"""API fixtures: an app over a real knowledge base (SQLite; BM25 unless a test brings the embedder),
the scripted OpenAI-compatible server as the model, and a real uvicorn on a free loopback port.

A module whose tests should run on PostgreSQL too sets `BOTH_BACKENDS = True`: each of its tests
that makes an app is then parametrised over the backends; the other modules stay on SQLite, to
keep the suite's time reasonable."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient

from docqa.api import create_app
from docqa.kb import KnowledgeBase
from docqa.llm import OpenAICompatModel
from docqa.settings import Settings
from store.backends import BACKENDS, kb_url


def pytest_generate_tests(metafunc):
    if "backend" in metafunc.fixturenames and getattr(metafunc.module, "BOTH_BACKENDS", False):
        metafunc.parametrize("backend", BACKENDS, indirect=True)

OPS = """# Operations

## Backups

The database is backed up every 6 hours to object storage.
Backups are kept for 35 days.

## API keys

API keys are rotated every 90 days with `acmectl keys rotate`.
"""
ZH = """# 运维手册

## 备份

数据库每 6 小时备份一次，备份保留 35 天。
"""
ANSWER = "Backups are kept for 35 days [1]."


@pytest.fixture
def docs(tmp_path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "ops.md").write_text(OPS, encoding="utf-8")
    (folder / "运维.md").write_text(ZH, encoding="utf-8")
    return folder


@pytest.fixture
def backend(request) -> str:
    """sqlite, unless the test's module runs on both backends (BOTH_BACKENDS)."""
    return getattr(request, "param", "sqlite")


@pytest.fixture
def make_app(tmp_path, docs, backend, request):
    """make_app(server=None, embedder=None, index=True, **api): the app over a knowledge base with `docs` in it."""
    models = []
    where = kb_url(backend, request, tmp_path)

    def make(server=None, embedder=None, index: bool = True, answer: dict | None = None, **api):
        settings = Settings(
            kb=where,
            embed={"provider": "local" if embedder is not None else "none"},
            llm={"provider": "openai" if server else "none", "base_url": server.base_url if server else "",
                 "timeout": 10, "max_retries": 0},
            answer={"mode": "pipeline", **(answer or {})},
            api={"upload_dir": str(tmp_path / "uploads"), "ingest_roots": [str(docs)],
                 "allowed_hosts": ["testserver"], **api},  # TestClient's host name
        )
        model = OpenAICompatModel(server.base_url, "scripted", timeout=10, max_retries=0) if server else None
        models.append(model)

        def factory() -> KnowledgeBase:
            return KnowledgeBase(settings, embedder=embedder, chat_model=model)

        if index:
            with factory() as kb:
                kb.add([docs])
        return create_app(settings, kb_factory=factory)

    make.kb_path = where
    yield make
    for model in models:
        if model is not None:
            model.close()  # its connections to the scripted server


@pytest.fixture
def client(make_app) -> Iterator[TestClient]:
    with TestClient(make_app(), raise_server_exceptions=False) as c:
        yield c


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """The app under a real uvicorn on loopback, in a thread."""

    def __init__(self, app):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    timeout_graceful_shutdown=3))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "uvicorn did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(15)


@pytest.fixture
def live():
    """live(app) -> a started LiveServer (stopped after the test)."""
    started = []

    def start(app) -> LiveServer:
        server = LiveServer(app).__enter__()
        started.append(server)
        return server

    yield start
    for server in started:
        server.__exit__()


def sse_events(lines) -> list[tuple[str, dict]]:
    """(event, data) pairs from an SSE byte/line stream (comments skipped)."""
    events, kind, data = [], None, []
    for line in lines:
        line = line.rstrip("\r\n")
        if not line:
            if kind is not None:
                events.append((kind, json.loads("\n".join(data))))
            kind, data = None, []
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
    return events


def wait_for(predicate, timeout: float = 10.0, step: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError("condition not met in time")


def job_done(c: TestClient | httpx.Client, response) -> dict:
    """Poll a 202 job until it ends."""
    url = response.headers["location"]
    return wait_for(lambda: (j := c.get(url).json())["status"] in ("succeeded", "failed") and j, timeout=60)
