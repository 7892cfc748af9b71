"""The backends every contract suite runs against, and the records the suites write.

A backend joins by adding its name to BACKENDS and a branch to `open_backend` (PostgreSQL: a URL
of a real server started for the test session); the contract suites then run on it unchanged.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.store import Stores, open_store
from docqa.types import Chunk, DocumentRecord

BACKENDS = ["sqlite", "postgres"]


def kb_url(name: str, request, tmp_path: Path) -> str:
    """Where a fresh, empty knowledge base of backend `name` lives (PostgreSQL: skipped when unavailable)."""
    if name == "sqlite":
        return str(tmp_path / "kb.db")
    if name == "postgres":
        return request.getfixturevalue("postgres_server").new_database()
    raise AssertionError(f"unknown backend {name}")


def open_backend(name: str, request, tmp_path: Path) -> Stores:
    """A fresh, empty knowledge base of backend `name`."""
    return open_store(kb_url(name, request, tmp_path))


@pytest.fixture(params=BACKENDS)
def stores(request, tmp_path) -> Stores:
    s = open_backend(request.param, request, tmp_path)
    yield s
    s.close()


def record(doc_id: str, path: str, collection: str = "default", content_hash: str = "h1", title: str = "T") -> DocumentRecord:
    return DocumentRecord(
        document_id=doc_id, path=path, collection=collection, type="text", title=title, keywords=["alpha"],
        summary="summary", size=10, content_hash=content_hash, chunks=0, status="ok", error=None,
        indexed_at="2026-01-01T00:00:00+00:00",
    )


def chunks(texts: list[str]) -> tuple[str, list[Chunk]]:
    """A document text of these paragraphs, and one chunk per paragraph (lines 1, 3, 5, ...)."""
    doc, found, pos = "", [], 0
    for i, t in enumerate(texts):
        doc += t + "\n\n"
        found.append(Chunk(text=t, char_start=pos, char_end=pos + len(t), ordinal=i, line_start=2 * i + 1, line_end=2 * i + 1))
        pos = len(doc)
    return doc, found
