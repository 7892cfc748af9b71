"""Acceptance: whether a model's answer is published, or the extractive answer over the same
evidence, or "not found".

A small model often writes answers its sources do not bear out.  The rule, applied to every model
answer (pipeline and agent) after it has been cited and checked:

1. **Evidence first.**  When retrieval finds nothing relevant (its relevance threshold), the answer
   is "not found" and the model is not asked.  When the extractive answerer, over relevant passages,
   finds no sentence that answers the question well enough (its evidence under
   `answer.abstain_threshold`: the answer may sit in a table row, a record, or be spread over lines
   it cannot quote), the model gets a **second look** (`answer.second_look`): its answer is published
   only if every claim is verified and grounded (docqa.answer.grounding), else "not found" — a model
   answer never overrides "not found" with a claim the passages do not bear out.  Across languages (a
   Chinese question whose best passage is English, or the reverse) shared words cannot measure
   evidence: there retrieval's relevance threshold decides.
2. **The model said NOT_FOUND** while the evidence is good: the extractive answer is published
   (across languages the model is believed — not found — unless the extractive answerer's best
   sentence names everything the question names, "Pruning Shears" in 「Pruning Shears 的价格是多少？」).
3. **Enough of it verified.**  The answer's claims are its statements (questions, tool chatter and
   lone citation markers are dropped by the citer, never published).  When the share of claims the
   checks verified is under `answer.accept_share` (default 0.5: at least half), or there is no claim,
   the extractive answer is published instead, and the model's attempt is kept in the run's trace.
   A claim counts as verified only when it is grounded (docqa.answer.grounding: its facts stand in
   the row, record or lines that name what the question asks about, next to the question's rarest
   word) and it rests on one of the sentences the extractive answerer found answer the question
   (its best `EVIDENCE_SENTENCES`), with its numbers, dates and names in them — or on the table row
   or record that names what the question asks about, which the extractive answerer cannot quote:
   a true but beside-the-point fact ("May 5, 2023", the date of a memo, for "when were the goods
   delivered?") or a neighbour's value ("12.5", the Garden Trowel's price, for the Pruning Shears')
   does not.
   An accepted answer is published without the claims the checks rejected.
4. **In the question's language.**  An answer in another language is asked for once more (see the
   pipeline); if it is still in the wrong language, the extractive answer is published.

`answer.accept_share: 0` turns the rule off (every model answer published as written, with its
unverified claims marked): the behaviour before it.

Cross-lingual claims (a Chinese sentence citing an English passage, or the reverse) share no words
with their source, so the word-overlap support cannot verify them; `support_across_languages`
verifies them by the embedder instead (cosine of the claim and its best source sentence at least
`answer.cross_lingual_support`), and their numbers must still occur in the source (the fact check).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from docqa.answer.checker import Rejection
from docqa.answer.citer import Cited, citation_for, is_not_found_statement, number_by_first_use, strip_markers
from docqa.answer.facts import missing_facts
from docqa.answer.extractive import _has_name
from docqa.answer.grounding import Question, ground
from docqa.answer import sentinel
from docqa.answer.sources import SourceSet
from docqa.text.language import has_cjk, language_of
from docqa.text.sentences import sentence_spans
from docqa.types import Acceptance, Answer, Claim, Hit

if TYPE_CHECKING:
    from docqa.answer.pipeline import Draft

MODEL, EXTRACTIVE, NOT_FOUND = "model", "extractive", "not_found"
EVIDENCE_SENTENCES = 6  # the extractive answerer's best sentences a verified claim must rest on
Embed = Callable[[list[str], str], np.ndarray]

_QUOTATION = {  # said in the question's language when the quoted sentences are in the other one
    "zh": "（以上引文为英文原文。）",
    "en": "(The sentences above are quoted in Chinese, as the documents write them.)",
}


def decide(claims: list[Claim], *, said_not_found: bool, weak_evidence: bool, text: str, language: str,
           min_share: float, crossing: bool = False, second_look: bool = False, named: bool = False) -> Acceptance:
    """The acceptance rule (see the module's docstring) for one cited and checked model answer;
    `second_look`: the model was asked over relevant passages the extractive answerer could not quote;
    `named`: the extractive answerer's best sentence names everything the question names (across
    languages, where shared words cannot measure evidence, that is what says it is on the subject)."""
    verified = sum(c.supported for c in claims)
    if min_share <= 0:
        return Acceptance(MODEL, verified, len(claims), "the acceptance rule is off (answer.accept_share 0)")
    if second_look:
        return _second_look(claims, verified, said_not_found=said_not_found, text=text, language=language)
    if weak_evidence:
        return Acceptance(NOT_FOUND, verified, len(claims), "no passage answers the question well enough")
    if said_not_found and crossing and not named:  # across languages the evidence is retrieval's: the model is believed
        return Acceptance(NOT_FOUND, 0, 0, "the model found no answer in the passages (in the other language)")
    if said_not_found:
        return Acceptance(EXTRACTIVE, 0, 0, "the model found no answer, but the passages hold one")
    if not claims:
        return Acceptance(EXTRACTIVE, 0, 0, "the model's answer states nothing")
    if wrong_language(text, language):
        return Acceptance(EXTRACTIVE, verified, len(claims), f"the model did not answer in {language}")
    share = verified / len(claims)
    if share < min_share or not verified:
        return Acceptance(EXTRACTIVE, verified, len(claims),
                        f"the checks verified {verified} of its {len(claims)} claims (under {min_share:.0%})")
    return Acceptance(MODEL, verified, len(claims), f"the checks verified {verified} of its {len(claims)} claims")


def _second_look(claims: list[Claim], verified: int, *, said_not_found: bool, text: str, language: str) -> Acceptance:
    """Over passages the extractive answerer could not quote: every claim grounded, or not found."""
    if said_not_found or not claims:
        return Acceptance(NOT_FOUND, 0, len(claims), "no passage answers the question well enough, and the model found none")
    if wrong_language(text, language):
        return Acceptance(NOT_FOUND, verified, len(claims), f"the model did not answer in {language}")
    if verified < len(claims):
        return Acceptance(NOT_FOUND, verified, len(claims), f"no sentence answers the question well enough, and the "
                        f"checks verified only {verified} of the model's {len(claims)} claims (a second look needs all)")
    return Acceptance(MODEL, verified, len(claims), f"a second look: the checks verified all {verified} of its claims")


def judge(answer: Answer, draft: Draft, hits: list[Hit], abstained: bool | None, min_share: float,
          evidence: list[tuple[str, int, int, str]] | None = None, question: Question | None = None,
          second_look: bool = False, task: bool = False) -> Acceptance:
    """The rule for a cited, checked draft of `answer`, given whether the extractive answerer over
    the same passages abstained (None: not asked), the sentences it found answer the question
    (document id, start, end), and the question's words for grounding (None: not checked);
    `second_look`: the model was asked although the extractive answerer abstained; `task`: the
    question is a task a skill matched (see `gated`).  The verdict is kept in `answer.retrieval` and
    said in its notes when the model's answer is not published."""
    rows: set[int] = set()
    if question is not None and min_share > 0 and not task:
        rows = unground(draft.cited.claims, question, hits)
        _reject(draft, [c for c in draft.cited.claims if c.problems and c.problems[-1].startswith(GROUNDING)])
    if evidence is not None and min_share > 0 and not second_look and not task:
        _reject(draft, off_evidence([c for c in draft.cited.claims if id(c) not in rows], evidence))
    decision = decide(draft.cited.claims, said_not_found=draft.not_found, weak_evidence=gated(abstained, task),
                      text=strip_markers(draft.text), language=answer.language, min_share=min_share,
                      crossing=crossing(answer.language, hits), second_look=second_look,
                      named=names_all(question, evidence))
    answer.retrieval.acceptance = decision
    if decision.outcome == EXTRACTIVE:
        answer.notes.append(f"the model's answer was not published ({decision.reason}); the answer quotes the "
                            "documents instead (the model's attempt is in the run's trace)")
    elif decision.outcome == NOT_FOUND and not draft.not_found and draft.cited.claims:
        answer.notes.append(f"the model's answer was not published: {decision.reason}")
    return decision


