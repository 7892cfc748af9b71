"""Plain data types shared by every package: Document, Block, Chunk, Hit and friends.

A `Document` is the reader's output: the extracted text plus structure as `Block`s, each a
character span of `Document.text`.  A `Chunk` is the chunker's output: a span of the same
text with its location (section path, pages, lines, symbol).  The invariant the whole system
relies on for exact citations is `chunk.text == document.text[chunk.char_start:chunk.char_end]`.
"""

from __future__ import annotations

import bisect
from dataclasses import KW_ONLY, dataclass, field
from typing import Any
from urllib.parse import quote

# Block kinds readers emit; chunkers switch on them.
HEADING = "heading"  # level 1..6; text is the heading's title
PARAGRAPH = "paragraph"
CODE = "code"  # a fenced/preformatted block inside prose
TABLE = "table"  # a whole table rendered as text (e.g. Markdown pipe table, docx table)
HEADER_ROW = "header_row"  # header row of a sheet/CSV or of a TABLE (repeated in every row-group chunk)
ROW = "row"  # spreadsheet/CSV data row
PAGE = "page"  # a whole PDF page / slide / sheet boundary marker when no finer structure exists


@dataclass(slots=True)
class Block:
    """One structural unit of a document: `text[start:end]`."""

    start: int
    end: int
    kind: str = PARAGRAPH
    level: int = 0  # heading level (1 = top) for HEADING blocks
    page: int | None = None  # PDF page or slide number (1-based)
    sheet: str | None = None  # spreadsheet sheet name
    row: int | None = None  # spreadsheet row number (1-based, as the user sees it)


@dataclass(slots=True)
class Document:
    """A reader's output. `text` is what gets indexed; every Block is a span of it."""

    path: str
    type: str  # format family: "text", "markdown", "code", "pdf", "docx", ...
    text: str
    blocks: list[Block] = field(default_factory=list)
    title: str | None = None  # from metadata or first heading, when the format has one
    language: str | None = None  # programming language for code ("python", "go", ...)
    metadata: dict[str, Any] = field(default_factory=dict)  # author, encoding, sheets, ...
    _line_starts: list[int] | None = field(default=None, repr=False)

    def line_of(self, offset: int) -> int:
        """1-based line number of a character offset into `text`."""
        if self._line_starts is None:
            starts = [0]
            find = self.text.find
            i = find("\n")
            while i != -1:
                starts.append(i + 1)
                i = find("\n", i + 1)
            self._line_starts = starts
        return bisect.bisect_right(self._line_starts, offset)

    def page_of(self, offset: int) -> int | None:
        """Page (or slide) number holding `offset`, from the blocks' page marks."""
        for block in self.blocks:
            if block.page is not None and block.start <= offset < max(block.end, block.start + 1):
                return block.page
        return None


@dataclass(slots=True)
class Chunk:
    """A retrievable span of a document with its location.

    `text` is exactly `document.text[char_start:char_end]`.  `context` is extra text that is
    indexed with the chunk but is not part of its span (a spreadsheet's header row).
    """

    text: str
    char_start: int
    char_end: int
    ordinal: int = 0
    section: tuple[str, ...] = ()
    page_start: int | None = None
    page_end: int | None = None
    line_start: int = 1
    line_end: int = 1
    symbol: str | None = None  # function / class name for code
    language: str | None = None
    tokens: int = 0
    context: str = ""

    @property
    def section_path(self) -> str:
        return " > ".join(self.section)


@dataclass(slots=True)
class Enrichment:
    """Per-document title, keywords and lead summary."""

    title: str
    keywords: list[str]
    summary: str


@dataclass(slots=True)
class DocumentRecord:
    """A document as the index knows it (what `docqa list` shows)."""

    document_id: str
    path: str
    collection: str
    type: str
    title: str
    keywords: list[str]
    summary: str
    size: int
    content_hash: str
    chunks: int
    status: str  # "ok" | "error"
    error: str | None
    indexed_at: str
    mtime_ns: int = 0
    language: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "document_id": self.document_id,
            "path": self.path,
            "collection": self.collection,
            "type": self.type,
            "title": self.title,
            "keywords": self.keywords,
            "summary": self.summary,
            "size": self.size,
            "chunks": self.chunks,
            "status": self.status,
            "error": self.error,
            "indexed_at": self.indexed_at,
            "content_hash": self.content_hash,
            "language": self.language,
        }


