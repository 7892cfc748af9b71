"""A release question's answer names the release of every sentence it quotes (docqa.answer.extractive.release_heads,
docqa.answer.pipeline): release notes of several releases answer alike, and a later sentence quoted without its
release heading cannot tell the reader which release it is from.  The texts are real: Git's release notes 2.35 and
2.38, fonts-lxgw-wenkai's History.md and README.md."""

from __future__ import annotations

import pytest

from docqa.answer.citer import citation_for
from docqa.answer.extractive import Sentence, release_heads
from docqa.answer.pipeline import _quoted, _with_heads
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
