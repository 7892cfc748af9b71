"""The kind of value a question asks for, and whether a short answer's words are one (docqa.answer.kind): the
words that may lead a short answer must be what was asked, not a neighbour sentence's value."""

from __future__ import annotations

import pytest

from docqa.answer.kind import asked, fits, mismatch


@pytest.mark.parametrize("question, kind", [
    ("How often is the database backed up?", "frequency"),
    ("And how frequently are the API keys rotated?", "frequency"),
    ("数据库多久备份一次？", "frequency"),
    ("每隔多久检查一次更新？", "frequency"),
    ("How long are backups kept?", "duration"),
    ("备份保留多长时间？", "duration"),
    ("备份保留多久？", "duration"),
    ("Which version of Git removed --preserve-merges?", "version"),
    ("哪个版本修复了这个问题？", "version"),
    ("Which Linux kernel version does Debian Edu 12 ship with?", "version"),
    ("In which feature release did git grep gain a way to cap the hits per file?", "version"),
    ("How many glyphs does the font cover?", "number"),
    ("这个字体包含多少个字形？", "number"),
    ("Which file holds the sshd settings?", "path"),
    ("日志存放在哪个目录？", "path"),
    ("Which command lists the held packages?", "command"),
    ("用什么命令可以列出被保留的软件包？", "command"),
    ("Which package provides the static glibc?", "package"),
    ("Which environment variable sets the pager?", "variable"),
    ("When was Git 2.39.5 released?", "date"),
    ("这个版本是什么时候发布的？", "date"),
    ("这个补丁是什么时候发布的？", "date"),
    ("/etc/group 里每一行由哪几个字段组成？", None),  # which fields, not how many
    ("备份文件名后面会加什么符号？", None),  # a symbol, though 文件名 names a file
    ("Which suffix does tar add to a backup file?", None),
    ("What happens when the disk is full?", None),  # "when" inside a question asks for no date
    ("When tee is run with -p, which output error mode does it use?", None),  # a condition, not a date question
    ("When apt runs from a cron job and dpkg is locked, how long does it wait?", "duration"),
    ("If the mirror is behind, which command forces a resync?", "command"),
    ("当证书的日期过期时，哪个服务会拒绝连接？", None),  # 日期 in the condition asks for no date
    ("当日志写满磁盘时，哪个文件记录了出错的位置？", "path"),
    ("xargs 遇到文件名里带空格时会拆成两个参数，该怎么办？", None),  # 文件名 is mentioned, not asked
    ("我用 find 找出一批日志再通过 xargs rm 删除，结果有的文件名里带空格，删错了东西。xargs 这边该怎么改？", None),
    ("打包后的备份文件名是什么？", "file"),
    ("When will Debian change the KillUserProcesses default to yes?", "date"),
    ("Why was Git 2.39.5 released?", None),
    ("What does the installer do with the old configuration?", None),
])
def test_the_kind_a_question_asks_for(question, kind):
    assert asked(question) == kind


@pytest.mark.parametrize("words, question", [
    ("every 6 hours", "How often is the database backed up?"),
    ("daily", "How often does unattended-upgrades run?"),
    ("twice a day", "How often is the mirror synchronised?"),
    ("每 6 小时", "数据库多久备份一次？"),
    ("每天", "多久检查一次更新？"),
    ("35 days", "How long are backups kept?"),
    ("until the next reboot", "How long does the setting last?"),
    ("35 天", "备份保留多久？"),
    ("2.39.5", "Which version of Git fixed the bug?"),
    ("6857", "How many glyphs does the font cover?"),
    ("5432", "What port does PostgreSQL listen on by default?"),
    ("/var/log/unattended-upgrades/", "日志存放在哪个目录？"),
    ("README.Debian", "Which file describes the Debian changes?"),
    ("dpkg --get-selections", "Which command lists the package selections?"),
    ("warn-nopipe", "tee 的哪个选项可以忽略管道错误？"),
    ("glibc-static-devel", "Which package provides the static glibc?"),
    ("PermitRootLogin", "Which setting controls root login?"),
    ("2022-10-03", "When was Git 2.38.1 released?"),
    ("at boot", "When is the hook run?"),
    ("Release Notes", "Why was Git 2.39.5 released?"),  # no kind asked: nothing to turn away
])
def test_words_of_the_kind_asked_fit(words, question):
    assert mismatch(words, question) is None


@pytest.mark.parametrize("words, question, wanted", [
    ("35 days", "How often is the database backed up?", "a frequency (how often)"),  # the neighbour sentence's value
    ("35 天", "数据库多久备份一次？", "a frequency (how often)"),
    ("every 6 hours", "How long are backups kept?", "a duration (how long)"),
    ("每 6 小时", "备份保留多长时间？", "a duration (how long)"),
    ("Release Notes", "Which version of Git fixed the bug?", "a version"),
    ("Git", "哪个版本修复了这个问题？", "a version"),
    ("git grep -m<max-hits>", "In which feature release did git grep gain a way to cap the hits per file?", "a version"),
    ("the glyphs", "How many glyphs does the font cover?", "a number"),
    ("Release Notes", "Which file lists the changes?", "a path or file"),
    ("35 days", "Which command rotates the API keys?", "a command or option"),
    ("the keys are rotated", "用什么命令轮换密钥？", "a command or option"),
    ("Debian", "这个补丁是什么时候发布的？", "a date or time"),
])
def test_words_of_another_kind_are_turned_away(words, question, wanted):
    assert mismatch(words, question) == wanted


def test_a_frequency_is_no_duration_and_a_duration_no_frequency():
    assert fits("every 6 hours", "frequency") and not fits("every 6 hours", "duration")
    assert fits("35 days", "duration") and not fits("35 days", "frequency")


@pytest.mark.parametrize("before, words, question, fit", [
    ("API keys are rotated every ", "90 days", "How often are API keys rotated?", True),
    ("Backups are kept for ", "35 days", "How often is the database backed up?", False),
    ("The database is backed up every ", "6 hours", "How long are backups kept?", False),
    ("Backups are kept for ", "35 days", "How long are backups kept?", True),
    ("数据库每 ", "6 小时", "数据库多久备份一次？", True),
    ("备份保留 ", "35 天", "数据库多久备份一次？", False),
])
def test_the_words_before_make_an_interval_a_frequency(before, words, question, fit):
    assert (mismatch(words, question, before) is None) is fit
