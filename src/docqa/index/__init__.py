"""The index: one Store interface, chosen by URL (`sqlite:///path`, a plain path, or later `postgresql://`)."""

from __future__ import annotations

from docqa.errors import ConfigError
from docqa.index.base import CatalogPage, ChunkFilter, ChunkVectors, EmbedInput, FileState, Store, TextQuery
from docqa.index.sqlite import SQLiteStore


def open_store(url: str) -> Store:
    """The store for a knowledge base URL or file path."""
    if url.startswith(("postgresql://", "postgres://")):
        raise ConfigError("the PostgreSQL backend is not available in this version: use a SQLite file path for --kb")
    if url.startswith("sqlite:///"):
        url = url[len("sqlite:///") :]
    elif "://" in url:
        raise ConfigError(f"unknown knowledge base URL {url!r}: give a file path or sqlite:///path")
    return SQLiteStore(url)


__all__ = ["CatalogPage", "ChunkFilter", "ChunkVectors", "EmbedInput", "FileState", "SQLiteStore", "Store", "TextQuery", "open_store"]
