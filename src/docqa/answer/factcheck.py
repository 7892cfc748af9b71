"""Fact-check any text against the knowledge base: `docqa verify`, POST /api/v1/verify, MCP verify_claims.

The pipeline's own checker, exposed (issue 31, item 4): a draft e-mail, a ticket reply or another
tool's answer is checked as the pipeline checks its model's draft.

1. **Claims**: the text's statements, split as the citer splits an answer (docqa.answer.citer:
   sentences, Chinese and English; questions and fragments are no claims; [n] markers ignored).
2. **Evidence**: for each claim, the retriever's best `answer.top_k` passages for it (after the
   question, when one is given), in the caller's scope: the `Library` is the caller's
   (docqa.run.library), so a passage of a collection the caller may not see is never evidence.  A
   passage that does not name what the claim names (`claim_names`: "Pablo Trapero", "The
   Messenger") is about something else and is skipped: the checks read the question's words as
   known, which holds for the passages of the answer's own question, not for any passage found.
3. **Verdict**: each passage in rank order through docqa.answer.verify.verify_hit — the citer's
   support (its exact span), the embedder for a claim in the other language, the fact and
   entailment checks with the question, the injection guard.  The first passage that passes makes
   the claim **supported**, with the span; with a model, the model's one-claim verdict on that
   passage too (prompts.entail_messages), and a claim it rejects is **not found**.  When none
   passes, the claim is **contradicted** if a passage that holds its words (the citer's support at
   least `answer.support_threshold`) says otherwise — a qualifier's other side, a value paired with
   another subject or unit, a negation, a comparison's years (entail.CONTRADICTIONS), or another
   value where the claim's value should stand (entail.swapped_value) — with the span that says
   otherwise (the sentence holding the other value, when the check names one); otherwise it is
   **not found** in the documents.
4. **Overall**: contradicted when a claim is, supported when every claim is, otherwise not found.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from docqa.answer.citer import citation_for, cite, is_not_found_statement
from docqa.answer.entail import contradicts, swapped_value
from docqa.answer.library import Library
from docqa.answer.sources import SourceSet
from docqa.answer.support import content_tokens
from docqa.answer.verify import Checked, claim_text, is_yes_no, verify_hit
from docqa.errors import InputError, LLMError
from docqa.llm.base import ChatModel
from docqa.settings import AnswerSettings
from docqa.text.language import language_of
from docqa.text.sentences import sentence_spans
from docqa.types import Citation, Hit

SUPPORTED, CONTRADICTED, NOT_FOUND = "supported", "contradicted", "not_found"
DETERMINISTIC, WITH_MODEL = "deterministic", "deterministic+llm"


@dataclass(slots=True)
class ClaimCheck:
    """One claim's verdict, the span it rests on (supported) or that says otherwise (contradicted), and why."""

    text: str
    verdict: str
    citation: Citation | None = None
    reasons: list[str] = field(default_factory=list)
    checker: str = DETERMINISTIC
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"text": self.text, "verdict": self.verdict, "citation": self.citation.to_dict() if self.citation else None,
                "reasons": self.reasons, "checker": self.checker}


@dataclass(slots=True)
class FactCheck:
    """A text checked claim by claim against the knowledge base."""

    verdict: str
    claims: list[ClaimCheck]
    question: str | None = None
    collection: str | None = None
    checker: str = DETERMINISTIC
    notes: list[str] = field(default_factory=list)

    @property
    def supported(self) -> bool:
        return self.verdict == SUPPORTED

    def to_dict(self) -> dict:
        return {"verdict": self.verdict, "claims": [c.to_dict() for c in self.claims], "question": self.question,
                "collection": self.collection, "checker": self.checker, "notes": self.notes}


def claims_of(text: str) -> list[str]:
    """The statements of `text` as the citer reads an answer's (its sentences, without [n] markers)."""
    return [c.text for c in cite(text, SourceSet([]), language_of(text)).claims]


def fact_check(text: str, library: Library, settings: AnswerSettings, *, question: str | None = None,
               model: ChatModel | None = None) -> FactCheck:
    """Check every claim of `text` against the best passages `library` finds for it (see the module
    docstring); `model`: also ask it about each claim the deterministic checks support."""
    claims = [text.strip()] if question and is_yes_no(text) else claims_of(text)  # "no" states what the question asks
    if not claims and question and text.strip():  # a short answer ("F.E.A.R.") is read against its question
        claims = [" ".join(text.split())]
    if not claims:
        raise InputError("nothing to check: the text states nothing (questions, headings and fragments are no claims); "
                         "give the statements to check, e.g. docqa verify 'Backups are kept for 30 days.'")
    notes: list[str] = []
    checks = []
    for claim in claims:
        checks.append(check_claim(claim, library, settings, question=question or "", model=model, notes=notes))
        if notes and model is not None:  # the model failed: the other claims get the deterministic checks only
            model = None
    checker = WITH_MODEL if any(c.checker == WITH_MODEL for c in checks) else DETERMINISTIC
    return FactCheck(overall([c.verdict for c in checks]), checks, question or None, library.collection, checker, notes)


def overall(verdicts: list[str]) -> str:
    """Contradicted when a claim is, supported when every claim is (and there is one), else not found."""
    if CONTRADICTED in verdicts:
        return CONTRADICTED
    return SUPPORTED if verdicts and all(v == SUPPORTED for v in verdicts) else NOT_FOUND


