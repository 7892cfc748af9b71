"""A small model as a chooser: which of the extractive answerer's best sentences answers the question.

The no-model answer's ceiling is sentence selection: an evidence file is among the hits for most answerable
questions, but the sentence that answers is often ranked lower than the three quoted, and some abstentions have the
right sentence first (benchmarks/RESULTS.md, 2026-12-06, "the 1.5B as a chooser").  A small model (1.5B) writes
answers poorly but can be shown the question and the extractive answerer's top K candidate sentences, numbered, each
with its file and heading, and asked for one number, or NONE, in a reply of a few tokens at temperature 0 (its first
token's log probabilities, when the server sends them, are kept as its doubt):

- a number: that sentence leads the extractive answer (cited as the extractive answer cites), and the extractive
  answer's own sentences follow, so the answer holds everything the extractive one holds;
- when the extractive answerer abstained with evidence of at least RESCUE_FLOOR, the model is asked too, and if it
  chooses the ranking's best sentence with at least RESCUE_SHARE of its first token's probability (and does not
  doubt), the extractive answer is published after all (its
  confidence stays the evidence's: low); if it chooses another sentence with at least PICK_SHARE of its first token's
  probability and the evidence is at least PICK_FLOOR, that sentence leads the ranked sentences; any other sentence it
  chooses is shown to it once more, alone, with the question ("does it state the answer? yes or no", one token): a
  yes with at least CHECK_YES of the two words' probability takes the abstention back with that sentence leading
  (a listwise pick among six is a guess more often than not; asked of one sentence, its yes is the better judge).  An abstention that
  is not the evidence's (a release question that no quoted sentence or heading names a release for) is never taken
  back: the model's pick cannot name the release either;
- NONE (or NONE's share of the first token at least NONE_SHARE) under NONE_FLOOR's evidence: not found (off as
  shipped: on the dev split every floor that abstained more also lost answerable questions);
- a reply that is neither (prose, a number out of range): the extractive answer, as if the model were not there.

- JUDGE (off as shipped): an abstention with evidence of at least JUDGE_FLOOR that the listwise pick did not take back
  has each of its first JUDGE_K candidates shown alone with the question (the check's prompt, the question first so
  that the server's prompt cache keeps it: one call each), and the best by JUDGE_MIX (its yes, its place in the
  ranking) takes the abstention back when it reaches JUDGE_TAKE; JUDGE_ANSWERED asks the same of an answer's
  candidates, the best judged leading instead of the listwise pick.  Measured on the dev split (benchmarks/RESULTS.md,
  "pointwise judging"): a right candidate's yes is hardly above a wrong one's (AUC 0.59), no mix of yes and place
  gains held out by documentation set, and the calls double the chooser's time: off, kept for a better judge.

- AGREE: the 1.5B's listwise pick follows the place more than the sentence (it answers "3" or "4" for most lists,
  whatever they hold).  An abstention whose first pick is a candidate is asked again with the candidates in other
  orders (ORDERS: reversed, then rotated by half; the instructions are the same, so a server's prompt cache keeps
  them, and each order stops the asking once its pick differs); when the same candidate is chosen in every order, it
  is no place's preference, and the abstention is taken back with it leading at evidence of at least AGREE_TAKE
  (besides the rescues above, which stand).

Nothing the model writes is published: it only orders sentences of the documents.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from docqa.answer.extractive import Extract, Sentence
from docqa.answer.sources import SourceSet, distinct_name
from docqa.llm.base import Message

K = 6  # candidates shown: the evidence file is among the hits for ~92 % of answerable questions, its sentence often 2nd-6th
MAX_CHARS = 240  # of each candidate's text: a long table or paragraph is cut, the prompt stays short (prompt reading dominates)
MAX_TOKENS = 4  # the reply is a number or NONE
TOP = 10  # alternatives of the first token asked for (logprobs): the model's own doubt, NONE's share of it
NONE_FLOOR = 0.0  # the model doubts (below) and the evidence is under this: not found (0: the verdict is only recorded)
NONE_SHARE = 1.0  # the model doubts when it says NONE, or gives NONE at least this share of its first token's probability
RESCUE_FLOOR = 0.2  # the extractive answerer abstained with at least this evidence: the model is asked, and when it
# chooses the ranking's best sentence (and does not doubt) that answer is published after all (dev: 0.1-0.25 the same)
RESCUE_SHARE = 0.33  # ... with at least this share of the model's first token for the best sentence: on four recorded whole-dev
# runs the right rescues had 0.39-0.47, the wrong ones 0.21, 0.22 (debian-readmes-051, valgrind-html-004) and 0.28
PICK_SHARE = 0.5  # ... a later sentence taken back with at least this share of the model's first token (its own picks
# average 0.33; the whole dev split's two recorded runs: 0.45-0.55 with PICK_FLOOR 0.3 the same, under 0.45 near misses
# answered) and evidence at least PICK_FLOOR (under 0.3, false abstentions and near misses alike)
PICK_FLOOR = 0.3
CHECK_YES = 0.8  # ... or a later pick whose own check says yes with at least this probability (yes / (yes + no)); on the
# dev split's 27 checked picks: right picks 0.83, 0.76, 0.24, 0.17; wrong picks of answerable questions 0.79, 0.72
# (0.7 took back two right and two wrong); near misses at most 0.68
JUDGE = False  # each candidate judged alone as well ("does it state the answer?"), for an abstention (`may_judge`);
# off: on the dev split no held-out mix gained (RESULTS.md, 2026-12-06, "pointwise judging")
JUDGE_FLOOR = 0.1  # ... whose evidence is at least this
JUDGE_K = 6  # ... the first this many candidates, one call each (the question first: the server's prompt cache keeps it)
JUDGE_MIX = (0.0, 1.0, 0.0)  # a candidate's judged score: intercept, weight of its yes, weight of 1/(its place in the ranking)
JUDGE_TAKE = 2.0  # an abstention taken back with the best-judged candidate leading when its score is at least this (> 1: never)
JUDGE_ANSWERED = False  # ... and each candidate of an answer too: the best judged (at least JUDGE_TAKE) leads it
AGREE = False  # the listwise question asked again with the candidates in other orders (`ORDERS`), for agreement:
# position bias (the 1.5B prefers places 3-4 whatever they hold) is not agreement; off: dev 1 better, 0 worse, valid 0 and 0,
# test 0 better, 1 worse (RESULTS.md, 2026-12-06, "agreement across orders")
AGREE_FLOOR = 0.2  # ... asked for an abstention whose evidence is at least this (and not a rule's), when the first pick is a
# candidate; and for an answer whose pick is a later sentence when AGREE_ANSWERED
AGREE_ANSWERED = False
AGREE_TAKE = 0.2  # an abstention taken back with the agreed candidate leading when its evidence is at least this (RESCUE_FLOOR's:
# not fitted; dev: 1 of 27 asked abstentions agreed in all three orders, right; valid: 2 of 19, both already taken back)
ORDERS = ("reversed", "rotated")  # the other orders, asked one by one until one disagrees (the same candidate each time)
AGREE_EVERY = False  # ... every order asked even after one disagrees (for measurement: each order's shares recorded)
ASK_ABSTAINED = False  # ask even when the extractive answerer abstains (recorded in the trace only: for measurement)
NONE, UNREAD = 0, -1  # what `read` returns besides a candidate's number

SYSTEM = """You choose which numbered sentence from the documents answers a question.
Reply with the number of the one sentence that states the answer, or NONE if no sentence states it.
Reply with the number or NONE only, nothing else."""

CHECK_SYSTEM = """You judge whether a sentence from the documents answers a question.
Reply yes if the sentence states the answer to the question, no if it does not. Reply yes or no only."""

_NUMBER = re.compile(r"^\W{0,3}(?:sentence\s*|number\s*)?\[?(\d{1,2})\]?(?:\W|$)", re.IGNORECASE)
_NONE = re.compile(r"^\W{0,3}(?:none|not[_ ]found|no sentence)\b", re.IGNORECASE)


@dataclass(slots=True)
class Choice:
    """What the model chose: `pick` is the candidate's number (1-based), NONE or UNREAD; `sentence` the pick;
    `shares`: the model's probability of each answer it could have given first (0: NONE), normalised over them
    (empty when the server sends no log probabilities)."""

    pick: int
    sentence: Sentence | None = None
    shares: dict[int, float] = field(default_factory=dict)

    @property
    def said_none(self) -> bool:
        return self.pick == NONE

    @property
    def none_share(self) -> float | None:
        """How likely the model found NONE (None: not known)."""
        return self.shares.get(NONE, 0.0) if self.shares else None

    @property
    def doubts(self) -> bool:
        """The model's verdict is that no sentence answers: it said NONE, or NONE had NONE_SHARE of its probability."""
        return self.said_none or (self.none_share or 0.0) >= NONE_SHARE


