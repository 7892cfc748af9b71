"""The tools' structured results as typed dicts: the SDK publishes each as the tool's `outputSchema`.

Each names the fields a client relies on; further fields pass through (`extra="allow"`), so the
core may add one without breaking a client that validates against the schema.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict
from typing_extensions import TypedDict

_OPEN = ConfigDict(extra="allow")


class CitationOut(TypedDict, total=False):
    __pydantic_config__ = _OPEN  # type: ignore[misc]
    n: int
    document_id: str
    path: str
    title: str
    section: str
    page: int | None
    line_start: int
    line_end: int
    quote: str


class VerificationOut(TypedDict, total=False):
    __pydantic_config__ = _OPEN  # type: ignore[misc]
    status: str
    checked_claims: int
    rejected_claims: list[dict[str, Any]]


class AnswerOut(TypedDict, total=False):
    """query_knowledge: the checked answer, its citations and how it stands."""

    __pydantic_config__ = _OPEN  # type: ignore[misc]
    answer: str
    answerable: bool
    confidence: str | None
    citations: list[CitationOut]
    verification: VerificationOut
    notes: list[str]
    status: str
    run_id: str | None
    session_id: str | None
    stale: bool  # a source it cites changed since it was answered (docqa recheck)
    stale_at: str | None


class HitOut(TypedDict, total=False):
    __pydantic_config__ = _OPEN  # type: ignore[misc]
    document_id: str
    path: str
    collection: str
    title: str
    section: str
    page: int | None
    line_start: int
    line_end: int
    score: float
    text: str


class SearchOut(TypedDict, total=False):
    """search_docs: the best passages."""

    __pydantic_config__ = _OPEN  # type: ignore[misc]
    query: str
    mode: str
    low_relevance: bool
    hits: list[HitOut]


class CatalogOut(TypedDict, total=False):
    """list_knowledge: a page of the catalog."""

    __pydantic_config__ = _OPEN  # type: ignore[misc]
    lines: list[str]
    page: int
    pages: int
    total: int
    note: str


class DocTextOut(TypedDict, total=False):
    """fetch_doc: numbered lines of a document."""

    __pydantic_config__ = _OPEN  # type: ignore[misc]
    doc_id: str
    path: str
    title: str
    text: str
    line_start: int
    line_end: int
    total_lines: int
    note: str


class GrepOut(TypedDict, total=False):
    """grep_docs: matching lines, by document."""

    __pydantic_config__ = _OPEN  # type: ignore[misc]
    pattern: str
    files: list[dict[str, Any]]
    total: int
    shown: int
    documents: int
    complete: bool
    note: str


class IngestOut(TypedDict, total=False):
    """ingest_files: the ingest report."""

    __pydantic_config__ = _OPEN  # type: ignore[misc]
    added: list[str]
    updated: list[str]
    unchanged: list[str]
    removed: list[str]
    failed: list[dict[str, Any]]
    chunks: int


class RemovedOut(TypedDict, total=False):
    """remove_document: the document removed from the index."""

    __pydantic_config__ = _OPEN  # type: ignore[misc]
    removed: dict[str, Any]


class SkillsOut(TypedDict, total=False):
    """list_skills: the agent's skills and the SKILL.md files left out."""

    __pydantic_config__ = _OPEN  # type: ignore[misc]
    skills: list[dict[str, Any]]
    problems: list[str]


__all__ = ["AnswerOut", "CatalogOut", "DocTextOut", "GrepOut", "IngestOut", "RemovedOut", "SearchOut", "SkillsOut"]


class ClaimCheckOut(TypedDict, total=False):
    __pydantic_config__ = _OPEN  # type: ignore[misc]
    text: str
    verdict: str  # supported | contradicted | not_found
    citation: CitationOut | None
    reasons: list[str]


class FactCheckOut(TypedDict, total=False):
    """verify_claims: the overall verdict and each claim's, with the span that supports or contradicts it."""

    __pydantic_config__ = _OPEN  # type: ignore[misc]
    verdict: str  # supported | contradicted | not_found
    claims: list[ClaimCheckOut]
    notes: list[str]
