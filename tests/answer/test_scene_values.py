"""A number the question writes only inside a quoted value of the scene it sets (the user's own setting or argument) is
no name the decision's sentence must hold (extractive.SCENE_VALUES, issue 28, `falseabs6`).  Real question / sentence
pairs of the trust dev split: grep's and findutils' NEWS.Debian; a number the question asks about still counts."""

from __future__ import annotations

import pytest

from docqa.answer import extractive
from docqa.answer.extractive import evidence_features
from docqa.text.segment import query_terms

GREP_Q = "grep now complains that my GREP_COLOR='01;32' setting is obsolescent. What should the setting look like instead?"
GREP_S = "Instead of GREP_COLOR='xxx', use GREP_COLORS='mt=xxx'.  grep now\n  warns if GREP_COLOR is used and is not overridden by GREP_COLORS."
FIND_Q = "find now exits with an error on `-perm +022`-style modes. What syntax should my scripts use instead?"
FIND_S = "- use the new syntax -perm /..."


def _missing_name(question: str, sentence: str) -> float:
    terms = query_terms(question)
    return evidence_features(question, sentence, sentence, terms, {}, 0.5, 0.6)["missing_name"]


@pytest.mark.parametrize("question, sentence", [(GREP_Q, GREP_S), (FIND_Q, FIND_S)])
def test_a_quoted_value_of_the_scene_is_no_missing_name(question, sentence):
    assert _missing_name(question, sentence) == 0.0


@pytest.mark.parametrize("question, sentence", [
    # the number is in what is asked, or written outside quotes in the scene: it names the subject
    ("What does GREP_COLOR='01;32' select?", GREP_S),
    ("grep 3.8 complains that GREP_COLOR is obsolescent. What should the setting look like instead?", GREP_S),
    # a quoted name that is no number stays a name (the sentence does not hold GREP_COLOURS)
    ("My `GREP_COLOURS` setting is ignored. What should it look like instead?", GREP_S),
])
def test_a_name_of_the_subject_still_counts_missing(question, sentence):
    assert _missing_name(question, sentence) == 1.0


def test_off_the_quoted_value_counts_missing(monkeypatch):
    monkeypatch.setattr(extractive, "SCENE_VALUES", False)
    assert _missing_name(GREP_Q, GREP_S) == 1.0