def candidates(result: Extract, lead: Sentence | None = None, k: int = K) -> list[Sentence]:
    """The extractive answerer's best sentences by its ranking, `lead` (the sentence its answer starts with) first,
    so that a model that picks the first changes nothing; near repeats left out."""
    first = result.chosen or result.ranked
    order = ([lead] if lead else []) + first[:1] + sorted(result.candidates, key=lambda s: -s.score)
    out: list[Sentence] = []
    seen: set[str] = set()
    for s in order:
        key = " ".join(s.text.split()).casefold()
        if not key or key in seen:
            continue
        seen.add(key)
        out.append(s)
        if len(out) == k:
            break
    return out


def messages(question: str, shown: Sequence[Sentence], sources: SourceSet) -> list[Message]:
    """The prompt: fixed instructions (a server's prompt cache keeps them), then the numbered sentences, each with
    its file and heading, then the question."""
    lines = []
    for i, s in enumerate(shown, 1):
        text = " ".join(s.text.split())
        text = text if len(text) <= MAX_CHARS else text[:MAX_CHARS].rstrip() + " …"
        lines.append(f"[{i}] ({where(s, sources)}) {text}")
    user = "Sentences:\n" + "\n".join(lines) + f"\n\nQuestion: {question}\nThe number of the sentence that answers it, or NONE:"
    return [Message("system", SYSTEM), Message("user", user)]