@dataclass(slots=True)
class Hit:
    """One search result: a chunk with its document and score."""

    chunk_id: str
    document_id: str
    path: str
    collection: str
    title: str
    section: str
    page: int | None
    page_end: int | None
    line_start: int
    line_end: int
    char_start: int
    char_end: int
    score: float
    text: str
    snippet: str = ""
    symbol: str | None = None
    type: str = ""
    bm25_rank: int | None = None  # rank in the BM25 list (None: not in it)
    dense_rank: int | None = None  # rank in the dense list (None: not in it)
    bm25_score: float | None = None  # raw BM25 score
    dense_score: float | None = None  # cosine similarity of query and chunk
    # a web page's section anchors: (offset in its text, id), in text order (`url`); () for files
    anchors: tuple[tuple[int, str], ...] = ()

    @property
    def url(self) -> str:
        """A web page's URL with the anchor of the section the chunk starts in; '' for a file."""
        return anchored_url(self.path, self.anchors, self.char_start)

    def to_dict(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "url": self.url,
            "document_id": self.document_id,
            "path": self.path,
            "collection": self.collection,
            "title": self.title,
            "section": self.section,
            "page": self.page,
            "page_end": self.page_end,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "char_start": self.char_start,
            "char_end": self.char_end,
            "score": round(self.score, 4),
            "symbol": self.symbol,
            "type": self.type,
            "bm25_rank": self.bm25_rank,
            "dense_rank": self.dense_rank,
            "bm25_score": None if self.bm25_score is None else round(self.bm25_score, 4),
            "dense_score": None if self.dense_score is None else round(self.dense_score, 4),
            "snippet": self.snippet,
            "text": self.text,
        }


def anchored_url(path: str, anchors: tuple[tuple[int, str], ...], offset: int) -> str:
    """`https://…/install.html#upgrading`: a web page's URL and the anchor of the last section that
    starts at or before `offset` in its text; '' when `path` is not a URL."""
    if not path.startswith(("http://", "https://")):
        return ""
    anchor = ""
    for start, name in anchors:
        if start > offset:
            break
        anchor = name
    return f"{path}#{quote(anchor, safe=_FRAGMENT_SAFE)}" if anchor else path


_FRAGMENT_SAFE = "!$&'()*+,;=:@/?-._~"


# -- answers ---------------------------------------------------------------------------------
# Run statuses (a run is one question answered); CANCELLED is recorded but never sent to a client.
SUCCESS, FALLBACK, FAILED, CANCELLED = "SUCCESS", "FALLBACK", "FAILED", "CANCELLED"
# Verification statuses.
VERIFIED, PARTIAL, UNVERIFIED = "VERIFIED", "PARTIAL", "UNVERIFIED"


@dataclass(slots=True)
class Citation:
    """The exact place that supports a claim: a span of a chunk's document text."""

    n: int  # the source number the answer cites as [n]
    chunk_id: str
    document_id: str
    path: str
    title: str
    section: str
    page: int | None
    line_start: int
    line_end: int
    char_start: int  # offsets into the document text
    char_end: int
    quote: str  # document.text[char_start:char_end]
    label: str = ""  # readable: [source: config.md §Database, L12–18]
    url: str = ""  # a web page's URL with the anchor of the quoted section; '' for a file

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n, "chunk_id": self.chunk_id, "document_id": self.document_id, "path": self.path,
            "title": self.title, "section": self.section, "page": self.page, "line_start": self.line_start,
            "line_end": self.line_end, "char_start": self.char_start, "char_end": self.char_end,
            "quote": self.quote, "label": self.label, "url": self.url,
        }


@dataclass(slots=True)
class Claim:
    """One sentence of an answer, the sources it cites and whether they support it."""

    text: str  # the sentence without its markers
    start: int  # span in the answer text
    end: int
    _: KW_ONLY
    sources: list[int] = field(default_factory=list)  # source numbers, after invented ones are dropped
    citations: list[Citation] = field(default_factory=list)
    supported: bool = True
    support: float = 0.0  # share of the claim's content words found in its best cited span
    problems: list[str] = field(default_factory=list)  # why it is not verified

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "sources": self.sources, "supported": self.supported,
                "support": round(self.support, 3), "problems": self.problems}


@dataclass(slots=True)
class Verification:
    status: str = UNVERIFIED  # VERIFIED | PARTIAL | UNVERIFIED
    checked_claims: int = 0
    rejected_claims: list[dict[str, Any]] = field(default_factory=list)  # {claim, reasons}
    rounds: int = 0  # review rounds used (regenerations after a rejection)
    checker: str = "none"  # deterministic | deterministic+llm | none

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "checked_claims": self.checked_claims,
                "rejected_claims": self.rejected_claims, "rounds": self.rounds, "checker": self.checker}


