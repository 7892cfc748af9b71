"""Entailment checks: does the passage a claim cites, read in context, say what the claim says?

The fact check (facts.py) asks only whether a claim's strings occur in what it cites; a false
claim can pass it.  "The default PermitRootLogin for new installations is "yes"" quotes a real
string of openssh's README.Debian — from the sentence about installations *upgraded* from old
versions; the sentence about new ones says "prohibit-password".  Given the question it answers, a
claim is rejected when

- **it says what the passage does not** (same language only): a content word of the claim is in
  neither the passage, its heading, nor the question (a name — "Mumbai" where the passage says
  "Delhi" — or a word: "notorious", "collaborated");
- **its qualifier is not the passage's** (`QUALIFIERS`: new installations / upgrades, before /
  after, enabled / disabled, minimum / maximum, increase / decrease; English and Chinese, so a
  Chinese claim over an English passage is checked too): the claim or question asks about one
  side, and every place of the passage that holds the claim's value (its sentence, one either side)
  speaks of the other side only, or of neither while another place pairs the asked side with a
  different value;
- **it pairs a value with another subject**: the place of the passage that best matches the
  claim's other words holds a different value of the same kind (a number, a version, a quoted
  string), and the places that hold the claim's value match them clearly worse;
- **its negation is not the passage's**: the claim says "not" (or 不, 没有) and the sentence of the
  passage closest to it does not, or the reverse.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from docqa.answer.extractive import _NEGATION, _names
from docqa.answer.facts import Fact, fact_positions, facts_in, normalise
from docqa.answer.support import content_tokens
from docqa.text.language import HAN, has_cjk
from docqa.text.segment import STOPWORDS
from docqa.text.sentences import sentence_spans
from docqa.types import Claim, Hit

# Opposite qualifiers: (one side, the other side), each a regex over lower-cased text.
QUALIFIERS: list[tuple[str, str, str]] = [
    ("new installations", r"\bnew(?:ly)?\b|\bfresh\b|\binitial\b|新安装|新装|全新|新建",
     r"\bupgrad\w*|\bexisting\b|\bprevious(?:ly)?\b|\blegacy\b|升级|已有|旧版"),
    ("before / after", r"\bbefore\b|\bprior to\b|\bearlier than\b|\buntil\b|之前|以前",
     r"\bafter\b|\bsince\b|\bas of\b|\blater than\b|之后|以后|起"),
    ("enabled / disabled", r"\benabl\w*|\bturn(?:ed|s)? on\b|启用|开启|打开",
     r"\bdisabl\w*|\bturn(?:ed|s)? off\b|禁用|关闭"),
    ("minimum / maximum", r"\bmin(?:imum)?\b|\bat least\b|\blowest\b|最小|至少|最低",
     r"\bmax(?:imum)?\b|\bat most\b|\bhighest\b|最大|至多|最多|最高"),
    ("increase / decrease", r"\bincreas\w*|\braise[sd]?\b|\bgrow\w*|增加|提高|增长",
     r"\bdecreas\w*|\breduc\w*|\blower(?:s|ed)?\b|减少|降低|下降"),
]
_QUALIFIER = [(name, re.compile(a, re.IGNORECASE), re.compile(b, re.IGNORECASE)) for name, a, b in QUALIFIERS]
ASKED = ("new installations", "enabled / disabled")  # qualifiers a question's words set (others: the claim's own)
_QUOTED = re.compile(r"\"[^\"\n]{0,40}\"|“[^”\n]{0,40}”|「[^」\n]{0,40}」|`[^`\n]{0,40}`|'[^'\n]{1,40}'")  # a value, not quoted speech
_ANSWER_WORDS = frozenset({"yes", "no", "true", "false", "both", "neither", "also", "still", "only", "answer"}) | content_tokens(
    # words about the documents rather than what they say: "Both documents explain how to rotate keys"
    "document documents doc docs file files page pages section sections source sources passage text guide manual "
    "explain explains explained describe describes described say says said state states stated mention mentions "
    "mentioned note notes noted cover covers covered show shows shown list lists listed according")
PAIR_MARGIN = 0.34  # the place that best matches the claim's other words beats every place holding its value by this much
NEGATION_OVERLAP = 0.6  # the closest sentence shares this share of the claim's words before its negation is compared
NEGATED_PASSAGE_WORDS, NEGATED_PASSAGE_OVERLAP = 4, 0.6  # a negated passage sentence against a short phrase is noise
VALUE_KINDS = ("number", "date", "version", "quote", "identifier", "cve", "licence")
# How the checks below word a problem where the passage says otherwise (not merely nothing): a qualifier's
# other side, a value paired with another subject or unit, a negation, a comparison's years, a swapped value.
# The rest ("the passage does not say …", a fact not in it) is silence.  `contradicts` reads them.
CONTRADICTIONS = ("the passage gives ", "the passage pairs ", "the claim says the opposite",
                  "the passage's sentence says the opposite", "the passage's years ")


@dataclass(slots=True)
class Place:
    """A sentence of the passage with the one either side: where a value is read in context."""

    start: int
    end: int
    text: str
    core: str  # the sentence itself


def entailment_problems(claim: Claim, question: str, hits: list[Hit]) -> list[str]:
    """Why the cited passages do not entail `claim` as an answer to `question` (empty: they do)."""
    text = normalise(_strip_markers(claim.text))
    passage = "\n".join(h.text for h in hits)
    heading = " ".join(x for h in hits for x in (h.title, h.section) if x)
    same_language = has_cjk(text) == has_cjk(passage)
    problems = []
    checked = " ".join(f.text.lower() for f in facts_in(text))  # a fact is checked whole (facts.py), not word by word
    if same_language and (novel := [w for w in novel_words(text, f"{heading}\n{passage}", question)
                                    if w.lower() not in checked]):
        problems.append(f"the passage does not say {', '.join(novel[:3])}")
    places = _places(passage)
    values = [f for f in facts_in(text) if f.kind in VALUE_KINDS and not _in(f, normalise(question))]
    problems += [p for p in (_qualifier(text, question, values, places), _pairing(text, values, places),
                             _unit(text, values, passage)) if p]
    if same_language and (p := _negation(text, places)):
        problems.append(p)
    if same_language and (p := comparison_problem(text, question, passage)):
        problems.append(p)
    return problems


def contradicts(reason: str) -> bool:
    """The problem says the passage states otherwise (see CONTRADICTIONS), not that it is silent."""
    return reason.startswith(CONTRADICTIONS)


def swapped_value(claim: str, passage: str, span: str) -> str | None:
    """A value of the claim (a number, date, version, ...) that is nowhere in the passage, while the
    span of it that best matches the claim's words holds another value of the same kind: "born in
    1921" against "born in 1923" (the citer found the span; the fact check only says 1921 is missing)."""
    text, source, near = normalise(_strip_markers(claim)), normalise(passage), normalise(" ".join(span.split()))
    for fact in facts_in(text):
        if fact.kind not in VALUE_KINDS or _in(fact, source):
            continue
        others = [f for f in facts_in(near) if f.kind == fact.kind and f.value != fact.value and fact.value not in f.value]
        unit = _word_after(fact, text)
        same = [f for f in others if unit and _word_after(f, near) == unit]  # "30 天" against "35 天", not "6 小时"
        if same or others:
            return f"the passage gives {(same or others)[0].text}, not {fact.text}"
    return None


