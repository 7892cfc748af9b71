"""How the trust dev set scores one published answer (pure functions: no knowledge base, no embedder).

**Answer matching.**  An answers group is matched when any of its strings is a substring of the
published answer text, both normalised: citation markers ([n], 【n】) removed, Unicode NFKC (full-width
letters, digits and punctuation become half-width), case folded, all whitespace removed.

**Outcome** of a question (`outcome`):
- answerable: `correct` (every group matched AND the citations point into the evidence: at least one
  citation in an evidence file; for a multihop question, every evidence file cited), `uncited` (every
  group matched, the citations miss the evidence), `wrong` (answered, a group unmatched),
  `false_abstention` (the documents-do-not-hold-it outcome: `Answer.answerable` is False), `failed`;
- unanswerable: `abstained` (`Answer.answerable` False), `answered` (anything else published), `failed`.

**Claims and citations (ALCE-style).**  The published answer is split into claims: its sentences
(docqa.text.sentences, English and Chinese), the note that flags a quotation in the other language left
out; a marker that opens a sentence ("… hours. [1]") belongs to the sentence before it; an ordered-list
number the splitter cut off ("… 2." once line breaks are gone) joins the sentence after it; a piece
with no letter is no claim.  A claim's
citations are the answer's citations whose number its markers name.
- citation recall = claims carrying at least one citation / claims;
- citation precision = (claim, citation) pairs where the citation supports the claim / pairs.

Two per-claim precision figures are reported.  **Entails** (ALCE's citation precision, deterministic):
the cited source bears the claim out — the claim is a quote of it, or all its numbers and at least
80 % of its words (Chinese: characters) occur in it — or, as ALCE counts it, the claim's citations together bear it
out and not without this one (a quote with no full stop runs into the next one and the two make one claim: each
citation is needed for it).  **Supports** (stricter: the citation is also gold
evidence for the question; "citation precision" in the tables): a citation supports its claim when the question is answerable (for an
unanswerable question answered anyway, no citation supports anything), the cited file is one of the
question's gold evidence files, and either
  (a) the cited character span overlaps the span of a gold quote of that file (quotes located in the
      document text after whitespace collapse), or
  (b) the claim contains an answer string of some group and the cited span contains an answer string
      of the same group (normalised as above), or
  (c) the cited span lies in a gold quote's own passage (`Span.context`, set by `context`): the rest of the
      quote's paragraph within CONTEXT_CHARS of it, and the lead-in or heading line just before that paragraph
      ("… defined:" above the list the quote is an item of, "Release 3.11.0" above its notes).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

from docqa.answer.citer import MARKER, strip_markers
from docqa.text.sentences import sentence_spans

# The line docqa adds when the quoted sentences are in the other language (docqa.answer.accept._QUOTATION).
_NOTES = ("（以上引文为", "(The sentences above are quoted")
_LIST_NUMBER = re.compile(r"(?:^|\s)\d{1,3}\.$")  # "2." ending a span: an ordered-list number, not a sentence end


def normalise(text: str) -> str:
    """Markers out, NFKC, case folded, no whitespace: what answer strings are matched on."""
    text = unicodedata.normalize("NFKC", strip_markers(text)).casefold()
    return re.sub(r"\s+", "", text)


def matched_groups(text: str, groups: list[list[str]]) -> list[bool]:
    """For each answers group, whether any of its strings occurs in `text` (see the module docstring)."""
    hay = normalise(text)
    return [any(normalise(s) and normalise(s) in hay for s in group) for group in groups]


def cites_evidence(cited_files: Iterable[str], evidence_files: Iterable[str], multihop: bool) -> bool:
    """At least one cited file is an evidence file; for multihop, every evidence file is cited."""
    cited, gold = set(cited_files), set(evidence_files)
    if not gold:
        return False
    return gold <= cited if multihop else bool(gold & cited)


def outcome(*, answerable: bool, abstained: bool, failed: bool, all_matched: bool, cited: bool) -> str:
    """The question's outcome (see the module docstring)."""
    if failed:
        return "failed"
    if not answerable:
        return "abstained" if abstained else "answered"
    if abstained:
        return "false_abstention"
    if not all_matched:
        return "wrong"
    return "correct" if cited else "uncited"


@dataclass(slots=True)
class Claim:
    text: str  # the sentence without its markers
    sources: list[int] = field(default_factory=list)  # the source numbers its markers name, in order


def split_claims(answer: str) -> list[Claim]:
    """The answer's claims with the source numbers each cites (see the module docstring)."""
    body = "\n".join(line for line in answer.splitlines() if not line.strip().startswith(_NOTES))
    claims: list[Claim] = []
    for s, e in _joined(body, sentence_spans(body)):
        sentence = body[s:e]
        lead = re.match(r"^(?:\s*(?:" + MARKER.pattern + r"))+", sentence, re.IGNORECASE)
        if lead and claims:  # "… hours. [1] Next sentence": the [1] belongs to the sentence before
            claims[-1].sources += _numbers(lead.group())
            sentence = sentence[lead.end():]
        text = strip_markers(sentence).strip()
        if not any(ch.isalpha() for ch in text):
            continue
        claims.append(Claim(text, _numbers(sentence)))
    for claim in claims:
        claim.sources = list(dict.fromkeys(claim.sources))
    return claims