@dataclass(slots=True)
class Acceptance:
    """What is published: the model's answer, the extractive answer, or not found; and why (answer/accept.py)."""

    outcome: str  # model | extractive | not_found
    verified: int
    claims: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "verified": self.verified, "claims": self.claims, "reason": self.reason}


@dataclass(slots=True, kw_only=True)
class Retrieval:
    """What an answer searched and how it decided (`Answer.retrieval`); `to_dict()` is its record in the run
    log, REST, MCP and `docqa ask --json`.  None means "not done": such a key is left out of the record, except
    the query and, once the answer has a retrieval mode, the collection."""

    query: str | None = None  # the question searched (a follow-up as it was understood)
    mode: str | None = None  # hybrid | bm25 | dense | agent | recall
    low_relevance: bool | None = None  # the best hit was under the relevance threshold
    threshold: float | None = None
    collection: str | None = None
    hits: list[dict[str, Any]] | None = None  # a summary per hit: n, chunk_id, path, score, ...
    dropped: list[str] | None = None  # chunk ids left out of the prompt
    rerank: dict[str, Any] | None = None  # the rerank stage's report (retrieve/rerank.py)
    without_vectors: list[str] | None = None  # hits an add has not embedded yet: found by full text alone
    injection: list[dict[str, Any]] | None = None  # sources that try to instruct the model (answer/guard.py)
    second_look: bool | None = None  # the model was asked although the extractive answerer abstained
    acceptance: Acceptance | None = None
    # every review round was rejected: the diagnosis, the action and its outcome (answer/escalate.py); its
    # keys depend on the action taken, so it stays a record
    escalation: dict[str, Any] | None = None
    evidence: float | None = None  # P(answerable) from the best sentence (answer/extractive.py)
    evidence_features: dict[str, float] | None = None  # the evidence model's inputs, for calibration fits
    parts: list[dict[str, Any]] | None = None  # a question that asks several things: each part's evidence
    subjects: list[dict[str, Any]] | None = None  # a question naming things with files of their own: each one's evidence
    skills: list[dict[str, Any]] | None = None  # the skills the agent used
    recalled_from: str | None = None  # the earlier run this answer was recalled from (answer/recall.py)
    similarity: float | None = None  # of the question to that run's
    documents: int | None = None  # a catalog answer: how many documents it lists

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if value is not None or name == "query" or (name == "collection" and self.mode is not None):
                out[name] = value.to_dict() if isinstance(value, Acceptance) else value
        return out if len(out) > 1 or out.get("query") is not None else {}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Retrieval:
        """Read a stored record (keys this version does not know are left out)."""
        data = dict(data or {})
        if isinstance(data.get("acceptance"), dict):
            data["acceptance"] = Acceptance(**data["acceptance"])
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


@dataclass(slots=True)
class Answer:
    """What asking a question returns (and what `docqa ask --json` prints); every field after the
    question by keyword: `Answer(q, answer="", answerable=False, mode="pipeline", status=FAILED)`."""

    question: str
    _: KW_ONLY
    answer: str
    answerable: bool
    mode: str  # pipeline | extractive | catalog
    citations: list[Citation] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    verification: Verification = field(default_factory=Verification)
    confidence: str | None = None  # high | medium | low; None when the documents do not hold the answer
    confidence_reasons: list[str] = field(default_factory=list)  # what lowered it (docqa.answer.confidence)
    probability: float | None = None  # calibrated P(the documents answer the question) (docqa.answer.answerability)
    key_points: list[str] = field(default_factory=list)
    retrieval: Retrieval = field(default_factory=Retrieval)  # what it searched and how it decided
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage
    usage: dict[str, Any] = field(default_factory=dict)  # prompt_tokens, completion_tokens, calls, cost
    model: str | None = None
    notes: list[str] = field(default_factory=list)  # e.g. why no LLM was used, sources dropped
    language: str = "en"
    status: str = SUCCESS
    run_id: str | None = None
    session_id: str | None = None
    error: str | None = None  # why the run FAILED (a message for people, never a stack trace)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id, "session_id": self.session_id, "status": self.status, "error": self.error,
            "question": self.question, "answer": self.answer, "answerable": self.answerable,
            "mode": self.mode, "model": self.model, "language": self.language,
            "citations": [c.to_dict() for c in self.citations],
            "claims": [c.to_dict() for c in self.claims],
            "verification": self.verification.to_dict(), "confidence": self.confidence, "probability": self.probability,
            "confidence_reasons": self.confidence_reasons, "key_points": self.key_points,
            "retrieval": self.retrieval.to_dict(),
            "timings": {k: round(v, 4) for k, v in self.timings.items()},
            "usage": self.usage, "notes": self.notes,
        }


