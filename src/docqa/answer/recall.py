"""Recall: a repeated question answered from an earlier verified answer, in milliseconds.

An earlier run qualifies when it asked over the same collection scope, was answered (SUCCESS) and
VERIFIED, was not rated down, was no follow-up, and its question is a near-duplicate of this one
(the same words, or content words that overlap and an embedding similarity at or above
`answer.recall_similarity`), it is not stale (a cited span changed or went), and every passage it cites is unchanged (`unchanged`: the documents
still hold the quoted text and were not re-indexed since).  A change to a cited document or a
down-rating retires it; asking afresh (`fresh`) skips recall.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np

from docqa.answer.support import content_tokens
from docqa.errors import NotFoundError
from docqa.events import Citations, Content, Event, Status
from docqa.flow.context import RunContext
from docqa.types import RUNNING, SUCCESS, VERIFIED, Answer, Citation, Retrieval, RunRecord, Verification

if TYPE_CHECKING:
    from docqa.embed import Embedder
    from docqa.settings.model import AnswerSettings
    from docqa.store import Stores

MODE = "recall"
_CANDIDATES = 16  # earlier questions embedded per recall, best word overlap first
_MIN_OVERLAP = 0.5
_VECTORS = 5000  # earlier questions' embeddings kept per process before the cache starts afresh


class Recall:
    """The lookups of earlier verified answers for one knowledge base: the recent runs and the
    earlier questions' embeddings are kept between lookups (per process), so a lookup reads and
    embeds only what is new.  `lookup(question, collection)` is what a run's `Setup.recall` calls."""

    def __init__(self, store: Stores, settings: AnswerSettings, embedder: Embedder | None):
        self.store, self.settings, self.embedder = store, settings, embedder
        self.vectors: dict[str, np.ndarray] = {}
        self.recent = RecentRuns(self._list_runs, settings.recall_runs)

    def lookup(self, question: str, collection: str | None) -> tuple[Answer | None, list[dict]]:
        """An earlier verified answer to `question` over `collection` (None: none holds), and the
        earlier runs retired on the way, each with why."""
        retired: list[dict] = []
        embed = self._embed if self.embedder is not None else None
        earlier = find(question, collection, self.recent.current(), embed, self.citations_changed,
                       self.settings.recall_similarity, retired)
        return (answer_from(earlier, question, collection) if earlier else None), retired

    def citations_changed(self, run: RunRecord) -> str | None:
        """Why a run's cited passages no longer hold (a document gone, re-indexed since, or its quoted
        text moved); None when every one is unchanged."""
        now = self.store.runlog.get_run(run.id)  # rated down or gone stale since it was read
        if any(fb.rating == "down" for fb in now.feedback):
            return "rated down"
        if now.stale:  # marked when a cited document changed or went (docqa.store.sources): never reused
            return f"stale: a cited source changed on {now.stale_at[:10]}"
        docs, texts = self.store.documents, {}
        citations = (run.result or {}).get("citations", [])
        chunk_ids = {c.get("chunk_id") for c in citations if ":L" not in str(c.get("chunk_id"))}  # not agent passages
        live = {h.chunk_id for h in docs.get_hits(sorted(chunk_ids))} if chunk_ids else set()
        if chunk_ids - live:  # a chunk's id holds its document's content hash: the document changed
            gone = next(c for c in citations if c.get("chunk_id") in chunk_ids - live)
            return f"{gone.get('path')} changed or was removed since the answer"
        for c in citations:
            doc_id = c.get("document_id")
            try:
                record = docs.document_record(doc_id)
                if doc_id not in texts:
                    texts[doc_id] = docs.document_text(doc_id)
            except NotFoundError:
                return f"{c.get('path')} is no longer indexed"
            if c.get("chunk_id") not in chunk_ids and _after(record.indexed_at, run.created_at):  # a passage the agent read: its document re-indexed since
                return f"{record.path} changed (re-indexed {record.indexed_at}) since the answer"
            if texts[doc_id][c.get("char_start", 0):c.get("char_end", 0)] != c.get("quote"):
                return f"the quoted text of {record.path} is no longer where it was cited"
        return None

    def _list_runs(self, since: str | None) -> list[RunRecord]:
        return self.store.runlog.list_runs(since=since, limit=None if since else self.settings.recall_runs)

    def _embed(self, texts: list[str]) -> np.ndarray:
        """Earlier questions are embedded once per process."""
        vectors = self.vectors
        missing = [t for t in dict.fromkeys(texts) if t not in vectors]
        if missing:
            if len(vectors) > _VECTORS:
                vectors.clear()
            vectors.update(zip(missing, self.embedder.embed_batch(missing, "query")))  # type: ignore[union-attr]
        return np.stack([vectors[t] for t in texts])


