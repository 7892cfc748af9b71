"""A long question's scene (docqa.answer.clause.asked): the statements a user makes about their setup name things the
sentence that answers need not hold, so a term only the scene names weighs less when missing (extractive.SCENE_SHARE)."""

from __future__ import annotations

import pytest

from docqa.answer import extractive
from docqa.answer.clause import asked
from docqa.answer.extractive import evidence_features
from docqa.text.segment import fold, query_terms

# issue 28's own example, and the sentence of passwd(1) that answers it
PASSWD_Q = "I locked a user's account with `passwd -l`, but the user can still get in with an SSH key. What else must I do?"
PASSWD_S = "To disable the account, administrators should use usermod --expiredate 1 (this set the account's expire date to Jan 2, 1970)."


@pytest.mark.parametrize("question, asking", [
    (PASSWD_Q, "What else must I do?"),
    ("Since OpenSSH 9.2 the ~C escape no longer gives me a command line. Which option brings it back?",
     "Which option brings it back?"),  # the full stop inside "9.2" ends no sentence
    ("我要拔 U 盘，执行 umount 却提示设备忙（busy），可是我已经把文件管理器关了。手册说什么情况下卸不掉？", "手册说什么情况下卸不掉？"),
    ("我装的是基本配置，同事说别这么装。为什么？那应该装哪个包？", "为什么？ 那应该装哪个包？"),
    ("Which file do I edit? I use the default setup.", "Which file do I edit?"),  # a statement after the question
    # a Chinese sentence's leading clauses that ask nothing set its scene (clause.SCENE_CLAUSES)
    ("我们学校机房都是十年前的老电脑，装 Debian Edu 时选哪个桌面最不吃资源？它能支持多少种语言？",
     "装 Debian Edu 时选哪个桌面最不吃资源？ 它能支持多少种语言？"),
    ("我电脑上装的是霞鹜文楷 0.x 的老版本，现在要换成 1.0，可以直接覆盖安装吗？", "可以直接覆盖安装吗？"),
    ("如果我不指定后缀，备份文件名后面会加什么符号？", "备份文件名后面会加什么符号？"),
])
def test_the_sentences_that_ask_are_told_from_the_scene(question, asking):
    assert asked(question) == asking


@pytest.mark.parametrize("question", [
    "Why was Git 2.39.5 released?",
    "When tee is run with -p, which output error mode does it use?",  # one English sentence: a condition is no scene
    "umount 有没有“懒卸载”，就是先把挂载点摘掉、等没人用了再真正卸载？选项叫什么？",  # 有没有 asks in the first clause
    "uniq -c 统计完能不能直接按次数从多到少排好输出？uniq 自己有这种选项吗，叫什么？",
    "List the options of tar.",  # no question mark
])
def test_a_question_that_is_all_asking_has_no_scene(question):
    assert asked(question) == ""


def _missing_rare(question: str, sentence: str, rarest: str) -> float:
    terms = query_terms(question)
    assert rarest in {fold(t) for t in terms}
    weights = {fold(t): (5.0 if fold(t) == rarest else 1.0) for t in terms}
    return evidence_features(question, sentence, sentence, terms, weights, 0.5, 0.6)["missing_rare"]


def test_a_missing_term_only_the_scene_names_weighs_less(monkeypatch):
    monkeypatch.setattr(extractive, "SCENE_SHARE", 0.5)
    assert _missing_rare(PASSWD_Q, PASSWD_S, "ssh") == pytest.approx(0.5)


def test_the_scene_weighs_in_full_when_scene_share_is_one(monkeypatch):
    monkeypatch.setattr(extractive, "SCENE_SHARE", 1.0)
    assert _missing_rare(PASSWD_Q, PASSWD_S, "ssh") == pytest.approx(1.0)


@pytest.mark.parametrize("question, rarest", [
    # the same term in the sentence that asks, or in a question with no scene, weighs in full
    ("I locked a user's account with `passwd -l`. How do I stop the user logging in with an SSH key?", "ssh"),
    ("After passwd -l, how do I stop a user logging in with an SSH key?", "ssh"),
])
def test_a_missing_term_of_the_asking_sentence_weighs_in_full(question, rarest, monkeypatch):
    monkeypatch.setattr(extractive, "SCENE_SHARE", 0.5)
    assert _missing_rare(question, PASSWD_S, rarest) == pytest.approx(1.0)


def _missing_name(question: str, sentence: str) -> float:
    terms = query_terms(question)
    return evidence_features(question, sentence, sentence, terms, {fold(t): 1.0 for t in terms}, 0.5, 0.6)["missing_name"]


@pytest.mark.parametrize("share, missing", [(1.0, 1.0), (0.5, 0.5), (0.0, 0.0)])
def test_a_name_only_the_scene_writes_counts_scene_names(share, missing, monkeypatch):
    monkeypatch.setattr(extractive, "SCENE_NAMES", share)
    assert _missing_name(PASSWD_Q, PASSWD_S) == pytest.approx(missing)  # "SSH" is in the scene only


def test_a_name_of_the_asking_sentence_counts_in_full(monkeypatch):
    monkeypatch.setattr(extractive, "SCENE_NAMES", 0.0)
    question = "I locked a user's account with `passwd -l`. How do I stop logins with an SSH key?"
    assert _missing_name(question, PASSWD_S) == 1.0
