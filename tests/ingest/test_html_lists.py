"""The HTML reader keeps a list's structure: each item's marker ("- ", "1. ", "a. ") on its first paragraph, a nested
list indented two spaces a level, a definition list as its label above its description.  Real markup: the Debian
Edu 12 manual's hardware requirements (DocBook, Chinese), the Valgrind manual's numbered steps and its option list
(DocBook `variablelist`), a Sphinx page's list of plain items."""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.answer.rows import introduced_lists
from docqa.answer.shape import shape
from docqa.answer.statement import quotable_spans
from docqa.ingest.chunkers import chunk_document
from docqa.ingest.readers import read_file


def _read(body: str):
    return read_file(Path("page.html"), f"<html><body>{body}</body></html>".encode())


# debian-edu-bookworm-manual.html, "4.1. 硬件需求" (DocBook itemizedlist, a nested one inside an item)
EDU = ('<div class="itemizedlist"><ul class="itemizedlist" style="list-style-type: disc; ">'
       '<li class="listitem"><p>对于工作站，无盘工作站和独立使用的系统，1500 MHz 及 1024 MiB 的内存绝对是最低限度的需求。 \n</p></li>'
       '<li class="listitem"><p>最低限度的磁盘空间需求取决于所安装的设定： \n</p>'
       '<div class="itemizedlist"><ul class="itemizedlist" style="list-style-type: circle; ">'
       '<li class="listitem"><p>combined main server + LTSP server + workstation (if a GUI on the server is\ndesired): 60 GiB '
       '(plus additional space for user accounts). \n</p></li>'
       '<li class="listitem"><p>LTSP 服务器：40 GiB。 \n</p></li>'
       '<li class="listitem"><p>工作站或独立系统：30 GiB。 \n</p></li>'
       '<li class="listitem"><p>minimal networked machine installation: 4 GiB. \n</p></li></ul></div></li>'
       '<li class="listitem"><p>笔记本电脑是可移动的工作站，因此它们有同工作站一样的需求。 \n</p></li></ul></div>')

# valgrind's manual-core-adv.html, 3.2.2 (DocBook orderedlist, one item of two paragraphs)
VALGRIND_STEPS = ('<div class="orderedlist"><ol class="orderedlist" type="1">'
                  '<li class="listitem"><p>Start Valgrind with <code class="option">--vgdb-error=0</code>.</p>'
                  '<p>It then waits for GDB to connect.</p></li>'
                  '<li class="listitem"><p>In another window, start GDB.</p></li></ol></div>')

# valgrind's mc-manual.html, 4.3 (DocBook variablelist: a dt label, a dd description)
VALGRIND_OPTION = ('<div class="variablelist"><dl class="variablelist"><dt><span class="term"><code class="option">'
                   '--leak-check=&lt;no|summary|yes|full&gt; [default: summary] </code></span></dt>'
                   '<dd><p>When enabled, search for memory leaks when the client program finishes. If set to '
                   '<code class="varname">summary</code>, it says how many leaks occurred.</p></dd></dl></div>')


@pytest.mark.parametrize(("body", "text"), [
    (EDU, "- 对于工作站，无盘工作站和独立使用的系统，1500 MHz 及 1024 MiB 的内存绝对是最低限度的需求。\n\n"
          "- 最低限度的磁盘空间需求取决于所安装的设定：\n\n"
          "  - combined main server + LTSP server + workstation (if a GUI on the server is desired): 60 GiB "
          "(plus additional space for user accounts).\n\n"
          "  - LTSP 服务器：40 GiB。\n\n  - 工作站或独立系统：30 GiB。\n\n  - minimal networked machine installation: 4 GiB.\n\n"
          "- 笔记本电脑是可移动的工作站，因此它们有同工作站一样的需求。"),
    (VALGRIND_STEPS, "1. Start Valgrind with --vgdb-error=0.\n\nIt then waits for GDB to connect.\n\n"
                     "2. In another window, start GDB."),
    ('<p>Supported formats:</p><ol start="3" type="a"><li>PNG</li><li>SVG</li></ol>',
     "Supported formats:\n\nc) PNG\n\nd) SVG"),
    ('<ul><li><pre>make install</pre></li><li>Log in again.</li></ul>', "make install\n\n- Log in again."),
    ('<ul><li> </li><li><a href="x.html">Next</a> page</li></ul>', "- Next page"),  # an empty item marks nothing
    (VALGRIND_OPTION, "--leak-check=<no|summary|yes|full> [default: summary]\n\n"
                      "When enabled, search for memory leaks when the client program finishes. "
                      "If set to summary, it says how many leaks occurred."),
])
def test_a_list_keeps_its_markers_and_levels(body, text):
    assert _read(body).text == text


