"""Near misses that ask when something changed or who did something, quoted with nothing that says when or who: the
extractive answerer abstains whatever its evidence (docqa.answer.release.asks_when_changed, docqa.answer.who).  The
texts are real: systemd's README.Debian (Debian's KillUserProcesses default) and Git's 2.39.4 and 2.30.6 release notes."""

from __future__ import annotations

import pytest

from docqa.answer import who
from docqa.answer.extractive import extract
from docqa.answer.release import asks_when_changed, names_nothing

from .hits import hit_in, sources

# systemd/README.Debian.gz: Debian's default and upstream's, and no word of when Debian would change it.
KILL = """KillUserProcesses behavior in Debian
====================================

If KillUserProcesses=yes is configured in logind.conf(5), the session scope
will be terminated when the user logs out of that session.

See logind.conf(5):

| Note that setting KillUserProcesses=yes will break tools like screen(1) and
| tmux(1), unless they are moved out of the session scope.

The default for KillUserProcesses in /etc/systemd/logind.conf is set
to "yes" in upstream systemd, though Debian defaults to "no" (see #825394).
"""

# git/RelNotes/2.39.4.txt: the CVEs it fixes, and no credit for finding them ...
GIT_2394 = """Git v2.39.4 Release Notes
=========================

This addresses the security issues CVE-2024-32002, CVE-2024-32004,
CVE-2024-32020 and CVE-2024-32021.

This release also backports fixes necessary to let the CI builds pass
successfully.

Fixes since v2.39.3
-------------------

 * CVE-2024-32002:

   Recursive clones on case-insensitive filesystems that support symbolic
   links are susceptible to case confusion that can be exploited to
   execute just-cloned code during the clone operation.
"""
# ... git/RelNotes/2.30.6.txt: the credits.
GIT_2306 = """Credit for finding CVE-2022-39253 goes to Cory Snider of Mirantis. The
fix was authored by Taylor Blau, with help from Johannes Schindelin.

Credit for finding CVE-2022-39260 goes to Kevin Backhouse of GitHub.
The fix was authored by Kevin Backhouse, Jeff King, and Taylor Blau.
"""


def _embed(hash_embedder):
    return lambda texts, kind: hash_embedder.embed_batch(texts, kind)


@pytest.mark.parametrize(("question", "asks"), [
    ("When will Debian change the KillUserProcesses default to yes?", True),
    ("When was --preserve-merges removed from git rebase?", True),
    ("这个选项是什么时候加入的？", True),
    ("Valgrind 是什么时候移除 --db-attach 选项的？", True),
    ("When is the session scope terminated?", False),  # an event: "when the user logs out" answers it
    ("When the user logs out, which processes are killed?", False),  # a condition, then "which"
    ("Which version of Git fixed CVE-2024-32002?", False),  # a release question (release.asks_release)
])
def test_a_question_that_asks_when_something_changed(question, asks):
    assert asks_when_changed(question) is asks


@pytest.mark.parametrize(("text", "nothing"), [
    ('The default for KillUserProcesses in /etc/systemd/logind.conf is set\nto "yes" in upstream systemd, though Debian defaults '
     'to "no" (see #825394).', True),  # a bug number is no release
    ("If KillUserProcesses=yes is configured in logind.conf(5), the session scope\nwill be terminated.", True),
    ("Debian switched the default to \"yes\" in 13.0.", False),
])
def test_a_bug_number_names_no_release(text, nothing):
    assert names_nothing("When will Debian change the KillUserProcesses default to yes?", text) is nothing


def test_when_something_changed_quoted_with_no_release_abstains(hash_embedder):
    """README.Debian gives Debian's default and upstream's, not when Debian will change it: abstain at any evidence."""
    pool = sources(hit_in(KILL, 0, len(KILL), path="/usr/share/doc/systemd/README.Debian.gz", section="", type_="text"))
    result = extract("When will Debian change the KillUserProcesses default to yes?", pool, {}, _embed(hash_embedder), threshold=0.0)
    assert result.abstained and result.rule == "release_unnamed"
    asked = extract("What does Debian set the KillUserProcesses default to?", pool, {}, _embed(hash_embedder), threshold=0.0)
    assert not asked.abstained and not asked.rule


@pytest.mark.parametrize(("question", "asks"), [
    ("CVE-2024-32002 是谁发现的？", True),
    ("Who is credited with discovering CVE-2022-24765, and who wrote the fix?", True),
    ("Who wrote the fix for CVE-2022-39260?", True),
    ("这个补丁是由谁提交的？", True),
    ("这种文件存在时还有谁能登录？", False),  # a role ("root"), not a name
    ("Who can log in while /run/nologin exists?", False),
    ("What did Git 2.39.4 fix?", False),
])
def test_a_question_that_asks_who_did_something(question, asks):
    assert who.asks(question) is asks


@pytest.mark.parametrize(("text", "names"), [
    ("This addresses the security issues CVE-2024-32002, CVE-2024-32004,\nCVE-2024-32020 and CVE-2024-32021.", False),
    (" * CVE-2024-32002:", False),
    ("Credit for finding CVE-2022-39260 goes to Kevin Backhouse of GitHub.", True),
    ("-- Julian Andres Klode <juliank@ubuntu.com>  Mon, 02 Dec 2019 11:45:52 +0100", True),
    ("The fix was authored by the maintainers.", False),
    ("该漏洞由张三发现。", True),  # a name in Chinese characters: no pattern tells it from other words
])
def test_what_names_someone(text, names):
    assert who.names(text, "CVE-2024-32002 是谁发现的？") is names


def test_who_found_it_quoted_with_no_name_abstains(hash_embedder):
    """2.39.4's notes fix CVE-2024-32002 and do not say who found it: abstain at any evidence; 2.30.6's notes name who
    found CVE-2022-39260."""
    pool = sources(hit_in(GIT_2394, 0, len(GIT_2394), path="/usr/share/doc/git/RelNotes/2.39.4.txt", section="", type_="text"))
    result = extract("CVE-2024-32002 是谁发现的？", pool, {}, _embed(hash_embedder), threshold=0.0)
    assert result.abstained and result.rule == "person_unnamed"
    credits = sources(hit_in(GIT_2306, 0, len(GIT_2306), path="/usr/share/doc/git/RelNotes/2.30.6.txt", section="", type_="text"))
    found = extract("CVE-2022-39260 是谁发现的？", credits, {}, _embed(hash_embedder), threshold=0.0)
    assert not found.abstained and any("Kevin Backhouse" in s.text for s in found.chosen)
