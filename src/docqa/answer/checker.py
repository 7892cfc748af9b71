"""The checker: deterministic fact and entailment checks, then the model's own verdict.

Deterministic first: every number, date, version, path, identifier, CVE id, licence id and quoted
string of a claim must occur in the text of a source it cites (facts.py), every claim must be
supported (citer.py), and — given the question — what it cites must entail it, not merely share
its strings (entail.py: the case it speaks of, a value paired with another subject, a unit,
negation, words the passage does not say).  Then, when a model is available, a fact-checker
prompt asks about entailment and answers `VERIFIED` or `REJECTED: <claims and reasons>`
(parse_verdict reads a denial in other words too, and never passes a bare token on as a reason).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from docqa.answer.citer import Cited
from docqa.answer.entail import entailment_problems
from docqa.answer.facts import missing_facts
from docqa.answer.sources import SourceSet
from docqa.answer.support import content_tokens, support
from docqa.types import Claim


@dataclass(slots=True)
class Rejection:
    claim: str
    reasons: list[str]
    by: str  # deterministic | llm

    def to_dict(self) -> dict:
        return {"claim": self.claim, "reasons": self.reasons, "by": self.by}


@dataclass(slots=True)
class Verdict:
    """The model's verdict: ok True (VERIFIED), False (REJECTED), None (it did not say)."""

    ok: bool | None
    reasons: list[str] = field(default_factory=list)
    raw: str = ""


def check_facts(cited: Cited, sources: SourceSet, question: str | None = None) -> list[Rejection]:
    """Claims whose facts are missing from what they cite, that nothing supports, or (given the
    `question` they answer) that what they cite does not entail (docqa.answer.entail)."""
    out = []
    for claim in cited.claims:
        reasons = list(claim.problems) if not claim.supported else []
        if claim.sources:
            text = "\n".join(sources.get(n).hit.text for n in claim.sources)
            reasons += [f"{f.kind} {f.text!r} is not in [{', '.join(map(str, claim.sources))}]"
                        for f in missing_facts(claim.text, text)]
            if question is not None and not reasons:
                reasons += entailment_problems(claim, question, [sources.get(n).hit for n in claim.sources])
        if reasons:
            claim.supported = False
            claim.problems = list(dict.fromkeys([*claim.problems, *reasons]))
            out.append(Rejection(claim.text, reasons, "deterministic"))
    return out


_VERDICT = re.compile(r"^[\s*#>_-]*(VERIFIED|REJECTED)\b[\s*:.!_-]*", re.IGNORECASE)
# What a small model says instead of REJECTED: "NOT VERIFIED", "UNVERIFIED", "NOT_FOUND", "not entailed"
_DENIED = re.compile(r"\b(?:not[\s_-]+(?:verified|entailed|supported|found)|unverified|cannot be verified|"
                     r"not_found|is not entailed)\b[\s*:.!_-]*", re.IGNORECASE)


def parse_verdict(text: str) -> Verdict:
    """`VERIFIED` → ok; `REJECTED: reasons` → not ok with one reason per line; else undecided.
    A denial in other words (NOT VERIFIED, NOT_FOUND, not entailed) is a rejection: its token is
    never a reason shown to the user."""
    body = text.strip()
    m = _VERDICT.match(body)
    denied = _DENIED.search(body)
    if m is None or (denied is not None and denied.start() <= m.start() + 4):
        found = re.search(r"\b(VERIFIED|REJECTED)\b[\s*:.!_-]*", body)
        if denied is not None and (found is None or denied.start() <= found.start()
                                   or body[:found.start()].rstrip().lower().endswith(("not", "un"))):
            return Verdict(False, _reasons(body[denied.end():]), text)
        if found is None:
            return Verdict(None, raw=text)
        m = found
    if m.group(1).upper() == "VERIFIED":
        return Verdict(True, raw=text)
    return Verdict(False, _reasons(body[m.end():]), text)


def _reasons(rest: str) -> list[str]:
    reasons = [line.strip(" -*•\t") for line in rest.splitlines() if line.strip(" -*•\t")]
    reasons = [r for r in reasons if not re.fullmatch(r"(?:NOT_FOUND|VERIFIED|REJECTED)[.!]?", r, re.IGNORECASE)]
    return reasons or ["the fact-checker rejected the answer without reasons"]


def blame(reasons: list[str], claims: list[Claim]) -> list[tuple[Claim | None, str]]:
    """Match each of the checker's reasons to the claim it is about (None when none matches)."""
    out = []
    for reason in reasons:
        rt = content_tokens(reason)
        scored = [(support(content_tokens(c.text), rt), c) for c in claims]
        score, claim = max(scored, key=lambda x: x[0], default=(0.0, None))
        out.append((claim if score >= 0.5 else None, reason))
    return out