# -- sessions and runs -----------------------------------------------------------------------
RUNNING = "RUNNING"  # a run's status until it ends with SUCCESS, FALLBACK, FAILED or CANCELLED
RUN_STATUSES = (RUNNING, SUCCESS, FALLBACK, FAILED, CANCELLED)
RATINGS = ("up", "down")


# -- access ----------------------------------------------------------------------------------
ROLES = ("reader", "editor", "admin")  # API key roles, weakest first; each may do all the ones before it may


@dataclass(slots=True)
class ApiKeyRecord:
    """An API key as stored: never the key itself, only its hash (kept by the store) and a prefix to recognise it."""

    id: str
    prefix: str  # the key's first characters, e.g. 'dq_Xa81fQ', shown in 'docqa keys list'
    role: str  # reader | editor | admin
    collections: list[str] = field(default_factory=list)  # the collections it may see; empty: all
    name: str = ""
    created_at: str = ""
    last_used_at: str | None = None
    revoked_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "prefix": self.prefix, "role": self.role, "collections": self.collections,
                "name": self.name, "created_at": self.created_at, "last_used_at": self.last_used_at,
                "revoked_at": self.revoked_at}


@dataclass(slots=True)
class SessionRecord:
    """A conversation: the runs asked in it share a session id."""

    id: str
    title: str = ""
    collection: str | None = None
    created_at: str = ""  # ISO 8601 UTC; the store fills it in when empty
    updated_at: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "collection": self.collection,
                "created_at": self.created_at, "updated_at": self.updated_at}


@dataclass(slots=True)
class SessionSummary:
    """A conversation as a list of them shows it: its first question, how many runs, when it was last active."""

    id: str
    title: str
    first_question: str
    runs: int
    created_at: str
    last_activity: str  # the latest of its runs' start and finish times
    collection: str | None  # the collection its latest run asked (None: every collection)
    collections: list[str | None] = field(default_factory=list)  # every collection its runs asked
    origin: str | None = None  # where its first run was asked: cli, mcp, api (None: before docqa recorded it)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "first_question": self.first_question, "runs": self.runs,
                "created_at": self.created_at, "last_activity": self.last_activity, "collection": self.collection,
                "origin": self.origin}


@dataclass(slots=True)
class FeedbackRecord:
    """A user's rating of one run: 'up' or 'down', with an optional comment."""

    id: int
    run_id: str
    rating: str
    comment: str | None
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "run_id": self.run_id, "rating": self.rating, "comment": self.comment,
                "created_at": self.created_at}


@dataclass(slots=True)
class RunRecord:
    """One question answered (the audit record): what was asked, how, what came back, and how long it took."""

    id: str
    session_id: str
    question: str
    standalone: str | None = None  # the follow-up question condensed into a standalone one
    mode: str | None = None
    collection: str | None = None  # the collection asked; None: every collection
    status: str = RUNNING
    answerable: bool | None = None
    confidence: str | None = None
    answer: str | None = None  # the answer text
    result: dict[str, Any] | None = None  # the published result (Answer.to_dict())
    trace: list[dict[str, Any]] = field(default_factory=list)  # stages and model calls, for audit and replay
    timings: dict[str, float] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    error: str | None = None
    created_at: str = ""  # ISO 8601 UTC; the store fills it in when empty
    finished_at: str | None = None
    owner: str | None = None  # the process answering it, host/pid/start (docqa.run.owner); None when unknown
    origin: str | None = None  # where it was asked: cli, mcp or api (the page and other HTTP clients); None: unknown
    feedback: list[FeedbackRecord] = field(default_factory=list)  # filled in when read back
    # What the published answer rested on, one per citation (docqa.store.sources), filled in when read back;
    # stale_at: when the first cited document changed or went (None: every one is unchanged).
    sources: list[dict[str, Any]] = field(default_factory=list)
    stale_at: str | None = None
    recheck: dict[str, Any] | None = None  # the latest recheck against the new text (docqa.answer.recheck)

    @property
    def stale(self) -> bool:
        return self.stale_at is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "session_id": self.session_id, "question": self.question, "standalone": self.standalone,
            "mode": self.mode, "collection": self.collection, "status": self.status, "answerable": self.answerable,
            "confidence": self.confidence,
            "answer": self.answer, "result": self.result, "trace": self.trace, "timings": self.timings,
            "usage": self.usage, "model": self.model, "error": self.error, "created_at": self.created_at,
            "finished_at": self.finished_at, "feedback": [f.to_dict() for f in self.feedback], "origin": self.origin,
            "stale": self.stale, "stale_at": self.stale_at, "sources": self.sources, "recheck": self.recheck,
        }
