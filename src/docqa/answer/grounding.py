"""Grounding: does the place a claim cites answer the question, not only say the same words?

The citer verifies that a claim's words are in the passage it cites; that is not enough for a small
model, which often writes a true sentence beside the point ("the base model uses an off-the-shelf
toolkit" for "which backbones do the base and large models use?") or pairs the asked-about thing
with a neighbour's value ("the price of the Pruning Shears is 12.5", the Garden Trowel's price from
the same JSON array).  A claim is grounded in a passage when

- each of its facts (numbers, dates, identifiers, quoted strings: facts.facts_in, and the names it
  adds to the question's) occurs in the passage, in a *unit* — the table row or JSON/YAML record
  it sits in, or in prose its sentence and the one either side — that is not another entity's: when some row or
  record of the passage names what the question asks about, the fact's own unit must name it too;
- the question's names (words with capitals or digits) are in the passage or its heading, and
  (within one language, in prose) in the sentences the claim's facts stand in, ± one, or its heading;
- the question's rarest content word (by IDF; framing words such as "year" or "哪" aside) is in the
  unit or the heading, or half of its content words are (by IDF: a question of two parts);
- the unit does not say the opposite (a negated question, an antonym: extractive._contradicts).

Across languages (a Chinese question over an English passage) the question's words cannot be looked
up: only its names and the claim's facts are checked.
"""

from __future__ import annotations

import bisect

from dataclasses import dataclass

from docqa.answer.citer import strip_markers
from docqa.answer.extractive import _contradicts, _frames, _has_name, _holds, _names
from docqa.answer.facts import Fact, fact_positions, facts_in, normalise
from docqa.retrieve.snippet import coverage
from docqa.text.language import has_cjk
from docqa.text.sentences import sentence_spans
from docqa.types import Claim, Hit

PROSE_SENTENCES = 1  # in prose, the sentences either side of a fact's that belong to its unit,
PROSE_LINES = 1  # and no more than this many lines either side (a PDF's header lines run into its first sentence)
HALF = 0.6  # or this share of the question's content words, by IDF (a question of two parts: "backups and logs")
NEAR = 0.95  # IDF within this share of the rarest word's
MAX_RECORD_LINES = 40  # a brace-delimited block longer than this is not one record


@dataclass(slots=True)
class Question:
    """What grounding needs of the question, computed once per answer."""

    text: str
    terms: list[str]
    weights: dict[str, float]

    @property
    def names(self) -> list[str]:
        return _names(self.text)

    def covered(self, text: str) -> float:
        """IDF-weighted share of the question's content words (names and framing words aside) in `text`."""
        in_names = " ".join(self.names).lower()
        content = [t for t in dict.fromkeys(x.lower() for x in self.terms) if not _frames(t) and t not in in_names]
        return coverage(text, content, self.weights) if content else 1.0

    @property
    def rare(self) -> list[str]:
        """The rarest content word and those almost as rare (IDF within `NEAR`): each part of a question
        of two parts ("backups" and "logs")."""
        top = self.rarest
        if top is None:
            return []
        in_names = " ".join(self.names).lower()
        floor = self.weights.get(top, 1.0) * NEAR
        return [t for t in dict.fromkeys(x.lower() for x in self.terms)
                if not _frames(t) and t not in in_names and self.weights.get(t, 1.0) >= floor]

    @property
    def rarest(self) -> str | None:
        """The question's rarest content word that is not part of one of its names (None: none)."""
        in_names = " ".join(self.names).lower()
        content = [t for t in dict.fromkeys(x.lower() for x in self.terms) if not _frames(t) and t not in in_names]
        return max(content, key=lambda t: self.weights.get(t, 1.0), default=None)


@dataclass(slots=True)
class Grounding:
    """Whether one of a claim's cited passages answers the question with it."""

    problem: str | None  # None: grounded
    row: bool = False  # grounded in the table row or record that names what the question asks about


def ground(claim: Claim, question: Question, hits: dict[str, Hit]) -> Grounding:
    """Whether one of `claim`'s cited passages (`hits` by chunk id) answers `question` with it."""
    reasons = []
    for c in claim.citations:
        hit = hits.get(c.chunk_id)
        if hit is None:
            continue
        result = problem(claim.text, question, hit, c.char_start - hit.char_start, c.char_end - hit.char_start)
        if result.problem is None:
            return result
        reasons.append(result)
    return reasons[0] if reasons else Grounding("it cites no passage")


def problem(claim: str, question: Question, hit: Hit, start: int, end: int) -> Grounding:
    """Why `hit` (the claim cites `start:end` of its text) does not answer `question` with `claim`."""
    passage = Passage(hit.text)
    heading = " ".join(x for x in (hit.title, hit.section, hit.path.rsplit("/", 1)[-1]) if x)
    crossing = has_cjk(claim) != has_cjk(hit.text) or has_cjk(question.text) != has_cjk(hit.text)
    for name in question.names:
        if not _has_name(f"{heading}\n{hit.text}", name):
            return Grounding(f"the passage it cites does not mention {name}")
    said = facts_in(claim)
    if any(f.kind in ("quote", "path") and not fact_positions(f, normalise(hit.text)) for f in said):
        return Grounding("what it quotes is not in the passage it cites")
    facts = [(f.kind, f.value) for f in said if f.kind not in ("quote", "path")]
    facts += [("name", n) for n in _names(strip_markers(claim)) if n not in question.names
              and not any(ch.isdigit() for ch in n)]
    if facts:
        units = passage.fact_units(facts, question.names)
        if units is None:
            return Grounding("what it states is not in the passage it cites")
        if not units:
            return Grounding("it takes its value from another row or record than the one the question asks about")
        ok = units
    else:
        ok = [passage.unit_of(start, end)]
    if any(passage.is_record(u) and passage.names_any(u, question.names) for u in ok):
        return Grounding(None, row=True)  # the row or record of what the question names
    context = [f"{heading}\n{passage.context_of(u)}" for u in ok]
    if not crossing and (rarest := question.rarest) is not None and not any(
            any(_holds(t, r) for r in question.rare) or question.covered(t) >= HALF for t in context):
        return Grounding(f"the place it cites says nothing about “{rarest}”")
    prose = not any(passage.is_record(u) for u in ok)  # a table row's subject may stand in the table's title
    if prose and not crossing and (missing := [n for n in question.names if not any(_has_name(t, n) for t in context)]):
        return Grounding(f"the place it cites does not mention {missing[0]}")  # "Iran" asked, "Egypt" there
    if not crossing and all(_contradicts(question.text, passage.text_of(u)) for u in ok):
        return Grounding("the place it cites says the opposite of what the question asks")
    return Grounding(None)


