"""The answering pipeline: route → condense → retrieve → generate → cite → check (≤ N review rounds).

With no chat model (or when the model fails) the extractive answerer answers instead, with
the same citation structure.  Everything a run does is recorded in its RunContext (trace,
timings, usage) and announced as events (status, content, citations).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from docqa.answer import prompts
from docqa.answer.checker import Rejection, blame, check_facts, parse_verdict
from docqa.answer.citer import Cited, cite, citation_for, is_not_found_statement, strip_markers
from docqa.answer.extractive import extract, render
from docqa.answer.route import (catalog_answer, condense_heuristic, is_catalog_question, language_of,
                                looks_like_follow_up, not_found_answer)
from docqa.answer.run import RunContext
from docqa.answer.sources import SourceSet, fit
from docqa.errors import LLMError
from docqa.llm.base import ChatModel
from docqa.retrieve import SearchResults
from docqa.retrieve.weights import term_weights
from docqa.settings import Settings
from docqa.text.segment import query_terms
from docqa.text.tokens import count_tokens
from docqa.types import (FALLBACK, PARTIAL, SUCCESS, UNVERIFIED, VERIFIED, Answer, Claim, DocumentRecord,
                         Verification)

UNVERIFIED_MARK = {"en": " [unverified]", "zh": "［未核实］"}


@dataclass(slots=True)
class Sources:
    """What the pipeline needs from the knowledge base (thin callables, so it stays testable)."""

    search: Callable[[str, int, str | None], SearchResults]
    documents: Callable[[str | None], list[DocumentRecord]]
    term_counts: Callable[[list[str]], tuple[dict[str, int], int]]
    embed: Callable[[list[str], str], np.ndarray] | None = None


@dataclass(slots=True)
class _Draft:
    text: str
    cited: Cited
    rejections: list[Rejection] = field(default_factory=list)
    llm_ok: bool | None = None
    not_found: bool = False


class Pipeline:
    def __init__(self, sources: Sources, settings: Settings, model: ChatModel | None = None,
                 model_note: str | None = None):
        self.kb, self.settings, self.model, self.model_note = sources, settings, model, model_note

    def run(self, question: str, ctx: RunContext, *, previous: dict | None = None, collection: str | None = None,
            check: bool = True) -> Answer:
        language = language_of(question)
        with ctx.stage("routing") as entry:
            catalog = is_catalog_question(question)
            entry["route"] = "catalog" if catalog else "retrieval"
        if catalog:
            return self._catalog(question, language, collection, ctx)
        standalone = self._condense(question, previous, ctx)
        with ctx.stage("retrieving", query=standalone) as entry:
            hits = self.kb.search(standalone, self.settings.answer.top_k, collection)
            entry["hits"] = [(h.chunk_id, round(h.score, 4)) for h in hits]
        answer = Answer(question, "", True, "pipeline", language=language, model=self.model.name if self.model else None)
        answer.retrieval = {"query": standalone, "mode": hits.mode, "low_relevance": hits.low_relevance,
                            "threshold": hits.threshold, "collection": collection,
                            "hits": [_hit_summary(h) for h in hits], "dropped": []}
        if self.model_note:
            answer.notes.append(self.model_note)
        if self.model is None:
            return self._extractive(answer, hits, ctx)
        try:
            return self._generate(answer, hits, ctx, check)
        except LLMError as exc:
            ctx.trace.append({"stage": "fallback", "error": str(exc)})
            answer.notes.append(f"the chat model failed ({exc}); the answer was extracted from the documents instead")
            fallback = self._extractive(answer, hits, ctx, streamed=bool(answer.answer))
            fallback.status = FALLBACK
            ctx.emit("failure", code="llm_error", message=str(exc))
            return fallback

    # -- stages -----------------------------------------------------------------------------
    def _catalog(self, question: str, language: str, collection: str | None, ctx: RunContext) -> Answer:
        with ctx.stage("answering", route="catalog"):
            records = self.kb.documents(collection)
            text = catalog_answer(records, language, collection)
        ctx.emit("content", delta=text)
        ctx.emit("citations", citations=[])
        verification = Verification(VERIFIED, 0, [], 0, "catalog")
        return Answer(question, text, True, "catalog", verification=verification, confidence="high",
                      key_points=[], language=language, retrieval={"query": None, "documents": len(records)})

    def _condense(self, question: str, previous: dict | None, ctx: RunContext) -> str:
        if not previous or not looks_like_follow_up(question):
            return question
        with ctx.stage("condensing", previous=previous) as entry:
            standalone = None
            if self.model is not None:
                try:
                    reply = ctx.call(self.model, "condensing", prompts.condense_messages(question, previous), max_tokens=96)
                    standalone = _one_line(reply.text)
                    if not standalone or len(standalone) > 4 * len(question) + 200:
                        standalone = None
                except LLMError as exc:
                    entry["error"] = str(exc)
            entry["method"] = "model" if standalone else "terms"
            standalone = standalone or condense_heuristic(question, previous)
            entry["standalone"] = standalone
        return standalone

    def _sources(self, answer: Answer, hits: SearchResults, language: str) -> SourceSet:
        s = self.settings.llm
        overhead = count_tokens(prompts.prompt_overhead(answer.retrieval["query"], language))
        budget = s.context_window - s.max_tokens - overhead - 128
        sources = fit(list(hits), max(budget, 64))
        answer.retrieval["dropped"] = [h.chunk_id for h in sources.dropped]
        if sources.dropped:
            answer.notes.append(f"{len(sources.dropped)} lower-ranked source(s) did not fit the model's context window "
                                f"({s.context_window} tokens) and were left out")
        if any(x.truncated for x in sources.sources):
            answer.notes.append("the best source was cut to fit the model's context window")
        return sources

    def _generate(self, answer: Answer, hits: SearchResults, ctx: RunContext, check: bool) -> Answer:
        language = answer.language
        if not hits:
            return self._not_found(answer, ctx)
        sources = self._sources(answer, hits, language)
        base = prompts.answer_messages(answer.retrieval["query"], sources, language)
        if answer.question != answer.retrieval["query"]:
            base[-1].content += f"\n(The user asked: {answer.question})"
        rounds = self.settings.answer.review_rounds if check else 0
        drafts: list[_Draft] = []
        messages = base

        def stream(piece: str) -> None:  # the first draft is shown as it is written
            answer.answer += piece
            ctx.emit("content", delta=piece)

        for round_ in range(rounds + 1):
            with ctx.stage("generating", round=round_):
                reply = ctx.call(self.model, "generating", messages, on_text=stream if round_ == 0 else None)
            if reply.truncated:
                answer.notes.append("the model's answer was cut off by llm.max_tokens")
            draft = self._cite(reply.text, sources, language, ctx)
            drafts.append(draft)
            if draft.not_found or not check:
                break
            problems = self._check(answer, draft, sources, base, ctx)
            if not problems:
                break
            if round_ < rounds:
                messages = prompts.review_messages(base, reply.text, problems)
        return self.publish_best(answer, drafts, hits, ctx, check)

    def _cite(self, text: str, sources: SourceSet, language: str, ctx: RunContext) -> _Draft:
        with ctx.stage("citing") as entry:
            body = text.strip()
            if body.upper().startswith(prompts.NOT_FOUND_TOKEN) or body.upper().rstrip(".") == "NOT FOUND":
                return _Draft(text, Cited([], [], []), not_found=True)
            cited = cite(body, sources, language, self.settings.answer.support_threshold)
            entry.update(claims=len(cited.claims), invented_markers=cited.invented,
                         unsupported=[c.text for c in cited.unsupported])
            # "the documents do not say …" in the model's own words is NOT_FOUND too: nothing to check,
            # and the standard answer (the question's language, what was searched, answerable false)
            nothing_but_absence = bool(cited.claims) and all(is_not_found_statement(c.text) for c in cited.claims)
            return _Draft(body, cited, not_found=nothing_but_absence)

    def _check(self, answer: Answer, draft: _Draft, sources: SourceSet, base: list, ctx: RunContext) -> list[str]:
        """Problems found (empty: verified).  Deterministic checks first; the model is asked only
        when they pass."""
        with ctx.stage("checking") as entry:
            draft.rejections = check_facts(draft.cited, sources)
            if draft.cited.invented:
                draft.rejections.append(Rejection("", [f"cited source(s) {draft.cited.invented} do not exist"], "deterministic"))
            entry["deterministic"] = [r.to_dict() for r in draft.rejections]
            if draft.rejections or not self.settings.answer.llm_check:
                return _problems(draft.rejections)
            try:
                reply = ctx.call(self.model, "checking", prompts.check_messages(base, strip_unverified(draft.text)),
                                 max_tokens=256, temperature=0.0)
            except LLMError as exc:
                answer.notes.append(f"the model's fact-check failed ({exc}); only the deterministic checks ran")
                return []
            verdict = parse_verdict(reply.text)
            draft.llm_ok = verdict.ok
            entry["verdict"] = reply.text.strip()[:2000]
            if verdict.ok is None:
                answer.notes.append("the model's fact-check gave no verdict; only the deterministic checks count")
            if verdict.ok is False:
                for claim, reason in blame(verdict.reasons, draft.cited.claims):
                    if claim is not None:
                        claim.supported = False
                        claim.problems.append(reason)
                    draft.rejections.append(Rejection(claim.text if claim else "", [reason], "llm"))
            return _problems(draft.rejections)

    # -- for the agent: the same citer and checker on an answer written elsewhere ------------
    def settle(self, answer: Answer, text: str, sources: SourceSet, conversation: list, results: SearchResults,
               ctx: RunContext, check: bool = True) -> Answer:
        """Cite and check a finished answer (no regeneration), then publish it like the pipeline does."""
        draft, _ = self.review(answer, text, sources, conversation, ctx, check)
        return self.publish_best(answer, [draft], results, ctx, check)

    def review(self, answer: Answer, text: str, sources: SourceSet, conversation: list, ctx: RunContext,
               check: bool = True) -> tuple[_Draft, list[str]]:
        """Cite and check an answer written elsewhere (the agent's): its draft, and the problems found
        (empty: verified).  The first draft is shown as content; a later one replaces it when published."""
        if not answer.answer:
            answer.answer = text
            ctx.emit("content", delta=text)
        draft = self._cite(text, sources, answer.language, ctx)
        problems: list[str] = []
        if check and not draft.not_found and self.model is not None:
            problems = self._check(answer, draft, sources, conversation, ctx)
        return draft, problems

    def publish_best(self, answer: Answer, drafts: list[_Draft], results: SearchResults, ctx: RunContext,
                     checked: bool) -> Answer:
        """Publish the draft with the fewest rejected claims (the later one on a tie)."""
        return self._publish(answer, _best(drafts), results, ctx, rounds=len(drafts) - 1, checked=checked)

    def extract_from(self, answer: Answer, results: SearchResults, ctx: RunContext) -> Answer:
        """The extractive answer over given hits (the agent's evidence when its budget is gone)."""
        return self._extractive(answer, results, ctx)

    # -- results ----------------------------------------------------------------------------
    def _publish(self, answer: Answer, draft: _Draft, hits: SearchResults, ctx: RunContext, rounds: int,
                 checked: bool) -> Answer:
        if draft.not_found:
            return self._not_found(answer, ctx, streamed=True)
        claims = draft.cited.claims
        supported = [c for c in claims if c.supported]
        if hits.low_relevance and not supported:
            return self._not_found(answer, ctx, streamed=True)
        text = _mark_unverified(draft.text, claims, answer.language) if checked else draft.text
        self._replace(answer, text, ctx)
        answer.claims = claims
        answer.citations = draft.cited.citations
        answer.verification = _verification(draft, claims, rounds, checked, self.settings.answer.llm_check)
        answer.key_points = [strip_markers(c.text).strip() for c in supported][:5]
        answer.confidence = _confidence(hits, answer.verification)
        ctx.emit("citations", citations=[c.to_dict() for c in answer.citations])
        return answer

    def _replace(self, answer: Answer, text: str, ctx: RunContext) -> None:
        """Publish the final text; a front end that showed the streamed draft replaces it."""
        if text != answer.answer:
            ctx.emit("content", delta=text, replace=True)
        answer.answer = text

    def _not_found(self, answer: Answer, ctx: RunContext, streamed: bool = False) -> Answer:
        docs = len(self.kb.documents(answer.retrieval.get("collection")))
        text = not_found_answer(answer.language, answer.retrieval["query"], answer.retrieval.get("collection"), docs,
                                [h["path"] for h in answer.retrieval["hits"]])
        if streamed:
            self._replace(answer, text, ctx)
        else:
            answer.answer = text
            ctx.emit("content", delta=text)
        answer.answerable = False
        answer.confidence = "medium" if answer.retrieval.get("low_relevance") or not answer.retrieval["hits"] else "low"
        answer.verification = Verification(UNVERIFIED, 0, [], 0, "none")
        ctx.emit("citations", citations=[])
        return answer

    def _extractive(self, answer: Answer, hits: SearchResults, ctx: RunContext, streamed: bool = False) -> Answer:
        answer.mode = "extractive"
        s = self.settings.answer
        with ctx.stage("extracting") as entry:
            sources = fit(list(hits), 10**9)
            terms = query_terms(answer.retrieval["query"])
            result = extract(answer.retrieval["query"], sources, term_weights(self.kb.term_counts, terms), self.kb.embed,
                             s.extractive_sentences, s.abstain_threshold)
            entry.update(evidence=round(result.evidence, 4), abstained=result.abstained)
        answer.retrieval["evidence"] = round(result.evidence, 4)
        if result.abstained:
            return self._not_found(answer, ctx, streamed=streamed)
        text = render(result.chosen)
        if streamed:
            self._replace(answer, text, ctx)
        else:
            answer.answer = text
            ctx.emit("content", delta=text)
        answer.citations = [citation_for(x.n, sources.get(x.n).hit, x.start, x.end, answer.language)
                            for x in sorted(result.chosen, key=lambda x: (x.n, x.start))]
        answer.claims = [Claim(" ".join(c.quote.split()), 0, 0, [c.n], [c], True, 1.0) for c in answer.citations]
        answer.key_points = [c.text for c in answer.claims]
        answer.verification = Verification(VERIFIED, len(answer.claims), [], 0, "extractive")
        answer.confidence = ("high" if result.evidence >= s.abstain_threshold + 0.2 and not hits.low_relevance
                             else "medium" if result.evidence >= s.abstain_threshold + 0.05 else "low")
        ctx.emit("citations", citations=[c.to_dict() for c in answer.citations])
        return answer


def strip_unverified(text: str) -> str:
    for mark in UNVERIFIED_MARK.values():
        text = text.replace(mark, "")
    return text


def _mark_unverified(text: str, claims: list[Claim], language: str) -> str:
    """Insert a visible mark after each claim the checks did not verify."""
    mark = UNVERIFIED_MARK.get(language, UNVERIFIED_MARK["en"])
    for claim in sorted((c for c in claims if not c.supported), key=lambda c: -c.end):
        text = text[: claim.end] + mark + text[claim.end :]
    return text


def _verification(draft: _Draft, claims: list[Claim], rounds: int, checked: bool, llm_check: bool) -> Verification:
    if not checked:
        return Verification(UNVERIFIED, 0, [], rounds, "none")
    rejected = [r.to_dict() for r in draft.rejections]
    ok = [c for c in claims if c.supported]
    if not rejected and claims:
        status = VERIFIED
    elif ok:
        status = PARTIAL
    else:
        status = UNVERIFIED
    checker = "deterministic+llm" if llm_check and draft.llm_ok is not None else "deterministic"
    return Verification(status, len(claims), rejected, rounds, checker)


def _confidence(hits: SearchResults, verification: Verification) -> str:
    top = hits[0].score if hits else 0.0
    if verification.status == VERIFIED and not hits.low_relevance and top >= 0.7:
        return "high"
    if verification.status in (VERIFIED, PARTIAL) and not hits.low_relevance:
        return "medium"
    return "low"


def _best(drafts: list[_Draft]) -> _Draft:
    return min(drafts, key=lambda d: (len(d.rejections) + (d.llm_ok is False), -drafts.index(d)))


def _problems(rejections: list[Rejection]) -> list[str]:
    return [f"{r.claim!r}: {'; '.join(r.reasons)}" if r.claim else "; ".join(r.reasons) for r in rejections]


def _one_line(text: str) -> str:
    lines = [line.strip().strip('"“”') for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else ""


def _hit_summary(hit) -> dict:
    return {"chunk_id": hit.chunk_id, "path": hit.path, "section": hit.section, "page": hit.page,
            "line_start": hit.line_start, "line_end": hit.line_end, "score": round(hit.score, 4),
            "bm25_rank": hit.bm25_rank, "dense_rank": hit.dense_rank}