GROUNDING = "not grounded: "


def unground(claims: list[Claim], question: Question, hits: list[Hit]) -> set[int]:
    """Unverify the supported claims that are not grounded (docqa.answer.grounding), saying why;
    returns the ids of the claims grounded in the row or record that names what the question asks."""
    by_chunk = {h.chunk_id: h for h in hits}
    rows = set()
    for claim in claims:
        if not claim.supported or is_not_found_statement(claim.text):
            continue
        result = ground(claim, question, by_chunk)
        if result.problem is not None:
            claim.supported = False
            claim.problems.append(GROUNDING + result.problem)
        elif result.row:
            rows.add(id(claim))
    return rows


def names_all(question: Question | None, evidence: list[tuple[str, int, int, str]] | None) -> bool:
    """The question names something (a word with capitals or digits) and the best evidence sentence
    names all of it."""
    names = question.names if question is not None else []
    return bool(names and evidence) and all(_has_name(evidence[0][3], n) for n in names)


def _reject(draft: Draft, claims: list[Claim]) -> None:
    for claim in claims:
        draft.rejections.append(Rejection(claim.text, [claim.problems[-1]], "deterministic"))


def gated(abstained: bool | None, task: bool) -> bool:
    """Rule 1's evidence gate: the extractive answerer abstained (or was not asked) — except for a task
    a skill matched (compare, summarise, find every mention…): no single sentence answers those, so
    their claims are judged one by one (the checks and rule 3), not against the question's best sentences."""
    return abstained is not False and not task


def off_evidence(claims: list[Claim], evidence: list[tuple[str, int, int, str]]) -> list[Claim]:
    """Unverify the supported claims that rest on none of the `evidence` sentences (document id,
    start, end, text), or whose numbers, dates and names are not in them: true of the document
    ("May 5, 2023", the memo's date) but not what answers the question.  Returns them."""
    out = []
    said = "\n".join(text for *_, text in evidence)
    for claim in claims:
        if claim.supported and not is_not_found_statement(claim.text) and (missing_facts(claim.text, said) or not any(
                c.document_id == doc and c.char_start < end and start < c.char_end
                for c in claim.citations for doc, start, end, _ in evidence)):
            claim.supported = False
            claim.problems.append("it does not rest on the passages that answer the question")
            out.append(claim)
    return out


