"""Escalation: when the checks reject the answer in every review round, diagnose why from the run
itself and act once, before the acceptance rule (docqa.answer.accept) judges the final attempt.

It needs a repeated rejection: at least one review round (`answer.review_rounds` 0 never escalates).
A round's answer counts as *rejected* when the checks found a problem and verified under
`answer.accept_share` of its claims (one half when the rule is off): an answer the rule would publish
is not escalated.  The diagnoses, tried in this order (the first that holds is the one acted on):

1. **changed_files** — a file the answers cite (or, citing none, a file of the passages) changed on
   disk since it was indexed (size, then content hash when only the mtime moved).  The index no longer
   says what the file says, so nothing else can be judged: the changed files are re-ingested through
   the knowledge base (each in its own collection; only files it already indexes; only for a caller
   who may write there), the question is searched again and answered once more.  A file that cannot
   be read now is reported, never taken for deleted.
2. **retrieval** — at least half of the rejected claims' content words occur in no retrieved passage,
   and retrieval was weak (its best score under the relevance threshold, or half the question's
   content words in no passage): the facts were not retrieved.  A prompt cannot fix that: a keyword
   (BM25-only) search for the question and the rejected claims, with twice `answer.top_k` hits, and
   one more answer over those.
3. **format** — the model did not follow the format: no answer had a `[n]` marker of a real source,
   or retrieval covered the question while the rejected claims' words are in no passage (it answered
   from outside the sources).  One more answer with the stricter prompt (prompts.STRICT).
4. **unexplained** — none of the above: `llm.escalation_model`, when configured, is asked once with
   the same prompt, its tokens and cost (its own prices) recorded; otherwise nothing more is asked and
   the best draft goes to the acceptance rule, as without escalation.

One action per run: an action that cannot be taken (re-ingest without write access, a keyword
search that finds nothing) is recorded and the run goes on to step 4's escalation model, or to
publishing; a failing model call is recorded and the drafts so far are published.  The diagnosis,
the action and its outcome are a trace entry (`stage: escalating`), a `status` event
(`phase: escalating`), `answer.retrieval.escalation` (the run record) and a note; `docqa log
--attention` lists escalated runs with them.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from docqa.answer.citer import MARKER
from docqa.answer.support import content_tokens, union
from docqa.errors import DocqaError, LLMError
from docqa.llm.base import ChatModel, Usage
from docqa.retrieve import SearchResults
from docqa.flow.context import RunContext
from docqa.text.segment import query_terms
from docqa.events import Escalating, Event

if TYPE_CHECKING:
    from docqa.answer.pipeline import Draft, Found, Pipeline
    from docqa.types import Answer

CHANGED, RETRIEVAL, FORMAT, UNEXPLAINED = "changed_files", "retrieval", "format", "unexplained"
ORDER = (CHANGED, RETRIEVAL, FORMAT, UNEXPLAINED)
MISSING_SHARE = 0.5  # share of the rejected claims' content words in no passage that says "not in the sources"
KEYWORD_TERMS = 32  # the keyword query's longest length, in terms


@dataclass(slots=True)
class Diagnosis:
    """Why every round's answer was rejected: one of ORDER, said for people, and what shows it."""

    kind: str
    reason: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Outcome(NamedTuple):
    """What goes to the acceptance rule after escalating: drafts over `hits` (`found`: the extractive
    evidence over them, None: to be computed)."""

    drafts: list[Draft]
    hits: SearchResults
    found: Found | None


def rejected(draft: Draft, share: float) -> bool:
    """The checks found a problem and verified under `share` of the draft's claims."""
    if draft.not_found or not draft.rejections:
        return False
    claims = draft.cited.claims
    return not claims or sum(c.supported for c in claims) / len(claims) < share


