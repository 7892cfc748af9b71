"""Version-specific questions whose answer is a heading, a lead-in or a label line, and release questions the documents
cannot answer (docqa.answer.release, docqa.answer.rows, docqa.answer.extractive).  The texts are real: Debian's
OpenSSH NEWS.Debian, the Debian Edu Bookworm manual as the HTML reader renders it, systemd's UIDS-GIDS.md, Git's
release notes."""

from __future__ import annotations

import pytest

from docqa.answer import answerability
from docqa.answer.extractive import _asked_negated, _exact_given, extract
from docqa.answer.release import asks_release, label, names_nothing
from docqa.answer.rows import label_lines
from docqa.answer.statement import quotable_spans

from .hits import hit_in, sources

# openssh-client/NEWS.Debian.gz: one entry names several upstream releases, each by a paragraph that introduces its items.
NEWS = """   * sshd(8): environment="..." directives in authorized_keys files are now
     first-match-wins and limited to 1024 discrete environment variable
     names.

  OpenSSH 8.5 includes a number of changes that may affect existing
  configurations:

   * ssh(1), sshd(8): this release changes the first-preference signature
     algorithm from ECDSA to ED25519.

   * ssh(1), sshd(8): set the TOS/DSCP specified in the configuration for
     interactive use prior to TCP connect.
"""

# debian-edu-doc-zh-cn/debian-edu-bookworm-manual.html, section 23.1.2: a list rendered one item a line.
EDU = """23.1.2. 软件更新

Debian 12 bookworm 中所有新的事物，例如：

Linux kernel 6.1

Desktop environments KDE Plasma 5.27, GNOME 43, Xfce 4.18, LXDE 11, MATE 1.26

LibreOffice 7.4

GOsa² 2.8

Educational toolbox GCompris 3.1

Music creator Rosegarden 22.12

LTSP 23.01

Debian Bookworm includes more than 64000 packages available for installation.
"""
EDU_SECTION = ("23. Debian Edu Bookworm 中的新面貌", "23.1. Debian Edu 12 Bookworm 的新面貌", "23.1.2. 软件更新")

# systemd/UIDS-GIDS.md: the ranges, no version history; the file starts with YAML front matter.
UIDS = """---
title: Users, Groups, UIDs and GIDs on systemd Systems
category: Users, Groups and Home Directories
layout: default
SPDX-License-Identifier: LGPL-2.1-or-later
---

# Users, Groups, UIDs and GIDs on systemd Systems

`systemd` defines a number of special UID ranges:

1. 60001…60513 → UIDs for home directories managed by `systemd-homed.service(8)`.

2. `systemd-homed` by default mounts the home directories it manages with UID mapping applied.
"""

GIT = """Git v2.30.4 Release Notes
=========================

This release contains minor fix-ups for the changes that went into
Git 2.30.3, which was made to address CVE-2022-24765.

 * '*' can be used as the value for the `safe.directory` variable to
   signal that the user considers that any directory is safe.
"""


def _embed(hash_embedder):
    return lambda texts, kind: hash_embedder.embed_batch(texts, kind)


def test_a_news_paragraph_that_introduces_its_items_names_their_release():
    found = label(NEWS, NEWS.index("* ssh(1), sshd(8): this release"), (), "openssh-client/NEWS.Debian.gz")
    assert found is not None and found.version == "8.5" and found.source == "heading"
    assert NEWS[found.span[0] : found.span[1]] == found.text
    assert found.text.startswith("OpenSSH 8.5 includes") and found.text.endswith("configurations:")
    # the items above it belong to an earlier release: the lead-in is no label of theirs
    assert label(NEWS, NEWS.index("sshd(8): environment"), (), "openssh-client/NEWS.Debian.gz") is None


@pytest.mark.parametrize(("section", "expected"), [
    (EDU_SECTION, None),  # "23.1" numbers a section of a book; it is no release
    (("4. Memcheck: a memory error detector", "4.3. Memcheck Command-Line Options"), None),
    (("2. NEWS", "Release 3.11.0 (22 September 2015)"), "3.11.0"),
    (("LXGW WenKai", "v1.233.4 22/04/09"), "1.233.4"),
])
def test_a_section_number_is_no_version(section, expected):
    found = label("Some sentence.\n", 0, section, "valgrind/html/manual.html")
    assert (found.version if found else None) == expected


