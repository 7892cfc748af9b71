"""What the sentence ranking reads beside a sentence's coverage of the question (issue 28, `rank3`): a list item under
the line that introduces its list (rows.lead_in, read by `dense_headed`), how much of the sentence is about the
question (`echo`), and, for a question asking for several things, whether the sentence names several (`enumerates`).
The texts are real lines of the trust dev set's documentation (systemd's UIDS-GIDS.md, the Debian Edu 12 manual in
Chinese, openssl's README.Debian, LXGW WenKai's changelog, the LilyPond manual, wc(1) in Chinese)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from docqa.answer import extractive
from docqa.answer.extractive import Sentence, _headed
from docqa.answer.rows import lead_in
from docqa.answer.support import content_tokens

from .hits import hit_in, sources

UIDS = """## Special Linux UIDs

In theory, the range of the C type `uid_t` is 32bit wide on Linux,
i.e. 0…4294967295. However, four UIDs are special on Linux:

1. 0 → The `root` super-user.

2. 65534 → The `nobody` UID, also called the "overflow" UID or similar. It's
   where various subsystems map unmappable users to, for example file systems
   only supporting 16bit UIDs, NFS or user namespacing.
"""
EDU = """- 对于工作站，无盘工作站和独立使用的系统，1500 MHz 及 1024 MiB 的内存绝对是最低限度的需求。

- 最低限度的磁盘空间需求取决于所安装的设定：

  - combined main server + LTSP server + workstation (if a GUI on the server is desired): 60 GiB (plus additional space for user accounts).

  - LTSP 服务器：40 GiB。

  - 工作站或独立系统：30 GiB。
"""
OPENSSL = """PATENT ISSUES
-------------

Some algorithms used in the library are covered by patents.  As
a result, the following algorithms in libcrypto have been disabled:
- RC5
- MDC2
- IDEA
"""
WENKAI = """### v1.233.4 22/04/09
- 新增越南语拉丁字（国语字 / Chữ Quốc Ngữ）支持。
"""
LILYPOND = """如果你不理解前面所说的，也没有关系！下面就会一一解释他们的意思：

- 版本声明: 每一个 LilyPond 文件都会带有一个版本声明。版本声明是一行

依惯例，版本声明会放在 LilyPond 文件的最开头。

- 大小写敏感: 小写 (e.g. a, b, s, t) 和大写 (e.g. A, B, S, T) 的效果是不一样的。
"""

LEADS = [  # (text, a piece of the item, its lead-in)
    (UIDS, "2. 65534", "In theory, the range of the C type `uid_t` is 32bit wide on Linux, i.e. 0…4294967295. However, four "
                       "UIDs are special on Linux:"),
    (UIDS, "1. 0 →", "In theory, the range of the C type `uid_t` is 32bit wide on Linux, i.e. 0…4294967295. However, four "
                     "UIDs are special on Linux:"),
    (UIDS, "only supporting 16bit", "In theory, the range of the C type `uid_t` is 32bit wide on Linux, i.e. 0…4294967295. "
                                    "However, four UIDs are special on Linux:"),  # an item's wrapped line
    (EDU, "LTSP 服务器：40 GiB", "- 最低限度的磁盘空间需求取决于所安装的设定："),  # a nested list: the item it hangs under
    (EDU, "工作站或独立系统", "- 最低限度的磁盘空间需求取决于所安装的设定："),
    (EDU, "对于工作站", ""),  # the list's first item, nothing above it
    (OPENSSL, "- MDC2", "Some algorithms used in the library are covered by patents. As a result, the following algorithms "
                        "in libcrypto have been disabled:"),
    (OPENSSL, "Some algorithms", ""),  # no list item
    (WENKAI, "新增越南语", ""),  # under a heading, no lead-in
    (LILYPOND, "- 版本声明", "如果你不理解前面所说的，也没有关系！下面就会一一解释他们的意思："),
    (LILYPOND, "- 大小写敏感", ""),  # a paragraph lies between: the lead-in is not this item's
]


@pytest.mark.parametrize(("text", "piece", "expected"), LEADS)
def test_a_list_item_is_read_under_the_line_that_introduces_its_list(text, piece, expected):
    assert lead_in(text, text.index(piece)) == expected


def test_the_headed_text_holds_an_items_lead_in():
    start = UIDS.index("2. 65534")
    end = UIDS.index("It's", start)
    hit = replace(hit_in(UIDS, 0, len(UIDS), section="UIDs and GIDs > Special Linux UIDs"), title="Users, Groups, UIDs and GIDs")
    headed = _headed(Sentence(1, start, end, UIDS[start:end]), hit)
    assert headed.split("\n") == ["Special Linux UIDs", lead_in(UIDS, start), UIDS[start:end]]


def _features(question: str, document: str, pieces: list[str]) -> list[dict[str, float]]:
    pool = sources(hit_in(document, 0, len(document)))
    candidates = []
    for piece in pieces:
        start = document.index(piece)
        candidates.append(Sentence(1, start, start + len(piece), piece))
    return extractive.selection_features(question, candidates, pool, {}, {})


EDU_KERNEL = """- 有关 Debian 12 Bookworm 的更多信息是在发行说明和安装手册中提供。

