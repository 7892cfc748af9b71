"""Table rows and command lines quoted only when they carry what the question asks (docqa.answer.rows)."""

from __future__ import annotations

import pytest

from docqa.answer import extractive
from docqa.answer.extractive import extract
from docqa.answer.rows import ends_structured, introduced_commands, table_rows
from docqa.answer.statement import quotable_spans
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

from .hits import hit_in, sources

# The zstd README's benchmark table, as the Markdown reader keeps it.
MARKDOWN_TABLE = """For reference, several fast compression algorithms were tested and compared.

| Compressor name         | Ratio | Compression| Decompress.|
| ---------------         | ------| -----------| ---------- |
| **zstd 1.5.1 -1**       | 2.887 |   530 MB/s |  1700 MB/s |
| [zlib] 1.2.11 -1        | 2.743 |    95 MB/s |   400 MB/s |
| **zstd 1.5.1 --fast=4** | 2.148 |   710 MB/s |  2300 MB/s |
| [lz4] 1.9.3             | 2.101 |   740 MB/s |  4500 MB/s |

The negative compression levels, specified with `--fast=#`, offer faster compression and decompression speed.
"""

# An HTML table as the HTML reader renders it: a row per line, cells joined by " | ", the header first.
HTML_TABLE = """默认端口如下表所示。

服务 | 端口 | 配置文件
LDAP | 389 | /etc/ldap/slapd.conf
Kerberos | 88 | /etc/krb5.conf
"""

# A man page's option block and a manual's command introduced by a sentence.
MANUAL = """If you want to debug a program with GDB when using the Memcheck tool, start Valgrind like this:

valgrind --vgdb=yes --vgdb-error=0 prog

In another shell, start GDB:

gdb prog

The Memcheck tool reports every leak it finds when the program exits.
"""

MANUAL_ZH = """要只复制较新的文件，可以这样运行：

cp -u -r ~/docs /mnt/backup

这个选项在备份时很有用。
"""


def test_a_markdown_row_with_the_subject_and_a_number_is_quoted_with_its_header():
    found = table_rows("In the zstd README benchmark, how fast does zstd 1.5.1 at level 1 compress?", MARKDOWN_TABLE)
    assert [(MARKDOWN_TABLE[h[0]:h[1]].split("|")[1].strip(), MARKDOWN_TABLE[r[0]:r[1]].split("|")[1].strip())
            for h, r in found] == [("Compressor name", "**zstd 1.5.1 -1**")]


def test_no_row_for_a_question_that_asks_for_no_kind_of_token_or_names_no_cell():
    assert table_rows("Why is zstd faster than zlib?", MARKDOWN_TABLE) == []
    assert table_rows("How fast does brotli compress?", MARKDOWN_TABLE) == []


def test_a_rendered_html_row_in_chinese():
    found = table_rows("Kerberos 默认用哪个端口？", HTML_TABLE)
    assert [(HTML_TABLE[h[0]:h[1]], HTML_TABLE[r[0]:r[1]]) for h, r in found] == [
        ("服务 | 端口 | 配置文件", "Kerberos | 88 | /etc/krb5.conf")]


def test_a_command_is_quoted_with_the_sentence_that_introduces_it():
    spans = quotable_spans(MANUAL)
    question = "How do I debug a program running under Valgrind with GDB?"
    quoted = [MANUAL[s:e] for s, e in introduced_commands(question, MANUAL, spans)]
    assert quoted[0] == ("If you want to debug a program with GDB when using the Memcheck tool, start Valgrind like this:"
                         "\n\nvalgrind --vgdb=yes --vgdb-error=0 prog")
    assert not any("reports every leak" in q for q in quoted)  # a statement introduces no command
    assert introduced_commands("Does Memcheck report leaks at exit?", MANUAL, spans) == []


def test_a_chinese_command_question_gets_the_introduced_command():
    spans = quotable_spans(MANUAL_ZH)
    quoted = [MANUAL_ZH[s:e] for s, e in introduced_commands("只复制较新的文件，cp 用哪个选项？", MANUAL_ZH, spans)]
    assert quoted == ["要只复制较新的文件，可以这样运行：\n\ncp -u -r ~/docs /mnt/backup"]


def test_the_answer_leads_with_the_header_row_then_the_row(hash_embedder):
    """A chunk of the table alone (the table chunker cuts long tables so): the row is the one candidate."""
    start, end = MARKDOWN_TABLE.index("| Compressor"), MARKDOWN_TABLE.index("\n\nThe negative")
    pool = sources(hit_in(MARKDOWN_TABLE, start, end, path="/docs/zstd/README.md", section="Benchmarks"))
    table = MARKDOWN_TABLE[start:end]
    embed = lambda texts, kind: hash_embedder.embed_batch(texts, kind)  # noqa: E731
    result = extract("In the zstd README benchmark, how fast does zstd 1.5.1 at level 1 compress?", pool, {}, embed,
                     threshold=0.0)
    rows = [s for s in result.candidates if s.header is not None]
    assert [s.text.split("|")[1].strip() for s in rows] == ["**zstd 1.5.1 -1**"]
    # the row leads and its header row is quoted first, on a line of its own, from the same chunk
    assert result.chosen[0] is rows[0] and result.shape is not None and result.heading is result.shape.sentences[0]
    assert table[result.heading.start:result.heading.end].startswith("| Compressor name")
    assert [s.text for s in result.shape.sentences] == [table.splitlines()[0], table.splitlines()[2]]


