"""The clause of a question that asks (docqa.answer.clause): a leading condition is dropped when the rest asks."""

from __future__ import annotations

import pytest

from docqa.answer.clause import asking


@pytest.mark.parametrize("question, rest", [
    ("When tee is run with -p, which output error mode does it use?", "which output error mode does it use?"),
    ("If I set SYSTEMD_BUS_TIMEOUT=30 without a unit, how is the value interpreted?", "how is the value interpreted?"),
    ("When apt runs from cron, without a terminal, how long does it wait for the lock?", "how long does it wait for the lock?"),
    ("Once the key is revoked, what happens to the signatures made with it?", "what happens to the signatures made with it?"),
    ("apt 在没有终端（比如 cron 里）时，遇到 dpkg 锁会等多久？", "遇到 dpkg 锁会等多久？"),
    ("当文件名里带空格时，xargs 该怎么办？", "xargs 该怎么办？"),
    ("用 tar 的 --backup 备份将被覆盖的文件时，如果我不另外指定后缀，备份文件名后面会加什么符号？", "备份文件名后面会加什么符号？"),
    ("如果不设置 SYSTEMD_BUS_TIMEOUT，默认超时是多少秒？", "默认超时是多少秒？"),
])
def test_a_leading_condition_is_dropped(question, rest):
    assert asking(question) == rest


@pytest.mark.parametrize("question", [
    "When will Debian change the KillUserProcesses default to yes?",  # a date question, no condition
    "When was Git 2.39.5 released, and which fixes did it bring?",  # "When was ..." asks itself
    "What happens when the disk is full?",
    "If the lock is held, the update waits.",  # no question after the condition
    "这个补丁是什么时候发布的？",
    "什么时候，哪个版本开始默认启用它？",  # 什么时候 asks, it is no condition
    "哪个选项在出错时，会停止复制？",
    "当磁盘满了时，复制会停止。",  # no question after the condition
])
def test_a_question_without_a_leading_condition_stays_whole(question):
    assert asking(question) == question
