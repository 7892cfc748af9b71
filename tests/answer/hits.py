"""Hits cut from a real document text, so a citation's offsets can be checked against it."""

from __future__ import annotations

from docqa.answer.sources import Source, SourceSet
from docqa.types import Hit


def hit_in(document: str, start: int, end: int, *, path: str = "/kb/config.md", section: str = "Setup > Database",
           chunk_id: str = "c1", type_: str = "markdown", page: int | None = None, page_end: int | None = None) -> Hit:
    """The chunk `document[start:end]`, with its real first and last line numbers."""
    return Hit(chunk_id=chunk_id, document_id="d-" + path, path=path, collection="default", title="Config",
               section=section, page=page, page_end=page_end if page_end is not None else page,
               line_start=document.count("\n", 0, start) + 1, line_end=document.count("\n", 0, max(end - 1, start)) + 1,
               char_start=start, char_end=end, score=0.8, text=document[start:end], type=type_)


def sources(*hits: Hit) -> SourceSet:
    return SourceSet([Source(i, h) for i, h in enumerate(hits, start=1)])