Unit = tuple[int, int]  # a span of the passage's text


class Passage:
    """A passage's text, with its table rows and JSON/YAML-like records (by lines) and its
    sentences (for prose)."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.split("\n")
        self.norm = [normalise(line) for line in self.lines]
        self.offsets = [0]
        for line in self.lines:
            self.offsets.append(self.offsets[-1] + len(line) + 1)
        self.rows = {self._span(a, b): (a, b) for a, b in _records(self.lines)}  # unit -> its lines
        self.sentences = [(a, b) for a, b in sentence_spans(text) if text[a:b].strip()] or [(0, len(text))]

    def _span(self, first: int, last: int) -> Unit:
        return self.offsets[first], self.offsets[last + 1] - 1

    def text_of(self, unit: Unit) -> str:
        return self.text[unit[0] : unit[1]]

    def is_record(self, unit: Unit) -> bool:
        return unit in self.rows

    def names_any(self, unit: Unit, names: list[str]) -> bool:
        text = self.text_of(unit)
        return any(_has_name(text, n) for n in names)

    def context_of(self, unit: Unit) -> str:
        """The unit's text, after the first two rows of its table when it is a table row."""
        lines = self.rows.get(unit)
        if lines is None or lines[0] != lines[1]:
            return self.text_of(unit)
        first = lines[0]
        while first > 0 and self._span(first - 1, first - 1) in self.rows:
            first -= 1
        head = self.lines[first : min(first + 2, lines[0])]
        return "\n".join(head + [self.text_of(unit)])

    def unit_of(self, start: int, end: int | None = None) -> Unit:
        """The record or row holding `start`, else the sentences around `start:end` (one either side)."""
        inside = [u for u in self.rows if u[0] <= start <= u[1]]
        if inside:
            return min(inside, key=lambda u: u[1] - u[0])
        end = start + 1 if end is None else max(end, start + 1)
        i = next((k for k, (a, b) in enumerate(self.sentences) if start < b), len(self.sentences) - 1)
        j = next((k for k, (a, b) in enumerate(self.sentences) if end - 1 < b), len(self.sentences) - 1)
        lo, hi = max(0, i - PROSE_SENTENCES), min(len(self.sentences) - 1, max(i, j) + PROSE_SENTENCES)
        first, last = self._line(start), self._line(end - 1)  # and no further than a line either side
        lines = self._span(max(0, first - PROSE_LINES), min(len(self.lines) - 1, last + PROSE_LINES))
        return max(self.sentences[lo][0], lines[0]), min(self.sentences[hi][1], lines[1])

    def _line(self, offset: int) -> int:
        return max(0, bisect.bisect_right(self.offsets, offset) - 1)

    def fact_units(self, facts: list[tuple[str, str]], names: list[str]) -> list[Unit] | None:
        """The units, of what the question names (`own`), that hold the facts (kind, value); the
        units that hold them all when there are such, else every such unit holding one.  None
        when a fact is nowhere in the passage; empty when one is only in another entity's row or
        record."""
        every: set[Unit] | None = None
        anyof: set[Unit] = set()
        for kind, value in facts:
            units = {self.unit_of(self.offsets[i] + min(at, len(self.lines[i])))
                     for i, line in enumerate(self.norm) for at in _occurs(kind, value, line)}
            if not units:
                return None
            units = {u for u in units if self.own(u, names)}
            if not units:
                return []
            every = units if every is None else every & units
            anyof |= units
        return sorted(every or anyof)

    def own(self, unit: Unit, names: list[str]) -> bool:
        """The unit is the asked-about entity's: it names one of `names`, or no other row or
        record does."""
        if not names or self.names_any(unit, names):
            return True
        return not any(r != unit and self.names_any(r, names) for r in self.rows)


def _occurs(kind: str, value: str, line: str) -> list[int]:
    """Where the fact occurs in the (normalised) line: a number or a date as a whole token, a name
    or an identifier as a word."""
    if kind == "name":
        if not _has_name(line, value):
            return []
        at = line.lower().find(value.lower())
        return [max(at, 0)]
    return fact_positions(Fact(kind, value, value), line)


def _records(lines: list[str]) -> list[Unit]:
    """Table rows (a line with " | " or a tab between cells) and brace-delimited records."""
    out: list[Unit] = [(i, i) for i, line in enumerate(lines) if " | " in line or "\t" in line.strip()]
    stack: list[int] = []
    for i, line in enumerate(lines):
        for ch in line:
            if ch == "{":
                stack.append(i)
            elif ch == "}" and stack:
                first = stack.pop()
                if first < i and i - first <= MAX_RECORD_LINES:
                    out.append((first, i))
    return out