def where(s: Sentence, sources: SourceSet) -> str:
    """A sentence's file and heading as the prompts show them: `README.Debian § Backups`."""
    hit = sources.get(s.n).hit  # type: ignore[union-attr]
    section = hit.section.split(" > ")[-1] if hit.section else ""
    return distinct_name(hit.path, sources.paths) + (f" § {section}" if section else "")


def check_messages(question: str, s: Sentence, sources: SourceSet) -> list[Message]:
    """The check of one chosen sentence: the question first (a server's prompt cache keeps it), then the sentence."""
    text = " ".join(s.text.split())
    text = text if len(text) <= MAX_CHARS else text[:MAX_CHARS].rstrip() + " …"
    user = (f"Question: {question}\nSentence ({where(s, sources)}): {text}\n"
            "Does the sentence state the answer to the question? yes or no:")
    return [Message("system", CHECK_SYSTEM), Message("user", user)]


def yes(text: str, top: dict[str, float] | None = None) -> float | None:
    """The check's verdict as yes's share of yes and no among the first token's alternatives; without them, 1.0 or
    0.0 as the reply says yes or no; None when it says neither."""
    mass = {"yes": 0.0, "no": 0.0}
    for token, logprob in (top or {}).items():
        word = token.strip().lower()
        if word in mass:
            mass[word] += math.exp(logprob)
    if mass["yes"] + mass["no"] > 0:
        return mass["yes"] / (mass["yes"] + mass["no"])
    word = text.strip().split()[0].strip(".,!").lower() if text.strip() else ""
    return 1.0 if word == "yes" else 0.0 if word == "no" else None


def read(text: str, count: int) -> int:
    """The reply read: a candidate's number (1..count), NONE, or UNREAD (anything else: prose, a number out of range)."""
    line = text.strip().splitlines()[0].strip() if text.strip() else ""
    if _NONE.match(line):
        return NONE
    m = _NUMBER.match(line)
    if m and 1 <= int(m.group(1)) <= count:
        return int(m.group(1))
    return UNREAD


def choice(text: str, shown: Sequence[Sentence], top: dict[str, float] | None = None) -> Choice:
    pick = read(text, len(shown))
    return Choice(pick, shown[pick - 1] if pick > 0 else None, shares(top or {}, len(shown)))


def shares(top: dict[str, float], count: int) -> dict[int, float]:
    """The first token's alternatives (token -> log probability) read as answers: a number 1..count or NONE (0),
    each answer's probability normalised over the answers among them; {} when none is."""
    mass: dict[int, float] = {}
    for token, logprob in top.items():
        word = token.strip().lstrip("[").strip().upper()
        n = NONE if word in ("NONE", "NO", "NOT") else int(word) if word.isdigit() and 1 <= int(word) <= count else None
        if n is not None:
            mass[n] = mass.get(n, 0.0) + math.exp(logprob)
    total = sum(mass.values())
    return {n: m / total for n, m in mass.items()} if total > 0 else {}


def leads(pick: Sentence, quoted: Sequence[Sentence]) -> list[Sentence]:
    """The extractive answer's sentences with the pick first: the pick, then the others in their order, the pick's
    own place (or a quote it overlaps) left out."""
    return [pick] + [x for x in quoted if not (x.n == pick.n and x.start < pick.end and pick.start < x.end)]


def may_rescue(result: Extract) -> bool:
    """Whether the model is asked about an abstention: the evidence is at least RESCUE_FLOOR (under the abstain
    threshold), and the abstention is the evidence's, not a rule's of the answerer (docqa.answer.extractive: a release
    question that nothing names the release for, a quantity question quoted with no quantity)."""
    return result.evidence >= RESCUE_FLOOR and not result.rule


def may_judge(result: Extract) -> bool:
    """Whether each candidate of an abstention is judged alone (JUDGE): the evidence is at least JUDGE_FLOOR and the
    abstention is the evidence's, not a rule's."""
    return JUDGE and result.evidence >= JUDGE_FLOOR and not result.rule


