"""Storage of a knowledge base: one small interface per concern, a backend chosen by URL.

`open_store(url)` returns a `Stores` bundle: `.documents` (DocumentStore, with the Catalog reads),
`.fulltext` (FullText), `.vectors` (VectorStore), `.runlog` (RunLog) and `.keys`
(KeyStore).  A URL is a file path or `sqlite:///path` (SQLite), or `postgresql://user@host:port/db`
(also `?host=/socket/folder`): PostgreSQL with pgvector, the `docqa[postgres]` extra.
"""

from __future__ import annotations

from pathlib import Path

from docqa.errors import ConfigError, NoKnowledgeBaseError
from docqa.store.base import ChunkFilter, Stores
from docqa.store.catalog import Catalog, CatalogPage
from docqa.store.documents import DocumentStore, DocumentWrite, FileState
from docqa.store.fulltext import FullText, TextQuery
from docqa.store.keys import KeyStore
from docqa.store.runlog import RunLog
from docqa.store.sqlite import SQLiteStores
from docqa.store.vectors import ChunkVectors, EmbedInput, VectorStore


def open_store(url: str, *, create: bool = True) -> Stores:
    """The stores of a knowledge base URL or file path; with `create` False a missing file is an
    error (NoKnowledgeBaseError), not a new empty knowledge base."""
    if url.startswith(("postgresql://", "postgres://")):
        from docqa.store.postgres.db import _psycopg

        _psycopg()  # MissingExtraError naming the install command when the extra is absent
        from docqa.store.postgres import PostgresStores

        return PostgresStores(url)
    if url.startswith("sqlite:///"):
        url = url[len("sqlite:///") :]
    elif "://" in url:
        raise ConfigError(f"unknown knowledge base URL {url!r}: give a file path, sqlite:///path or postgresql://...")
    if not create and url != ":memory:" and not Path(url).is_file():
        raise NoKnowledgeBaseError(url)
    return SQLiteStores(url)


__all__ = ["Catalog", "CatalogPage", "ChunkFilter", "ChunkVectors", "DocumentStore", "DocumentWrite", "EmbedInput", "FileState",
           "FullText", "KeyStore", "RunLog", "SQLiteStores", "Stores", "TextQuery", "VectorStore", "open_store"]
