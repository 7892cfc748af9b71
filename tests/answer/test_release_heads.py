"""A release question's answer names the release of every sentence it quotes (docqa.answer.extractive.release_heads,
docqa.answer.pipeline): release notes of several releases answer alike, and a later sentence quoted without its
release heading cannot tell the reader which release it is from.  The texts are real: Git's release notes 2.35 and
2.38, fonts-lxgw-wenkai's History.md and README.md."""

from __future__ import annotations

import pytest

from pathlib import Path

from docqa.answer.citer import citation_for
from docqa.answer.extractive import Sentence, release_heads
from docqa.answer.pipeline import _quoted, _with_heads
from docqa.answer.release import label
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.types import Claim

from .hits import hit_in, sources

GIT_235 = """Git 2.35 Release Notes
======================

Updates since Git 2.34
----------------------

Backward compatibility warts

 * "_" is now treated as any other URL-valid characters in an URL when
   matching the per-URL configuration variable names.

 * The color palette used by "git grep" has been updated to match that
   of GNU grep.
"""

GIT_238 = """Git v2.38 Release Notes
=======================

UI, Workflows & Features

 * "git remote show [-n] frotz" now pays attention to negative
   pathspec.

 * "git grep -m<max-hits>" is a way to limit the hits shown per file.
"""

HISTORY = """### v1.233.5 22/04/10
- 修正非等宽版 `U+1ED3`「ồ」（玄声） 显示成「ố」（锐声）的问题，等宽版无变动。 #67 

### v1.233.4 22/04/09
- 新增越南语拉丁字（国语字 / Chữ Quốc Ngữ）支持。
"""

README = ("2. [霞鹜文楷 轻便版 / LXGW WenKai Lite](https://github.com/lxgw/LxgwWenKai-Lite)："
          "剔除 v1.100 版本增补的一些较不常用的汉字，便于开发者将字体嵌入软件中。\n")

GREP = "In which feature release did git grep gain a way to cap the number of matches shown per file?"
VIETNAMESE = "霞鹜文楷是在哪个版本加上越南语（国语字）支持的？"


def _sentence(n: int, text: str, part: str) -> Sentence:
    start = text.index(part)
    return Sentence(n, start, start + len(part), part)


def _git():
    pool = sources(hit_in(GIT_235, 0, len(GIT_235), path="/docs/git/RelNotes/2.35.0.txt", section=""),
                   hit_in(GIT_238, 0, len(GIT_238), path="/docs/git/RelNotes/2.38.0.txt", section="", chunk_id="c2"))
    palette = _sentence(1, GIT_235, '* The color palette used by "git grep" has been updated to match that\n   of GNU grep.')
    warts = _sentence(1, GIT_235, '* "_" is now treated as any other URL-valid characters in an URL when\n'
                                  '   matching the per-URL configuration variable names.')
    grep = _sentence(2, GIT_238, '* "git grep -m<max-hits>" is a way to limit the hits shown per file.')
    return pool, palette, warts, grep


@pytest.mark.parametrize(("question", "picks", "headed"), [
    # a later pick from another release's notes: its heading, quoted before it
    (GREP, ("palette", "grep"), {"grep": "Git v2.38 Release Notes"}),
    # the same release as the lead's: nothing more to say
    (GREP, ("palette", "warts"), {}),
    # not a release question: no heading added
    ("How do I cap the number of matches git grep shows per file?", ("palette", "grep"), {}),
    # the release the question names already
    ("What did Git 2.38 add to git grep to cap the matches shown per file?", ("palette", "grep"), {}),
])
def test_a_later_pick_of_another_release_gets_its_heading(question, picks, headed):
    pool, palette, warts, grep = _git()
    by_name = {"palette": palette, "warts": warts, "grep": grep}
    lead = Sentence(1, 0, len("Git 2.35 Release Notes"), "Git 2.35 Release Notes")  # the lead's heading, quoted first
    heads = release_heads(question, [by_name[p] for p in picks], lead, pool)
    found = {name: h.text for name, s in by_name.items() for x, h in heads if x is s}
    assert found == headed
    for x, h in heads:  # a heading is a span of its own chunk, citable as it is
        assert pool.get(h.n).hit.text[h.start : h.end] == h.text and h.n == x.n  # type: ignore[union-attr]


def test_a_lead_that_names_a_version_in_passing_does_not_name_the_release_of_a_later_pick():
    """The README sentence that leads names v1.100 in passing; the changelog item picked after it is from v1.233.4,
    which only its heading says."""
    pool = sources(hit_in(README, 0, len(README), path="/docs/fonts-lxgw-wenkai/README.md.gz", section="LXGW WenKai / 霞鹜文楷"),
                   hit_in(HISTORY, 0, len(HISTORY), path="/docs/fonts-lxgw-wenkai/History.md.gz", section="v1.233.4 22/04/09",
                          chunk_id="c2"))
    lead = _sentence(1, README, README.strip())
    item = _sentence(2, HISTORY, "- 新增越南语拉丁字（国语字 / Chữ Quốc Ngữ）支持。")
    heads = release_heads(VIETNAMESE, [lead, item], None, pool)
    assert [(x is item, h.text) for x, h in heads] == [(True, "v1.233.4 22/04/09")]