def _word_after(fact: Fact, text: str) -> str:
    """The word (or Chinese character) right after the value's first place in `text`: its unit, if any."""
    for at in fact_positions(fact, text):
        m = re.match(rf"[\w.,%-]*?\s*([A-Za-z]+|[{HAN}])", text[at:])
        return m.group(1).lower() if m else ""
    return ""


def novel_words(claim: str, passage: str, question: str) -> list[str]:
    """The claim's content words (names first) that are in neither the passage nor the question."""
    known = content_tokens(passage) | content_tokens(question)
    novel = [t for t in content_tokens(claim) - known if t not in _ANSWER_WORDS]
    if not novel:
        return []
    names = [n for n in _names(" " + claim) if content_tokens(n) & set(novel)]
    rest = [t for t in novel if not any(t in content_tokens(n) for n in names)]
    return list(dict.fromkeys(names + sorted(rest)))


def _qualifier(claim: str, question: str, values: list[Fact], places: list[Place]) -> str | None:
    """The claim's value stands where the passage speaks of the other side of a qualifier the claim
    or question asks about (see the module docstring)."""
    for name, one, other in _QUALIFIER:
        asked = f"{claim}\n{question}".lower() if name in ASKED else claim.lower()
        for side, opposite in ((one, other), (other, one)):
            if not side.search(asked) or opposite.search(asked):
                continue
            for fact in values:
                holding = [p for p in places if _in(fact, normalise(p.text))]
                if not holding or any(side.search(p.text.lower()) for p in holding):
                    continue
                if all(opposite.search(p.text.lower()) for p in holding):
                    return f"the passage gives {fact.text} for the other case ({name}) than the one asked"
                others = [p for p in places if side.search(p.core.lower()) and _other_value(fact, p)]
                if others:
                    return f"the passage pairs the case asked ({name}) with {_other_value(fact, others[0])}, not {fact.text}"
    return None