@pytest.mark.parametrize("item", ["Linux kernel 6.1", "LibreOffice 7.4", "LTSP 23.01"])
def test_a_list_rendered_one_item_a_line_is_no_release_heading(item):
    """Each item of the list stands alone between blank lines like a title; none names the release of what follows."""
    assert label(EDU, EDU.index(item) + 1, EDU_SECTION, "debian-edu-bookworm-manual.html") is None
    assert label(EDU, EDU.index("Debian Bookworm includes"), EDU_SECTION, "debian-edu-bookworm-manual.html") is None


@pytest.mark.parametrize(("question", "expected"), [
    ("Which Linux kernel version does Debian Edu 12 Bookworm ship with?", ["Linux kernel 6.1"]),
    ("Which LibreOffice version is in Debian Edu 12?", ["LibreOffice 7.4"]),
    ("Debian Edu 12 带的 LTSP 是哪个版本？", ["LTSP 23.01"]),
    ("How many packages does Debian Bookworm include?", []),  # the answer is a sentence, no label line names it
    ("Why was the Linux kernel updated?", []),  # no kind asked
])
def test_a_label_line_that_names_the_subject_and_holds_the_kind_asked_is_a_candidate(question, expected):
    assert [EDU[s:e] for s, e in label_lines(question, EDU)] == expected


def test_an_option_label_line_is_left_to_its_description():
    text = "--freelist-vol=<number> [default: 20000000]\n\nWhen the client program releases memory ...\n"
    assert label_lines("How large is the queue of freed blocks Memcheck keeps by default?", text) == []


def test_a_label_line_answers_and_leads(hash_embedder):
    pool = sources(hit_in(EDU, 0, len(EDU), path="/docs/debian-edu-bookworm-manual.html", section=" > ".join(EDU_SECTION),
                          type_="html"))
    result = extract("Which Linux kernel version does Debian Edu 12 Bookworm ship with?", pool, {}, _embed(hash_embedder),
                     threshold=0.0)
    assert any(s.text == "Linux kernel 6.1" for s in result.candidates)
    assert result.heading is None or result.heading.text != "LTSP 23.01"  # a list item heads nothing


@pytest.mark.parametrize(("question", "asks"), [
    ("Debian 的哪个 OpenSSL 版本重新启用了 IDEA 算法？", True),
    ("systemd-homed 用的这个 UID 范围是哪个 systemd 版本引入的？", True),
    ("哪个选项在新版本里改了？", False),  # asks for an option
    ("这个文件是哪个程序写的？新版本呢？", False),
])
def test_which_chinese_questions_ask_for_a_release(question, asks):
    assert asks_release(question) is asks


@pytest.mark.parametrize(("question", "kind"), [
    ("Which Linux kernel version does Debian Edu 12 Bookworm ship with?", "version"),
    ("In which feature release did git grep gain a way to cap the matches shown per file?", "version"),
    ("Which 2.30.x point release first let me put '*' in safe.directory?", "version"),
    ("Valgrind 3.19.0 是哪天发布的？", "date"),
    ("What does the release change for ssh-rsa keys?", None),
])
def test_a_release_question_asks_for_a_version(question, kind):
    assert answerability.asked_type(question) == kind


@pytest.mark.parametrize(("question", "text", "nothing"), [
    ("Which systemd version introduced the UID range?", "`systemd` defines a number of special UID ranges:", True),
    ("Which systemd version introduced the UID range?", "5. `systemd-homed` mounts the home directories.", True),  # an item's number
    ("Which systemd version introduced 60001…60513?", "1. 60001…60513 → UIDs managed by systemd-homed.service(8).", True),
    ("Which Linux kernel version does Debian Edu 12 ship with?", "Linux kernel 6.1", False),
    ("Which OpenSSL release re-enabled IDEA?", "IDEA was re-enabled in 1.1.0.", False),
    # a range of ids, a group's id (systemd's UIDS-GIDS.md): no release
    ("Which systemd version introduced the UID range reserved for systemd-homed users?",
     "2. 61184…65519 → UIDs for dynamic users are allocated from this range (see the `DynamicUser=` documentation in", True),
    ("Which systemd version introduced the UID range?", "There's one exception however: the `tty` group must have the GID 5.", True),
    ("Which systemd version introduced the UID range?",
     "|           60001…60513 | Human users (homed)   | `systemd`     | `nss-systemd`                 |", True),
])
def test_what_names_no_release(question, text, nothing):
    assert names_nothing(question, text) is nothing