def diagnose(question: str, drafts: list[Draft], hits: SearchResults, changes: list[dict]) -> Diagnosis:
    """The first diagnosis that holds, in ORDER (see the module's docstring).  `changes`: the cited
    files that differ on disk (KnowledgeBase.file_changes)."""
    changed = [c for c in changes if c["state"] == "changed"]
    unreadable = [c for c in changes if c["state"] != "changed"]
    if changed:
        paths = ", ".join(c["path"] for c in changed[:5])
        return Diagnosis(CHANGED, f"{len(changed)} cited file(s) changed on disk since they were indexed: {paths}",
                         {"changed": changed, "unreadable": unreadable})
    facts = _retrieval_facts(question, drafts, hits)
    facts["unreadable"] = unreadable
    off_sources = facts["missing_share"] >= MISSING_SHARE
    if off_sources and facts["weak_retrieval"]:
        return Diagnosis(RETRIEVAL, f"{facts['missing_share']:.0%} of the rejected claims' words are in no retrieved "
                         "passage, and retrieval was weak", facts)
    unmarked = [i for i, d in enumerate(drafts) if not _valid_markers(d)]
    facts["rounds_without_markers"] = len(unmarked)
    if len(unmarked) == len(drafts):
        return Diagnosis(FORMAT, "no answer cited its sources with [n] markers", facts)
    if off_sources:
        return Diagnosis(FORMAT, f"the model answered from outside the sources ({facts['missing_share']:.0%} of the "
                         "rejected claims' words are in no passage, while retrieval covered the question)", facts)
    return Diagnosis(UNEXPLAINED, "the facts were retrieved and the answers were cited, yet the checks rejected them", facts)


def keyword_query(question: str, drafts: list[Draft]) -> str:
    """A keyword query from the question and the rejected claims (the question's terms first)."""
    claims = [c.text for d in drafts for c in d.cited.claims if not c.supported]
    terms = list(dict.fromkeys(query_terms(question) + query_terms(" ".join(claims))))
    return " ".join(terms[:KEYWORD_TERMS])


