"""The answering pipeline: condense → retrieve → generate → cite → check (≤ N review rounds).

A generator of events that returns the Answer: `answer = yield from pipeline.run(...)`.  What the
model writes is a `draft` (streamed as written, numbered, sentinels such as NOT_FOUND never shown);
a draft the checks reject is followed by `draft_rejected`; only the published answer is `content`,
then its `citations`.  The run (docqa.run) routes the question once and
drives it; with no chat model (or when the model fails) the extractive answerer answers instead,
with the same citation structure.  What a run does is recorded in its RunContext (trace, timings, usage).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from dataclasses import dataclass, field, replace

from docqa.answer import accept, choose, guard, hop, prompts, release, requery, rows, sentinel, short, spread
from docqa.answer.checker import Rejection, blame, check_facts, parse_verdict
from docqa.answer.citer import Cited, cite, citation_for, is_not_found_statement, number_by_first_use, strip_markers
from docqa.answer.confidence import confidence
from docqa.answer.escalate import Escalation
from docqa.answer.extractive import Extract, Sentence, extract, holes
from docqa.answer.library import Library
from docqa.answer.parts import Part, split
from docqa.answer.shape import enumerated
from docqa.answer.route import catalog_answer, condense_heuristic, condensed_reply, language_of, looks_like_follow_up, not_found_answer
from docqa.answer.sources import Source, SourceSet, fit, focused
from docqa.errors import DocqaError, LLMError
from docqa.events import Accepting, Citations, Content, DraftDelta, DraftRejected, Event, Failure, Generating, Status
from docqa.llm.base import ChatModel, ChatResult
from docqa.retrieve import SearchResults
from docqa.retrieve.weights import term_weights, term_weights_and_total
from docqa.flow.context import RunContext
from docqa.settings import Settings
from docqa.text.language import has_cjk
from docqa.text.segment import fold, query_terms
from docqa.text.sentences import sentence_spans
from docqa.retrieve.snippet import coverage
from docqa.text.tokens import count_tokens
from docqa.types import FALLBACK, PARTIAL, UNVERIFIED, VERIFIED, Acceptance, Answer, Citation, Claim, Hit, Retrieval, Verification

UNVERIFIED_MARK = {"en": " [unverified]", "zh": "［未核实］"}
Events = Generator[Event, None, Answer]  # what the stages are: they yield events and return the answer
Found = tuple[SourceSet, Extract]  # the extractive answerer over a run's passages: its sources and result


@dataclass(slots=True)
class Draft:
    """One written answer, cited and (when checked) with what the checks rejected."""

    text: str
    cited: Cited
    rejections: list[Rejection] = field(default_factory=list)
    llm_ok: bool | None = None
    not_found: bool = False


class Pipeline:
    def __init__(self, library: Library, settings: Settings, model: ChatModel | None = None, *,
                 model_note: str | None = None, escalation_model: ChatModel | None = None,
                 task: Callable[[], bool] | None = None):
        """`task`: whether the question is a task a skill matched (the run knows; asked when accepting)."""
        self.library, self.settings, self.model, self.model_note = library, settings, model, model_note
        prices = (settings.llm.escalation_prompt_price, settings.llm.escalation_completion_price)
        self.escalation = Escalation(self, escalation_model, prices) if settings.answer.escalate else None
        self.task: Callable[[], bool] = task or (lambda: False)

    def run(self, question: str, ctx: RunContext, *, previous: dict | None = None, check: bool = True) -> Events:
        """Answer from retrieved passages (the run has routed the question here)."""
        language, collection = language_of(question), self.library.collection
        standalone = yield from self._condense(question, previous, ctx)
        with ctx.stage("retrieving", query=standalone) as entry:
            yield Status(phase="retrieving")
            top_k = self.settings.answer.top_k
            hits = self._search(standalone, top_k, spread.DEPTH)
            entry["hits"] = [(h.chunk_id, round(h.score, 4)) for h in hits]
            if hits.rerank:  # search.rerank ran: what it did, or why the fused order was kept
                entry["rerank"] = hits.rerank
        answer = Answer(question, answer="", answerable=True, mode="pipeline", language=language, model=self.model.name if self.model else None)
        answer.retrieval = Retrieval(query=standalone, mode=hits.mode, low_relevance=hits.low_relevance,
                                     threshold=hits.threshold, collection=collection,
                                     hits=[_hit_summary(h) for h in hits], dropped=[], rerank=hits.rerank or None)
        if note := hits.vectors_note:  # an add is still embedding: these were found by full-text search alone
            answer.retrieval.without_vectors = hits.without_vectors
            answer.notes.append(note)
        if self.model_note:
            answer.notes.append(self.model_note)
        if self.model is None:
            return (yield from self._extractive(answer, hits, ctx))
        try:
            return (yield from self._generate(answer, hits, ctx, check))
        except LLMError as exc:
            ctx.trace.append({"stage": "fallback", "error": str(exc)})
            answer.notes.append(f"the chat model failed ({exc}); the answer was extracted from the documents instead")
            fallback = yield from self._extractive(answer, hits, ctx, streamed=bool(answer.answer))
            fallback.status = FALLBACK
            yield Failure(code="llm_error", message=str(exc))
            return fallback

    def _search(self, query: str, top_k: int, depth: int) -> SearchResults:
        """The passages an answer reads (docqa.answer.spread): the best `top_k` of a search `depth` times deeper, and
        for a question naming a release series ("2.39.x") with none of them from its releases' files, the best of one
        more search scoped to those files in the last places (the caller's collections only)."""
        hits = spread.spread(self.library.search(query, top_k * depth, None), top_k, depth)
        prefix = spread.series(query) if spread.SERIES_SEARCH else None
        if prefix is None or any(spread.in_series(h, prefix) for h in hits):
            return hits
        return spread.with_series(hits, list(self.library.search(query, top_k, None, spread.series_glob(prefix))), prefix)

    def catalog(self, question: str, ctx: RunContext) -> Events:
        """A question about the knowledge base itself: the list of documents."""
        language, collection = language_of(question), self.library.collection
        with ctx.stage("answering", route="catalog"):
            yield Status(phase="answering")
            records = self.library.documents(None)
            text = catalog_answer(records, language, collection)
        yield Content(delta=text)
        yield Citations()
        verification = Verification(VERIFIED, 0, [], 0, "catalog")
        return Answer(question, answer=text, answerable=True, mode="catalog", verification=verification, confidence="high",
                      key_points=[], language=language, retrieval=Retrieval(documents=indexed(records)))

    # -- stages -----------------------------------------------------------------------------
    def _condense(self, question: str, previous: dict | None, ctx: RunContext) -> Generator[Event, None, str]:
        if not previous or not looks_like_follow_up(question):
            return question
        with ctx.stage("condensing", previous=previous) as entry:
            yield Status(phase="condensing")
            standalone = None
            if self.model is not None:
                try:
                    reply = yield from ctx.call(self.model, "condensing", prompts.condense_messages(question, previous),
                                                max_tokens=96)
                    standalone = condensed_reply(reply.text, question, previous)
                    if standalone is None:
                        entry["unused_reply"] = reply.text[:300]
                except LLMError as exc:
                    entry["error"] = str(exc)
            entry["method"] = "model" if standalone else "terms"
            standalone = standalone or condense_heuristic(question, previous)
            entry["standalone"] = standalone
        return standalone

    def _sources(self, answer: Answer, hits: SearchResults, language: str, ctx: RunContext,
                 found: Found | None = None) -> SourceSet:
        s, a = self.settings.llm, self.settings.answer
        if self.model is not None and self.model.small:  # a 1.5B-7B model: fewer, shorter sources
            centres = _centres(found)
            if answer.retrieval.second_look:  # no quotable sentence: centre on the question's words
                centres = _term_centres(list(hits), query_terms(answer.retrieval.query)) or centres
            sources = self._named(focused(list(hits), centres, a.small_model_sources, a.small_model_context // a.small_model_sources))
            if a.guard:
                guard.record(answer.retrieval, answer.notes, ctx.trace, [x.hit for x in sources.sources])
            answer.retrieval.dropped = [h.chunk_id for h in sources.dropped]
            return sources
        overhead = count_tokens(prompts.prompt_overhead(answer.retrieval.query, language))
        budget = s.context_window - s.max_tokens - overhead - 128
        sources = self._named(fit(list(hits), max(budget, 64)))
        if self.settings.answer.guard:
            guard.record(answer.retrieval, answer.notes, ctx.trace, [x.hit for x in sources.sources])
        answer.retrieval.dropped = [h.chunk_id for h in sources.dropped]
        if sources.dropped:
            answer.notes.append(f"{len(sources.dropped)} lower-ranked source(s) did not fit the model's context window "
                                f"({s.context_window} tokens) and were left out")
        if any(x.truncated for x in sources.sources):
            answer.notes.append("the best source was cut to fit the model's context window")
        return sources

    def _generate(self, answer: Answer, hits: SearchResults, ctx: RunContext, check: bool) -> Events:
        language = answer.language
        if not hits:
            return (yield from self._not_found(answer, ctx))
        found = self._evidence(answer, hits, ctx) if self.settings.answer.accept_share > 0 else None
        task = self.task()
        if found is not None and self.model.small and self.settings.answer.choose_sentence and not task:
            return (yield from self._choose(answer, hits, ctx, found))
        words_only = found is not None and self.model.small and self.settings.answer.short_answers and not task
        second = (found is not None and found[1].abstained and not task and not words_only  # a few words are no second look
                  and self._second_look(answer, hits))
        answer.retrieval.second_look = second
        if found is not None and accept.gated(found[1].abstained, task) and not second:  # not found, no model call
            ctx.trace.append({"stage": "accepting", "outcome": accept.NOT_FOUND, "before_model": True})
            answer.retrieval.acceptance = Acceptance(accept.NOT_FOUND, 0, 0, "no passage answers the question well enough")
            return (yield from self._not_found(answer, ctx))
        if words_only:
            return (yield from self._short(answer, hits, ctx, found))  # type: ignore[arg-type]
        sources = self._sources(answer, hits, language, ctx, found)
        base = prompts.answer_messages(answer.retrieval.query, sources, language)
        if answer.question != answer.retrieval.query:
            base[-1].content += f"\n(The user asked: {answer.question})"
        rounds = self.settings.answer.review_rounds if check else 0
        drafts: list[Draft] = []
        messages = base
        for round_ in range(rounds + 1):
            with ctx.stage("generating", round=round_):
                yield Generating()
                call = ctx.call(self.model, "generating", messages, stream=round_ == 0)
                reply = yield from _drafted(ctx, call)  # a draft, not the answer: shown as one until published
            if round_ == 0 and accept.in_other_language(reply.text, language):
                reply = yield from self._in_language(answer, messages, reply, ctx)
            if reply.truncated:
                answer.notes.append("the model's answer was cut off by llm.max_tokens")
            draft = yield from self._cite(reply.text, sources, language, ctx)
            drafts.append(draft)
            if draft.not_found or not check or accept.in_other_language(reply.text, language):
                break  # nothing to check, or not publishable anyway (the acceptance rule quotes instead)
            problems = yield from self._check(answer, draft, sources, base, ctx)
            if not problems:
                break
            if round_ < rounds:
                messages = prompts.review_messages(base, reply.text, problems)
        if check and self.escalation is not None:  # rejected in every round: diagnose, act once (answer.escalate)
            drafts, hits, found = yield from self.escalation.run(answer, drafts, hits, found, ctx)
        return (yield from self.publish_best(answer, drafts, hits, ctx, check, found))

    def _short(self, answer: Answer, hits: SearchResults, ctx: RunContext, found: Found) -> Events:
        """A small model asked only for the words that answer the question (docqa.answer.short), in one short
        call, when the extractive answerer answers (never instead of "not found": a few words are no second look):
        they lead the extractive answer when they stand in a sentence it quotes or a grounded one; else the
        extractive answer.  A procedure's steps and a question of several parts are the extractive answerer's (no call)."""
        pool, result = found
        query, language = answer.retrieval.query, answer.language
        if short.asks_for_steps(query) or (result.shape is not None and result.shape.steps) or split(query):
            ctx.trace.append({"stage": "short_answer", "outcome": None, "reason": "not asked: a procedure, "
                              "steps or a question of several parts (the extractive answerer's)"})
            return (yield from self._extractive(answer, hits, ctx, found=found))
        sources = self._sources(answer, hits, language, ctx, found)
        with ctx.stage("generating", short=True):
            yield Generating()
            reply = yield from ctx.call(self.model, "generating", prompts.short_messages(query, sources, language),
                                        max_tokens=short.MAX_TOKENS, temperature=0.0)
        quoted = [(pool.get(x.n).hit.chunk_id, x.start, x.end) for x in result.chosen]  # type: ignore[union-attr]
        verdict = short.judge(short.read(reply.text), sources, self._question(answer), quoted)
        n = next((x.n for x in pool.sources if verdict.found and x.hit.chunk_id == verdict.found.hit.chunk_id), None)
        if verdict.outcome == short.MODEL and n is None:  # a source the injection guard flagged is never quoted
            verdict = short.Verdict(short.EXTRACTIVE, "the model's words are in a source that is not evidence", verdict.found)
        ctx.trace.append({"stage": "short_answer", "outcome": verdict.outcome, "reason": verdict.reason,
                          "words": verdict.found.words if verdict.found else None,
                          "sentence": verdict.found.hit.text[slice(*verdict.found.sentence)] if verdict.found else None})
        published = accept.MODEL if verdict.outcome == short.MODEL else accept.EXTRACTIVE
        answer.retrieval.acceptance = Acceptance(published, int(published == accept.MODEL), 1, verdict.reason)
        if published == accept.EXTRACTIVE:
            answer.notes.append(f"the model's short answer was not used ({verdict.reason}); the answer quotes the documents")
            return (yield from self._extractive(answer, hits, ctx, found=found))
        return (yield from self._led(answer, hits, found, verdict.found, n))  # type: ignore[arg-type]

    def _choose(self, answer: Answer, hits: SearchResults, ctx: RunContext, found: Found) -> Events:
        """A small model as a chooser (docqa.answer.choose): shown the extractive answerer's best sentences, it names
        the one that answers; that sentence leads the extractive answer.  NONE is the model's verdict, weighed with
        the evidence (choose.NONE_FLOOR); an unreadable reply leaves the extractive answer as it is.  An abstention is
        asked about only when the evidence may take it back (choose.may_rescue); a procedure or a question of several
        parts is the extractive answerer's."""
        query = answer.retrieval.query
        # the model's words for it, one more search (answer/requery.py); not for a procedure or a question of several
        # parts, which the chooser is not asked about: what the new search finds could not be backed
        if found[1].abstained and requery.ASK and not (short.asks_for_steps(query) or split(query)):
            hits, found = yield from self._requery(answer, hits, found, ctx)
        pool, result = found
        steps = short.asks_for_steps(query) or (result.shape is not None and result.shape.steps) or bool(split(query))
        quoted = _quoted_in_order(result, self.settings.answer.extractive_sentences) if not result.abstained else []
        shown = choose.candidates(result, next((x for x in quoted if x is not result.heading), None))
        # an abstention by a rule of the answerer's own (no version, no quantity quoted) is not the model's to take back
        listwise = not result.abstained or choose.ASK_ABSTAINED or choose.may_rescue(result)
        if result.abstained and (steps or len(shown) < 2 or not (listwise or choose.may_judge(result))):
            ctx.trace.append({"stage": "accepting", "outcome": accept.NOT_FOUND, "before_model": True})
            answer.retrieval.acceptance = Acceptance(accept.NOT_FOUND, 0, 0, "no passage answers the question well enough")
            return (yield from self._not_found(answer, ctx))
        if steps or len(shown) < 2:
            ctx.trace.append({"stage": "choosing", "pick": None, "reason": "not asked: a procedure, steps, a question "
                              "of several parts, or a single candidate (the extractive answerer's)"})
            return (yield from self._extractive(answer, hits, ctx, found=found))
        picked = choose.Choice(choose.UNREAD)
        if listwise:
            with ctx.stage("generating", choose=True):
                yield Generating()
                reply = yield from ctx.call(self.model, "generating", choose.messages(query, shown, pool),
                                            max_tokens=choose.MAX_TOKENS, temperature=0.0, logprobs=True, top_logprobs=choose.TOP)
            picked = choose.choice(reply.text, shown, reply.top)
            ctx.trace.append({"stage": "choosing", "pick": picked.pick, "reply": reply.text[:200], "evidence": result.evidence,
                              "shares": {str(k): round(v, 4) for k, v in picked.shares.items()},
                              "abstained": result.abstained, "candidates": _traced(shown, pool)})
        picks = (yield from self._agree(query, shown, picked, pool, ctx)) if choose.asks_again(picked, result) else [picked.pick]
        if result.abstained:
            n = choose.agreement_rescues(picks, result)
            if n:  # the same sentence chosen in every order: not the position the model prefers
                reason = (f"the model chose sentence {n} in each of {len(picks)} orders of the candidates, and the evidence "
                          f"({result.evidence:.2f}) is at least {choose.AGREE_TAKE}, though under the abstain threshold")
                return (yield from self._taken_back(answer, hits, ctx, found, shown[n - 1] if n > 1 else None, reason))
            checked = (yield from self._check_pick(query, picked.sentence, pool, ctx)) \
                if picked.sentence is not None and choose.to_check(picked, result) else None
            if choose.rescues(picked, result, checked):  # the model backs a sentence: answered after all
                which = (f"the best-ranked sentence{f' ({picked.shares[1]:.0%} of its choice)' if picked.shares else ''}"
                         if picked.pick == 1 else
                         f"sentence {picked.pick} ({picked.shares.get(picked.pick, 0.0):.0%} of its choice"
                         + (f"; alone, yes at {checked:.0%})" if checked is not None else ")"))
                reason = (f"the model chose {which}, and the evidence ({result.evidence:.2f}) is at least "
                          f"{choose.RESCUE_FLOOR if picked.pick == 1 else choose.PICK_FLOOR}, though under the abstain threshold")
                return (yield from self._taken_back(answer, hits, ctx, found, picked.sentence if picked.pick > 1 else None, reason))
            if choose.may_judge(result):  # each candidate judged alone: the best judged may take the abstention back
                yeses = yield from self._judge_each(query, shown[:choose.JUDGE_K], result, pool, ctx)
                n = choose.judged_pick(yeses)
                if n:
                    reason = (f"the model, shown each of the best sentences alone, judged sentence {n} to state the answer "
                              f"(yes at {yeses[n - 1] or 0.0:.0%}), and the evidence ({result.evidence:.2f}) is at least "
                              f"{choose.JUDGE_FLOOR}, though under the abstain threshold")
                    return (yield from self._taken_back(answer, hits, ctx, found, shown[n - 1] if n > 1 else None, reason))
            answer.retrieval.acceptance = Acceptance(accept.NOT_FOUND, 0, 1, "no passage answers the question well enough")
            return (yield from self._not_found(answer, ctx))
        if choose.JUDGE_ANSWERED:  # each candidate judged alone: the best judged leads instead of the listwise pick
            n = choose.judged_pick((yield from self._judge_each(query, shown[:choose.JUDGE_K], result, pool, ctx)))
            picked = choose.Choice(n, shown[n - 1]) if n else picked
        if picked.doubts and result.evidence < choose.NONE_FLOOR:
            reason = (f"the model found no sentence that answers (NONE: {picked.none_share or 1.0:.0%} of its choice), "
                      f"and the evidence ({result.evidence:.2f}) is under {choose.NONE_FLOOR}")
            answer.retrieval.acceptance = Acceptance(accept.NOT_FOUND, 0, 1, reason)
            return (yield from self._not_found(answer, ctx))
        if picked.sentence is None:
            reason = "the model found no sentence that answers" if picked.said_none else "the model's reply could not be read as a number"
            answer.retrieval.acceptance = Acceptance(accept.EXTRACTIVE, 0, 1, reason)
            answer.notes.append(f"{reason}; the answer quotes the documents as ranked")
            return (yield from self._extractive(answer, hits, ctx, found=found))
        answer.retrieval.acceptance = Acceptance(accept.MODEL, 1, 1, f"the model chose sentence {picked.pick} of {len(shown)}")
        published = yield from self._extractive(answer, hits, ctx, found=found,
                                                lead=picked.sentence if picked.pick > 1 else None)  # 1: its own lead
        published.mode = "pipeline" if picked.pick > 1 else published.mode
        return published

    def _requery(self, answer: Answer, hits: SearchResults, found: Found, ctx: RunContext) -> Generator[Event, None, tuple[SearchResults, Found]]:
        """After an abstention, a small model's words for the question (docqa.answer.requery: the question translated
        into the documents' other language, or the terms the documentation would use), searched, and the extractive
        answerer over what they find.  Its hits and answer, as an abstention that the chooser may take back, when it
        answers or has more evidence than the first search's; else the first search's `hits` and `found`."""
        asked, before = answer.retrieval.query, (answer.retrieval.evidence, answer.retrieval.evidence_features)
        documents = requery.documents_language(answer.language, [language_of(h.text[:400]) for h in hits])
        translated = requery.translates(answer.language, documents)
        with ctx.stage("generating", requery=True):
            yield Generating()
            reply = yield from ctx.call(self.model, "generating", requery.messages(asked, answer.language, documents),
                                        max_tokens=requery.MAX_TOKENS, temperature=0.0)
        query = requery.query(asked, reply.text, translated)
        entry: dict = {"stage": "requery", "translated": translated, "reply": reply.text[:300], "query": query}
        ctx.trace.append(entry)
        if query is None:
            return hits, found
        with ctx.stage("retrieving", query=query, requery=True) as searched:
            again = self.library.search(query, self.settings.answer.top_k, None)
            searched["hits"] = [(h.chunk_id, round(h.score, 4)) for h in again]
        if not again:
            return hits, found
        other = self._evidence(answer, again, ctx, query)
        entry.update(evidence=round(other[1].evidence, 4), abstained=other[1].abstained)
        if not requery.better(other[1], found[1]):
            answer.retrieval.evidence, answer.retrieval.evidence_features = before
            return hits, found
        entry["used"] = True
        answer.notes.append(f"searched again for “{query}” (the model's words for the question)")
        # published only if the model backs a sentence of it, as an abstention taken back (choose.rescues): words that
        # find another passage find one that the evidence model often accepts, answered or not (dev: 2 of 2 wrong)
        return again, (other[0], replace(other[1], abstained=True))

    def _taken_back(self, answer: Answer, hits: SearchResults, ctx: RunContext, found: Found, lead: Sentence | None,
                    reason: str) -> Events:
        """An abstention the model takes back: the extractive answer published after all, `lead` (a later candidate;
        None: the ranking's best) first, its confidence the evidence's (low)."""
        pool, result = found
        answer.retrieval.acceptance = Acceptance(accept.MODEL, 1, 1, reason)
        answer.notes.append(reason)
        taken = replace(result, chosen=list(result.ranked), abstained=False, supporting=[lead or result.ranked[0]])
        published = yield from self._extractive(answer, hits, ctx, found=(pool, taken), lead=lead)
        published.mode = "pipeline"
        return published

    def _judge_each(self, query: str, shown: list[Sentence], result: Extract, pool: SourceSet,
                    ctx: RunContext) -> Generator[Event, None, list[float | None]]:
        """Each candidate shown alone with the question (docqa.answer.choose.check_messages), one call each, in the
        ranking's order: yes's share of each reply's first token (None: neither word), recorded in the trace."""
        yeses: list[float | None] = []
        with ctx.stage("generating", judge=True):
            yield Generating()
            for s in shown:
                reply = yield from ctx.call(self.model, "generating", choose.check_messages(query, s, pool),
                                            max_tokens=1, temperature=0.0, logprobs=True, top_logprobs=choose.TOP)
                yeses.append(choose.yes(reply.text, reply.top))
        ctx.trace.append({"stage": "judging", "evidence": result.evidence,
                          "yes": [None if y is None else round(y, 4) for y in yeses],
                          "judged": [round(x, 4) for x in choose.judged(yeses)], "candidates": _traced(shown, pool)})
        return yeses

    def _agree(self, query: str, shown: list[Sentence], picked: choose.Choice, pool: SourceSet,
               ctx: RunContext) -> Generator[Event, None, list[int]]:
        """The listwise question asked again with the candidates in each of choose.ORDERS, one call each, until a pick
        differs from the first: the picks in the ranking's numbering (the first one's first), recorded in the trace.
        The instructions are the same each time (a server's prompt cache keeps them); the sentences are read again."""
        picks, asked = [picked.pick], []
        with ctx.stage("generating", agree=True):
            yield Generating()
            for kind in choose.ORDERS:
                places = choose.order(kind, len(shown))
                reply = yield from ctx.call(self.model, "generating", choose.messages(query, choose.reordered(shown, places), pool),
                                            max_tokens=choose.MAX_TOKENS, temperature=0.0, logprobs=True, top_logprobs=choose.TOP)
                again = choose.mapped(choose.choice(reply.text, choose.reordered(shown, places), reply.top), places)
                picks.append(again.pick)
                asked.append({"order": kind, "pick": again.pick, "reply": reply.text[:40],
                              "shares": {str(k): round(v, 4) for k, v in again.shares.items()}})
                if again.pick != picked.pick and not choose.AGREE_EVERY:
                    break
        ctx.trace.append({"stage": "agreeing", "picks": picks, "agreed": choose.agreed(picks), "orders": asked})
        return picks

    def _check_pick(self, query: str, pick: Sentence, pool: SourceSet, ctx: RunContext) -> Generator[Event, None, float | None]:
        """The chooser's pick shown alone with the question (docqa.answer.choose.check_messages): yes's share of the
        reply's first token (None: neither word), recorded in the trace."""
        with ctx.stage("generating", check_pick=True):
            yield Generating()
            reply = yield from ctx.call(self.model, "generating", choose.check_messages(query, pick, pool),
                                        max_tokens=1, temperature=0.0, logprobs=True, top_logprobs=choose.TOP)
        verdict = choose.yes(reply.text, reply.top)
        ctx.trace.append({"stage": "checking_pick", "yes": None if verdict is None else round(verdict, 4), "reply": reply.text[:20]})
        return verdict

    def _led(self, answer: Answer, hits: SearchResults, found: Found, words: short.Found, n: int) -> Events:
        """Publish the answer led by the model's words (docqa.answer.short.compose)."""
        pool, result = found
        quoted = [citation_for(x.n, _hit(pool, x), x.start, x.end, answer.language, pool.paths)
                  for x in _quoted_in_order(result, self.settings.answer.extractive_sentences)]
        text, claims = short.compose(words, n, quoted, answer.language, pool.paths)
        text = number_by_first_use(text, claims)
        note = accept.quotation_note(answer.language, " ".join(c.text for c in claims[1:]))
        yield from _show(answer, f"{text}\n{note}" if note else text)
        answer.claims = claims
        cited: dict[tuple, Citation] = {}
        for c in (c for claim in claims for c in claim.citations):
            cited.setdefault((c.document_id, c.char_start, c.char_end), c)
        answer.citations = list(cited.values())
        answer.key_points = [c.text for c in claims][:5]
        answer.verification = Verification(VERIFIED, len(claims), [], 0, "deterministic")
        self._rate(answer, hits, result.evidence)
        yield Citations(citations=tuple(answer.citations))
        return answer

    def _second_look(self, answer: Answer, hits: SearchResults) -> bool:
        """Ask the model over relevant passages the extractive answerer could not quote (a table row, a
        record, an answer spread over lines): its answer is then published only if every claim is
        grounded (docqa.answer.accept)."""
        return (self.settings.answer.second_look and not hits.low_relevance
                and not accept.crossing(answer.language, hits))

    def attempt(self, answer: Answer, hits: SearchResults, ctx: RunContext, *, why: str, strict: str | None = None,
                model: ChatModel | None = None) -> Generator[Event, None, Draft]:
        """One more answer over `hits` (escalation): written once — with the stricter prompt when
        `strict` names the problem, or by another `model` — then cited and checked."""
        language, query = answer.language, answer.retrieval.query
        sources = self._sources(answer, hits, language, ctx)
        messages = (prompts.strict_messages(query, sources, language, strict) if strict
                    else prompts.answer_messages(query, sources, language))
        with ctx.stage("generating", retry=why):
            yield Generating(retry=why)
            reply = yield from _drafted(ctx, ctx.call(model or self.model, "generating", messages))
        draft = yield from self._cite(reply.text, sources, language, ctx)
        if not draft.not_found:
            yield from self._check(answer, draft, sources, messages, ctx)
        return draft

    def _in_language(self, answer: Answer, messages: list, reply: ChatResult,
                     ctx: RunContext) -> Generator[Event, None, ChatResult]:
        """The model answered in another language than the question's: asked once more, strictly."""
        with ctx.stage("generating", retry="language") as entry:
            yield Generating(retry="language")
            again = prompts.language_messages(messages, reply.text, answer.language)
            retried = yield from _drafted(ctx, ctx.call(self.model, "generating", again))
            entry["first"] = reply.text[:2000]
        return retried if retried.text.strip() else reply

    def _cite(self, text: str, sources: SourceSet, language: str, ctx: RunContext) -> Generator[Event, None, Draft]:
        with ctx.stage("citing") as entry:
            yield Status(phase="citing")
            if sentinel.said_not_found(text):
                return Draft(text, Cited([], [], []), not_found=True)
            body = sentinel.clean(text)  # a NOT_FOUND (or VERIFIED) written beside the answer is no part of it
            cited = cite(body, sources, language, self.settings.answer.support_threshold)
            crossed = accept.support_across_languages(cited, sources, self.library.embed,
                                                      self.settings.answer.cross_lingual_support, language)
            entry.update(claims=len(cited.claims), invented_markers=cited.invented, cross_lingual=crossed,
                         unsupported=[c.text for c in cited.unsupported])
            # "the documents do not say …" in the model's own words is NOT_FOUND too: nothing to check,
            # and the standard answer (the question's language, what was searched, answerable false)
            nothing_but_absence = bool(cited.claims) and all(is_not_found_statement(c.text) for c in cited.claims)
            return Draft(body, cited, not_found=nothing_but_absence)

    def _check(self, answer: Answer, draft: Draft, sources: SourceSet, base: list,
               ctx: RunContext) -> Generator[Event, None, list[str]]:
        """Problems found (empty: verified); a rejected draft is said to be (`draft_rejected`)."""
        problems = yield from self._verdict(answer, draft, sources, base, ctx)
        if problems:
            ctx.trace.append({"stage": "draft_rejected", "n": ctx.drafts, "reasons": problems[:12]})
            yield DraftRejected(n=ctx.drafts, reasons=tuple(problems[:12]))
        return problems

    def _verdict(self, answer: Answer, draft: Draft, sources: SourceSet, base: list,
                 ctx: RunContext) -> Generator[Event, None, list[str]]:
        """Deterministic checks first; the model is asked only when they pass."""
        with ctx.stage("checking") as entry:
            yield Status(phase="checking")
            draft.rejections = check_facts(draft.cited, sources, answer.retrieval.query)
            if self.settings.answer.guard:  # text that tells the model what to answer is no evidence
                draft.rejections += guard.rejections(draft.cited, sources)
            if draft.cited.invented:
                draft.rejections.append(Rejection("", [f"cited source(s) {draft.cited.invented} do not exist"], "deterministic"))
            entry["deterministic"] = [r.to_dict() for r in draft.rejections]
            if draft.rejections or not self.settings.answer.llm_check or self.model.small:
                return _problems(draft.rejections)  # a small model's verdict on itself costs a call and adds little
            try:
                reply = yield from ctx.call(self.model, "checking", prompts.check_messages(base, strip_unverified(draft.text)),
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
    def review(self, answer: Answer, text: str, sources: SourceSet, conversation: list, ctx: RunContext,
               check: bool = True) -> Generator[Event, None, tuple[Draft, list[str]]]:
        """Cite and check an answer written elsewhere (the agent's): its draft (shown as a draft), and
        the problems found (empty: verified)."""
        yield from _draft(ctx, text)
        draft = yield from self._cite(text, sources, answer.language, ctx)
        problems: list[str] = []
        if check and not draft.not_found and self.model is not None:
            problems = yield from self._check(answer, draft, sources, conversation, ctx)
        return draft, problems

    def publish_best(self, answer: Answer, drafts: list[Draft], results: SearchResults, ctx: RunContext,
                     checked: bool, found: Found | None = None) -> Events:
        """Publish the draft with the fewest rejected claims (the later one on a tie), if the
        acceptance rule accepts it (`found`: the extractive evidence over `results`, if known)."""
        return (yield from self._publish(answer, _best(drafts), results, ctx, len(drafts) - 1, checked, found))

    def extract_from(self, answer: Answer, results: SearchResults, ctx: RunContext) -> Events:
        """The extractive answer over given hits (the agent's evidence when its budget is gone)."""
        return (yield from self._extractive(answer, results, ctx))

    def answer_from(self, answer: Answer, results: SearchResults, ctx: RunContext, check: bool = True) -> Events:
        """The pipeline's answer (generate, cite, check, accept) over given hits: the agent's evidence
        when it ran out of budget or lost its way."""
        return (yield from self._generate(answer, results, ctx, check))

    # -- results ----------------------------------------------------------------------------
    def _rate(self, answer: Answer, hits: SearchResults, evidence: float | None = None) -> None:
        """The answer's confidence and the reasons that lowered it (docqa.answer.confidence)."""
        answer.probability = None if evidence is None else round(evidence, 4)
        answer.confidence, answer.confidence_reasons = confidence(
            answer.verification.status, answerable=answer.answerable, top_score=hits[0].score if hits else 0.0,
            relevance_threshold=hits.threshold, evidence=evidence, abstain_threshold=self.settings.answer.abstain_threshold,
            language=answer.language)

    def _publish(self, answer: Answer, draft: Draft, hits: SearchResults, ctx: RunContext, rounds: int,
                 checked: bool, found: Found | None) -> Events:
        decision, found = yield from self._accept(answer, draft, hits, ctx, checked, found)
        if decision.outcome == accept.NOT_FOUND:
            return (yield from self._not_found(answer, ctx, streamed=True))
        if decision.outcome == accept.EXTRACTIVE:
            return (yield from self._extractive(answer, hits, ctx, streamed=True, found=found))
        if draft.not_found:
            return (yield from self._not_found(answer, ctx, streamed=True))
        claims = draft.cited.claims
        if self.settings.answer.accept_share > 0:  # an accepted answer goes without its rejected claims
            claims = [c for c in claims if c.supported]
        supported = [c for c in claims if c.supported]
        if (hits.low_relevance and not supported) or not claims:  # nothing stated, or nothing relevant
            return (yield from self._not_found(answer, ctx, streamed=True))
        if draft.cited.dropped:
            ctx.trace.append({"stage": "publishing", "dropped_sentences": draft.cited.dropped})
        text = number_by_first_use(draft.text, claims)
        text = _mark_unverified(text, claims, answer.language) if checked else text
        yield from _replace(answer, text)
        answer.claims = claims
        answer.citations = draft.cited.citations
        answer.verification = _verification(draft, claims, rounds, checked, self.settings.answer.llm_check)
        answer.key_points = [strip_markers(c.text).strip() for c in supported][:5]
        self._rate(answer, hits, found[1].evidence if found else None)  # its level never above the probability's band
        yield Citations(citations=tuple(answer.citations))
        return answer

    def _accept(self, answer: Answer, draft: Draft, hits: SearchResults, ctx: RunContext, checked: bool,
                found: Found | None) -> Generator[Event, None, tuple[Acceptance, Found | None]]:
        """The acceptance rule (docqa.answer.accept) over the same passages' extractive evidence; the
        model's attempt (and what was published before the rule) kept in the trace."""
        if found is None and self.settings.answer.accept_share > 0 and hits:
            found = self._evidence(answer, hits, ctx)
        decision = accept.judge(answer, draft, hits, found[1].abstained if found else None,
                                self.settings.answer.accept_share, _evidence_spans(found), self._question(answer),
                                second_look=bool(answer.retrieval.second_look), task=self.task())
        mark = (lambda text, claims: _mark_unverified(text, claims, answer.language)) if checked else None
        ctx.trace.append(accept.record(decision, draft, hits.low_relevance, mark))
        yield Accepting(decision=decision)
        return decision, found

    def _question(self, answer: Answer) -> accept.Question:
        """The question's words and their IDF, for grounding claims (docqa.answer.grounding)."""
        query = answer.retrieval.query
        terms = query_terms(query)
        return accept.Question(query, terms, term_weights(self.library.term_counts, terms))

    def _named(self, sources: SourceSet) -> SourceSet:
        """`sources`, knowing the knowledge base's other files of the same names (labels tell them apart)."""
        if self.library.namesakes is not None:
            sources.namesakes = self.library.namesakes([x.hit.path for x in sources.sources])
        return sources

    def _evidence(self, answer: Answer, hits: SearchResults, ctx: RunContext, query: str | None = None) -> Found:
        """The extractive answerer over `hits`: its sources and result (evidence, chosen sentences); `query`: what it
        answers (the question searched, unless another query is given: the model's words, docqa.answer.requery)."""
        s, lib = self.settings.answer, self.library
        query = query or answer.retrieval.query
        # across languages the evidence model weighs the embedding instead of shared words (docqa.answer.answerability)
        crossing = accept.crossing(answer.language, hits) and not hits.low_relevance
        with ctx.stage("extracting", **({"query": query} if query != answer.retrieval.query else {})) as entry:
            pool = self._named(fit(guard.evidence(list(hits)) if s.guard else list(hits), 10**9))  # never quote a flagged source
            read_above(pool, query, lib)
            read_beside(pool, lib)
            terms = query_terms(query)
            weights, chunks = term_weights_and_total(lib.term_counts, terms)
            # the answerer's rules judge the sentences the answer quotes with no model, with a chooser too: judged over
            # every pick the model is shown, the quantity rule let the chooser answer 5 dev number near misses that
            # the extractive answer abstains on (RESULTS.md, 2026-12-06, "the rules judge what the answer quotes")
            result = extract(query, pool, weights, lib.embed,
                             max(s.extractive_sentences, accept.EVIDENCE_SENTENCES), s.abstain_threshold, chunks,
                             s.extractive_sentences)
            entry.update(evidence=round(result.evidence, 4), abstained=result.abstained, cross_lingual=crossing)
        answer.retrieval.evidence = round(result.evidence, 4)
        answer.retrieval.evidence_features = {k: round(v, 4) for k, v in result.features.items()}  # for calibration fits
        return pool, result

    def _not_found(self, answer: Answer, ctx: RunContext, streamed: bool = False) -> Events:
        docs = indexed(self.library.documents(answer.retrieval.collection))
        text = not_found_answer(answer.language, answer.retrieval.query, answer.retrieval.collection, docs,
                                [h["path"] for h in answer.retrieval.hits or []])
        yield from _replace(answer, text) if streamed else _show(answer, text)
        answer.answerable = False
        answer.confidence, answer.confidence_reasons = None, []  # nothing found: nothing to be confident about
        answer.verification = Verification(UNVERIFIED, 0, [], 0, "none")
        yield Citations()
        return answer

    def _extractive(self, answer: Answer, hits: SearchResults, ctx: RunContext, streamed: bool = False,
                    found: Found | None = None, lead: Sentence | None = None) -> Events:
        answer.mode = "extractive"
        yield Status(phase="extracting")
        sources, result = found or self._evidence(answer, hits, ctx)
        by_parts, led = self._by_parts(answer, ctx), False
        heads: frozenset[int] = frozenset()  # the places of release headings quoted among the answer's sentences
        subjects = self._subjects(answer, ctx)  # the things the question names, each with a file of its own (docqa.answer.hop)
        by_subjects = self._by_subjects(answer, subjects, [], 0) if result.abstained and by_parts is None else None
        if by_parts is not None:  # a question of several parts, each answered (docqa.answer.parts)
            answer.citations, evidence = by_parts
        elif by_subjects is not None:  # no sentence answered it all: each named thing answered in its own file
            answer.citations, evidence = by_subjects
        elif result.abstained:
            return (yield from self._not_found(answer, ctx, streamed=streamed))
        else:
            evidence = result.evidence
            shown = _enumerated(result, sources, _quoted_in_order(result, self.settings.answer.extractive_sentences))
            # the sentence between two quoted ones of a paragraph, quoted too (steps are whole already)
            shown = shown if result.shape is not None and result.shape.steps else holes(shown, result.candidates, sources)
            led = lead is not None and not (shown and shown[0] is lead)  # a sentence the chooser picked leads (answer/choose.py)
            shown = choose.leads(lead, shown) if led else shown
            headed, heads = _with_heads(shown, result.heads)  # each later pick's release heading before it (answer/release.py)
            answer.citations = [citation_for(x.n, _hit(sources, x), a, b, answer.language, sources.paths)
                                for x in headed for a, b in _pieces(x)]
            # a question across two files: the sentence of the file a pick names (docqa.answer.hop); not for steps
            followed = (self._second_hop(answer, sources, shown, result.chosen[: len(shown)], ctx)
                        if hop.HOP and not (result.shape and result.shape.steps) else None)
            answer.citations += [followed] if followed else []
        steps = by_parts is None and result.shape is not None and result.shape.steps
        if by_subjects is None and subjects and not steps:  # each named thing whose own file the answer does not cite yet
            missing = hop.uncited([x for x, _, _ in subjects], [c.path for c in answer.citations])
            added = self._by_subjects(answer, [x for x in subjects if x[0] in missing], answer.citations, evidence)
            answer.citations, evidence = added or (answer.citations, evidence)
        answer.claims = [Claim(rows.shown_lines(c.quote), 0, 0, sources=[c.n], citations=[c], supported=True, support=1.0) for c in answer.citations]
        # a release heading quoted before the answer's sentences (answer/release.py) stands on a line of its own
        heading = by_parts is None and not led and result.shape is not None and result.heading is not None \
            and result.shape.sentences[0] is result.heading
        quoted = _quoted(answer.claims, heading_first=heading, headings=heads)
        text = number_by_first_use(quoted, answer.claims)
        note = accept.quotation_note(answer.language, quoted)  # a quotation in the other language says so
        text = f"{text}\n{note}" if note else text
        named = result.release if by_parts is None else None  # the release a release question's answer is from
        text = f"{text}\n{named}" if named else text
        yield from _replace(answer, text) if streamed else _show(answer, text)
        answer.key_points = [c.text for c in answer.claims]
        answer.verification = Verification(VERIFIED, len(answer.claims), [], 0, "extractive")
        self._rate(answer, hits, evidence)
        yield Citations(citations=tuple(answer.citations))
        return answer

    def _second_hop(self, answer: Answer, sources: SourceSet, quoted: list, picks: list, ctx: RunContext) -> Citation | None:
        """A sentence of another file that the quoted ones lead to (docqa.answer.hop): one more search, in the run's
        scope, for the version or path a pick names and the question's terms no quoted sentence holds; the best
        sentence there, in the entity's own file, that says something new, when the evidence model accepts the hop.
        None: no link, or no answer at the other end."""
        s, lib = self.settings.answer, self.library
        asked = answer.retrieval.query
        link = hop.bridge(asked, [x.text for x in picks], term_weights(lib.term_counts, query_terms(asked)))
        if link is None:
            return None
        with ctx.stage("second hop", query=link.query, entity=link.entity) as entry:
            # scoped: the caller's collections only, the files whose name holds the entity's
            found = lib.search(link.query, s.top_k * hop.HOP_DEPTH, None, hop.named_glob(link.entity))
            hits = hop.own(list(found), link.entity)  # the entity's own file (the first hop may have quoted it too)
            pool = self._named(fit(guard.evidence(hits) if s.guard else hits, 10**9))
            weights, chunks = term_weights_and_total(lib.term_counts, query_terms(link.query))
            result = extract(link.query, pool, weights, lib.embed, 1, s.abstain_threshold, chunks)
            best = None if result.abstained else hop.pick(sorted(result.candidates, key=lambda x: -x.score)[: hop.HOP_PICKS],
                                                          result.candidates, [x.text for x in quoted], link.asks)
            entry.update(evidence=round(result.evidence, 4), followed=best is not None)
        if best is None:
            return None
        hit = pool.get(best.n).hit  # type: ignore[union-attr]
        # its own number after the first hop's sources, or the number of the source that holds the same passage
        n = next((x.n for x in sources.sources if x.hit.chunk_id == hit.chunk_id), len(sources) + 1)
        return citation_for(n, hit, best.start, best.end, answer.language, sources.paths + pool.paths)

    def _subjects(self, answer: Answer, ctx: RunContext) -> list[tuple[hop.Subject, SourceSet, Extract]]:
        """The things the question names that have a file of their own each (docqa.answer.hop.subjects), each with
        the extractive answer of its part of the question (the part that names it; the question when it asks one
        thing) over its own file's passages alone; [] when it names fewer than two."""
        asked = answer.retrieval.query
        if not hop.SUBJECTS or len(hop.names(asked)) < 2:  # the documents are listed only for a question naming two
            return []
        found = hop.subjects(asked, [d.path for d in self.library.documents(answer.retrieval.collection)])
        if not found:
            return []
        s, lib = self.settings.answer, self.library
        parts = split(asked)
        named = []
        for subject in found:
            query = next((p.query if PART_QUERY else p.question for p in parts if subject.term.lower() in query_terms(p.question)), asked)
            with ctx.stage("subject", subject=subject.term, path=subject.path) as entry:
                hits = lib.search(query, s.top_k, None, hop.own_glob(subject.path))  # scoped: the caller's collections only
                pool = self._named(fit(guard.evidence(list(hits)) if s.guard else list(hits), 10**9))
                weights, chunks = term_weights_and_total(lib.term_counts, query_terms(query))
                result = extract(query, pool, weights, lib.embed, max(s.extractive_sentences, accept.EVIDENCE_SENTENCES),
                                 s.abstain_threshold, chunks, s.extractive_sentences)
                entry.update(evidence=round(result.evidence, 4), abstained=result.abstained)
            named.append((subject, pool, result))
        answer.retrieval.subjects = [{"subject": x.term, "path": x.path, "evidence": round(r.evidence, 4), "abstained": r.abstained}
                                     for x, _, r in named]
        return named

    def _by_subjects(self, answer: Answer, named: list[tuple[hop.Subject, SourceSet, Extract]], cited: list[Citation],
                     evidence: float) -> tuple[list[Citation], float] | None:
        """`cited` and, for each named thing, its own file's best sentence that says something new (the first
        PART_SENTENCES of its answer when nothing is cited yet), numbered after them; the weakest evidence of the
        answers combined (`evidence`: that of `cited`).  None when a named thing's answer abstains or says nothing
        new: the answer stands or falls as a whole."""
        if not named or any(r.abstained for _, _, r in named):
            return None
        numbers = {c.chunk_id: c.n for c in cited}
        citations, quoted = list(cited), [c.quote for c in cited]
        paths = list(dict.fromkeys([c.path for c in cited] + [p for _, pool, _ in named for p in pool.paths]))
        for _, pool, result in named:
            picks = (_quoted_in_order(result, max(1, PART_SENTENCES)) if not cited else
                     [x for x in [hop.pick(result.chosen[: hop.HOP_PICKS], result.candidates, quoted)] if x is not None])
            if not picks:
                return None
            for x in picks:
                hit = pool.get(x.n).hit  # type: ignore[union-attr]
                n = numbers.setdefault(hit.chunk_id, max(numbers.values(), default=0) + 1)
                citations += [citation_for(n, _hit(pool, x), a, b, answer.language, paths) for a, b in _pieces(x)]
                quoted.append(x.text)
        return citations, min([r.evidence for _, _, r in named] + ([evidence] if cited else []))

    def _by_parts(self, answer: Answer, ctx: RunContext) -> tuple[list[Citation], float] | None:
        """A question of several parts (docqa.answer.parts) with every part answered: each part's sentences,
        numbered across the parts, and the weakest part's evidence; None when it asks one thing or a part
        finds no answer (the question as a whole decides then)."""
        parts = split(answer.retrieval.query)
        if not parts:
            return None
        found = [(part, *self._part_evidence(part, ctx)) for part in parts]
        # a later part referring back to what the earlier part's answer names, asked in the file it names (docqa.answer.hop)
        found = found[:1] + [self._part_hop(answer, later, earlier, ctx) for earlier, later in zip(found, found[1:])]
        answer.retrieval.parts = [{"question": p.question, "evidence": round(r.evidence, 4), "abstained": r.abstained}
                                     for p, _, r in found]
        if any(r.abstained for _, _, r in found):
            return None
        count = max(1, PART_SENTENCES)
        paths = list(dict.fromkeys(path for _, pool, _ in found for path in pool.paths))
        numbers: dict[str, int] = {}  # chunk id -> its number across the parts
        citations: list[Citation] = []
        seen: set[tuple[str, int]] = set()
        for _, pool, result in found:
            for x in _part_quotes(result, pool, count, seen):
                hit = pool.get(x.n).hit  # type: ignore[union-attr]
                seen.add((hit.chunk_id, x.start))
                n = numbers.setdefault(hit.chunk_id, len(numbers) + 1)
                citations += [citation_for(n, _hit(pool, x), a, b, answer.language, paths) for a, b in _pieces(x)]
        return citations, min(r.evidence for _, _, r in found)

    def _part_hop(self, answer: Answer, later: tuple[Part, SourceSet, Extract], earlier: tuple[Part, SourceSet, Extract],
                  ctx: RunContext) -> tuple[Part, SourceSet, Extract]:
        """`later` as it is, or answered in the file the earlier part's answer names (docqa.answer.hop.part_link): when
        the later part refers back ("that bug", 这种文件) and its own best pick only says again what the earlier part
        quotes, one scoped search for the entity with the part as asked, in the entity's own file; its best sentence
        that says something new is the part's answer, judged by the evidence model there.  No link, no new sentence or
        an abstention there: `later` as it is."""
        part, _, result = later
        first, count = earlier[2], max(1, PART_SENTENCES)  # the earlier part's quotes (its best picks when it abstained)
        shown = _quoted_in_order(first, count) if first.chosen else first.ranked[:count]
        quoted, files = [x.text for x in shown], [earlier[1].get(x.n).hit.path for x in shown]  # type: ignore[union-attr]
        link = hop.part_link(part.question, earlier[0].question, quoted, files) if hop.PART_HOP and quoted else None
        if link is None or not hop.said_again([x.text for x in result.chosen or result.ranked], quoted):
            return later
        s, lib = self.settings.answer, self.library
        with ctx.stage("part hop", part=part.question, query=link.query, entity=link.entity) as entry:
            found = lib.search(link.query, s.top_k * hop.HOP_DEPTH, None, hop.named_glob(link.entity))  # scoped: the caller's collections
            pool = self._named(fit(guard.evidence(hop.own(list(found), link.entity)) if s.guard else hop.own(list(found), link.entity), 10**9))
            weights, chunks = term_weights_and_total(lib.term_counts, query_terms(link.query))
            ranked = extract(link.query, pool, weights, lib.embed, 1, s.abstain_threshold, chunks)
            best = None if ranked.abstained else hop.pick(sorted(ranked.candidates, key=lambda x: -x.score)[: hop.HOP_PICKS],
                                                          ranked.candidates, quoted)
            entry.update(evidence=round(ranked.evidence, 4), followed=best is not None)
        if best is None:
            return later
        return part, pool, replace(ranked, chosen=[best], shape=None, heads=[], heading=None, release=None)

    def _part_evidence(self, part: Part, ctx: RunContext) -> Found:
        """The extractive answerer over the passages retrieved for one part of the question."""
        s, lib = self.settings.answer, self.library
        with ctx.stage("extracting", part=part.question) as entry:
            hits = self._search(part.query, s.top_k, spread.PART_DEPTH)
            pool = self._named(fit(guard.evidence(list(hits)) if s.guard else list(hits), 10**9))
            asked = part.query if PART_QUERY else part.question
            terms = query_terms(asked)
            weights, chunks = term_weights_and_total(lib.term_counts, terms)
            result = extract(asked, pool, weights, lib.embed,
                             max(s.extractive_sentences, accept.EVIDENCE_SENTENCES), s.abstain_threshold, chunks,
                             s.extractive_sentences)
            entry.update(evidence=round(result.evidence, 4), abstained=result.abstained)
        return pool, result


PART_SENTENCES = 2  # sentences quoted for each part of a question of several parts
# The first hits whose neighbouring chunks the extractive answerer reads too (read_beside; 0: none).  Off: on the trust
# dev split reading hit 1's neighbours put a right chunk in the pool for 3 more answerable questions (117 -> 120 of 130)
# but answered none more (73/130 and 53/63 either way, 0.28 -> 0.37 s a question), and the sentence ranking refitted
# with their candidates ranked worse held out (benchmarks/RESULTS.md, issue 28, `recall3`).
BESIDE_HITS = 0
ABOVE_LINES = 300  # for a release question, the lines above each source's chunk read for a release heading (0: none)
PART_QUERY = True


def _traced(shown: list[Sentence], pool: SourceSet) -> list[dict]:
    """Candidates as the trace records them: file, text, the ranking's score."""
    return [{"path": pool.get(s.n).hit.path, "text": s.text[:1000], "score": round(s.score, 4)}  # type: ignore[union-attr]
            for s in shown]


def _quoted_in_order(result: Extract, count: int) -> list:
    """The extractive answer's sentences: a procedure's steps whole and in order; else `count` of them in reading
    order per source, after the sentence a typed question ("which file ...?") leads with (answer/shape.py), or after
    a heading and the sentence it heads (a release heading, a table's header row)."""
    if result.shape is None:
        return sorted(result.chosen[:count], key=_reading)
    if result.shape.steps:
        return result.shape.sentences
    lead, *rest = result.shape.sentences
    if lead is result.heading and rest:  # a release heading or a table's header row: the line it heads comes next
        return [lead, rest[0], *sorted(rest[1 : count - 1], key=_reading)]
    return [lead, *sorted(rest[: count - 1], key=_reading)]


def _part_quotes(result: Extract, pool: SourceSet, count: int, seen: set[tuple[str, int]]) -> list:
    """The sentences a part of a question quotes: its `count` first (_quoted_in_order), each one an earlier part quoted
    already (`seen`: chunk id and start) replaced by the part's next pick not yet quoted.  A later part ranked with the
    part before it ("…, and which one does a second cluster get?") often puts the earlier part's answer first: what it
    adds comes after (its own answer, "that new one will run on 5433"), not nothing.  A next pick comes from a document
    the part's own first picks are in: another file's next-ranked sentence is not what the part adds, only noise."""
    def key(x: Sentence) -> tuple[str, int]:
        return pool.get(x.n).hit.chunk_id, x.start  # type: ignore[union-attr]

    def document(x: Sentence) -> str:
        return pool.get(x.n).hit.document_id  # type: ignore[union-attr]

    shown = _quoted_in_order(result, count)
    fresh = [x for x in shown if key(x) not in seen]
    if len(fresh) < len(shown) and not (result.shape is not None and result.shape.steps):
        keys, documents = {key(x) for x in shown}, {document(x) for x in shown}
        spare = [x for x in result.chosen if key(x) not in seen and key(x) not in keys and document(x) in documents]
        fresh = sorted(fresh + spare[: len(shown) - len(fresh)], key=_reading)
    return _enumerated(result, pool, fresh)


def _enumerated(result: Extract, pool: SourceSet, shown: list) -> list:
    """`shown`, for a question asking for several things, with each quoted list item's list whole (shape.enumerated);
    a procedure's steps are whole already."""
    if not result.several or (result.shape is not None and result.shape.steps):
        return shown
    return enumerated(result.candidates, shown, lambda n: pool.get(n).hit.text)  # type: ignore[union-attr]


def _with_heads(shown: list, heads: list[tuple[Sentence, Sentence]]) -> tuple[list, frozenset[int]]:
    """`shown` with each pick's release heading (Extract.heads) quoted just before it, and the places of those
    headings (each set apart on a line of its own)."""
    out: list = []
    places: set[int] = set()
    for x in shown:
        head = next((h for s, h in heads if s is x), None)
        if head is not None:
            places.add(len(out))
            out.append(head)
        out.append(x)
    return out, frozenset(places)


def read_above(pool: SourceSet, question: str, library: Library) -> None:
    """For a release question, each source's ABOVE_LINES lines above its chunk (Source.above): a long NEWS entry
    names its release in a heading that an earlier chunk holds (docqa.answer.release.label)."""
    if not ABOVE_LINES or not release.asks_release(question):
        return
    for x in pool.sources:
        if x.above is None and x.hit.line_start > 1:
            try:
                x.above = library.passage(x.hit.document_id, max(1, x.hit.line_start - ABOVE_LINES), x.hit.line_start - 1)
            except DocqaError:  # gone or out of the caller's sight since the search: no heading from it
                continue


def read_beside(pool: SourceSet, library: Library, hits: int | None = None) -> None:
    """The chunks just before and after each of the first `hits` (BESIDE_HITS) sources, appended to the pool as
    sources read beside them (Source.beside): a chunk boundary cuts a section, and the sentence that answers may
    stand in the chunk next to the one the search found (an option's description before the option a question's
    words matched, a list whose sentence on what it leaves out goes on past the chunk).  Each takes its hit's
    retrieval scores: its sentences are read as part of that passage.  A chunk the pool holds already is not
    read twice."""
    seen = {x.hit.chunk_id for x in pool.sources}
    for x in list(pool.sources[: BESIDE_HITS if hits is None else hits]):
        if x.beside:
            continue
        try:
            around = library.around(x.hit)
        except DocqaError:  # gone or out of the caller's sight since the search
            continue
        for h in around:
            if h.chunk_id in seen:
                continue
            seen.add(h.chunk_id)
            scored = replace(h, score=x.hit.score, bm25_rank=x.hit.bm25_rank, bm25_score=x.hit.bm25_score,
                             dense_rank=x.hit.dense_rank, dense_score=x.hit.dense_score)
            pool.sources.append(Source(len(pool.sources) + 1, scored, beside=x.n))


def _hit(pool: SourceSet, x: Sentence) -> Hit:
    """The passage a quoted sentence's span is in: its source's chunk, or the lines above it (a release heading)."""
    source = pool.get(x.n)
    return source.above if x.above and source.above is not None else source.hit  # type: ignore[union-attr]


def _pieces(x: Sentence) -> list[tuple[int, int]]:
    """The spans a quoted sentence is cited by: each sentence of an option's description read whole (Sentence.pieces),
    so that every claim of the answer carries its citation; else the sentence's own span."""
    return list(getattr(x, "pieces", ())) or [(x.start, x.end)]


def _reading(sentence) -> tuple[int, int]:
    return sentence.n, sentence.start  # reading order per source


def _quoted(claims: list[Claim], heading_first: bool = False, headings: frozenset[int] = frozenset()) -> str:
    """The quoted sentences one after another, each claim's span set (markers are added when numbered);
    `heading_first`: the first is a heading, set apart by a blank line (it has no full stop to end it); so are the
    headings at the places `headings`, before and after; and a quote that ends on a table row or a command line
    (docqa.answer.rows), from what follows it; a list item ("- x", "2. x") starts a line."""
    joiner = "" if any(has_cjk(c.text) for c in claims) else " "
    text = ""
    for i, claim in enumerate(claims):
        apart = ((heading_first and i == 1) or i in headings or i - 1 in headings
                 or (i > 0 and any(rows.ends_structured(c.quote) for c in claims[i - 1].citations)))
        item = bool(rows.LIST_ITEM.match(claim.text))  # a list item or step starts a line of its own
        text += ("\n\n" if apart else "\n" if item else joiner) if text else ""
        claim.start = len(text)
        text += claim.text
        claim.end = len(text)
    return text


def _show(answer: Answer, text: str) -> Generator[Event, None, None]:
    answer.answer = text
    yield Content(delta=text)


def _replace(answer: Answer, text: str) -> Generator[Event, None, None]:
    """Publish the final text; a front end that showed the streamed draft replaces it."""
    if text != answer.answer:
        yield Content(delta=text, replace=True)
    answer.answer = text


def _drafted(ctx: RunContext, call: Generator[Event, None, ChatResult]) -> Generator[Event, None, ChatResult]:
    """A model call's text as the next draft: streamed pieces as they come (a call that does not
    stream: its text whole at the end), sentinels held back and left out."""
    ctx.drafts += 1
    n, shown = ctx.drafts, sentinel.DraftFilter()
    try:
        while True:
            piece = next(call)
            if not isinstance(piece, DraftDelta):
                yield piece
            elif visible := shown.feed(piece.delta):
                yield DraftDelta(n=n, delta=visible)
    except StopIteration as stop:
        reply = stop.value
    finally:
        call.close()
    rest = ("" if shown.raw else shown.feed(reply.text)) + shown.flush()
    if rest:
        yield DraftDelta(n=n, delta=rest)
    return reply


def _draft(ctx: RunContext, text: str) -> Generator[Event, None, None]:
    """A text written elsewhere (the agent's answer) as the next draft."""
    ctx.drafts += 1
    shown = sentinel.DraftFilter()
    if visible := shown.feed(text) + shown.flush():
        yield DraftDelta(n=ctx.drafts, delta=visible)


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


def _verification(draft: Draft, claims: list[Claim], rounds: int, checked: bool, llm_check: bool) -> Verification:
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


def _best(drafts: list[Draft]) -> Draft:
    return min(drafts, key=lambda d: (len(d.rejections) + (d.llm_ok is False), -drafts.index(d)))


def _problems(rejections: list[Rejection]) -> list[str]:
    return [f"{r.claim!r}: {'; '.join(r.reasons)}" if r.claim else "; ".join(r.reasons) for r in rejections]


def _hit_summary(hit) -> dict:
    return {"chunk_id": hit.chunk_id, "path": hit.path, "section": hit.section, "page": hit.page,
            "line_start": hit.line_start, "line_end": hit.line_end, "score": round(hit.score, 4),
            "bm25_rank": hit.bm25_rank, "dense_rank": hit.dense_rank}


def _centres(found: Found | None) -> dict[str, tuple[int, int]]:
    """Each passage's best sentence by the extractive answerer (chunk id -> span), best first."""
    if found is None:
        return {}
    pool, result = found
    out: dict[str, tuple[int, int]] = {}
    for x in result.chosen or result.ranked:
        out.setdefault(pool.get(x.n).hit.chunk_id, (x.start, x.end))
    return out



def _term_centres(hits: list, terms: list[str]) -> dict[str, tuple[int, int]]:
    """Each hit's line (a sentence cut at its line breaks) that holds the question's rarest word
    among these hits' lines, then most of its words: "Nespresso" in one table row before "CHF" and
    "2023" in every table's header."""
    lines = {h.chunk_id: [(s + a, s + b) for s, e in (sentence_spans(h.text) or [])
                          for a, b in _lines(h.text[s:e])] for h in hits}
    texts = [h.text[a:b] for h in hits for a, b in lines[h.chunk_id]]
    distinct = list(dict.fromkeys(fold(t) for t in terms))
    held = {t: sum(coverage(x, [t]) > 0 for x in texts) for t in distinct}
    weights = {t: math.log(1 + len(texts) / n) for t, n in held.items() if n}
    out = {}
    for h in hits:
        scored = [(_rarest_held(h.text[a:b], weights), coverage(h.text[a:b], distinct, weights), (a, b))
                  for a, b in lines[h.chunk_id]]
        best = max(scored, default=(0.0, 0.0, None), key=lambda x: x[:2])
        if best[0] > 0:
            out[h.chunk_id] = best[2]
    return out


def _rarest_held(text: str, weights: dict[str, float]) -> float:
    return max((w for t, w in weights.items() if coverage(text, [t]) > 0), default=0.0)


def _lines(text: str) -> list[tuple[int, int]]:
    out, at = [], 0
    for line in text.split("\n"):
        if line.strip():
            out.append((at, at + len(line)))
        at += len(line) + 1
    return out


def _evidence_spans(found: Found | None) -> list[tuple[str, int, int, str]] | None:
    """The sentences the extractive answerer found answer the question: (document id, start, end, text)."""
    if found is None:
        return None
    pool, result = found
    return [(h.document_id, h.char_start + x.start, h.char_start + x.end, x.text)
            for x in result.supporting for h in [pool.get(x.n).hit]]


def indexed(records: list) -> int:
    """How many of `records` are documents: indexed ones (status ok), as 'docqa list' and the collections count
    them; files skipped or failed are not documents."""
    return sum(r.status == "ok" for r in records)