def test_a_release_question_led_by_no_version_abstains(hash_embedder):
    """systemd's UID ranges, asked when they came: the documents discuss the subject, no sentence or heading names a
    version, so the answer could not say which: abstain at any evidence."""
    pool = sources(hit_in(UIDS, 0, len(UIDS), path="/docs/systemd/UIDS-GIDS.md", section="", type_="markdown"))
    question = "Which systemd version introduced the UID range reserved for systemd-homed users?"
    result = extract(question, pool, {}, _embed(hash_embedder), threshold=0.0)
    assert result.abstained and result.features["release_unnamed"] == 1.0
    answered = extract("Which UID range is reserved for systemd-homed users?", pool, {}, _embed(hash_embedder), threshold=0.0)
    assert not answered.abstained and answered.features["release_unnamed"] == 0.0


def test_front_matter_is_no_prose():
    quoted = [UIDS[s:e] for s, e in quotable_spans(UIDS)]
    assert not any("SPDX" in q or "layout:" in q for q in quoted)
    assert "`systemd` defines a number of special UID ranges:" in quoted


def test_a_release_series_names_a_chunk_of_one_of_its_releases():
    later = GIT.replace("Git v2.30.4 Release Notes\n=========================\n\n", "")  # no heading: the file name names it
    pool = sources(hit_in(GIT, 0, len(GIT), path="/docs/git/RelNotes/2.30.4.txt", section=""),
                   hit_in(later, 0, len(later), path="/docs/git/RelNotes/2.31.2.txt", section="", chunk_id="c2"),
                   hit_in(later, 0, len(later), path="/docs/git/RelNotes/2.30.9.txt", section="", chunk_id="c3"))
    given = _exact_given("Which 2.30.x point release first let me put '*' in safe.directory?", pool)
    assert "2.30.x" in given[1].split() and "2.30.x" not in given[2].split() and "2.30.x" in given[3].split()


@pytest.mark.parametrize(("question", "negated"), [
    # the scene, in a statement before the question: the option asked for is no negated fact
    ("Since OpenSSH 9.2 the ~C escape no longer gives me a command line for adding port forwards. "
     "Which ssh_config option brings it back?", False),
    ("I upgraded to 2.39.5. Which option does not work any more?", True),
])
def test_the_statement_before_an_english_question_is_its_scene(question, negated):
    assert _asked_negated(question) is negated


def test_a_release_heading_is_followed_by_the_sentence_it_heads():
    """Fonts-lxgw-wenkai: the changelog item under "### v1.233.4 22/04/09" is the best pick, a README sentence of an
    earlier source the second: the heading comes first, its own item next, then the rest in reading order."""
    from docqa.answer.extractive import Extract, Sentence
    from docqa.answer.pipeline import _quoted_in_order
    from docqa.answer.shape import Shape

    heading = Sentence(2, 0, 17, "v1.233.4 22/04/09")
    item = Sentence(2, 20, 50, "- 新增越南语拉丁字（国语字 / Chữ Quốc Ngữ）支持。")
    other = Sentence(1, 0, 30, "剔除 v1.100 版本增补的一些较不常用的汉字。")
    result = Extract([item, other], evidence=0.6, abstained=False, shape=Shape([heading, item, other], steps=False),
                     heading=heading)
    assert _quoted_in_order(result, 3) == [heading, item, other]


@pytest.mark.parametrize("text", [
    # the first line of a wrapped item (Git's release notes)
    ' * "git clone --filter=... --recurse-submodules" only makes the\n   top-level a partial clone, while submodules are fully cloned.\n',
    # a sentence in a checklist item, closed by emphasis (fonts-lxgw-wenkai's README)
    "- [x] 补全常用谚文（韩语/朝鲜语）音节 2367 个。 *（做得比较拙劣。Lite 版不包含。）*\n",
])
def test_prose_in_a_list_item_is_no_label_line(text):
    assert label_lines("Which git clone option makes the submodules partial clones, from version 2.38?", text) == []
    assert label_lines("霞鹜文楷补全了多少个谚文音节？", text) == []