def check_claim(claim: str, library: Library, settings: AnswerSettings, *, question: str = "",
                model: ChatModel | None = None, notes: list[str] | None = None) -> ClaimCheck:
    """One claim's verdict over its best passages (the module docstring, steps 2 and 3)."""
    t0 = time.perf_counter()
    result = _verdict(claim, library, settings, question, model, notes if notes is not None else [])
    result.seconds = time.perf_counter() - t0
    return result


def _verdict(claim: str, library: Library, settings: AnswerSettings, question: str, model: ChatModel | None,
             notes: list[str]) -> ClaimCheck:
    if is_not_found_statement(claim):  # "the documents do not say X" is about the documents, not a fact in them
        return ClaimCheck(claim, NOT_FOUND, reasons=["it says what the documents do not say: nothing to check"])
    hits = library.search(f"{question}\n{claim}" if question else claim, settings.top_k, None)
    check = partial(verify_hit, embed=library.embed, support_threshold=settings.support_threshold,
                    cross_lingual_support=settings.cross_lingual_support, guarded=settings.guard)
    conflict: ClaimCheck | None = None
    closest: list[str] = []
    names = claim_names(claim_text(question, claim), question)
    for hit in hits:
        if unnamed := [n for n in names if not names_it(hit, n)]:  # a passage about something else is no evidence
            closest = closest or [f"no passage about {unnamed[0]} supports it"]
            continue
        checked = check(question, claim, hit)
        if checked.verified:
            return _supported(claim, question, hit, checked, model, check, notes)
        conflict = conflict or _conflict(claim, hit, checked, settings.support_threshold)
        closest = closest or checked.reasons
    if conflict is not None:
        return conflict
    reasons = closest[:3] if hits else ["the search found no passage about it"]
    return ClaimCheck(claim, NOT_FOUND, reasons=reasons)


_NAME = re.compile(r"[A-Z][\w'’.&-]*(?:\s+(?:(?:of|the|de|du|da|von|van|la|le|y)\s+)?[A-Z][\w'’.&-]*)*")


def claim_names(claim: str, question: str = "") -> list[str]:
    """What a claim is about by name: its capitalised words and runs of them ("Pablo Trapero", "The
    Messenger", "API"), not a sentence's first word capitalised only because it begins the sentence
    ("Backups"), unless the question names it too ("Xinzheng is in Korea." for "Are Wenling and
    Xinzheng both in China?")."""
    asked = {m.group() for m in _NAME.finditer(question) if m.start() > 0}
    out = []
    for m in _NAME.finditer(claim):
        words = m.group().split()
        first = m.start() == 0 or claim[:m.start()].rstrip().endswith((".", "!", "?", ":", ";"))
        if first and len(words) == 1 and not any(ch.isupper() for ch in words[0][1:]) and words[0] not in asked:
            continue
        if content_tokens(m.group()):
            out.append(m.group().rstrip("."))
    return list(dict.fromkeys(out))


def names_it(hit: Hit, name: str) -> bool:
    """The passage (with its title and section) names `name`: every word of it ("Ross Lynch" is not "David Lynch")."""
    return content_tokens(name) <= content_tokens(f"{hit.title}\n{hit.section}\n{hit.text}")


def _supported(claim: str, question: str, hit: Hit, checked: Checked, model: ChatModel | None,
               check: Callable[..., Checked], notes: list[str]) -> ClaimCheck:
    citation = checked.cited.citations[0] if checked.cited.citations else None
    if model is None:
        return ClaimCheck(claim, SUPPORTED, citation)
    try:
        judged = check(question, claim, hit, model=model)  # the same checks, then the model's verdict
    except LLMError as exc:
        notes.append(f"the model's fact-check failed ({exc}); only the deterministic checks ran")
        return ClaimCheck(claim, SUPPORTED, citation)
    if judged.verified:
        return ClaimCheck(claim, SUPPORTED, citation, checker=WITH_MODEL)
    return ClaimCheck(claim, NOT_FOUND, reasons=judged.reasons[:3], checker=WITH_MODEL)


def _conflict(claim: str, hit: Hit, checked: Checked, threshold: float) -> ClaimCheck | None:
    """Contradicted: the passage holds the claim's words (its support) and one check says it states otherwise."""
    for part in checked.cited.claims:
        if part.support < threshold or not part.citations:
            continue
        span = part.citations[0]
        said = [r for r in part.problems if contradicts(r)]
        if not said and (swapped := swapped_value(part.text, hit.text, span.quote)):
            said = [swapped]
        if said:
            return ClaimCheck(claim, CONTRADICTED, _saying(said[0], hit, span), reasons=said)
    return None


_OTHER = re.compile(r"^the passage (?:gives|pairs the case asked \([^)]*\) with) (.+?), not ")


def _saying(reason: str, hit: Hit, span: Citation) -> Citation:
    """The span that says otherwise: the sentence holding the other value the reason names ("the passage pairs
    the case asked (new installations) with "PermitRootLogin without-password", not "yes""), else the citer's span."""
    m = _OTHER.match(reason)
    words = m.group(1).split() if m else []
    value = r"\s+".join(map(re.escape, words))
    found = re.search(rf"(?<![\w.]){value}(?![\w])" if words and words[-1][-1].isalnum() else value, hit.text) if words else None
    if found is None:
        return span
    a, b = next(((a, b) for a, b in sentence_spans(hit.text) if a <= found.start() < b), (found.start(), found.end()))
    return citation_for(span.n, hit, a, b, language_of(span.quote))