def test_the_extended_sentence_replaces_the_bare_introduction(hash_embedder):
    """The introduction is quoted with its command or not at all: never a second time, bare."""
    pool = sources(hit_in(MANUAL, 0, len(MANUAL), path="/docs/valgrind/manual-core-adv.html", section="Debugging with GDB"))
    embed = lambda texts, kind: hash_embedder.embed_batch(texts, kind)  # noqa: E731
    result = extract("How do I debug a program running under Valgrind with GDB?", pool, {}, embed, threshold=0.0)
    texts = [s.text for s in result.candidates]
    assert "start Valgrind like this:\n\nvalgrind --vgdb=yes --vgdb-error=0 prog" in texts[0]
    assert not any(t.endswith("start Valgrind like this:") for t in texts)
    # a question that asks for no command: the introduction is still one candidate, quoted with the line it shows
    # (extractive.DISPLAYED, "a lead-in that shows a line to write"), or bare when that is off -- never both
    plain = extract("Which tool reports leaks at exit?", pool, {}, embed, threshold=0.0)
    introductions = [s.text for s in plain.candidates if "start Valgrind like this:" in s.text]
    assert len(introductions) == 1
    assert introductions[0].endswith("start Valgrind like this:\n\nvalgrind --vgdb=yes --vgdb-error=0 prog")


def test_the_bare_introduction_without_displayed_lines(hash_embedder, monkeypatch):
    """With DISPLAYED off, a question that asks for no command gets the introduction bare and no command."""
    monkeypatch.setattr(extractive, "DISPLAYED", False)
    pool = sources(hit_in(MANUAL, 0, len(MANUAL), path="/docs/valgrind/manual-core-adv.html", section="Debugging with GDB"))
    embed = lambda texts, kind: hash_embedder.embed_batch(texts, kind)  # noqa: E731
    plain = extract("Which tool reports leaks at exit?", pool, {}, embed, threshold=0.0)
    assert any(s.text.endswith("start Valgrind like this:") for s in plain.candidates)
    assert not any("valgrind --vgdb" in s.text for s in plain.candidates)


def test_a_command_line_quoted_as_prose_anyway_is_not_quoted_twice():
    readme = ("If you want systemd to listen on port 22 itself, then you can run:\n"
              "systemctl disable --now ssh.service and then systemctl start ssh.socket.\n")
    spans = quotable_spans(readme)
    assert any("systemctl start ssh.socket." in readme[s:e] for s, e in spans)
    assert introduced_commands("How do I switch sshd to socket activation?", readme, spans) == []


def test_a_quote_ending_on_a_row_or_a_command_ends_its_line():
    assert ends_structured("| **zstd 1.5.1 -1**       | 2.887 |   530 MB/s |  1700 MB/s |")
    assert ends_structured("Kerberos | 88 | /etc/krb5.conf")
    assert ends_structured("start Valgrind like this:\n\nvalgrind --vgdb=yes --vgdb-error=0 prog")
    assert not ends_structured("Start Valgrind with the gdbserver enabled.")
    assert not ends_structured("要只复制较新的文件，请使用 cp -u 选项。")


@pytest.mark.slow  # a knowledge base built and asked: over 2 s on a loaded machine
def test_the_published_answer_quotes_the_header_then_the_row_on_lines_of_their_own(tmp_path, hash_embedder):
    """End to end, no model: the header row and the row are cited spans of the document, each on its own line."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "README.md").write_text("# Benchmarks\n\n" + MARKDOWN_TABLE[MARKDOWN_TABLE.index("| Compressor"):], encoding="utf-8")
    settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"}, answer={"abstain_threshold": 0.0})
    with KnowledgeBase(settings, embedder=hash_embedder) as kb:
        kb.add([docs])
        answer = kb.ask("In the zstd benchmark, how fast does zstd 1.5.1 at level 1 compress?")
        assert answer.mode == "extractive" and answer.answer.startswith("| Compressor name | Ratio | Compression| Decompress.| [1]\n\n"
                                                                         "| **zstd 1.5.1 -1** | 2.887 | 530 MB/s | 1700 MB/s | [1]")
        for c in answer.citations:
            assert kb.documents.text(c.document_id)[c.char_start : c.char_end] == c.quote


def test_a_quote_whose_last_line_is_prose_is_no_command():
    """A PDF section title above its first sentence: the sentence is prose (it ends with its full stop)."""
    assert not ends_structured("3.3 Invoking asn1Decoding\nasn1Decoding generates an ASN.1 structure from a DER file.")