def test_the_heading_is_quoted_on_a_line_of_its_own_before_its_sentence():
    pool, palette, _, grep = _git()
    heads = release_heads(GREP, [palette, grep], None, pool)
    shown, places = _with_heads([palette, grep], heads)
    assert [x.text for x in shown] == [palette.text, "Git v2.38 Release Notes", grep.text] and places == {1}
    claims = []
    for x in shown:
        hit = pool.get(x.n).hit  # type: ignore[union-attr]
        c = citation_for(x.n, hit, x.start, x.end, "en", pool.paths)
        claims.append(Claim(" ".join(c.quote.split()), 0, 0, sources=[c.n], citations=[c], supported=True, support=1.0))
    text = _quoted(claims, headings=places)
    assert "of GNU grep.\n\nGit v2.38 Release Notes\n\n* \"git grep -m<max-hits>\"" in text


# -- a release heading in an earlier chunk -----------------------------------------------------------------------------
# valgrind/html/dist.news.html (the NEWS of 3.11.0, shortened: the Massif and Helgrind items left out): the release is
# named once, in an underlined line in the HTML's literal layout (no section of its own), and the item that answers
# comes a few chunks later.
NEWS_3110 = """Release 3.11.0 (22 September 2015)
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~

3.11.0 is a feature release with many improvements and the usual
collection of bug fixes.

This release supports X86/Linux, AMD64/Linux, ARM32/Linux,
ARM64/Linux, PPC32/Linux, PPC64BE/Linux, PPC64LE/Linux, S390X/Linux,
MIPS32/Linux, MIPS64/Linux, ARM/Android, ARM64/Android,
MIPS32/Android, X86/Android, X86/Solaris, AMD64/Solaris, X86/MacOSX
10.10 and AMD64/MacOSX 10.10. There is also preliminary support for
X86/MacOSX 10.11, AMD64/MacOSX 10.11 and TILEGX/Linux.

* ================== PLATFORM CHANGES =================

* Support for Solaris/x86 and Solaris/amd64 has been added.

* Preliminary support for Mac OS X 10.11 (El Capitan) has been added.

* Preliminary support for the Tilera TileGX architecture has been added.

* s390x: It is now required for the host to have the "long displacement"
facility. The oldest supported machine model is z990.

* x86: on an SSE2 only host, Valgrind in 32 bit mode now claims to be a
Pentium 4. 3.10.1 wrongly claimed to be a Core 2, which is SSSE3.

* The JIT's register allocator is significantly faster, making the JIT
as a whole somewhat faster, so JIT-intensive activities, for example
program startup, are modestly faster, around 5%.

* There have been changes to the default settings of several command
line flags, as detailed below.

* Intel AVX2 support is more complete (64 bit targets only). On AVX2
capable hosts, the simulated CPUID will now indicate AVX2 support.

* ==================== TOOL CHANGES ====================

* Memcheck:

- The default value for --leak-check-heuristics has been changed from
"none" to "all". This helps to reduce the number of possibly
lost blocks, in particular for C++ applications.

- The default value for --keep-stacktraces has been changed from
"malloc-then-free" to "malloc-and-free". This has a small cost in
memory (one word per malloc-ed block) but allows Memcheck to show the
3 stacktraces of a dangling reference: where the block was allocated,
where it was freed, and where it is acccessed after being freed.

- The default value for --partial-loads-ok has been changed from "no" to
"yes", so as to avoid false positive errors resulting from some kinds
of vectorised loops.

- A new monitor command 'xb <addr> <len>' shows the validity bits of
<len> bytes at <addr>. The monitor command 'xb' is easier to use
than get_vbits when you need to associate byte data value with
their corresponding validity bits.

- The 'block_list' monitor command has been enhanced:
o it can print a range of loss records
o it now accepts an optional argument 'limited <max_blocks>'
to control the number of blocks printed.
o if a block has been found using a heuristic, then
'block_list' now shows the heuristic after the block size.
o the loss records/blocks to print can be limited to the blocks
found via specified heuristics.

- The C helper functions used to instrument loads on
x86-{linux,solaris} and arm-linux (both 32-bit only) have been
replaced by handwritten assembly sequences. This gives speedups
in the region of 0% to 7% for those targets only.

- A new command line option, --expensive-definedness-checks=yes|no,
has been added. This is useful for avoiding occasional invalid
uninitialised-value errors in optimised code. Watch out for
runtime degradation, as this can be up to 25%. As always, though,
the slowdown is highly application specific. The default setting
is "no".

* ==================== OTHER CHANGES ====================

* The default value for the --smc-check option has been changed from
"stack" to "all-non-file" on targets that provide automatic D-I
cache coherence (x86, amd64 and s390x). The result is to provide,
by default, transparent support for JIT generated and self-modifying
code on all targets.

* Mac OS X only: the default value for the --dsymutil option has been
changed from "no" to "yes", since any serious usage on Mac OS X
always required it to be "yes".

* The command line options --db-attach and --db-command have been removed.
They were deprecated in 3.10.0.
"""
NEWS_HTML = ("<html><head><title>2. NEWS</title></head><body><h1>2. NEWS</h1><div class=\"literallayout\"><p>"
             + "<br>\n".join(NEWS_3110.rstrip("\n").split("\n")) + "</p></div></body></html>\n")
