"""A question term the decision's sentence does not write but its window holds a word close in meaning to counts half
covered in `missing_rare` and `matched` (docqa.answer.meaning; issue 28, `softcover`); an exact token (a number, a
name, an identifier) never does.  Real questions and sentences of the trust dev split."""

from __future__ import annotations

import pytest

from docqa.answer import extractive, meaning
from docqa.answer.extractive import evidence_features
from docqa.text.segment import query_terms

JAVA_Q = "Our Java service misbehaves under Valgrind because the JIT rewrites generated code. Which option should I try?"
JAVA_S = ("I tried running a Java program (or another program that uses a just-in-time compiler) under Valgrind but "
          "something went wrong.")
MIME_Q = ("A file is called backup.tar.gz and both *.gz and *.tar.gz are registered at the same weight. Which pattern "
          "must a spec-compliant implementation use?")
MIME_S = ("In particular, files with multiple extensions (such as Data.tar.gz) MUST match the longest sequence of "
          "extensions (eg '*.tar.gz' in preference to '*.gz').")
MIME_BEFORE = "If several patterns of the same weight match then the longest pattern SHOULD be used."
MIT_Q = "MIT 开放式课程是哪一年启动的？到 2007 年 11 月已经有多少门课上线？"
MIT_S = "2007年11月，已经有超过1800个课程在线上。"
JOURNAL_Q = "journalctl -n 后面不跟数字的话，默认显示最近多少行？"
JOURNAL_S = "-n, --lines= 限制显示最新的日志行数。"


def _names(question: str) -> list[str]:
    return extractive._names(question)


@pytest.mark.parametrize("question, excluded", [
    ("在 Callgrind 完整插桩下，程序大概会慢多少倍？", ["callgrind"]),  # a tool's name: Helgrind is near, not it
    ("ssh 指定端口用的是小写 -p，那用 scp 传文件时指定端口也是小写 -p 吗？", ["scp", "p"]),  # a command, an option
    ("我用 shutdown +30 安排半小时后关机。普通用户从什么时候开始就登录不进来了？", ["30"]),  # a number
    ("Which 2.38.x maintenance release fixes CVE-2024-32465?", ["2", "38", "x"]),  # a release series
    ("Debian Edu 的 slbackup 每天几点开始自动备份？", ["slbackup", "edu"]),  # a package, a name
    ("LilyPond 的块注释可以一层套一层地嵌套使用吗？", ["套"]),  # one Chinese character: too ambiguous alone
])
def test_an_exact_token_is_never_a_candidate_for_cover_by_meaning(question, excluded):
    found = meaning.candidates(question, query_terms(question), _names(question))
    assert found and not set(excluded) & set(found)


@pytest.mark.parametrize("question, kept", [
    (JAVA_Q, ["try", "service"]),
    (MIT_Q, ["开放式", "上线"]),
    (JOURNAL_Q, ["最近", "默认"]),
])
def test_a_word_of_the_language_is_a_candidate(question, kept):
    assert set(kept) <= set(meaning.candidates(question, query_terms(question), _names(question)))


def test_with_no_embedder_or_switched_off_nothing_is_close(monkeypatch):
    assert meaning.closeness(["try"], JAVA_S, None) == {}
    monkeypatch.setattr(meaning, "CLOSE", None)
    assert not meaning.covered("try", {"try": 1.0})


def _features(question: str, sentence: str, window: str, close: dict[str, float] | None) -> dict[str, float]:
    terms = query_terms(question)
    return evidence_features(question, sentence, window, terms, {t: 1.0 for t in terms}, 0.5, 0.6, close=close)


def test_a_covered_term_weighs_half_in_missing_rare_and_matched_when_applied(monkeypatch):
    """valgrind-html-016 ("try"; the sentence says "tried"): with every missing term covered, each weighs half."""
    monkeypatch.setattr(meaning, "APPLY", True)
    close = dict.fromkeys(query_terms(JAVA_Q), 0.95)
    plain = _features(JAVA_Q, JAVA_S, JAVA_S, None)
    near = _features(JAVA_Q, JAVA_S, JAVA_S, close)
    assert plain["missing_rare"] == 1.0 and near["missing_rare"] == meaning.SHARE
    assert near["matched"] > plain["matched"] and near["meaning_covered"] > 0
    assert near["meaning_rare"] == pytest.approx(plain["missing_rare"] - near["missing_rare"])


