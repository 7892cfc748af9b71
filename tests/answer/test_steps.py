"""A list or a procedure quoted whole and in order (issue 28, item 4): a list's label items with the sentence that
introduces them (answer/rows.py, `introduced_lists`), the sibling items of a list a list question's best sentence
stands in, and a procedure written as "do this:" / command, "then this:" / command (answer/shape.py).  Real text:
openssl's README.Debian, the Valgrind manual as the HTML reader renders it, zstd's README, LilyPond's Chinese manual."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from docqa.answer.extractive import extract
from docqa.answer.rows import MAX_ITEMS, introduced_commands, introduced_lists
from docqa.answer.shape import asks_list, shape
from docqa.answer.statement import quotable_spans
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

from .hits import hit_in, sources

# openssl's README.Debian (plain text): the items are labels, never quoted alone.
OPENSSL = """PATENT ISSUES
-------------

Some algorithms used in the library are covered by patents.  As
a result, the following algorithms in libcrypto have been disabled:
- RC5
- MDC2
- IDEA

Also see the patents section in the README file.
"""

# A Chinese procedure in a plain-text README: "步骤如下：" and numbered items too short to be sentences.
STEPS_ZH = """从源码安装

如果发行版没有打包，可以自己编译，步骤如下：
1. 下载源码包
2. 解压源码包
3. 运行 make install

安装完成后请重新登录。
"""

# The Valgrind manual's quick start as the HTML reader renders it: each step a sentence that introduces its command.
VALGRIND = """Otherwise, here's a slightly more verbose overview.

If you want to debug a program with GDB when using the Memcheck tool, start Valgrind like this:

valgrind --vgdb=yes --vgdb-error=0 prog

In another shell, start GDB:

gdb prog

Then give the following command to GDB:

(gdb) target remote | vgdb

You can now debug your program e.g. by inserting a breakpoint and then using the GDB continue command.
"""

# shared-mime-info's README.md: a Markdown list whose items are sentences of their own.
MIME = """This is the freedesktop.org shared MIME info database.

The shared-mime-info package contains:

- The core database of common MIME types, their file extensions and icon names.
- The update-mime-database command, used to extend the DB and install a new MIME data.
- The freedesktop.org shared MIME database spec.

It is used by GLib and Qt to guess the type of a file.
"""

# LilyPond's Chinese manual: reasons given in turn, "一是 … 二是 …".
LILYPOND = ("版本声明非常重要，原因有二。一是它能够使得 LilyPond 语法更新自动应用在输入文件上。二是它指明了编译这份文件所需的 LilyPond 版本。"
            "如果输入文件中忘记标版本声明了，LilyPond 会在编译文件时给出警告。")


@dataclass
class Quote:
    n: int
    start: int
    end: int
    text: str
    score: float = 0.0


def quotes(text: str) -> list[Quote]:
    return [Quote(1, s, e, text[s:e]) for s, e in quotable_spans(text)]


@pytest.mark.parametrize(("question", "expected"), [
    ("Which algorithms were disabled in Debian's openssl because of patents?", True),
    ("Debian 的 openssl 因为专利问题禁用了哪些算法？", True),
    ("Apart from missing types, which ASN.1 features does libtasn1's parser leave out?", True),
    ("What are the fields of a line of /etc/group?", True),
    ("How do I install it from source?", True),  # a procedure
    ("What is the default PermitRootLogin setting?", False),
    ("Which file stores the signing keys?", False),
    ("Which 2.30.x point release first let me put '*' in safe.directory, and what does that value mean?", False),
    ("In which release notes did OpenSSH switch its signature algorithm?", False),
    ("What happens when the disk is full?", False),
])
def test_a_question_that_asks_for_several_things(question, expected):
    assert asks_list(question) is expected


@pytest.mark.parametrize(("text", "question", "items"), [
    (OPENSSL, "Which algorithms were disabled in Debian's openssl because of patents?", ["- RC5", "- MDC2", "- IDEA"]),
    (OPENSSL, "Debian 的 openssl 因为专利问题禁用了哪些算法？", ["- RC5", "- MDC2", "- IDEA"]),
    (STEPS_ZH, "怎样从源码安装？", ["1. 下载源码包", "2. 解压源码包", "3. 运行 make install"]),
])
def test_label_items_are_quoted_in_order_with_their_introduction(text, question, items):
    spans = quotable_spans(text)
    assert not any(item.split(None, 1)[-1] in text[s:e] for s, e in spans for item in items[:1])  # no item is a sentence
    [(s, e)] = introduced_lists(question, text, spans)
    lines = text[s:e].splitlines()
    assert lines[-len(items):] == items
    assert lines[-len(items) - 1].endswith(("disabled:", "步骤如下："))
    assert text[e:].startswith("\n\n")  # the list ends where the next paragraph starts


def test_a_question_for_one_thing_gets_no_list():
    spans = quotable_spans(OPENSSL)
    assert introduced_lists("Why are some algorithms of openssl a problem?", OPENSSL, spans) == []
    assert introduced_lists("What is RC5?", OPENSSL, spans) == []


def test_items_that_are_sentences_are_not_quoted_twice():
    """shared-mime-info's items are sentences of their own: the introduction is not extended over them (shape quotes
    them, below)."""
    assert introduced_lists("What does the shared-mime-info package contain? List the parts.", MIME, quotable_spans(MIME)) == []


def test_a_long_list_is_cut_at_the_cap():
    text = "The following formats are supported:\n" + "".join(f"- fmt{i}\n" for i in range(25)) + "\nMore follow.\n"
    [(s, e)] = introduced_lists("Which formats are supported?", text, quotable_spans(text))
    assert text[s:e].count("\n- ") == MAX_ITEMS


def test_a_list_question_gets_the_sibling_items_of_the_list():
    """The best pick is the list's introduction or one of its items (Markdown): the whole list, in order."""
    candidates = quotes(MIME)
    text_of = lambda n: MIME  # noqa: E731
    for best in (candidates[1], candidates[3]):  # the introduction; the second item
        got = shape("What parts are included in the shared-mime-info package?", candidates, [best], 0.0, text_of)
        assert got is not None and got.steps
        assert [q.text.split()[:2] for q in got.sentences] == [["The", "shared-mime-info"], ["-", "The"], ["-", "The"],
                                                                ["-", "The"]]
        assert "update-mime-database command" in got.sentences[2].text
    # a question for one thing keeps the picks as they are
    assert shape("Which command extends the MIME database?", candidates, [candidates[3]], 0.0, text_of) is None or \
        not shape("Which command extends the MIME database?", candidates, [candidates[3]], 0.0, text_of).steps