REMOVED = "* The command line options --db-attach and --db-command have been removed."

# debian-edu-bookworm-manual.html as the HTML reader renders it: a path's folder "3.0" in a short line of an earlier
# section, and the chunk that opens with its own section's title.
EDU_ABOVE = """Additional configuration is needed to

enable/disable access points via a shared secret (/etc/freeradius/3.0/clients.conf).

allow/deny wireless access using LDAP groups (/etc/freeradius/3.0/users).

combine access points into dedicated groups (/etc/freeradius/3.0/huntgroups)

23. Debian Edu Bookworm 中的新面貌

23.1. Debian Edu 12 Bookworm 的新面貌

23.1.1. 安装变化

New artwork based on the Emerald theme, the default artwork for Debian 12 bookworm.
"""
EDU_CHUNK = """23.1.2. 软件更新

Debian 12 bookworm 中所有新的事物，例如：
"""
EDU_TITLES = ("23. Debian Edu Bookworm 中的新面貌", "23.1. Debian Edu 12 Bookworm 的新面貌", "23.1.2. 软件更新")


def _split_news() -> tuple[str, str]:
    cut = NEWS_3110.index("* ==================== TOOL CHANGES")
    return NEWS_3110[:cut], NEWS_3110[cut:]


@pytest.mark.parametrize(("above", "chunk", "section", "expected"), [
    # the NEWS item's release: the underlined title of the lines above its chunk
    ("news", "news", ("2. NEWS",), "Release 3.11.0 (22 September 2015)"),
    # a chunk that opens with its own section's title: what is above belongs to other sections
    (EDU_ABOVE, EDU_CHUNK, EDU_TITLES, None),
    # ... and without that title, a folder "3.0" of a path is still no release
    (EDU_ABOVE, "Debian 12 bookworm 中所有新的事物，例如：\n", ("23. Debian Edu Bookworm 中的新面貌",), None),
    # a list item is no title, though it stands alone and holds a version (dist.news.html, 3.9.0's platform changes)
    ("* Support for s390x Decimal Floating Point instructions on hosts that\nhave the DFP facility installed.\n\n"
     "* Support for POWER8 (Power ISA 2.07) instructions\n\n",
     "* Support for Intel AVX2 instructions. This is available only on 64\nbit code.\n", ("2. NEWS",), None),
    # the chunk's section title comes after the release title above: that title heads an earlier section
    ("Release 3.10.0 (10 September 2014)\n~~~~~~~~~~~~~~~~~~\n\n* Fixed bugs.\n\nInstalling\n\n", "Run ./configure.\n",
     ("Installing",), None),
])
def test_a_release_title_above_the_chunk_names_its_release(above, chunk, section, expected):
    before, after = _split_news()
    above, chunk = (before if above == "news" else above), (after if chunk == "news" else chunk)
    start = chunk.index(REMOVED) if REMOVED in chunk else 0
    found = label(chunk, start, section, "/docs/valgrind/html/dist.news.html", above)
    assert (found.text if found is not None else None) == expected
    if found is not None:
        assert found.source == "above" and found.version == "3.11.0" and above[found.span[0] : found.span[1]] == found.text
    assert label(chunk, start, section, "/docs/valgrind/html/dist.news.html") is None  # the chunk alone names none


@pytest.mark.slow  # a knowledge base built and asked: over 2 s on a loaded machine
def test_the_answer_quotes_the_release_heading_of_an_earlier_chunk(tmp_path: Path, hash_embedder):
    """The whole path: a knowledge base of the NEWS page, the item found in a later chunk, its release heading read
    from the lines above that chunk and quoted, cited at its own line of the page."""
    (tmp_path / "html").mkdir()
    (tmp_path / "html" / "dist.news.html").write_text(NEWS_HTML, encoding="utf-8")
    settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"}, answer={"abstain_threshold": 0.0})
    with KnowledgeBase(settings, embedder=hash_embedder) as kb:
        kb.add([tmp_path / "html"], "valgrind")
        answer = kb.ask("In which Valgrind release were the command line options --db-attach and --db-command removed?")
        text = kb.documents.text(answer.citations[0].document_id)
    removed = [c for c in answer.citations if c.quote.startswith(REMOVED)]
    heading = [c for c in answer.citations if c.quote == "Release 3.11.0 (22 September 2015)"]
    assert removed and heading, answer.answer
    assert heading[0].chunk_id != removed[0].chunk_id  # not a line of the item's chunk: read from the lines above it
    assert text[heading[0].char_start : heading[0].char_end] == heading[0].quote  # the page's own line
    assert text.count("\n", 0, heading[0].char_start) + 1 == heading[0].line_start
    assert answer.answer.index("Release 3.11.0") < answer.answer.index("--db-attach and --db-command have been removed")
