"""The hits an answer reads are not the same passage many times (docqa.answer.spread).

Git's release notes for the maintenance releases 2.31.8 … 2.38.5 each say, in nearly the same words, that they merge
up the fixes of 2.30.9; only 2.30.9's notes say what the fixes are.  A search for "What kind of attack did
CVE-2023-29007 address?" ranks the short merge-up notes first (every one of them names the CVE), and the six hits an
answer reads held no word of the answer (the trust dev set's git-relnotes questions).  Real text of Git's
RelNotes (2.30.9 without its credits), real SQLite, real BM25; HashEmbedder for the vectors.
"""

from __future__ import annotations

import pytest

from docqa.answer import spread
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.testing import HashEmbedder

MERGE_UPS = {
    "2.31.8": (
        "Git v2.31.8 Release Notes\n"
        "=========================\n"
        "\n"
        "This release merges the fixes that appear in v2.30.9 to address the\n"
        "security issues CVE-2023-25652, CVE-2023-25815, and CVE-2023-29007;\n"
        "see the release notes for that version for details.\n"
    ),
    "2.32.7": (
        "Git v2.32.7 Release Notes\n"
        "=========================\n"
        "\n"
        "This release merges the fixes that appear in v2.30.9 and v2.31.8 to\n"
        "address the security issues CVE-2023-25652, CVE-2023-25815, and\n"
        "CVE-2023-29007; see the release notes for these versions for\n"
        "details.\n"
    ),
    "2.33.8": (
        "Git v2.33.8 Release Notes\n"
        "=========================\n"
        "\n"
        "This release merges the fixes that appear in v2.30.9, v2.31.8 and\n"
        "v2.32.7 to address the security issues CVE-2023-25652,\n"
        "CVE-2023-25815, and CVE-2023-29007; see the release notes for these\n"
        "versions for details.\n"
    ),
    "2.34.8": (
        "Git v2.34.8 Release Notes\n"
        "=========================\n"
        "\n"
        "This release merges the fixes that appear in v2.30.9, v2.31.8,\n"
        "v2.32.7 and v2.33.8 to address the security issues CVE-2023-25652,\n"
        "CVE-2023-25815, and CVE-2023-29007; see the release notes for these\n"
        "versions for details.\n"
    ),
    "2.35.8": (
        "Git v2.35.8 Release Notes\n"
        "=========================\n"
        "\n"
        "This release merges the fixes that appear in v2.30.9, v2.31.8,\n"
        "v2.32.7, v2.33.8 and v2.34.8 to address the security issues\n"
        "CVE-2023-25652, CVE-2023-25815, and CVE-2023-29007; see the release\n"
        "notes for these versions for details.\n"
    ),
    "2.36.6": (
        "Git v2.36.6 Release Notes\n"
        "=========================\n"
        "\n"
        "This release merges the fixes that appear in v2.30.9, v2.31.8,\n"
        "v2.32.7, v2.33.8, v2.34.8 and v2.35.8 to address the security issues\n"
        "CVE-2023-25652, CVS-2023-25815, and CVE-2023-29007; see the release\n"
        "notes for these versions for details.\n"
    ),
    "2.37.7": (
        "Git v2.37.7 Release Notes\n"
        "=========================\n"
        "\n"
        "This release merges up the fix that appears in v2.30.9, v2.31.8,\n"
        "v2.32.7, v2.33.8, v2.34.8, v2.35.8 and v2.36.6 to address the\n"
        "security issues CVE-2023-25652, CVE-2023-25815, and CVE-2023-29007;\n"
        "see the release notes for these versions for details.\n"
    ),
    "2.38.5": (
        "Git v2.38.5 Release Notes\n"
        "=========================\n"
        "\n"
        "This release merges up the fix that appears in v2.30.9, v2.31.8,\n"
        "v2.32.7, v2.33.8, v2.34.8, v2.35.8, v2.36.6 and v2.37.7 to address\n"
        "the security issues CVE-2023-25652, CVE-2023-25815, and\n"
        "CVE-2023-29007; see the release notes for these versions for\n"
        "details.\n"
    ),
}
FIX = (
    "Git v2.30.9 Release Notes\n"
    "=========================\n"
    "\n"
    "This release addresses the security issues CVE-2023-25652,\n"
    "CVE-2023-25815, and CVE-2023-29007.\n"
    "\n"
    "\n"
    "Fixes since v2.30.8\n"
    "-------------------\n"
    "\n"
    " * CVE-2023-25652:\n"
    "\n"
    "   By feeding specially crafted input to `git apply --reject`, a\n"
    "   path outside the working tree can be overwritten with partially\n"
    "   controlled contents (corresponding to the rejected hunk(s) from\n"
    "   the given patch).\n"
    "\n"
    " * CVE-2023-25815:\n"
    "\n"
    "   When Git is compiled with runtime prefix support and runs without\n"
    "   translated messages, it still used the gettext machinery to\n"
    "   display messages, which subsequently potentially looked for\n"
    "   translated messages in unexpected places. This allowed for\n"
    "   malicious placement of crafted messages.\n"
    "\n"
    " * CVE-2023-29007:\n"
    "\n"
    "   When renaming or deleting a section from a configuration file,\n"
    "   certain malicious configuration values may be misinterpreted as\n"
    "   the beginning of a new configuration section, leading to arbitrary\n"
    "   configuration injection.\n"
    "\n"
)
QUESTION = "What did the fix for CVE-2023-29007 address?"


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    root = tmp_path_factory.mktemp("spread")
    notes = root / "RelNotes"
    notes.mkdir()
    for version, text in {**MERGE_UPS, "2.30.9": FIX}.items():
        (notes / f"{version}.txt").write_text(text, encoding="utf-8")
    settings = Settings(kb=str(root / "kb.db"), llm={"provider": "none"})
    with KnowledgeBase(settings, embedder=HashEmbedder(), create=True) as base:
        report = base.add([notes])
        assert len(report.added) == 9 and not report.failed
        yield base