def test_the_shipped_measurement_only_records_the_cover():
    """APPLY off (the shipped state): `missing_rare` and `matched` are as the sentence writes them; what a word close
    in meaning covers is recorded for a refit."""
    close = dict.fromkeys(query_terms(JAVA_Q), 0.95)
    plain = _features(JAVA_Q, JAVA_S, JAVA_S, None)
    near = _features(JAVA_Q, JAVA_S, JAVA_S, close)
    assert (near["missing_rare"], near["matched"]) == (plain["missing_rare"], plain["matched"])
    assert near["meaning_covered"] > 0 and near["meaning_rare"] == pytest.approx(1.0 - meaning.SHARE)
    assert plain["meaning_covered"] == plain["meaning_rare"] == 0.0


VERITY_Q = "How long does systemd wait for a verity image to be configured by default when dissecting images?"
VERITY_S = ("* `$SYSTEMD_DISSECT_VERITY_TIMEOUT_SEC=sec` — takes a timespan, which controls the timeout waiting for the "
            "image to be configured.")
TOOL_Q = ("Which tool can start uninstrumented and have instrumentation switched on later, and how much overhead does "
          "running without instrumentation cost?")
TOOL_S = "The tool does nothing except run the program uninstrumented."


@pytest.mark.parametrize("question, window, term", [
    (MIME_Q, f"{MIME_BEFORE} {MIME_S}", "pattern"),                 # the sentence before says "pattern"
    (MIME_Q, MIME_S, "file"),                                       # file ~ files
    (VERITY_Q, f"{VERITY_S} Defaults to 100 msec.", "default"),     # default ~ Defaults, in the next sentence
    (TOOL_Q, TOOL_S, "running"),                                    # running ~ run
    (MIT_Q, "MIT开放课程是麻省理工学院的一个项目。", "开放式"),        # 开放式 ~ 开放
])
def test_a_paraphrased_term_is_covered_by_the_embedder(local_embedder, question, window, term):
    close = extractive._closeness(question, query_terms(question), window, local_embedder.embed_batch)
    assert meaning.covered(term, close)


@pytest.mark.parametrize("question, window, term", [
    (JAVA_Q, JAVA_S, "misbehaves"),                                  # nothing in the sentence says it
    (MIT_Q, MIT_S, "上线"),                                          # 在线 is near (0.82), not close enough
    (JOURNAL_Q, JOURNAL_S, "最近"),                                  # 最新 likewise (0.81)
    ("What compression ratio does zstd reach at level 19 on the Silesia corpus according to its README?",
     "__Zstandard__, or `zstd` as short version, is a fast lossless compression algorithm, targeting real-time "
     "compression scenarios at zlib-level and better compression ratios.", "corpus"),
    ("Debian Edu 12 的安装过程中，配置选项页面一共提供了多少种语言？", "- 安装期间的配置选项页面有 29 种语言可用，其中 22 种已完全翻译。", "一共"),
])
def test_an_unrelated_word_does_not_cover(local_embedder, question, window, term):
    close = extractive._closeness(question, query_terms(question), window, local_embedder.embed_batch)
    assert not meaning.covered(term, close)


def test_a_near_miss_s_missing_release_stays_missing(local_embedder, monkeypatch):
    """git-relnotes-045 (a near miss): the sentence names the CVE, not the 2.38.x release that fixes it; "38" is
    exact, so `missing_rare` stays at its worst whatever the other words' cover."""
    monkeypatch.setattr(meaning, "APPLY", True)
    question, sentence = "Which 2.38.x maintenance release fixes CVE-2024-32465?", "* CVE-2024-32465:"
    close = extractive._closeness(question, query_terms(question), sentence, local_embedder.embed_batch)
    assert _features(question, sentence, sentence, close)["missing_rare"] == 1.0


@pytest.mark.parametrize("a, b, apart", [
    ("solved", "unsolved", True),   # SQuAD 2.0's unanswerable "What is an important solved problem …?"
    ("direct", "indirect", True),
    ("支持", "不支持", True),
    ("合法", "非法", False),         # not the same word negated: judged by the embedder alone
    ("try", "tried", False),
])
def test_a_word_and_its_negation_are_opposed(a, b, apart):
    assert meaning.opposed(a, b) is apart


def test_an_opposite_is_no_cover(local_embedder):
    """Word vectors put antonyms close: "solved" is not covered by "unsolved", "largest" not by "smallest"."""
    for question, window, term in [
        ("What is an important solved problem in complexity theory?",
         "The question of whether P equals NP is one of the most important unsolved problems in computer science.",
         "solved"),
        ("What is the largest file size tar's ustar format can hold?", "The smallest file size is one block.", "largest"),
    ]:
        close = extractive._closeness(question, query_terms(question), window, local_embedder.embed_batch)
        assert not meaning.covered(term, close)
