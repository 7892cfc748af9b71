"""A release question ("In which release did ...?", "哪个版本 ...") over release notes, changelogs and NEWS files: the
release is named by a heading or the file name, not by the sentence that answers (docqa.answer.release)."""

from __future__ import annotations

import pytest

from docqa.answer.extractive import extract
from docqa.answer.release import asks_release, label
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

from .hits import hit_in, sources

NOTES = """Git v2.35.1 Release Notes
=========================

Git 2.35 shipped with a regression that broke use of "rebase" and
"stash" in a secondary worktree.  This maintenance release ought to
fix it.
"""

CHANGELOG = """### v1.233.4 22/04/09
- 新增越南语拉丁字（国语字 / Chữ Quốc Ngữ）支持。
- 修正部分字符的字形。

### v1.100 21/06/01
- 增补常用汉字。
"""

NEWS = """openssh (1:8.5p1-1) unstable; urgency=medium

  * ssh(1), sshd(8): this release changes the first-preference signature
    algorithm from ECDSA to ED25519.

 -- Colin Watson <cjwatson@debian.org>  Wed, 03 Mar 2021 11:35:31 +0000
"""

LATER_CHUNK = """ * "git grep -m<max-hits>" is a way to limit the hits shown per file.

 * With the fixes for CVE-2022-24765 that are common with versions of
   Git 2.30.4, 2.31.3, 2.32.2, 2.33.3, 2.34.3, and 2.35.3, Git has
   been taught not to recognize repositories owned by other users.
"""


@pytest.mark.parametrize(("question", "asks"), [
    ("In which feature release did git grep gain a way to cap the matches shown per file?", True),
    ("Which point release of 2.35 repaired rebase and stash in a secondary worktree?", True),
    ("In which release notes did OpenSSH switch its first-preference signature algorithm?", True),
    ("Which Linux kernel version does Debian Edu 12 ship with?", True),
    ("霞鹜文楷是在哪个版本加上越南语支持的？", True),
    ("Why was Git 2.39.5 released?", False),
    ("What does the release change for ssh-rsa keys?", False),
    ("How do I limit the hits git grep shows per file?", False),
])
def test_which_questions_ask_for_a_release(question, asks):
    assert asks_release(question) is asks


def test_the_heading_above_names_the_release():
    found = label(NOTES, NOTES.index("Git 2.35 shipped"), (), "git/RelNotes/2.35.1.txt")
    assert (found.text, found.version, found.source) == ("Git v2.35.1 Release Notes", "2.35.1", "heading")
    assert NOTES[found.span[0] : found.span[1]] == "Git v2.35.1 Release Notes"


def test_the_nearest_changelog_heading_names_the_release_not_a_later_one():
    found = label(CHANGELOG, CHANGELOG.index("新增"), ("v1.233.4 22/04/09",), "fonts-lxgw-wenkai/History.md")
    assert found.version == "1.233.4" and CHANGELOG[found.span[0] : found.span[1]] == "v1.233.4 22/04/09"


def test_a_sub_heading_that_names_the_release_it_starts_from_is_passed_over():
    notes = ("Git v2.34 Release Notes\n=======================\n\nUpdates since Git 2.33\n----------------------\n\n"
             "UI, Workflows & Features\n\n * Pathname expansion (like \"~username/\") learned a way to specify a\n"
             "   location relative to Git installation.\n")
    found = label(notes, notes.index("Pathname"), (), "git/RelNotes/2.34.0.txt")
    assert (found.text, found.version) == ("Git v2.34 Release Notes", "2.34")


def test_a_debian_news_entry_header_names_the_release():
    found = label(NEWS, NEWS.index("ssh(1), sshd(8)"), (), "openssh-client/NEWS.Debian.gz")
    assert found.version == "8.5" and found.text.startswith("openssh (1:8.5p1-1)")


