"""Which later picks the extractive answer quotes beside a best pick the ranking is sure of (extractive._bearing): the
ones that bear something of their own, not the context that only lowers its citations' precision (issue 28, item 8).
The rule is off by default (SELECT_SURE None: on the test split it lost right answers); these tests turn it on at the
values fitted on the dev split."""

from __future__ import annotations

import pytest

from docqa.answer import extractive
from docqa.answer.extractive import Sentence, _bearing, extract

from .hits import hit_in, sources

# apt's NEWS.Debian (Debian package apt), two entries as the file has them.
NEWS = """apt (2.3.12) unstable; urgency=medium

  The solver will no longer try to remove Essential or Protected packages,
  any dependency problem that would need such a solution will have to be
  resolved manually.

  The "Yes, do as I say" prompt for removing essential packages has been
  replaced by an error message. The appropriate command-line option needs
  to be used instead.

  Thank you to Linus Tech Tips and System76 for bringing this issue
  to our attention.

 -- Julian Andres Klode <jak@debian.org>  Wed, 17 Nov 2021 18:26:40 +0100
"""
LOCK = """apt (1.9.11) experimental; urgency=medium

  apt(8) now waits for the lock indefinitely if connected to a tty, or
  for 120 seconds if not.

 -- Julian Andres Klode <jak@debian.org>  Wed, 26 Feb 2020 20:30:33 +0100
"""


def _pool():
    return sources(hit_in(NEWS, 0, len(NEWS), path="/doc/apt/NEWS.Debian", chunk_id="news"),
                   hit_in(LOCK, 0, len(LOCK), path="/doc/apt/NEWS.old", chunk_id="lock"))


def _sentence(n: int, text: str, score: float) -> Sentence:
    doc = NEWS if n == 1 else LOCK
    start = doc.index(text)
    return Sentence(n, start, start + len(text), text, score=score)


FITTED = 0.45  # SELECT_SURE as fitted on the trust dev split


@pytest.fixture(autouse=True)
def _sure(monkeypatch):
    monkeypatch.setattr(extractive, "SELECT_SURE", FITTED)


PROMPT = 'The "Yes, do as I say" prompt for removing essential packages has been\n  replaced by an error message.'
OPTION = "The appropriate command-line option needs\n  to be used instead."
THANKS = "Thank you to Linus Tech Tips and System76 for bringing this issue\n  to our attention."
SOLVER = ("The solver will no longer try to remove Essential or Protected packages,\n  any dependency problem that would need"
          " such a solution will have to be\n  resolved manually.")
WAITS = "apt(8) now waits for the lock indefinitely if connected to a tty, or\n  for 120 seconds if not."


@pytest.mark.parametrize("question, best, later, kept", [
    # a sure best: a later pick unlikely in itself is context, left out, from its own passage or another one
    ("What replaced the prompt for removing essential packages?", 0.7, [(1, THANKS, 0.1)], []),
    ("What replaced the prompt for removing essential packages?", 0.7, [(2, WAITS, 0.1)], []),
    # ... one likely right itself stays
    ("What replaced the prompt for removing essential packages?", 0.7, [(1, THANKS, 0.3)], [THANKS]),
    # ... so does the sentence that continues the best in its paragraph (nothing but whitespace between them), not the
    # one ending the paragraph before it
    ("What replaced the prompt for removing essential packages?", 0.7, [(1, OPTION, 0.1), (1, THANKS, 0.1)], [OPTION]),
    ("What replaced the prompt for removing essential packages?", 0.7, [(1, SOLVER, 0.1)], []),
    # ... and one holding the kind of token asked for ("how long": a number) that the best lacks
    ("How long does apt wait for the lock without a terminal?", 0.7, [(2, WAITS, 0.1)], [WAITS]),
    # a best that is not sure keeps every pick: the answer may be in a later one
    ("What replaced the prompt for removing essential packages?", 0.3, [(1, THANKS, 0.1), (2, WAITS, 0.05)],
     [THANKS, WAITS]),
])
def test_a_sure_best_is_quoted_with_the_later_picks_that_bear_something_of_their_own(question, best, later, kept):
    head = _sentence(1, PROMPT, best)
    picks = [head, *(_sentence(n, text, p) for n, text, p in later)]
    assert [s.text for s in _bearing(question, picks, set(), _pool())[1:]] == kept


def test_a_sentence_joined_to_the_best_stays():
    """The follower `_complete` joined to a best that only leads up to the answer is always shown with it."""
    head, joined = _sentence(1, PROMPT, 0.9), _sentence(2, WAITS, 0.01)
    assert _bearing("What replaced the prompt?", [head, joined], {id(joined)}, _pool()) == [head, joined]


def test_the_answer_quotes_a_sure_best_without_the_context_around_it(hash_embedder, monkeypatch):
    """Through `extract`: the sentence that holds the whole question is quoted with the one continuing it, not with
    the paragraph before it that the ranking picked next."""
    # a ranking that weighs only how much of the question's terms a sentence holds: its probabilities are clear cut
    monkeypatch.setattr(extractive, "SELECT_MODEL", {"terms": 14.0, "bias": -9.0})
    question = 'What replaced the "Yes, do as I say" prompt for removing essential packages?'
    embed = lambda texts, kind: hash_embedder.embed_batch(texts, kind)  # noqa: E731
    result = extract(question, _pool(), {}, embed, count=3, threshold=0.0)
    assert result.chosen[0].text.startswith('The "Yes, do as I say" prompt') and result.chosen[0].score >= FITTED
    assert len(result.ranked) == 3  # three picks ranked; those that bear nothing of their own are not quoted
    assert [s.text for s in result.ranked[1:]] == [SOLVER, OPTION] and result.ranked[1].score < extractive.SELECT_LATER
    assert [s.text for s in result.chosen] == [PROMPT, OPTION]
    monkeypatch.setattr(extractive, "SELECT_SURE", None)  # off, the default: every pick quoted
    assert len(extract(question, _pool(), {}, embed, count=3, threshold=0.0).chosen) == 3