class Escalation:
    """Diagnose and act once for a pipeline (`escalation_model`: the stronger model of step 4, priced
    per million prompt and completion tokens by `prices`)."""

    def __init__(self, pipeline: Pipeline, escalation_model: ChatModel | None = None,
                 prices: tuple[float, float] = (0.0, 0.0)):
        self.pipeline, self.model, self.prices = pipeline, escalation_model, prices

    def run(self, answer: Answer, drafts: list[Draft], hits: SearchResults, found: Found | None,
            ctx: RunContext) -> Generator[Event, None, Outcome]:
        """The drafts to publish: unchanged unless every one was rejected, then after one action."""
        kept = Outcome(drafts, hits, found)
        s = self.pipeline.settings.answer
        if len(drafts) < 2 or not all(rejected(d, s.accept_share or 0.5) for d in drafts):  # repeated rejection only
            return kept
        changes = self._changes(drafts, hits)
        diagnosis = diagnose(answer.retrieval.query, drafts, hits, changes)
        entry: dict[str, Any] = {"stage": "escalating", "rounds": len(drafts), **diagnosis.to_dict()}
        ctx.trace.append(entry)
        yield Escalating(kind=diagnosis.kind, reason=diagnosis.reason)
        try:
            outcome = yield from self._act(answer, diagnosis, kept, entry, ctx)
        except LLMError as exc:  # the action's model call failed: the drafts so far are published
            entry.update(error=str(exc), outcome="the model call failed; the drafts so far go to the acceptance rule")
            outcome = kept
        record = {k: v for k, v in entry.items() if k not in ("stage", "evidence")}
        answer.retrieval.escalation = {**record, "evidence": _brief(diagnosis.evidence)}
        answer.notes.append(f"every review round's answer was rejected; diagnosis: {diagnosis.kind} "
                            f"({diagnosis.reason}); action: {entry['action']}; {entry['outcome']}")
        return outcome

    # -- the actions -------------------------------------------------------------------------------
    def _act(self, answer: Answer, diagnosis: Diagnosis, kept: Outcome, entry: dict,
             ctx: RunContext) -> Generator[Event, None, Outcome]:
        if diagnosis.kind == CHANGED:
            done = yield from self._reingest(answer, diagnosis, kept, entry, ctx)
            if done is not None:
                return done
        elif diagnosis.kind == RETRIEVAL:
            done = yield from self._keyword(answer, kept, entry, ctx)
            if done is not None:
                return done
        elif diagnosis.kind == FORMAT:
            entry["action"] = "retry with the stricter prompt"
            draft = yield from self._retry(answer, kept.hits, ctx, "escalation: strict prompt", strict=diagnosis.reason)
            return self._after(entry, kept, Outcome([*kept.drafts, draft], kept.hits, kept.found), draft)
        return (yield from self._last_resort(answer, kept, entry, ctx))

    def _reingest(self, answer: Answer, diagnosis: Diagnosis, kept: Outcome, entry: dict,
                  ctx: RunContext) -> Generator[Event, None, Outcome | None]:
        lib = self.pipeline.library
        ids = [c["document_id"] for c in diagnosis.evidence["changed"]]
        try:
            if lib.refresh is None:
                raise DocqaError("this knowledge base cannot re-ingest from here")
            entry["reingested"] = lib.refresh(ids)
        except DocqaError as exc:  # e.g. a reader's key: it may not write the collection
            entry["refused"] = f"re-ingest refused: {exc}"
            return None
        entry["action"] = f"re-ingested {len(ids)} file(s) and retried"
        hits = lib.search(answer.retrieval.query, self.pipeline.settings.answer.top_k, None)
        if not hits:
            entry.update(outcome="the question finds nothing after the re-ingest")
            return Outcome(kept.drafts[-1:], hits, None)
        draft = yield from self._retry(answer, hits, ctx, "escalation: re-ingested")
        entry["new_hits"] = len(hits)
        return self._after(entry, kept, Outcome([draft], hits, None), draft)  # the old drafts cite the old text

    def _keyword(self, answer: Answer, kept: Outcome, entry: dict, ctx: RunContext) -> Generator[Event, None, Outcome | None]:
        lib = self.pipeline.library
        query = keyword_query(answer.retrieval.query, kept.drafts)
        top_k = min(50, 2 * self.pipeline.settings.answer.top_k)
        hits = lib.keyword(query, top_k) if lib.keyword is not None else None
        entry.update(keyword_query=query, top_k=top_k, keyword_hits=len(hits))
        if not hits:
            entry["refused"] = "the keyword search found nothing"
            return None
        entry["action"] = f"retry over a keyword (BM25) search, top {top_k}"
        with ctx.stage("retrieving", query=query, mode="bm25", escalation=True) as stage:
            stage["hits"] = [(h.chunk_id, round(h.score, 4)) for h in hits]
        draft = yield from self._retry(answer, hits, ctx, "escalation: keyword retrieval")
        better = len(draft.rejections) <= min(len(d.rejections) for d in kept.drafts)
        return self._after(entry, kept, Outcome([draft], hits, None) if better else kept, draft)

    def _last_resort(self, answer: Answer, kept: Outcome, entry: dict, ctx: RunContext) -> Generator[Event, None, Outcome]:
        if self.model is None:
            entry["action"] = "none (no llm.escalation_model)"
            entry["outcome"] = "the best draft goes to the acceptance rule, as without escalation"
            return kept
        entry["action"] = f"asked the escalation model {self.model.name}"
        start = len(ctx.trace)
        draft = yield from self._retry(answer, kept.hits, ctx, "escalation: stronger model", model=self.model)
        used = _usage_of(ctx.trace[start:], self.model.name)  # its call only (the chat model checks its answer)
        cost = (used.prompt_tokens * self.prices[0] + used.completion_tokens * self.prices[1]) / 1e6
        ctx.price_apart(used, cost)
        entry["cost"] = {"model": self.model.name, "prompt_tokens": used.prompt_tokens,
                         "completion_tokens": used.completion_tokens, "cost": round(cost, 6)}
        yield Escalating(kind=UNEXPLAINED, cost=entry["cost"])
        return self._after(entry, kept, Outcome([*kept.drafts, draft], kept.hits, kept.found), draft)

    # -- helpers ---------------------------------------------------------------------------------
    def _retry(self, answer: Answer, hits: SearchResults, ctx: RunContext, why: str, *, strict: str | None = None,
               model: ChatModel | None = None) -> Generator[Event, None, Draft]:
        draft = yield from self.pipeline.attempt(answer, hits, ctx, why=why, strict=strict, model=model)
        return draft

    def _after(self, entry: dict, kept: Outcome, outcome: Outcome, draft: Draft) -> Outcome:
        claims = draft.cited.claims
        verified = sum(c.supported for c in claims)
        share = self.pipeline.settings.answer.accept_share or 0.5
        if draft.not_found:
            said = "the retry found no answer in the sources"
        elif rejected(draft, share):
            said = f"still rejected ({verified} of {len(claims)} claims verified)"
        else:
            said = f"the retry passed the checks ({verified} of {len(claims)} claims verified)"
        entry.update(outcome=said, retry_rejected=rejected(draft, share), retry_claims=len(claims),
                     retry_verified=verified, retry_published_from=("retry" if draft in outcome.drafts else "earlier drafts"))
        return outcome

    def _changes(self, drafts: list[Draft], hits: SearchResults) -> list[dict]:
        """The files of the cited documents (else of the passages) that differ on disk now."""
        lib = self.pipeline.library
        if lib.changes is None:
            return []
        ids = [c.document_id for d in drafts for claim in d.cited.claims for c in claim.citations]
        try:
            return lib.changes(ids or [h.document_id for h in hits])
        except DocqaError:  # a document removed meanwhile: nothing to re-ingest
            return []


