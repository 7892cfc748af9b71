"""Short answers: what a small model (under 7B parameters) is asked for, and when its words are published.

Measured on the trust dev set (benchmarks/RESULTS.md, 2026-12-06, issue 28 item 7): asked to write a cited
answer, the 1.5B model's drafts were rarely published (the checks rejected them, or it said NOT_FOUND beside
good evidence), and each question cost a minute of CPU.  What it does well is point: given the sentences
around the extractive answerer's best ones, it names the source and copies the few words that answer the
question.  So a small model is asked for one line, ``n | words`` (or NOT_FOUND), in one call of a few tokens:

- the words must stand in the passage (case and spacing aside), else the extractive answer is published;
- the sentence that holds them is the answer's first citation, and the words lead the answer; the extractive
  answerer's sentences follow, so an answer led by the model holds everything the extractive one holds;
- the words must be the kind of value the question asks for (docqa.answer.kind: a frequency for "how often", a
  duration for "how long", a version, a path, a command ...), else a neighbour sentence's value could lead;
- the words must be more than the question's own (an echo answers nothing), and the sentence that holds them
  must be one the extractive answer quotes, or grounded (docqa.answer.grounding: about what the question asks);
- NOT_FOUND, an unreadable reply, or words not in the passages: the extractive answer, as before;
- a question that asks how to do something, or in what order, is not asked (a few words do not answer it);
- the model is asked only when the extractive answerer answers: a few words never turn "not found" into an
  answer (such a "second look" answered 3 questions wrongly on the trust set's test sample, against 1 rescued;
  benchmarks/RESULTS.md 2026-12-06).

Nothing the model writes is published unless it is copied from the documents, and the extractive answer's
sentences are always published with it, so its answer holds everything the extractive one holds, for one short call.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from docqa.answer import kind, sentinel
from docqa.answer.citer import citation_for
from docqa.answer.grounding import Question, problem
from docqa.answer.shape import _PROCEDURE
from docqa.answer.sources import SourceSet
from docqa.answer.support import content_tokens
from docqa.text.language import has_cjk
from docqa.text.sentences import sentence_spans
from docqa.types import Citation, Claim, Hit

MAX_TOKENS = 48  # the reply is one line: a number, a bar and a few words
MAX_WORDS = 40  # longer "words" are a paraphrase of the passage, not the answer's words
MODEL, EXTRACTIVE = "model", "extractive"

_LINE = re.compile(r"^\W{0,3}(?:answer\s*[:：]\s*)?(?:source\s*)?\[?(\d{1,2})\]?\s*[|｜:：]\s*(.+)$", re.IGNORECASE)
_END = re.compile(r"(?:\s*\[\d+\]|[\s。.;；,，])+$")  # a marker or a full stop after the words
_WRAP = "`'\"“”‘’*「」《》"
_YES_NO = frozenset("yes no true false 是 否 是的 不是 对 不对 可以 不可以 会 不会".split())
_ORDER = re.compile(r"\b(?:what|which)\s+order\b|顺序|先后", re.IGNORECASE)


@dataclass(slots=True)
class Reply:
    """The model's line read: the source it names (0: none) and the words it copied; `said_not_found` when
    it found no answer; both empty when the line could not be read."""

    n: int = 0
    words: str = ""
    said_not_found: bool = False


@dataclass(slots=True)
class Found:
    """The model's words located in a source's passage: the hit, the words' span and the sentence's span (in the
    hit's text)."""

    hit: Hit
    start: int
    end: int
    sentence: tuple[int, int]

    @property
    def words(self) -> str:
        return self.hit.text[self.start : self.end]


@dataclass(slots=True)
class Verdict:
    outcome: str  # model | extractive
    reason: str
    found: Found | None = None


def read(text: str) -> Reply:
    """The reply's first line that reads ``n | words``; NOT_FOUND; or nothing readable."""
    if sentinel.said_not_found(text):
        return Reply(said_not_found=True)
    for line in text.strip().splitlines():
        m = _LINE.match(line.strip())
        if m:
            words = _END.sub("", m.group(2).strip()).strip(_WRAP).strip()
            return Reply(int(m.group(1)), words)
    return Reply()


def locate(reply: Reply, sources: SourceSet) -> Found | None:
    """The words in the passage of the source the model named, else of any other source (it misnumbered)."""
    if not reply.words:
        return None
    named = sources.get(reply.n)
    order = ([named] if named else []) + [s for s in sources.sources if s is not named]
    for source in order:
        at = _find(source.hit.text, reply.words)
        if at is not None:
            return Found(source.hit, *at, _sentence(source.hit.text, *at))
    return None


def judge(reply: Reply, sources: SourceSet, question: Question, quoted: Sequence[tuple[str, int, int]] = ()) -> Verdict:
    """Publish the model's words (MODEL, with where they stand) or the extractive answer, and why; `quoted`: the
    sentences the extractive answer quotes (chunk id, start, end in its text), whose words need no grounding."""
    if reply.said_not_found:
        return Verdict(EXTRACTIVE, "the model found no answer in the passages")
    if not reply.words:
        return Verdict(EXTRACTIVE, "the model's reply could not be read as a source number and words")
    if len(reply.words.split()) > MAX_WORDS:
        return Verdict(EXTRACTIVE, f"the model's words are longer than {MAX_WORDS} words")
    found = locate(reply, sources)
    if found is None:
        return Verdict(EXTRACTIVE, "the model's words are not in the passages")
    if echo(found.words, question.text):
        return Verdict(EXTRACTIVE, "the model's words only repeat the question", found)
    wanted = kind.mismatch(found.words, question.text, found.hit.text[found.sentence[0] : found.start])
    if wanted is not None:
        return Verdict(EXTRACTIVE, f"the model's words are not {wanted}, what the question asks for", found)
    a, b = found.sentence
    if any(chunk == found.hit.chunk_id and start < b and a < end for chunk, start, end in quoted):
        return Verdict(MODEL, "the model's words stand in a sentence the extractive answer quotes", found)
    grounded = problem(found.words, question, found.hit, *found.sentence)
    if grounded.problem is not None:
        return Verdict(EXTRACTIVE, f"the sentence that holds the model's words is not grounded: {grounded.problem}", found)
    return Verdict(MODEL, "the model's words stand in the passage and its sentence is grounded", found)


def echo(words: str, question: str) -> bool:
    """Every content word of `words` is in the question, or it has none and no symbol or digit either ("the"), or
    it is a bare yes or no (nothing in the passage can be checked against it): it answers nothing ("~", a suffix,
    does)."""
    if words.strip().lower() in _YES_NO:
        return True
    mine = content_tokens(words)
    if not mine:
        return not any(not ch.isalpha() and not ch.isspace() for ch in words)
    return mine <= content_tokens(question)


def asks_for_steps(question: str) -> bool:
    """The question asks how to do something or in what order (answer/shape.py's procedure words, and "order"):
    a few words do not answer it, the extractive answerer's steps may."""
    return _PROCEDURE.search(question) is not None or _ORDER.search(question) is not None


def _fold(text: str) -> tuple[str, list[int]]:
    """`text` folded for matching (NFKC, lower case, each run of spaces one space) and each folded
    character's offset in `text`."""
    out: list[str] = []
    where: list[int] = []
    space = False
    for i, ch in enumerate(text):
        for c in unicodedata.normalize("NFKC", ch).lower():
            if c.isspace():
                if space or not out:
                    continue
                c, space = " ", True
            else:
                space = False
            out.append(c)
            where.append(i)
    return "".join(out), where


def _find(text: str, words: str) -> tuple[int, int] | None:
    hay, where = _fold(text)
    needle = _fold(words)[0].strip()
    if not needle:
        return None
    at = hay.find(needle)
    if at < 0:
        return None
    return where[at], where[at + len(needle) - 1] + 1


def _sentence(text: str, start: int, end: int) -> tuple[int, int]:
    """The span of the sentence(s) of `text` that hold [start, end)."""
    spans = sentence_spans(text) or [(0, len(text))]
    first = next((s for s, e in spans if s <= start < e), start)
    last = next((e for s, e in spans if s < end <= e), end)
    return min(first, start), max(last, end)


def compose(found: Found, n: int, quoted: list[Citation], language: str, among: list[str]) -> tuple[str, list[Claim]]:
    """The answer led by the model's words: the words (citing the sentence that holds them, as source `n`), then
    that sentence and the extractive answer's other sentences (`quoted`) as the extractive answerer quotes them."""
    lead = citation_for(n, found.hit, *found.sentence, language, among)
    words = " ".join(found.words.split())
    claims = [Claim(words, 0, len(words), sources=[n], citations=[lead], supported=True, support=1.0)]
    again = citation_for(n, found.hit, *found.sentence, language, among)  # one object per claim: numbering rewrites it
    rest = [again] + [c for c in quoted if not _overlaps(c, lead)]
    joiner = "" if any(has_cjk(c.quote) for c in rest) else " "
    text = words + "\n\n"
    for i, c in enumerate(rest):
        quote = " ".join(c.quote.split())
        text += joiner if i else ""
        claims.append(Claim(quote, len(text), len(text) + len(quote), sources=[c.n], citations=[c], supported=True,
                            support=1.0))
        text += quote
    return text, claims


def _overlaps(a: Citation, b: Citation) -> bool:
    return a.document_id == b.document_id and a.char_start < b.char_end and b.char_start < a.char_end