def _pairing(claim: str, values: list[Fact], places: list[Place]) -> str | None:
    """A value of the claim stands where the passage speaks of something else, and the place that
    speaks of what the claim does holds another value of the same kind."""
    for fact in values:
        if fact.kind in ("quote", "identifier"):
            continue
        rest = content_tokens(claim) - {t for f in values for t in content_tokens(f.text)} - _MONTHS
        if len(rest) < 2:
            continue
        scored = [(len(rest & content_tokens(p.core)) / len(rest), p) for p in places]
        holding = [s for s, p in scored if _in(fact, normalise(p.core))]
        if not holding:
            continue
        best, place = max(scored, key=lambda x: x[0])
        other = _other_value(fact, place)
        if other and not _in(fact, normalise(place.core)) and best - max(holding) >= PAIR_MARGIN:
            return f"the passage gives {other}, not {fact.text}, where it speaks of what the claim says"
    return None


_MONTHS = content_tokens("January February March April May June July August September October November December "
                         "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec")  # a date's words are its value's, not its subject's
_UNIT = re.compile(r"[a-z%]{1,12}|[A-Z][A-Za-z]{0,3}")  # "hours", "ms", "MB", "GiB"; not "Macanese"
_UNIT_AFTER = r"\s*([A-Za-z%][A-Za-z]{0,11})\b"


def _unit(claim: str, values: list[Fact], passage: str) -> str | None:
    """A number the claim gives with a unit ("64 MB") that the passage gives only with other units
    ("64 levels"), while it gives that unit to another number ("10 MB")."""
    source = normalise(passage)
    for fact in values:
        if fact.kind != "number":
            continue
        m = re.search(re.escape(fact.text) + _UNIT_AFTER, claim)
        if m is None or m.group(1).lower() in STOPWORDS or not _UNIT.fullmatch(m.group(1)) or _YEAR.fullmatch(fact.value):
            continue
        unit = m.group(1).lower()
        after = [u.group(1).lower() for at in fact_positions(fact, source)
                 if (u := re.match(r"[\d.,%]*" + _UNIT_AFTER, source[at:])) is not None]
        if after and unit not in after and re.search(r"\d" + r"\s*" + re.escape(m.group(1)) + r"\b", source, re.IGNORECASE):
            return f"the passage gives {fact.text} in {after[0]}, not in {m.group(1)}"
    return None


def _negation(claim: str, places: list[Place]) -> str | None:
    """A sentence of the claim is negated and the passage's closest sentence is not, or the reverse."""
    for part in _places(claim):
        if (problem := _negation_of(part.core, places)) is not None:
            return problem
    return None


def _negation_of(claim: str, places: list[Place]) -> str | None:
    words = content_tokens(claim)
    if len(words) < 3:
        return None
    scored = [(len(words & content_tokens(p.core)) / len(words), p) for p in places]
    best, place = max(scored, key=lambda x: x[0], default=(0.0, None))
    if place is None or best < NEGATION_OVERLAP:
        return None
    said, there = _negated(claim), _negated(place.core)
    if said and not there:
        return "the claim says the opposite (a negation) of the passage's sentence"
    if there and not said and len(words) >= NEGATED_PASSAGE_WORDS and best >= NEGATED_PASSAGE_OVERLAP:
        return "the passage's sentence says the opposite (a negation) of the claim"
    return None


def _negated(text: str) -> bool:
    return _NEGATION.search(_QUOTED.sub(" ", text)) is not None


def _other_value(fact: Fact, place: Place) -> str | None:
    """A value of the same kind as `fact`, not it, in the place's sentence."""
    for other in facts_in(" ".join(place.core.split())):  # a quotation broken over lines is one value
        if other.kind == fact.kind and other.value != fact.value and fact.value not in other.value:
            return other.text
    return None


def _in(fact: Fact, text: str) -> bool:
    return bool(fact_positions(fact, text))


_LINE_END = re.compile(r"(?<=[.!?。！？;；:：])[ \t]*\n")  # a line that ends a sentence ends it, whatever follows


