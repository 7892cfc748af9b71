"""Check one answer against one passage with the pipeline's own checker: the entry point for a
benchmark (benchmarks/halueval.py) or a caller that has an answer and the text it rests on.

The steps are the pipeline's (docqa.answer.pipeline): the citer reads the answer's [n] markers (an
answer without one cites the passage), a claim in the other language than the passage is supported
by the embedder (accept.support_across_languages), the deterministic checks run with the question
(checker.check_facts: facts, then entailment), then grounding (accept.unground), and, with a
model, the model's verdict on each claim against its passage (checker.claim_verdicts).  `verify_hit`
is the same against a retrieved chunk: docqa.answer.factcheck (`docqa verify`) checks each claim of
any text against its best passages through it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from docqa.answer import accept, guard, prompts
from docqa.answer.checker import Rejection, check_facts, parse_verdict
from docqa.answer.citer import MARKER, Cited, cite
from docqa.answer.grounding import Question
from docqa.answer.sources import Source, SourceSet
from docqa.llm.base import ChatModel
from docqa.text.language import language_of
from docqa.text.segment import query_terms
from docqa.types import Hit


@dataclass(slots=True)
class Checked:
    """An answer checked against a passage: verified (every claim passed every check) or not, and why."""

    verified: bool
    cited: Cited
    rejections: list[Rejection] = field(default_factory=list)  # by "deterministic" checks or the model ("llm")

    @property
    def reasons(self) -> list[str]:
        return [r for x in self.rejections for r in x.reasons]


_YES_NO = re.compile(r"^\s*(?:yes|no|是|否|对|不是|不对)[\s.。!！]*$", re.IGNORECASE)


def is_yes_no(answer: str) -> bool:
    """A bare yes or no (是, 否, 对, 不是, ...)."""
    return _YES_NO.match(answer) is not None


def claim_text(question: str, answer: str) -> str:
    """What the deterministic checks read: the answer, or for a bare yes or no the question's own
    statement (a yes or a no adds no fact of its own; the model's verdict sees the answer)."""
    if question and _YES_NO.match(answer):
        return question.strip().rstrip("?？").strip() + "."
    return answer.strip()


def passage_hit(text: str, path: str = "passage", title: str = "") -> Hit:
    """A passage as the one hit an answer cites."""
    return Hit("c1", "d1", path, "default", title, "", None, None, 1, text.count("\n") + 1, 0, len(text), 1.0, text)


def verify(question: str, answer: str, passage: str, *, title: str = "", model: ChatModel | None = None,
           embed: accept.Embed | None = None, support_threshold: float = 0.5, cross_lingual_support: float = 0.6,
           entail: bool = True, ground: bool = False) -> Checked:
    """Check `answer` (to `question`) against `passage` as the pipeline checks a draft against its
    sources; `entail` False: the checks as they were before entailment (a benchmark's baseline)."""
    return verify_hit(question, answer, passage_hit(passage, title=title), model=model, embed=embed,
                      support_threshold=support_threshold, cross_lingual_support=cross_lingual_support,
                      entail=entail, ground=ground)


def verify_hit(question: str, answer: str, hit: Hit, *, model: ChatModel | None = None,
               embed: accept.Embed | None = None, support_threshold: float = 0.5, cross_lingual_support: float = 0.6,
               entail: bool = True, ground: bool = False, guarded: bool = True) -> Checked:
    """`verify` against one retrieved chunk (its citations point into the chunk's document):
    docqa.answer.factcheck checks each claim of a text against its best passages through here."""
    sources = SourceSet([Source(1, hit)])
    language = language_of(question or answer)
    text = claim_text(question, answer)
    if not MARKER.search(text):
        text = f"{text} [1]"
    cited = cite(text, sources, language, support_threshold)
    accept.support_across_languages(cited, sources, embed, cross_lingual_support, language)
    rejections = check_facts(cited, sources, question if entail else None)
    if guarded:  # text that tells a model what to answer is no evidence (answer.guard, as in the pipeline)
        rejections += guard.rejections(cited, sources)
    if ground and question:
        rows = accept.unground(cited.claims, Question(question, query_terms(question), {}), [sources.get(1).hit])
        del rows
        rejections += [Rejection(c.text, [c.problems[-1]], "deterministic") for c in cited.claims
                       if c.problems and c.problems[-1].startswith(accept.GROUNDING)]
    ok = bool(cited.claims) and not rejections and all(c.supported for c in cited.claims)
    if model is not None and ok:
        said = answer.strip() if _YES_NO.match(answer) else None  # the model judges the yes or no itself
        rejections += claim_verdicts(model, question, cited, sources, said)
        ok = not rejections
    return Checked(ok, cited, rejections)


def claim_verdicts(model: ChatModel, question: str, cited: Cited, sources: SourceSet,
                   said: str | None = None) -> list[Rejection]:
    """The model's verdict on each supported claim against the passages it cites (prompts.entail_messages:
    one short prompt a claim, a one-word answer; `said`: what to show it instead of the claim's text): the
    claims it rejects, unverified."""
    out = []
    for claim in cited.claims:
        if not claim.supported or not claim.sources:
            continue
        passage = "\n\n".join(sources.get(n).hit.text for n in claim.sources)
        reply = model.complete(prompts.entail_messages(question, passage, said or claim.text), max_tokens=8, temperature=0.0)
        verdict = parse_verdict(reply.text)
        if verdict.ok is False:
            reason = "the fact-checker found the passage does not state it"
            claim.supported = False
            claim.problems.append(reason)
            out.append(Rejection(claim.text, [reason], "llm"))
    return out