def _retrieval_facts(question: str, drafts: list[Draft], hits: SearchResults) -> dict[str, Any]:
    """How much of the rejected claims (and of the question) the retrieved passages hold."""
    passages = union(content_tokens(h.text) for h in hits)
    claim_words = union(content_tokens(c.text) for d in drafts for c in d.cited.claims if not c.supported)
    missing = sorted(claim_words - passages)
    asked = content_tokens(question)
    question_missing = sorted(asked - passages)
    share = len(missing) / len(claim_words) if claim_words else 0.0
    weak = hits.low_relevance or len(question_missing) >= MISSING_SHARE * max(len(asked), 1)
    return {"missing_share": round(share, 3), "missing_words": missing[:20], "question_words_missing": question_missing[:20],
            "top_score": round(hits[0].score, 4) if hits else None, "threshold": hits.threshold,
            "low_relevance": hits.low_relevance, "weak_retrieval": bool(weak)}


def _usage_of(trace: list[dict], model: str) -> Usage:
    calls = [e.get("usage") or {} for e in trace if e.get("model_call") == model]
    return Usage(sum(u.get("prompt_tokens", 0) for u in calls), sum(u.get("completion_tokens", 0) for u in calls))


def _valid_markers(draft: Draft) -> bool:
    """The draft cites at least one source that exists with a [n] marker of its own."""
    numbers = {int(n) for m in MARKER.finditer(draft.text) for g in m.groups() if g for n in _numbers(g)}
    return bool(numbers - set(draft.cited.invented))


def _numbers(group: str) -> list[str]:
    return [n for n in group.replace("，", ",").replace("、", ",").split(",") if n.strip().isdigit()]


def _brief(evidence: dict[str, Any]) -> dict[str, Any]:
    """The evidence for the run record (lists cut short)."""
    return {k: v[:10] if isinstance(v, list) else v for k, v in evidence.items()}

