"""The answer-or-abstain decision's own features (docqa.answer.answerability), table-driven."""

from __future__ import annotations

import pytest

from docqa.answer import answerability
from docqa.answer.extractive import evidence_features, evidence_probability


@pytest.mark.parametrize("question, kind", [
    ("How many days are backups kept?", "number"),
    ("数据库备份保留多少天？", "number"),
    ("Which file holds the daemon's settings?", "path"),
    ("哪个命令可以轮换密钥？", "command"),
    ("Which option turns off the cache?", "command"),
    ("What version of zlib added this?", "version"),
    ("When was the format first published?", "date"),
    ("Why was Git 2.39.5 released?", None),
])
def test_asked_type(question, kind):
    assert answerability.asked_type(question) == kind


def test_an_exact_token_found_in_the_passage_heading_counts_as_held():
    held = answerability.features("Why was Git 2.39.5 released?", "This release fixes two security bugs.",
                                  "Git v2.39.5 Release Notes 2.39.5.txt", 0.5, 0.6)
    lost = answerability.features("Why was Git 2.39.5 released?", "This release fixes two security bugs.",
                                  "Git v2.39.4 Release Notes 2.39.4.txt", 0.5, 0.6)
    assert held["exact_missing"] == 0.0 and lost["exact_missing"] == 1.0


def test_a_question_that_asks_for_a_number_misses_it_in_a_sentence_without_one():
    asked = "How many days are backups kept?"
    assert answerability.features(asked, "Backups are kept for 35 days.", "", 0.0, None)["type_missing"] == 0.0
    assert answerability.features(asked, "Backups are kept for a while.", "", 0.0, None)["type_missing"] == 1.0
    assert answerability.features("How often are snapshots made?", "Snapshots are made every six hours.", "", 0.0,
                                  None)["type_missing"] == 0.0  # a number in words is a number
    assert answerability.features("备份多久一次？", "每天凌晨进行一次全量备份。", "", 0.0, None)["type_missing"] == 0.0


def test_across_languages_the_lexical_features_that_cannot_hold_are_zero():
    terms = ["数据库", "备份", "保留", "多少"]
    weights = {t: 2.0 for t in terms}
    same = evidence_features("数据库备份保留多少天？", "每天进行一次全量备份，备份保留 35 天。", "每天进行一次全量备份，备份保留 35 天。",
                             terms, weights, 0.7, 0.6, "运维手册 备份策略")
    cross = evidence_features("数据库备份保留多少天？", "Full backups are kept for 35 days.", "Full backups are kept for 35 days.",
                              terms, weights, 0.7, 0.6, "Operations Handbook Backups")
    assert same["crossing"] == 0.0 and same["crossing_dense"] == 0.0 and same["heading"] > 0
    assert cross["crossing"] == 1.0 and cross["crossing_dense"] == 0.7
    assert cross["missing_rare"] == 0.0 and cross["heading"] == 0.0
    assert 0.0 < evidence_probability(cross) < 1.0
