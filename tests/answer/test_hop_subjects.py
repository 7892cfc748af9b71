"""A multi-hop question that names its two ends (issue 28, item 4): "kill 不指定信号时发出的信号，和 timeout 超时后默认
发出的信号，是同一个吗？" names two commands, each with a manual page of its own; one search over the knowledge base quotes
one of them.  Each named thing is answered in its own file (docqa.answer.hop.subjects), both cited, and only when
each of their answers passes the same decision.  And a second hop that follows a release ("... shipped in 2.39.4")
asks that release's notes for what the question asks ("which CVEs"), not for the words the first file paraphrased."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from docqa.access import Principal
from docqa.answer.extractive import Sentence
from docqa.answer.hop import bridge, names, own_glob, pick, subjects
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

MAN = ["/usr/share/man/zh_CN/man1/kill.1.gz", "/usr/share/man/zh_CN/man1/timeout.1.gz",
       "/usr/share/man/zh_CN/man1/find.1.gz", "/usr/share/man/zh_CN/man1/xargs.1.gz",
       "/usr/share/man/zh_CN/man1/rm.1.gz", "/usr/share/man/zh_CN/man1/gzip.1.gz",
       "/usr/share/doc/manpages-zh/README.md.gz", "/usr/share/doc/zstd/README.md"]
SAME = "kill 不指定信号时发出的信号，和 timeout 超时后默认发出的信号，是同一个吗？是哪个？"


@pytest.mark.parametrize(("question", "named"), [
    (SAME, ["kill", "timeout"]),
    # two parts, each naming its command
    ("我打算用 find 找出 7 天前修改过的 .log 文件，再逐个 gzip 压缩。find 用哪个条件？gzip 压缩完原来的 .log 文件还会留着吗？",
     ["find", "gzip"]),
    # rm is named only where the asker sets the scene: how they got there, not what they ask about
    ("我用 find 找出一批日志再通过 xargs rm 删除，结果有的文件名里带空格，被拆成了两个参数，删错了东西。xargs 这边该怎么改，find 那边要配合加什么？",
     ["xargs", "find"]),
    # one command: a one-hop question, answered by the search over everything
    ("xargs 默认一次并行跑几个进程？-P 设成 0 又是什么意思？", []),
    # README names two documents: no file of its own; an option (--kill-after) and a path are no command's name, and
    # KILL is a signal (the page is kill.1.gz)
    ("Does the README say that timeout --kill-after sends KILL to /usr/bin/find?", []),
    ("Does the README say that timeout --kill-after sends a signal that kill sends too?", ["timeout", "kill"]),
])
def test_a_question_names_the_things_that_have_a_file_of_their_own(question, named):
    assert [s.term for s in subjects(question, MAN)] == named
    assert all(Path(s.path).name.startswith(s.term + ".") for s in subjects(question, MAN))


def test_the_words_that_may_name_a_thing_are_where_the_question_asks():
    assert names("我用 find 找出一批日志再通过 xargs rm 删除。xargs 这边该怎么改？") == ["xargs"]
    assert names(SAME) == ["kill", "timeout"]


def test_a_scoped_search_matches_its_own_file_only():
    assert own_glob("/docs/a[1]/kill.1.gz") == "/docs/a[[]1]/kill.1.gz"
    assert own_glob("/docs/what?/*.md") == "/docs/what[?]/[*].md"


# -- the second hop asks for what the question asks -------------------------------------------------------------------
REVERT = ("This release is to revert these misguided, if well-intentioned, changes that were shipped in 2.39.4 and were "
          "not direct security fixes.")
CHANGES = ("In preparing security fixes for four CVEs, we made overly aggressive \"defense in depth\" changes that broke "
           "legitimate use cases like 'git lfs' and 'git annex.'")
HARDENING = "The 2.39.5 release undid some hardening that broke git lfs; which CVEs was that hardening made alongside?"
NOTES_2394 = """Git v2.39.4 Release Notes
=========================

This addresses the security issues CVE-2024-32002, CVE-2024-32004,
CVE-2024-32020 and CVE-2024-32021.