def _version(hit) -> str:
    return hit.path.rsplit("/", 1)[-1].removesuffix(".txt")


@pytest.mark.parametrize(("a", "b", "same"), [
    (MERGE_UPS["2.31.8"], MERGE_UPS["2.35.8"], True),  # the same words, other versions
    (MERGE_UPS["2.31.8"], MERGE_UPS["2.36.6"], True),
    (MERGE_UPS["2.37.7"], MERGE_UPS["2.38.5"], True),  # "merges up the fix that appears in …", both
    (MERGE_UPS["2.31.8"], MERGE_UPS["2.38.5"], False),  # reworded: "merges up the fix" (Jaccard 0.69)
    (MERGE_UPS["2.31.8"], FIX, False),  # the notes that say what the fixes are
    ("", MERGE_UPS["2.31.8"], False),
])
def test_alike(a, b, same):
    assert spread.alike(spread.words(a), spread.words(b)) is same


def test_search_alone_reads_only_merge_ups(kb):
    """The precondition of the tests below: the six best hits of the search are merge-up notes."""
    hits = kb.search(QUESTION, 6)
    assert "2.30.9" not in {_version(h) for h in hits}


def test_near_identical_hits_are_deferred(kb):
    hits = list(kb.search(QUESTION, 12))
    read = spread.order(hits, 6, QUESTION)
    assert len(read) == 6 and read[0].chunk_id == hits[0].chunk_id
    assert "2.30.9" in {_version(h) for h in read}
    assert len({h.chunk_id for h in read}) == 6


def test_deferred_hits_fill_what_is_left(kb):
    """With nothing else to read, the near-identical hits still fill the places, in rank order."""
    alike = {"2.31.8", "2.32.7", "2.33.8", "2.34.8", "2.35.8", "2.36.6"}  # worded alike (test_alike)
    merge_ups = [h for h in kb.search(QUESTION, 12) if _version(h) in alike]
    assert [h.chunk_id for h in spread.order(merge_ups, 4, QUESTION)] == [h.chunk_id for h in merge_ups[:4]]


def test_a_hit_holding_the_asked_version_is_never_deferred(kb):
    """"What does Git 2.35.8 merge?": 2.35.8's notes read like 2.31.8's, but they hold the version asked."""
    hits = {_version(h): h for h in kb.search(QUESTION, 12)}
    ranked = [hits["2.31.8"], hits["2.35.8"], hits["2.32.7"]]
    assert [_version(h) for h in spread.order(ranked, 2, "What does Git 2.35.8 merge?")] == ["2.31.8", "2.35.8"]
    assert [_version(h) for h in spread.order(ranked, 2, "What does Git merge?")] == ["2.31.8", "2.35.8"]  # filled


@pytest.mark.parametrize("depth", [1, 2])
def test_the_answer_reads_the_notes_that_say_what_the_fix_is(kb, monkeypatch, depth):
    """Asked as `docqa ask` asks, with the deeper search on: 2.30.9's notes are among the passages the answer reads
    (answer.top_k, 6).  Off (the default, depth 1), the answer reads the search's own six hits."""
    monkeypatch.setattr(spread, "DEPTH", depth)
    run = kb.start(QUESTION, fresh=True)
    for _event in run:
        pass
    read = [h["path"] for h in run.answer.retrieval.hits]
    assert len(read) == kb.settings.answer.top_k
    assert any(p.endswith("2.30.9.txt") for p in read) is (depth > 1)
    assert read[0] == kb.search(QUESTION, 1)[0].path
    if depth == 1:
        assert read == [h.path for h in kb.search(QUESTION, 6)]


def test_off_by_default():
    assert spread.DEPTH == 1 and spread.PART_DEPTH == 1