def _joined(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sentence spans with a list number cut off at the end ("… changes. 2.", the published answer lost
    its line breaks) joined to the sentence after it."""
    out: list[tuple[int, int]] = []
    for s, e in spans:
        if out and _LIST_NUMBER.search(strip_markers(text[out[-1][0]:out[-1][1]]).strip()):
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def _numbers(text: str) -> list[int]:
    return [int(n) for m in MARKER.finditer(text) for n in re.findall(r"\d+", m.group(1) or m.group(2))]


@dataclass(slots=True)
class Span:
    """A cited span, or a gold quote located in its file (start/end None: the quote was not found)."""

    file: str | None  # the corpus relative_path (no docset prefix); None: outside the corpus
    start: int | None
    end: int | None
    text: str
    context: tuple[int, int] | None = None  # a gold quote's own passage (`context`): a citation inside it supports


CONTEXT_CHARS = 300  # how far a gold quote's own passage reaches on either side of it
_BLANK = re.compile(r"\n[^\S\n]*\n")
_ALONE = re.compile(r"\n[^\S\n]*\n[^\S\n]*$")  # a blank line right before a line: the line is a block of its own


def context(text: str, start: int, end: int) -> tuple[int, int]:
    """The passage a gold quote `text[start:end]` belongs to: its paragraph (no blank line) up to CONTEXT_CHARS on
    either side, and, when the paragraph before it is a lead-in (ends with a colon) or a heading (one line without a
    full stop) ending within CONTEXT_CHARS, that line too."""
    lo, hi = max(0, start - CONTEXT_CHARS), min(len(text), end + CONTEXT_CHARS)
    before = list(_BLANK.finditer(text, lo, start))
    first = before[-1].end() if before else lo
    after = _BLANK.search(text, end, hi)
    last = after.start() if after else hi
    if before:
        head_end = before[-1].start()
        head_start = text.rfind("\n", 0, head_end) + 1
        head = text[head_start:head_end].strip()
        alone = head_start == 0 or _ALONE.search(text, max(0, head_start - CONTEXT_CHARS), head_start) is not None
        if head and head_start >= lo and (head.endswith((":", "：")) or (alone and not head.endswith((".", "。", "!", "?", ";")))):
            first = head_start
    return first, last


def supports(citation: Span, claim: str, golds: list[Span], groups: list[list[str]], answerable: bool) -> bool:
    """Whether `citation` supports `claim` (the rule in the module docstring)."""
    if not answerable or citation.file is None:
        return False
    files = [g for g in golds if g.file == citation.file]
    if not files:
        return False
    for g in files:
        if None in (g.start, g.end, citation.start, citation.end):
            continue
        lo, hi = g.context or (g.start, g.end)
        if citation.start < hi and lo < citation.end:  # type: ignore[operator]
            return True
    said, cited = normalise(claim), normalise(citation.text)
    for group in groups:
        forms = [normalise(s) for s in group if normalise(s)]
        if any(f in said for f in forms) and any(f in cited for f in forms):
            return True
    return False


_WORD = re.compile(r"[^\W\d_]+|\d+(?:[.,:]\d+)*", re.UNICODE)
_HAN = re.compile(r"[\u3400-\u9fff]")


def entails(citation: Span, claim: str) -> bool:
    """ALCE's citation precision, deterministically: the cited span alone bears the claim out — the claim is
    a quote of it, or every number of the claim and at least 80 % of its words (Chinese: its characters)
    occur in the span.  Unlike `supports`, it does not ask whether the claim answers the question."""
    said, cited = normalise(claim), normalise(citation.text)
    if not said or said in cited:
        return bool(said)
    words = [w.casefold() for w in _WORD.findall(unicodedata.normalize("NFKC", strip_markers(claim)))]
    numbers = [w for w in words if w[0].isdigit()]
    if any(n not in cited for n in numbers):
        return False
    units = [ch for w in words for ch in (w if _HAN.search(w) else [w])]
    return bool(units) and sum(u in cited for u in units) / len(units) >= 0.8


def locate(text: str, quote: str) -> tuple[int, int] | None:
    """The span of `quote` in `text`, both compared with whitespace runs collapsed; None when absent."""
    words = quote.split()
    if not words:
        return None
    pattern = r"\s+".join(re.escape(w) for w in words)
    m = re.search(pattern, text)
    return (m.start(), m.end()) if m else None


@dataclass(slots=True)
class ClaimScore:
    text: str
    citations: list[int]  # the source numbers of the answer's citations it carries
    supported: list[bool]  # per citation: does it support the claim
    entailed: list[bool] = field(default_factory=list)  # per citation: does its span alone bear the claim out (ALCE)


def score_claims(answer: str, citations: dict[int, list[Span]], golds: list[Span], groups: list[list[str]],
                 answerable: bool) -> list[ClaimScore]:
    """Each claim of a published answer, the citations it carries (numbers the answer really cites)
    and whether each supports it.  One number is one source (a chunk) and may stand for several cited
    spans of it: it supports the claim when any of them does."""
    out = []
    for claim in split_claims(answer):
        numbers = [n for n in claim.sources if citations.get(n)]
        verdicts = [any(supports(span, claim.text, golds, groups, answerable) for span in citations[n]) for n in numbers]
        out.append(ClaimScore(claim.text, numbers, verdicts, needed(claim.text, [citations[n] for n in numbers])))
    return out


def needed(claim: str, sources: list[list[Span]]) -> list[bool]:
    """ALCE's citation precision for each of a claim's sources (each the spans one number cites): it bears the claim
    out alone, or all of them together do and the others without it do not (Gao et al. 2023, "Enabling Large Language
    Models to Generate Text with Citations")."""
    def bears(groups: list[list[Span]]) -> bool:
        spans = [s for g in groups for s in g]
        return bool(spans) and (any(entails(s, claim) for s in spans)
                                or entails(Span(None, None, None, "\n".join(s.text for s in spans)), claim))

    together = len(sources) > 1 and bears(sources)
    return [bears([g]) or (together and not bears(sources[:i] + sources[i + 1:])) for i, g in enumerate(sources)]