def judged(yeses: Sequence[float | None]) -> list[float]:
    """Each candidate's judged score: JUDGE_MIX over its yes (0 when the reply was neither word) and its place in the
    ranking (1/place: the ranking's best first)."""
    a, w_yes, w_place = JUDGE_MIX
    return [a + w_yes * (y or 0.0) + w_place / i for i, y in enumerate(yeses, 1)]


def judged_pick(yeses: Sequence[float | None]) -> int:
    """The candidate (1-based) that takes an abstention back: the best judged, when its score is at least JUDGE_TAKE;
    else 0."""
    scores = judged(yeses)
    if not scores:
        return 0
    best = max(range(len(scores)), key=lambda i: scores[i])
    return best + 1 if scores[best] >= JUDGE_TAKE else 0


def rescues(picked: Choice, result: Extract, checked: float | None = None) -> bool:
    """Whether an abstention is taken back (`may_rescue`): the model chose the ranking's best sentence with no doubt,
    or another with at least PICK_SHARE of its first token's probability, at PICK_FLOOR's evidence, or another that
    its own check (`checked`: yes's share) backs with at least CHECK_YES."""
    if not may_rescue(result) or picked.doubts:
        return False
    return backs_best(picked) or (picked.pick > 1 and (confident(picked, result) or (checked or 0.0) >= CHECK_YES))


def backs_best(picked: Choice) -> bool:
    """The model chose the ranking's best sentence with at least RESCUE_SHARE of its first token's probability (any
    share when the server sends none)."""
    return picked.pick == 1 and (not picked.shares or picked.shares.get(1, 0.0) >= RESCUE_SHARE)


def confident(picked: Choice, result: Extract) -> bool:
    """A later pick the model gave at least PICK_SHARE of its first token, at PICK_FLOOR's evidence (no check asked)."""
    return picked.pick > 1 and picked.shares.get(picked.pick, 0.0) >= PICK_SHARE and result.evidence >= PICK_FLOOR


def to_check(picked: Choice, result: Extract) -> bool:
    """Whether the pick is checked alone: an abstention that may be taken back, a later sentence chosen with no doubt
    and not confidently enough to be taken back without a check."""
    return may_rescue(result) and picked.pick > 1 and not picked.doubts and not confident(picked, result)


def order(kind: str, count: int) -> list[int]:
    """The candidates' places (0-based) in another order: `reversed` puts the ranking's best last; `rotated` the
    second half first, so that across the three orders each candidate is shown at places of both ends."""
    places = list(range(count))
    if kind == "reversed":
        return places[::-1]
    if kind == "rotated":
        half = count // 2
        return places[half:] + places[:half]
    raise ValueError(f"unknown order {kind!r}: expected 'reversed' or 'rotated' (choose.ORDERS)")


def reordered(shown: Sequence[Sentence], places: Sequence[int]) -> list[Sentence]:
    return [shown[i] for i in places]


def mapped(picked: Choice, places: Sequence[int]) -> Choice:
    """A choice among the reordered candidates read as one among the candidates in the ranking's order: its pick
    and its shares renumbered (NONE and UNREAD stay)."""
    pick = places[picked.pick - 1] + 1 if picked.pick > 0 else picked.pick
    shares = {(places[n - 1] + 1 if n > 0 else n): v for n, v in picked.shares.items()}
    return Choice(pick, picked.sentence, shares)


def agreed(picks: Sequence[int]) -> int:
    """The candidate (1-based) chosen in every order asked; 0 when the picks differ, none is a candidate, or only one
    order was asked."""
    return picks[0] if len(picks) > 1 and picks[0] > 0 and all(p == picks[0] for p in picks) else 0


def asks_again(picked: Choice, result: Extract) -> bool:
    """Whether the listwise question is asked again in the other orders (AGREE): the first pick is a candidate, and
    the answer abstained with evidence at least AGREE_FLOOR (not a rule's abstention), or (AGREE_ANSWERED) it
    answers and the pick is a later sentence than its own lead."""
    if not AGREE or picked.pick <= 0:
        return False
    if result.abstained:
        return result.evidence >= AGREE_FLOOR and not result.rule
    return AGREE_ANSWERED and picked.pick > 1


def agreement_rescues(picks: Sequence[int], result: Extract) -> int:
    """The candidate (1-based) that takes an abstention back on the model's agreement with itself: the same
    candidate chosen in every order asked (ORDERS), at evidence at least AGREE_TAKE (not a rule's abstention); else 0."""
    n = agreed(picks)
    return n if n and result.abstained and not result.rule and result.evidence >= AGREE_TAKE else 0
