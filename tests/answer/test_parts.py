"""A question of several parts is answered part by part: each part retrieved with the statements that set
the scene, its own sentence quoted, and the parts' sentences cited across files.  Real files, real SQLite,
the bundled embedder."""

from __future__ import annotations

import pytest

from docqa.answer.parts import split
from docqa.kb import KnowledgeBase
from docqa.settings import Settings


@pytest.mark.parametrize("question, parts", [
    ("Which 2.39.x release carries the fix for CVE-2023-29007, and what kind of attack did that bug allow?",
     ["Which 2.39.x release carries the fix for CVE-2023-29007?", "what kind of attack did that bug allow?"]),
    ("xargs 默认一次并行跑几个进程？-P 设成 0 又是什么意思？", ["xargs 默认一次并行跑几个进程？", "-P 设成 0 又是什么意思？"]),
    ("Where does the daemon look for repositories by default, and where did it look before version 1.8?",
     ["Where does the daemon look for repositories by default?", "where did it look before version 1.8?"]),
])
def test_a_question_of_several_parts_is_split_into_them(question, parts):
    assert [p.question for p in split(question)] == parts


@pytest.mark.parametrize("question", [
    "How long does a rollback take?",
    "Which journald setting, and which value, makes journald keep logs only in memory?",  # one question, two blanks
    "What is the default port, and why?",  # "why" is no question of its own
    "Git 2.35.8 merges fixes from older releases. What could an attacker achieve with CVE-2023-29007?",
    "a? b? c? d? e?",
])
def test_a_question_that_asks_one_thing_is_not_split(question):
    assert split(question) == []


def test_statements_that_set_the_scene_go_with_every_part_and_the_part_before_with_the_next():
    parts = split("我用 shutdown +30 安排半小时后关机。普通用户从什么时候开始就登录不进来了？靠的是什么文件？")
    assert [p.question for p in parts] == ["普通用户从什么时候开始就登录不进来了？", "靠的是什么文件？"]
    assert parts[0].query.startswith("我用 shutdown +30 安排半小时后关机。")
    assert parts[1].query == "我用 shutdown +30 安排半小时后关机。 普通用户从什么时候开始就登录不进来了？ 靠的是什么文件？"


DAEMON = """# The repository daemon

The repository daemon serves repositories to clients over its own protocol.
By default the daemon looks for repositories in the directory /srv/repos on every host.
The daemon listens on port 9418 unless told otherwise.
"""
NEWS = """# News for the daemon package

## Version 1.8

Starting with version 1.8 the daemon no longer looks in /var/cache/repos.
Before version 1.8 the daemon looked for repositories in /var/cache/repos instead.
Administrators who kept repositories there must move them.
"""
OTHER = """# Backups

Backups run every night at two and are kept for thirty days on the backup host.
"""


@pytest.fixture(scope="module")
def kb(tmp_path_factory, local_embedder):
    root = tmp_path_factory.mktemp("parts")
    (root / "docs").mkdir()
    for name, text in {"daemon.md": DAEMON, "NEWS.md": NEWS, "backups.md": OTHER}.items():
        (root / "docs" / name).write_text(text, encoding="utf-8")
    with KnowledgeBase(Settings(kb=str(root / "kb.db"), llm={"provider": "none"}), embedder=local_embedder) as base:
        base.add([root / "docs"])
        yield base


def test_each_part_is_answered_from_its_own_file_and_each_is_cited(kb):
    answer = kb.ask("Where does the daemon look for repositories by default, and where did it look before version 1.8?")
    assert answer.answerable, answer.answer
    assert "/srv/repos" in answer.answer and "/var/cache/repos" in answer.answer, answer.answer
    files = {c.path.rsplit("/", 1)[-1] for c in answer.citations}
    assert {"daemon.md", "NEWS.md"} <= files, files
    numbers = [c.n for c in answer.citations]
    assert sorted(set(numbers)) == list(range(1, len(set(numbers)) + 1)), numbers  # one numbering across the parts
    parts = answer.retrieval.parts
    assert [p["abstained"] for p in parts] == [False, False], parts


def test_a_part_the_documents_do_not_answer_leaves_the_decision_to_the_whole_question(kb):
    answer = kb.ask("Where does the daemon look for repositories by default, and which cipher suite does it use for TLS?")
    parts = answer.retrieval.parts
    assert parts and [p["abstained"] for p in parts] == [False, True], parts
    # nothing is quoted for the unanswered part as if it answered it: the whole question decides, as before
    assert not answer.answerable or all(c.path.endswith("daemon.md") for c in answer.citations), answer.answer