Linux kernel 6.1
"""


def test_echo_is_the_share_of_the_sentence_the_question_holds():
    """The kernel line is nearly all question words; the sentence beside it shares three in passing."""
    question = "Which Linux kernel version does Debian Edu 12 Bookworm ship with?"
    pieces = ["- 有关 Debian 12 Bookworm 的更多信息是在发行说明和安装手册中提供。", "Linux kernel 6.1"]
    passing, kernel = _features(question, EDU_KERNEL, pieces)
    asked = content_tokens(question)
    for piece, f in zip(pieces, (passing, kernel)):
        own = content_tokens(piece)
        assert f["echo"] == pytest.approx(len(own & asked) / len(own))
    assert kernel["echo"] > 0.5 > passing["echo"] > 0


WC = """下列选项可被用来选择应该显示哪些计数信息。它们总是按照行数、单词数、字符数、字节数、最大行长度的顺序显示。
对每个文件输出行、单词和字节统计数，如果指定的文件多于一个，则同时输出总行数。
-T, --tabsize=列数
"""
ENUMERATES = [  # (question, document, sentence, names several things for that question)
    ("Debian 的 openssl 因为专利问题禁用了哪些算法？", OPENSSL, OPENSSL[OPENSSL.index("a result"):].rstrip(), True),
    ("Debian 的 openssl 因为专利问题禁用了 RC5 吗？", OPENSSL, OPENSSL[OPENSSL.index("a result"):].rstrip(), False),  # asks one thing
    ("Debian 的 openssl 因为专利问题禁用了哪些算法？", OPENSSL, "Some algorithms used in the library are covered by patents.", False),
    ("wc 同时输出几种计数的时候，各列是按什么先后顺序排的？", WC, "它们总是按照行数、单词数、字符数、字节数、最大行长度的顺序显示。", True),
    ("wc 同时输出几种计数的时候，各列是按什么先后顺序排的？", WC, "-T, --tabsize=列数", False),
    ("LilyPond 文件开头的 \\version 声明为什么重要？手册给了哪两个理由？", "版本声明非常重要，原因有二。二是它指明了编译这份文件所需的 LilyPond 版本。",
     "二是它指明了编译这份文件所需的 LilyPond 版本。", True),
    ("Which ports do the first and the second PostgreSQL clusters get?",
     "The first cluster which is ever created will run on the default port 5432.",
     "The first cluster which is ever created will run on the default port 5432.", False),  # "first" as an adjective
]


@pytest.mark.parametrize(("question", "document", "sentence", "expected"), ENUMERATES)
def test_a_sentence_that_names_several_things_for_a_question_asking_for_several(question, document, sentence, expected):
    assert _features(question, document, [sentence])[0]["enumerates"] == float(expected)