def _places(passage: str) -> list[Place]:
    cuts = [0, *(m.end() for m in _LINE_END.finditer(passage)), len(passage)]
    spans = [(a, b) for lo, hi in itertools.pairwise(cuts) for a, b in sentence_spans(passage, lo, hi)
             if passage[a:b].strip()] or [(0, len(passage))]
    out = []
    for i, (a, b) in enumerate(spans):
        lo, hi = spans[max(0, i - 1)][0], spans[min(len(spans) - 1, i + 1)][1]
        out.append(Place(lo, hi, passage[lo:hi], passage[a:b]))
    return out


def _strip_markers(text: str) -> str:
    return re.sub(r"\s*(?:\[\d+(?:\s*[,，、]\s*\d+)*\]|【\d+】)", "", text)


# -- comparisons: "Which was released first, A or B?" answered with the one the passage's dates contradict --
_EARLIER = re.compile(r"\b(?:first|earlier|earliest|older|oldest|sooner)\b|更早|最早|先", re.IGNORECASE)
_LATER = re.compile(r"\b(?:later|latest|younger|youngest|newer|newest|more recent(?:ly)?|most recent(?:ly)?)\b|更晚|最晚|最新",
                    re.IGNORECASE)
_YEAR = re.compile(r"(?<![\d.,])(1[0-9]{3}|20[0-9]{2})(?!\d|,\d|\.\d)")
_NAME_WORD = r"(?:[A-Z0-9][\w'’.&-]*|of|the|for|de|du|da|von|van|and|la|le|el)"
_YEAR_REACH = 160  # characters after an option's first mention in which its year stands
_ALTERNATIVES = re.compile(rf"((?:{_NAME_WORD}\s+)*[A-Z0-9][\w'’.&-]*)\s+or\s+(?:the\s+)?([A-Z0-9][\w'’.&-]*(?:\s+{_NAME_WORD})*)")


def comparison_problem(claim: str, question: str, passage: str) -> str | None:
    """The question asks which of two named things came first (or later), the claim picks one, and
    the years the passage gives each say the other."""
    earlier, later = _EARLIER.search(question), _LATER.search(question)
    if bool(earlier) == bool(later):
        return None
    m = _ALTERNATIVES.search(question)
    if m is None:
        return None
    options = [_trim(m.group(1)), _trim(m.group(2))]
    picked = _picked(claim, options)
    if picked is None:
        return None
    years = [_year_of(options[0], passage, options[1]), _year_of(options[1], passage, options[0])]
    if None in years or years[0] == years[1]:
        return None
    want = min if earlier else max
    right = options[years.index(want(years))]
    if right != picked:
        return f"the passage's years ({options[0]}: {years[0]}, {options[1]}: {years[1]}) say {right}, not {picked}"
    return None


def _trim(option: str) -> str:
    """An alternative without the question's words before it ("Who was born first, Pablo Trapero")."""
    words = option.replace(",", " ").split()
    while words and (words[0].lower() in ("of", "the", "and", "de", "du", "da", "von", "van", "la", "le", "el")
                     or words[0] in ("Which", "Who", "What", "Was", "Were", "Is", "Are", "Did", "Does", "Has", "Had")):
        words = words[1:]
    return " ".join(words).strip(" ?.'’")


def _picked(claim: str, options: list[str]) -> str | None:
    """The option the claim names first (by its first distinctive word)."""
    at = []
    for option in options:
        keys = [w for w in re.findall(r"[\w'’&-]+", option) if len(w) > 2 and w.lower() not in ("the", "and")]
        found = [claim.lower().find(k.lower()) for k in keys]
        found = [x for x in found if x >= 0]
        at.append(min(found) if found else None)
    if all(x is None for x in at):
        return None
    if any(x is None for x in at):
        return options[0] if at[0] is not None else options[1]
    return options[0] if at[0] < at[1] else options[1]


def _year_of(option: str, passage: str, other: str) -> int | None:
    """The first year after the option's first mention in the passage, before the other option's."""
    at = _mention(option, passage)
    if at is None:
        return None
    end = at + _YEAR_REACH
    after = _mention(other, passage[at + len(option):])
    if after is not None:
        end = min(end, at + len(option) + after)
    year = _YEAR.search(passage, at, end)
    return int(year.group(1)) if year else None


def _mention(option: str, text: str) -> int | None:
    """Where the option (its full name, else its first distinctive word) is first named in `text`."""
    low = text.lower()
    at = low.find(option.lower())
    if at >= 0:
        return at
    keys = [w for w in re.findall(r"[\w'’&-]+", option) if len(w) > 2 and w.lower() not in ("the", "and", "for")]
    found = [low.find(k.lower()) for k in keys[:1]]
    return found[0] if found and found[0] >= 0 else None