def record(decision: Acceptance, draft: Draft, low_relevance: bool,
           mark: Callable[[str, list[Claim]], str] | None) -> dict:
    """The trace entry: the verdict, the model's attempt, and what was published before the rule
    (every model answer, unverified claims marked by `mark`; `before` None: not found) with its
    citations, so that a benchmark can score both from one run."""
    entry = {"stage": "accepting", **decision.to_dict(), "attempt": draft.text[:4000],
             "dropped_sentences": draft.cited.dropped, "before": None,
             "claims": [c.to_dict() for c in draft.cited.claims]}
    claims = copy.deepcopy(draft.cited.claims)
    if draft.not_found or not claims or (low_relevance and not any(c.supported for c in claims)):
        return entry
    text = number_by_first_use(draft.text, claims)
    cited = [c for claim in claims for c in claim.citations]
    entry.update(before=mark(text, claims) if mark else text, attempt_paths=[c.path for c in cited],
                 attempt_quotes=[c.quote for c in cited])
    return entry


def crossing(language: str, hits: list[Hit]) -> bool:
    """The best passage is in the other language than the question (a Chinese question over English text)."""
    return bool(hits) and language_of(hits[0].text[:400]) != language


def in_other_language(reply: str, language: str) -> bool:
    """A model's reply that answers (not NOT_FOUND) in another language than `language`."""
    return not sentinel.said_not_found(reply) and wrong_language(strip_markers(sentinel.clean(reply)), language)


VALUE_WORDS = 3  # a reply of at most this many words and no Chinese is a value (a path, a number, an address), in no language


def wrong_language(text: str, language: str) -> bool:
    """The answer is not in `language` (names and numbers in another script do not count: `/var/log/unattended-upgrades/`
    or `10.0.2.2` answers a Chinese question; measured on the trust dev set, asking again for Chinese turned such right
    answers into NOT_FOUND, benchmarks/RESULTS.md 2026-12-06, issue 28 item 7)."""
    if not text.strip() or (language == "zh" and not has_cjk(text) and len(text.split()) <= VALUE_WORDS):
        return False
    return language_of(text) != language


def support_across_languages(cited: Cited, sources: SourceSet, embed: Embed | None, threshold: float,
                             language: str) -> int:
    """Verify, by the embedder, the unsupported claims written in another language than the
    sources they cite (or, citing none, than the best source).  Returns how many were verified."""
    if embed is None or threshold >= 1.0:
        return 0
    todo = [c for c in cited.claims if not c.supported and _other_script(c, sources)]
    done = 0
    for claim in todo:
        best = _best_sentence(claim, sources, embed)
        if best is None or best[0] < threshold:
            continue
        sim, n, start, end = best
        hit = sources.get(n).hit
        if missing_facts(claim.text, hit.text):
            continue
        claim.supported, claim.support, claim.sources = True, round(sim, 4), [n]
        claim.problems = [f"verified across languages by the embedder (similarity {sim:.2f})"]
        claim.citations = [citation_for(n, hit, start, end, language, sources.paths)]
        done += 1
    if done:
        _recollect(cited)
    return done


def quotation_note(language: str, quoted: str) -> str | None:
    """One line in the question's language saying the quotation is in the other language (None
    when the quotation is in the question's language)."""
    if not quoted.strip() or language_of(quoted) == language:
        return None
    return _QUOTATION.get(language)


def _other_script(claim: Claim, sources: SourceSet) -> bool:
    mine = has_cjk(claim.text)
    cited = [sources.get(n) for n in claim.sources] or list(sources.sources)
    return any(s is not None and has_cjk(s.text) != mine for s in cited)


def _best_sentence(claim: Claim, sources: SourceSet, embed: Embed) -> tuple[float, int, int, int] | None:
    """(cosine, source number, start, end) of the source sentence closest to the claim."""
    pool = [sources.get(n) for n in claim.sources if sources.get(n) is not None] or list(sources.sources)
    spans = [(s.n, a, b) for s in pool for a, b in (sentence_spans(s.hit.text) or [(0, len(s.hit.text))])
             if s.hit.text[a:b].strip()][:200]
    if not spans:
        return None
    vectors = embed([claim.text] + [sources.get(n).hit.text[a:b] for n, a, b in spans], "passage")
    vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
    sims = vectors[1:] @ vectors[0]
    i = int(np.argmax(sims))
    return float(sims[i]), *spans[i]


def _recollect(cited: Cited) -> None:
    """The citation list again, in order of first use, after claims gained citations."""
    seen, out = set(), []
    for claim in cited.claims:
        for c in claim.citations:
            key = (c.n, c.char_start, c.char_end)
            if key not in seen:
                seen.add(key)
                out.append(c)
    cited.citations[:] = out
