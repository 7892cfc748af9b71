"""The decision's coverage features measured on documentation as written (issue 28, `refit4`): a Latin token glued
to Chinese text is found in it, the question's framing words are not counted missing, and a file name, path or
option that only a statement before the question holds (the user's own example) is not a token the answer must
quote.  Real questions and sentences of the trust dev split's false abstentions."""

from __future__ import annotations

import pytest

from docqa.answer import extractive
from docqa.answer.extractive import evidence_features
from docqa.retrieve import highlight
from docqa.retrieve.snippet import coverage
from docqa.text.segment import query_terms

MIT = "2007年11月，已经有超过1800个课程在线上。"
MIT_PREVIOUS = "MIT开放式课程也可以被视为一项庞大的、网路出版的MIT教材。"


@pytest.mark.parametrize("text, term, held", [
    (MIT, "2007", True),           # a year glued to 年
    (MIT, "11", True),             # a month glued to 年 and 月
    (MIT_PREVIOUS, "mit", True),   # an acronym glued to the Chinese words after it
    ("发布2.39.5的说明", "39", True),
    ("café au lait", "caf", False),  # a Latin word still ends at a Latin letter
    ("Debian Education", "edu", False),
    ("12345 files", "123", False),
    ("the UID 65534 of nobody", "65534", True),
])
def test_a_latin_term_is_bounded_by_latin_letters_and_digits_only(text, term, held):
    assert (coverage(text, [term]) > 0) is held


def test_a_highlight_marks_a_number_glued_to_chinese():
    assert highlight(MIT, ["2007"]) == "**2007**年11月，已经有超过1800个课程在线上。"


def _features(question: str, sentence: str, window: str | None = None) -> dict[str, float]:
    terms = query_terms(question)
    return evidence_features(question, sentence, window or sentence, terms, {t: 1.0 for t in terms}, 0.5, 0.6)


def test_the_question_s_numbers_are_found_in_the_chinese_sentence_that_states_them():
    """wiki-zh-001: the answer's own sentence holds 2007 and 11 (and MIT the sentence before it)."""
    f = _features("MIT 开放式课程是哪一年启动的？到 2007 年 11 月已经有多少门课上线？", MIT, f"{MIT_PREVIOUS}{MIT}")
    assert f["missing_name"] == 0.0


@pytest.mark.parametrize("question, sentence", [
    # every word the sentence lacks frames the question (我, 想, 把, 用, 该): nothing of its subject is missing
    ("我想把日志文件用 gzip 压缩，该用哪个选项？", "gzip 压缩日志文件的选项是 -9。"),
    ("Please tell me the default port of sshd.", "The default port of sshd is 22."),
])
def test_the_question_s_framing_words_are_not_missing_from_the_sentence(question, sentence):
    assert _features(question, sentence)["missing_rare"] == 0.0


def test_a_missing_word_of_the_subject_still_counts():
    assert _features("我想把日志文件用 bzip2 压缩，该用哪个选项？", "gzip 压缩日志文件的选项是 -9。")["missing_rare"] > 0.0


@pytest.mark.parametrize("question, tokens", [
    # the user's example in a statement before the question: a file name, a path, an option
    ("A file is called backup.tar.gz and both *.gz and *.tar.gz are registered at the same weight. Which pattern must "
     "a spec-compliant implementation use?", []),
    ("新建的用户用 FTP 登录总被拒绝，他的登录 shell 是我自己编译的 /opt/zsh/bin/zsh。可能跟哪个系统文件有关？", []),
    ("The quick start tells me to pass --leak-check=yes. What would Memcheck report about leaks if I left that option "
     "out?", []),
    # a release or an identifier in the statement names the subject; a token of what is asked stays
    ("Git 2.35.8 says it merges fixes from older releases, one of them CVE-2023-29007. What could an attacker do?",
     ["2.35.8", "CVE-2023-29007"]),
    ("sha256sum -c 校验时如果有文件对不上，命令的退出码是多少？", ["-c"]),
    ("Why was Git 2.39.5 released?", ["2.39.5"]),
])
def test_an_example_only_a_statement_before_the_question_holds_need_not_be_quoted(question, tokens):
    assert extractive._asked_exact(question) == tokens


def test_the_pattern_the_spec_names_answers_the_question_about_an_example_file():
    """pdf-manuals-015: the shared-mime-info spec's sentence answers without the user's file name."""
    f = _features("A file is called backup.tar.gz and both *.gz and *.tar.gz are registered at the same weight. Which "
                  "pattern must a spec-compliant implementation use?",
                  "In particular, files with multiple extensions (such as Data.tar.gz) MUST match the longest sequence of "
                  "extensions (eg ’*.tar.gz’ in preference to ’*.gz’).")
    assert f["exact_missing"] == 0.0


SHUTDOWN = "我已经用 shutdown 22:00 定好了晚上关机，现在临时不想关了，怎么撤销？"  # trust dev manpages-zh-058
CANCEL = "-c\n\n取消一个已经在计划中的关机动作。"


@pytest.mark.parametrize("question", [SHUTDOWN, "我设了 shutdown 22:00，怎么撤销？", "cron 在03:15执行的任务怎么停掉？"])
def test_a_time_of_day_in_the_question_is_no_name_or_token_the_answer_must_hold(question):
    """A time the user set (22:00) is a value: the man page's sentence that answers writes no time of day."""
    f = _features(question, CANCEL)
    assert (f["exact_missing"], f["missing_name"]) == (0.0, 0.0)


def test_a_number_of_the_question_is_still_a_name():
    assert _features("我设了 shutdown +30，怎么撤销？", CANCEL)["missing_name"] == 1.0