def test_a_nested_item_keeps_its_indentation_in_its_chunk():
    doc = _read("<h2>4.1. 硬件需求</h2>" + EDU)
    [chunk] = [c for c in chunk_document(doc) if "LTSP 服务器：40 GiB。" in c.text]
    assert "\n\n  - LTSP 服务器：40 GiB。\n\n  - 工作站或独立系统：30 GiB。\n\n" in chunk.text


class _Quote:
    def __init__(self, text: str, s: int, e: int):
        self.n, self.start, self.end, self.text, self.score = 1, s, e, text[s:e], 0.0


@pytest.mark.parametrize(("pick", "expected"), [
    # a nested item: its own list with the item that introduces it, not the list around it
    ("  - LTSP 服务器：40 GiB。", ["- 最低限度的磁盘空间需求取决于所安装的设定：", "- combined main server", "- LTSP 服务器：40 GiB。",
                                "- 工作站或独立系统：30 GiB。", "- minimal networked machine"]),
    # the item that introduces the nested list: that list
    ("- 最低限度的磁盘空间需求取决于所安装的设定：", ["- 最低限度的磁盘空间需求取决于所安装的设定：", "- combined main server",
                                     "- LTSP 服务器：40 GiB。", "- 工作站或独立系统：30 GiB。", "- minimal networked machine"]),
    # an outer item: the outer list, the nested one under it in reading order
    ("- 笔记本电脑", ["- 对于工作站", "- 最低限度的磁盘空间需求取决于所安装的设定：", "- combined main server", "- LTSP 服务器：40 GiB。",
                "- 工作站或独立系统：30 GiB。", "- minimal networked machine", "- 笔记本电脑"]),
])
def test_a_list_question_quotes_the_list_the_pick_stands_in(pick, expected):
    text = _read(EDU).text
    candidates = [_Quote(text, s, e) for s, e in quotable_spans(text)]
    [best] = [q for q in candidates if text[text.rfind("\n", 0, q.start) + 1:].startswith(pick)]
    got = shape("按照 Debian Edu 12 手册，单独的 LTSP 服务器和普通工作站各自最少需要多少磁盘空间？有哪些设定？", candidates, [best], 0.0,
                lambda n: text)
    assert got is not None and got.steps
    assert [q.text[: len(p)] for q, p in zip(got.sentences, expected, strict=True)] == expected


def test_label_items_of_a_nested_list_are_quoted_without_the_list_around_it():
    """openssl's README.Debian list as an HTML page would nest it: the introduction is extended over its own items only."""
    text = _read("<ul><li>As a result, the following algorithms in libcrypto have been disabled:<ul><li>RC5</li><li>MDC2</li>"
                 "<li>IDEA</li></ul></li><li>Everything else is built as upstream ships it.</li></ul>").text
    [(s, e)] = introduced_lists("Which algorithms were disabled because of patents?", text, quotable_spans(text))
    assert text[s:e] == ("- As a result, the following algorithms in libcrypto have been disabled:\n\n"
                         "  - RC5\n\n  - MDC2\n\n  - IDEA")


def test_a_lettered_list_s_items_stay_whole_and_are_quoted_as_a_list():
    text = _read('<p>LilyPond can write its output in these formats:</p><ol type="a"><li>PDF files, the default.</li>'
                 '<li>SVG images, for the web.</li><li>PNG images, at a chosen resolution.</li></ol>').text
    candidates = [_Quote(text, s, e) for s, e in quotable_spans(text)]
    assert [q.text for q in candidates][1:] == ["a) PDF files, the default.", "b) SVG images, for the web.",
                                                "c) PNG images, at a chosen resolution."]
    got = shape("Which formats can LilyPond write its output in?", candidates, [candidates[2]], 0.0, lambda n: text)
    assert got is not None and got.steps and [q.text[:2] for q in got.sentences] == ["Li", "a)", "b)", "c)"]