def test_a_wrapped_prose_line_with_versions_is_no_heading_and_the_file_name_names_it():
    """A later chunk of a release-notes file: the versions in a wrapped sentence name other releases; the file name
    names this one."""
    found = label(LATER_CHUNK, LATER_CHUNK.index("Git has"), (), "git/RelNotes/2.38.0.txt")
    assert (found.text, found.version, found.source, found.span) == ("2.38.0.txt", "2.38.0", "file", None)
    assert label("Nothing to see here.\n", 0, (), "README.md") is None


def test_a_release_answer_quotes_the_heading_with_the_sentence(hash_embedder):
    pool = sources(hit_in(NOTES, 0, len(NOTES), path="/docs/git/RelNotes/2.35.1.txt", section=""))
    embed = lambda texts, kind: hash_embedder.embed_batch(texts, kind)  # noqa: E731
    question = "Which point release of 2.35 repaired rebase and stash in a secondary worktree?"
    result = extract(question, pool, {}, embed, threshold=0.0)
    assert result.shape is not None and result.shape.sentences[0].text == "Git v2.35.1 Release Notes"
    assert NOTES[result.shape.sentences[0].start : result.shape.sentences[0].end] == "Git v2.35.1 Release Notes"
    assert result.release is None and result.heading is result.shape.sentences[0]
    assert all(s.features["release"] == 1.0 for s in result.candidates)
    other = extract("Why did rebase break in a secondary worktree?", pool, {}, embed, threshold=0.0)
    assert other.shape is None and all(s.features["release"] == 0.0 for s in other.candidates)


def test_a_release_named_only_by_the_file_name_is_said_in_a_line(hash_embedder):
    chunk = (' * "git grep -m<max-hits>" is a way to limit the hits shown per file.\n\n'
             ' * "git rm" has become more aware of the sparse-index feature.\n')
    pool = sources(hit_in(chunk, 0, len(chunk), path="/docs/git/RelNotes/2.38.0.txt", section=""))
    embed = lambda texts, kind: hash_embedder.embed_batch(texts, kind)  # noqa: E731
    result = extract("In which feature release did git grep gain a way to cap the hits shown per file?", pool, {}, embed,
                     threshold=0.0)
    assert result.release == "(Release 2.38.0, as the file name 2.38.0.txt says.)"
    assert extract("在哪个版本里 git grep 可以限制每个文件显示的匹配数？", pool, {}, embed, threshold=0.0).release == \
        "（版本 2.38.0：见文件名 2.38.0.txt。）"


@pytest.mark.slow  # a knowledge base built and asked: over 2 s on a loaded machine
def test_the_published_answer_names_the_release(tmp_path, hash_embedder):
    """End to end, no model: release notes whose version is only in the heading and the file name; the answer quotes
    the heading with the sentence, and the quote is the document's own text."""
    notes = tmp_path / "docs" / "RelNotes"
    notes.mkdir(parents=True)
    (notes / "2.35.1.txt").write_text(NOTES, encoding="utf-8")
    (notes / "2.36.0.txt").write_text("Git v2.36 Release Notes\n=======================\n\n"
                                      " * \"git log\" learned to show the remote-tracking branches by default.\n",
                                      encoding="utf-8")
    settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"}, answer={"abstain_threshold": 0.0})
    with KnowledgeBase(settings, embedder=hash_embedder) as kb:
        kb.add([tmp_path / "docs"])
        answer = kb.ask("Which point release of 2.35 repaired rebase and stash in a secondary worktree?")
        # the heading stands apart (it has no full stop): a reader, and a claim splitter, sees it as its own line
        assert answer.mode == "extractive" and answer.answer.startswith("Git v2.35.1 Release Notes [1]\n\nGit 2.35 shipped")
        first = answer.citations[0]
        assert first.quote == "Git v2.35.1 Release Notes" and first.path.endswith("2.35.1.txt")
        assert kb.documents.text(first.document_id)[first.char_start : first.char_end] == first.quote
