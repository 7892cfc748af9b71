"""docqa.evaluate.Report.tradeoff: answer accuracy and abstention over thresholds from one run at threshold 0."""

from __future__ import annotations

from docqa.evaluate import Item, Outcome, Report


def _outcome(impossible: bool, answered: bool, evidence: float, contains: bool) -> Outcome:
    item = Item("How many characters may an ASN.1 identifier have?", [] if impossible else ["64"], impossible)
    return Outcome(item, answered, answered and contains, None, evidence, contains, {}, "SUCCESS")


def test_a_question_the_answerer_abstained_on_by_a_rule_abstains_at_every_threshold():
    """At threshold 0 the answerer still abstains by rules of its own (a release question no version answers, a "how
    many" question no quoted sentence states a quantity for): such a question is not answered at any cut, whatever
    its evidence and whatever the not-found text happens to hold."""
    report = Report([_outcome(True, False, 0.9, False), _outcome(True, True, 0.9, False),
                     _outcome(False, False, 0.9, True), _outcome(False, True, 0.9, True)])
    (row,) = report.tradeoff([0.5])
    assert row == {"threshold": 0.5, "answer_accuracy": 0.5, "abstention_accuracy": 0.5}
    (high,) = report.tradeoff([0.95])
    assert high["answer_accuracy"] == 0.0 and high["abstention_accuracy"] == 1.0