class RecentRuns:
    """The answered runs recall looks through, kept in memory and topped up with the runs recorded
    since the last look (by any process): a lookup reads only what is new.  `list_runs(since)` returns
    runs created at or after `since` (None: the latest `limit`), newest first."""

    def __init__(self, list_runs: Callable[[str | None], list[RunRecord]], limit: int):
        self.list_runs, self.limit = list_runs, limit
        self.runs: dict[str, RunRecord] = {}
        self.pending: dict[str, str] = {}  # runs still RUNNING at the last look -> created_at
        self.latest: str | None = None

    def current(self) -> list[RunRecord]:
        since = min([*self.pending.values(), self.latest]) if self.latest else None
        for run in self.list_runs(since):
            if run.status == RUNNING:
                self.pending[run.id] = run.created_at
                continue
            self.pending.pop(run.id, None)
            if run.status == SUCCESS:
                run.trace = []  # not needed here; keeps the memory small
                self.runs[run.id] = run
            self.latest = max(self.latest or "", run.created_at)
        if len(self.runs) > 2 * self.limit:
            keep = sorted(self.runs.values(), key=lambda r: r.created_at)[-self.limit:]
            self.runs = {r.id: r for r in keep}
        return sorted(self.runs.values(), key=lambda r: r.created_at, reverse=True)[: self.limit]


@dataclass(slots=True)
class Earlier:
    run: RunRecord
    similarity: float


def find(question: str, collection: str | None, runs: Iterable[RunRecord], embed: Callable[[list[str]], np.ndarray] | None,
         unchanged: Callable[[RunRecord], str | None], threshold: float, retired: list[dict] | None = None) -> Earlier | None:
    """The best earlier run that answers `question` again (None: none qualifies).  `unchanged(run)`
    returns why its citations no longer hold (None: they do); runs retired that way are listed in `retired`."""
    key, words = _normal(question), content_tokens(question)
    scored = []
    for run in runs:
        if not _qualifies(run, collection):
            continue
        if _normal(run.question) == key:
            scored.append((2.0, run))
        elif words and (overlap := _jaccard(words, content_tokens(run.question))) >= _MIN_OVERLAP:
            scored.append((overlap, run))
    scored.sort(key=lambda x: -x[0])
    scored = scored[:_CANDIDATES]
    same = [(o, r) for o, r in scored if o == 2.0]
    if same:  # the same words: no embedding needed (the common case, and the fastest)
        scored = same
    similar = [1.0] * len(scored) if same else _similarities(question, [r for _, r in scored], embed) if scored else []
    for (overlap, run), sim in sorted(zip(scored, similar), key=lambda x: -x[1]):
        if overlap < 2.0 and sim < threshold:
            continue
        why = unchanged(run)
        if why is None:
            return Earlier(run, round(sim, 4))
        if retired is not None:
            retired.append({"run_id": run.id, "reason": why})
    return None


def replay(question: str, ctx: RunContext,
           lookup: Callable[[str], tuple[Answer | None, list[dict]]]) -> Generator[Event, None, Answer | None]:
    """Publish an earlier verified answer to `question` when there is one (None: answer it anew)."""
    with ctx.stage("recalling") as entry:
        yield Status(phase="recalling")
        answer, retired = lookup(question)
        entry.update(recalled_from=answer.retrieval.recalled_from if answer else None, retired=retired)
    if answer is None:
        return None
    yield Content(delta=answer.answer)
    yield Citations(citations=tuple(answer.citations))
    return answer


def answer_from(earlier: Earlier, question: str, collection: str | None) -> Answer:
    """The earlier answer, marked as such (its citations, verification and confidence as published)."""
    run, result = earlier.run, earlier.run.result or {}
    v = result.get("verification") or {}
    answer = Answer(question, answer=result.get("answer") or run.answer or "", answerable=True, mode=MODE,
                    citations=[Citation(**c) for c in result.get("citations", [])],
                    verification=Verification(v.get("status", VERIFIED), v.get("checked_claims", 0),
                                              v.get("rejected_claims", []), v.get("rounds", 0), v.get("checker", "none")),
                    confidence=result.get("confidence"), confidence_reasons=list(result.get("confidence_reasons", [])),
                    key_points=list(result.get("key_points", [])), model=result.get("model"),
                    language=result.get("language", "en"))
    answer.retrieval = Retrieval(query=question, mode=MODE, collection=collection, recalled_from=run.id,
                                 similarity=earlier.similarity, hits=(result.get("retrieval") or {}).get("hits", []),
                                 low_relevance=False)
    asked = (run.created_at or "")[:16].replace("T", " ")
    answer.notes.append(f"from an earlier verified answer (run {run.id}, asked {asked} UTC); its sources are unchanged. "
                        "Ask afresh for a new answer (--fresh; API and MCP: fresh)")
    return answer


def _qualifies(run: RunRecord, collection: str | None) -> bool:
    result = run.result or {}
    return (run.status == SUCCESS and run.collection == collection and run.answerable is True
            and run.mode != MODE and (result.get("verification") or {}).get("status") == VERIFIED
            and bool(result.get("citations")) and (run.standalone in (None, run.question))
            and not any(fb.rating == "down" for fb in run.feedback))


def _similarities(question: str, runs: list[RunRecord], embed: Callable[[list[str]], np.ndarray] | None) -> list[float]:
    if embed is None:  # no embedder: only the same words count
        return [1.0 if _normal(r.question) == _normal(question) else 0.0 for r in runs]
    vectors = np.asarray(embed([question, *[r.question for r in runs]]), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12
    return [float(x) for x in vectors[1:] @ vectors[0]]


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def _after(a: str | None, b: str | None) -> bool:
    """ISO time `a` is later than `b` (either missing: False)."""
    if not a or not b:
        return False
    moments = [datetime.fromisoformat(x.replace("Z", "+00:00")) for x in (a, b)]
    moments = [m.replace(tzinfo=m.tzinfo or UTC) for m in moments]
    return moments[0] > moments[1]