def test_reasons_given_in_turn_are_quoted_together():
    candidates = quotes(LILYPOND)
    second = next(q for q in candidates if q.text.startswith("二是"))
    got = shape("LilyPond 文件开头的 \\version 声明为什么重要？手册给了哪两个理由？", candidates, [second], 0.0, lambda n: LILYPOND)
    assert got is not None and [q.text[:2] for q in got.sentences] == ["一是", "二是"]


def test_a_procedure_of_introduced_commands_is_quoted_whole_and_in_order(hash_embedder):
    pool = sources(hit_in(VALGRIND, 0, len(VALGRIND), path="/docs/valgrind/html/manual-core-adv.html",
                          section="3.2.1. Quick Start: debugging in 3 steps", type_="html"))
    embed = lambda texts, kind: hash_embedder.embed_batch(texts, kind)  # noqa: E731
    result = extract("How do I debug a program running under Valgrind with GDB?", pool, {}, embed, threshold=0.0)
    assert result.shape is not None and result.shape.steps
    assert [s.text.splitlines()[-1] for s in result.shape.sentences] == [
        "valgrind --vgdb=yes --vgdb-error=0 prog", "gdb prog", "(gdb) target remote | vgdb"]
    assert all(VALGRIND[s.start:s.end] == s.text for s in result.shape.sentences)  # each a span of the chunk: citable
    # the decision still judges: over a threshold the evidence does not reach, the answerer abstains
    assert extract("How do I debug a program running under Valgrind with GDB?", pool, {}, embed, threshold=0.999).abstained


@pytest.mark.slow  # a knowledge base built and asked: over 2 s on a loaded machine
def test_the_published_answer_quotes_the_whole_list_cited(tmp_path, hash_embedder):
    """End to end, no model: a plain-text README's list, quoted with its introduction and cited at its offsets."""
    docs = tmp_path / "docs" / "openssl"
    docs.mkdir(parents=True)
    (docs / "README.Debian").write_text("openssl for DEBIAN\n------------------\n\nopenssl replaces ssleay.\n\n" + OPENSSL,
                                       encoding="utf-8")
    settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"}, answer={"abstain_threshold": 0.0})
    with KnowledgeBase(settings, embedder=hash_embedder) as kb:
        kb.add([tmp_path / "docs"])
        answer = kb.ask("Which algorithms in libcrypto have been disabled because of patents?")
        assert answer.mode == "extractive", answer.answer
        # the items keep a line each (answer/rows.py, shown_lines)
        assert "the following algorithms in libcrypto have been disabled:\n- RC5\n- MDC2\n- IDEA [1]" in answer.answer
        for c in answer.citations:
            assert kb.documents.text(c.document_id)[c.char_start : c.char_end] == c.quote


# systemd's README.Debian: an indented block of commands, which the sentence splitter reads as one sentence.
JOURNAL = """Enabling persistent logging in journald
=======================================

To enable persistent logging, create /var/log/journal:

  mkdir -p /var/log/journal
  systemd-tmpfiles --create --prefix /var/log/journal

systemd will make the journal files owned by the "systemd-journal" group.
"""


def test_an_introduced_block_of_commands_is_one_quote_with_its_introduction(hash_embedder):
    spans = quotable_spans(JOURNAL)
    assert any(JOURNAL[s:e].startswith("mkdir -p") for s, e in spans)  # the block alone is a span of its own
    [(s, e)] = introduced_commands("How do I make journald keep logs across reboots?", JOURNAL, spans)
    assert JOURNAL[s:e].startswith("To enable persistent logging") and JOURNAL[s:e].endswith("--prefix /var/log/journal")
    pool = sources(hit_in(JOURNAL, 0, len(JOURNAL), path="/docs/systemd/README.Debian", section=""))
    embed = lambda texts, kind: hash_embedder.embed_batch(texts, kind)  # noqa: E731
    result = extract("How do I make journald keep logs across reboots?", pool, {}, embed, threshold=0.0)
    commands = [c.text for c in result.candidates if "mkdir -p" in c.text]
    assert commands == [JOURNAL[s:e]]  # one quote, never the block a second time without its introduction
