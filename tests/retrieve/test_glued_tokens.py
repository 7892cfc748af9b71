"""A short prefix glued to a number (`RFC8878`, `sha256`) is indexed with its parts as well
(text.segment.with_glued_parts, through store.documents.indexed_text): a question that names only the
letters ("which RFC …?") or writes the parts apart ("RFC 8878") finds the text that glues them.

The case from the trust dev set (markdown-docs-027): "Zstandard 的格式是在哪个 RFC 里规定的？" over a knowledge
base where zstd's README writes `[RFC8878](…)` and the Chinese man page of date(1) writes "以 RFC 5322 格式" —
the man page held both searched words the README seemed to lack, and led.  Real text, real SQLite, BM25.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.text.segment import search_terms, with_glued_parts

# zstd's README.md (Debian zstd 1.5.4), its first 40 lines: long enough that its keywords (a document-wide field)
# do not hold "rfc" as a short page's would
README = (
    "<p align=\"center\"><img src=\"https://raw.githubusercontent.com/facebook/zstd/dev/doc/images/zstd_logo86.png\" alt=\"Zstandard\"></p>\n"
    "\n"
    "__Zstandard__, or `zstd` as short version, is a fast lossless compression algorithm,\n"
    "targeting real-time compression scenarios at zlib-level and better compression ratios.\n"
    "It's backed by a very fast entropy stage, provided by [Huff0 and FSE library](https://github.com/Cyan4973/FiniteStateEntropy).\n"
    "\n"
    "Zstandard's format is stable and documented in [RFC8878](https://datatracker.ietf.org/doc/html/rfc8878). "
    "Multiple independent implementations are already available.\n"
    "This repository represents the reference implementation, provided as an open-source dual [BSD](LICENSE) and [GPLv2](COPYING) licensed **C** library,\n"
    "and a command line utility producing and decoding `.zst`, `.gz`, `.xz` and `.lz4` files.\n"
    "Should your project require another programming language,\n"
    "a list of known ports and bindings is provided on [Zstandard homepage](https://facebook.github.io/zstd/#other-languages).\n"
    "\n"
    "**Development branch status:**\n"
    "\n"
    "[![Build Status][travisDevBadge]][travisLink]\n"
    "[![Build status][AppveyorDevBadge]][AppveyorLink]\n"
    "[![Build status][CircleDevBadge]][CircleLink]\n"
    "[![Build status][CirrusDevBadge]][CirrusLink]\n"
    "[![Fuzzing Status][OSSFuzzBadge]][OSSFuzzLink]\n"
    "\n"
    "[travisDevBadge]: https://api.travis-ci.com/facebook/zstd.svg?branch=dev \"Continuous Integration test suite\"\n"
    "[travisLink]: https://travis-ci.com/facebook/zstd\n"
    "[AppveyorDevBadge]: https://ci.appveyor.com/api/projects/status/xt38wbdxjk5mrbem/branch/dev?svg=true \"Windows test suite\"\n"
    "[AppveyorLink]: https://ci.appveyor.com/project/YannCollet/zstd-p0yf0\n"
    "[CircleDevBadge]: https://circleci.com/gh/facebook/zstd/tree/dev.svg?style=shield \"Short test suite\"\n"
    "[CircleLink]: https://circleci.com/gh/facebook/zstd\n"
    "[CirrusDevBadge]: https://api.cirrus-ci.com/github/facebook/zstd.svg?branch=dev\n"
    "[CirrusLink]: https://cirrus-ci.com/github/facebook/zstd\n"
    "[OSSFuzzBadge]: https://oss-fuzz-build-logs.storage.googleapis.com/badges/zstd.svg\n"
    "[OSSFuzzLink]: https://bugs.chromium.org/p/oss-fuzz/issues/list?sort=-opened&can=1&q=proj:zstd\n"
    "\n"
    "## Benchmarks\n"
    "\n"
    "For reference, several fast compression algorithms were tested and compared\n"
    "on a desktop running Ubuntu 20.04 (`Linux 5.11.0-41-generic`),\n"
    "with a Core i7-9700K CPU @ 4.9GHz,\n"
    "using [lzbench], an open-source in-memory benchmark by @inikep\n"
    "compiled with [gcc] 9.3.0,\n"
    "on the [Silesia compression corpus].\n"
    "\n"
)
# date(1) of manpages-zh, its options that name RFCs
DATE = (
    "# DATE\n\n## 描述\n\n"
    "-R, --rfc-email\n以 RFC 5322 格式输出日期与时间。例：Mon, 14 Aug 2006 02:34:56 -0600\n\n"
    "--rfc-3339=格式\n以 RFC 3339 格式输出日期/时间。格式=\"date\"、\"seconds\" 或 \"ns\"\n"
)
# other pages of the same knowledge base, so that the words' rarity is what it is in real use (格式 common, RFC less
# so, Zstandard rare): nologin(5) and gzip(1) of manpages-zh
NOLOGIN = "# NOLOGIN\n\n## 描述 DESCRIPTION\n\n如果存在文件 /etc/nologin， login(1) 将只允许root访问。其它用户的登录会遭到拒绝并且显示该文件中的内容给他们。\n"
GZIP = ("# GZIP\n\n## 描述\n\n对输入格式的检测是自动的。当采用前两种格式时， gunzip 检查一个32位的CRC校验码。对于 pack, gunzip "
        "则检查压缩前的数据长度。标准的 compress 格式的设计无法实现一致性检查。\n\n"
        "由 zip 生成的文件, 如果其内容只有一个文件并且是以'deflation'方式压缩的，则可由gzip解压。"
        "这一特性只是为了方便将tar.zip 格式的文件转换为tar.gz格式而加入的。\n")
# zstd's other documents, which name Zstandard in their title or text (CONTRIBUTING.md, TESTING.md: their openings)
CONTRIBUTING = ("# Contributing to Zstandard\nWe want to make contributing to this project as easy and transparent as\npossible.\n\n"
                "## Our Development Process\nNew versions are being developed in the \"dev\" branch,\nor in their own feature branch.\n"
                "When they are deemed ready for a release, they are merged into \"release\".\n")
TESTING = ("Testing\n=======\n\nZstandard CI testing is split up into three sections:\nshort, medium, and long tests.\n\n"
           "Short Tests\n-----------\nShort tests run on CircleCI for new commits on every branch and pull request.\n")
FILES = {"zstd/README.md": README, "zstd/CONTRIBUTING.md": CONTRIBUTING, "zstd/TESTING.md": TESTING,
         "man/zh_CN/man1/date.1.md": DATE, "man/zh_CN/man5/nologin.5.md": NOLOGIN,
         "man/zh_CN/man1/gzip.1.md": GZIP}


@pytest.mark.parametrize("text, indexed", [
    ("documented in [RFC8878](https://x/rfc8878).", "documented in [RFC8878 RFC 8878](https://x/rfc8878 rfc 8878)."),
    ("sha256sum and sha256", "sha256sum and sha256 sha 256"),  # sha256sum: letters after the number, one name
    ("ISO8859-1, amd64", "ISO8859 ISO 8859-1, amd64 amd 64"),
    ("见RFC1952规定", "见RFC1952 RFC 1952规定"),  # Chinese around it
    ("x86 ipv6 utf8 libtasn1 v2.39.5 2.39.5", "x86 ipv6 utf8 libtasn1 v2.39.5 2.39.5"),  # one letter or one digit: a name
    ("cn=subnet00,cn=dhcp python311", "cn=subnet00,cn=dhcp python311"),  # a longer word numbered: an item, a name
])
def test_a_glued_word_is_indexed_with_its_parts(text, indexed):
    assert with_glued_parts(text) == indexed


def test_the_question_is_searched_as_it_is_written():
    assert search_terms("Which RFC8878 section?") == ["rfc8878", "section"]  # the parts are in the index, not the query


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    root = tmp_path_factory.mktemp("glued")
    for rel, text in FILES.items():
        path = root / "docs" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    settings = Settings(kb=str(root / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"})
    with KnowledgeBase(settings) as base:
        report = base.add([root / "docs"])
        assert len(report.added) == len(FILES) and not report.failed
        yield base


@pytest.mark.parametrize("question", ["RFC 8878", "Is Zstandard's format documented in RFC 8878?"])
def test_the_parts_written_apart_find_the_glued_word(kb, question):
    hits = kb.search(question, top_k=5, mode="bm25")
    assert hits and Path(hits[0].path).name == "README.md", [Path(h.path).name for h in hits]
    assert "RFC8878" in hits[0].text  # the stored text is as written: the parts live in the index only


@pytest.mark.parametrize("question", ["RFC", "哪个 RFC？"])
def test_the_letters_alone_find_the_glued_word(kb, question):
    """"Which RFC …?" names the letters only: every text that writes an RFC is found, the glued one too."""
    names = [Path(h.path).name for h in kb.search(question, top_k=10, mode="bm25")]
    assert "README.md" in names and "date.1.md" in names, names