This release also backports fixes necessary to let the CI builds pass
successfully.
"""


def test_the_hop_asks_the_linked_release_for_what_the_question_asks():
    link = bridge(HARDENING, [CHANGES, REVERT])
    assert link is not None and link.entity == "2.39.4"
    # "four CVEs" says how many, not which: the hop looks for a CVE in 2.39.4's notes; the words the first file
    # paraphrased ("hardening" for "defense in depth") are not asked of the second
    assert "cve" in link.asks and link.query.split() == ["2.39.4", "cves", "cve"]


def test_the_hops_sentence_names_what_is_asked():
    text = NOTES_2394
    backports = text.index("This release also")
    addresses = text.index("This addresses")
    candidates = [Sentence(1, backports, text.index("successfully.") + 13, text[backports:text.index("successfully.") + 13], score=0.4),
                  Sentence(1, addresses, text.index("32021.") + 6, text[addresses:text.index("32021.") + 6], score=0.3)]
    chosen = pick(candidates, candidates, [CHANGES, REVERT], ("cves", "cve"))
    assert chosen is not None and chosen.text.startswith("This addresses") and "CVE-2024-32021" in chosen.text
    assert pick(candidates[:1], candidates, [CHANGES, REVERT], ("cves", "cve")) is None  # no CVE in it: no hop


# -- end to end: two manual pages, each cited ---------------------------------------------------------------------------
# the manual pages' own text (manpages-zh 1.6.3: procps-ng kill.1, coreutils timeout.1), cut to their description
KILL = r""".TH KILL 1 "2011 年 10 月" procps\-ng 用户命令
.SH 名称
kill \- 终止进程
.SH 概述
\fBkill\fP [选项] <pid> [...]
.SH 描述
默认的终止信号是 TERM。 使用 \fB\-l\fP 或 \fB\-L\fP 列出可用的信号。常用的信号包括 HUP，INT，KILL，STOP，CONT 和
0。可以用三种方式指定备用信号：\fB\-9\fP，\fB\-SIGKILL\fP 或 \fB\-KILL\fP。负数 PID 值可用于选择整个进程组。请参阅 ps 命令输出的
PGID 列。\fB\-1\fP 是特殊的 PID；它表示除 kill 进程本身和 init 之外的所有进程。
.SH 注意
您的 Shell 程序（命令行解释器）可能具有内置的 kill 命令。您可能需要运行 /bin/kill 的命令来避免“冲突”。
"""
TIMEOUT = r""".TH TIMEOUT 1 2022年9月 "GNU coreutils 9.1" 用户命令
.SH 名称
timeout \- 在规定时限内运行一个命令
.SH 描述
.PP
运行所给命令，如果它超过指定时间后仍在运行，则杀死其进程。
.HP
\fB\-k\fP, \fB\-\-kill\-after\fP=\fI\,持续时间\/\fP
.IP
如果初始信号已发出且再次等待了指定时间之后
.IP
所运行命令仍在运行则发出 KILL 信号
.HP
\fB\-s\fP, \fB\-\-signal\fP=\fI\,信号\/\fP
.IP
指定超时发生时应当送出的信号；
.PP
超时以后，如果没有指定其他“信号”，则向给定“命令”发送 TERM 信号。TERM 信号将杀死没有阻塞或捕获该信号的进程。有时可能需要使用 KILL
信号，因为此信号无法被捕获。
"""


def _man_kb(tmp_path: Path, embedder, threshold: float):
    for folder, name, text in (("procps", "kill.1.gz", KILL), ("coreutils", "timeout.1.gz", TIMEOUT)):
        (tmp_path / folder / "man1").mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "man1" / name).write_bytes(gzip.compress(text.encode("utf-8")))
    settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"}, answer={"abstain_threshold": threshold})
    kb = KnowledgeBase(settings, embedder=embedder)
    kb.add([tmp_path / "procps"], "procps")
    kb.add([tmp_path / "coreutils"], "coreutils")
    return kb


@pytest.fixture
def man_kb(tmp_path: Path, embedder):
    with _man_kb(tmp_path, embedder, 0.0) as kb:
        yield kb


def test_each_named_command_is_answered_in_its_own_manual_page_and_cited(man_kb):
    answer = man_kb.ask(SAME)
    assert answer.mode == "extractive"
    cited = {Path(c.path).name for c in answer.citations}
    assert cited == {"kill.1.gz", "timeout.1.gz"}
    kill = next(c for c in answer.citations if Path(c.path).name == "kill.1.gz")
    assert man_kb.documents.text(kill.document_id)[kill.char_start : kill.char_end] == kill.quote  # the page's own text
    assert f"[{kill.n}]" in answer.answer and {s["subject"] for s in answer.retrieval.subjects} == {"kill", "timeout"}


def test_a_reader_who_sees_one_manual_page_gets_no_subject_from_the_other(man_kb):
    reader = Principal("reader", ("coreutils",), "k1", remote=True)
    for answer in (man_kb.ask(SAME, principal=reader), man_kb.ask(SAME, collection="coreutils")):
        assert answer.citations and {Path(c.path).name for c in answer.citations} == {"timeout.1.gz"}
        assert not [e for e in man_kb.log.run(answer.run_id).trace if e.get("stage") == "subject"]


def test_the_subjects_answers_pass_the_same_decision_or_the_question_is_not_answered(tmp_path: Path, embedder):
    with _man_kb(tmp_path, embedder, 0.999) as kb:  # no sentence is evidence enough at this threshold
        answer = kb.ask(SAME)
        stages = [e for e in kb.log.run(answer.run_id).trace if e.get("stage") == "subject"]
    assert not answer.citations and not answer.answerable
    assert len(stages) == 2 and all(e["abstained"] for e in stages)  # both were asked; neither answer bypassed the decision
