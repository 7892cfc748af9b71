"""A question across two files (issue 28, item 4): Git 2.35.8's notes only say they merge the fixes of v2.30.9, whose
own notes say what the bug allowed; the extractive answerer follows that link with one more scoped search
(docqa.answer.hop) and quotes both files, each cited, and never reaches a collection the asker cannot see."""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.access import Principal
from docqa.answer.extractive import Sentence
from docqa.answer.hop import bridge, own, pick
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

from .hits import hit_in

MERGES = """Git v2.35.8 Release Notes
=========================

This release merges the fixes that appear in v2.30.9, v2.31.8,
v2.32.7, v2.33.8 and v2.34.8 to address the security issues
CVE-2023-25652, CVE-2023-25815, and CVE-2023-29007; see the release
notes for these versions for details.
"""

FIXES = """Git v2.30.9 Release Notes
=========================

This release addresses the security issues CVE-2023-25652,
CVE-2023-25815, and CVE-2023-29007.


Fixes since v2.30.8
-------------------

 * CVE-2023-25652:

   By feeding specially crafted input to `git apply --reject`, a
   path outside the working tree can be overwritten with partially
   controlled contents (corresponding to the rejected hunk(s) from
   the given patch).

 * CVE-2023-29007:

   When renaming or deleting a section from a configuration file,
   certain malicious configuration values may be misinterpreted as
   the beginning of a new configuration section, leading to arbitrary
   configuration injection.
"""


def _merges(version: str, earlier: list[str]) -> str:
    """A maintenance release's notes that only merge the fixes of the earlier ones (Git ships one such file per
    series: the knowledge base holds many near-identical siblings)."""
    listed = ", ".join(earlier[:-1]) + f" and {earlier[-1]}" if len(earlier) > 1 else earlier[0]
    return (f"Git v{version} Release Notes\n{'=' * (len(version) + 19)}\n\nThis release merges the fixes that appear in "
            f"{listed} to address the security issues\nCVE-2023-25652, CVE-2023-25815, and CVE-2023-29007; see the release\n"
            "notes for these versions for details.\n")


SIBLINGS = {"2.31.8.txt": _merges("2.31.8", ["v2.30.9"]), "2.32.7.txt": _merges("2.32.7", ["v2.30.9", "v2.31.8"]),
            "2.33.8.txt": _merges("2.33.8", ["v2.30.9", "v2.31.8", "v2.32.7"]),
            "2.34.8.txt": _merges("2.34.8", ["v2.30.9", "v2.31.8", "v2.32.7", "v2.33.8"])}

ASKED = "Git 2.35.8 says it merges fixes from older releases, one of them CVE-2023-29007. What could an attacker achieve with that bug?"
LINK = ("This release merges the fixes that appear in v2.30.9, v2.31.8, v2.32.7, v2.33.8 and v2.34.8 to address the "
        "security issues CVE-2023-25652, CVE-2023-25815, and CVE-2023-29007; see the release notes for these versions for details.")


def test_a_pick_naming_another_version_is_a_link_to_follow():
    link = bridge(ASKED, [LINK])
    assert link is not None and link.entity == "v2.30.9"
    # the hop asks for the other release, what the link is about, and what no quoted sentence says
    assert link.query.startswith("2.30.9 CVE-2023-29007 ") and "attacker" in link.rest and "2.35.8" not in link.query


@pytest.mark.parametrize(("question", "quoted"), [
    # answered in one file: every term the question asks about is in the sentence
    ("Which security issues does Git 2.35.8 address?", [LINK]),
    # a version in the sentence but none in the question: nothing says a release is what to follow
    ("What could an attacker achieve with the configuration parser bug?", [LINK]),
    # a path the question does not name, but the question names no path: a one-hop answer with a path in it
    ("Where does journald keep logs when persistent storage is off?",
     ["By default, the journal stores log data in /run/log/journal/, which is not persistent."]),
])
def test_a_one_hop_answer_has_no_link(question, quoted):
    assert bridge(question, quoted) is None


def test_the_hop_keeps_the_entitys_own_file_and_skips_what_repeats_the_link():
    siblings = [hit_in(text, 0, len(text), path=path, chunk_id=path)
                for path, text in (("RelNotes/2.34.8.txt", LINK), ("RelNotes/2.30.9.txt", FIXES), ("RelNotes/2.30.10.txt", FIXES))]
    assert [h.path for h in own(siblings, "v2.30.9")] == ["RelNotes/2.30.9.txt"]
    summary_end = FIXES.index("CVE-2023-29007.") + len("CVE-2023-29007.")
    label = FIXES.index(" * CVE-2023-29007:") + 1
    body = FIXES.index("When renaming")
    candidates = [Sentence(1, FIXES.index("This release"), summary_end, FIXES[FIXES.index("This release"):summary_end], score=0.3),
                  Sentence(1, label, label + len("* CVE-2023-29007:"), "* CVE-2023-29007:", score=0.1),
                  Sentence(1, body, len(FIXES.rstrip()), FIXES[body:].rstrip(), score=0.02)]
    chosen = pick(candidates[:2], candidates, [LINK])
    # the summary only repeats the link's CVEs; the item's label is taken with the sentence under it
    assert chosen is not None and (chosen.start, chosen.end) == (label, len(FIXES.rstrip()))
    assert "arbitrary" in chosen.text and chosen.text.startswith("* CVE-2023-29007:")


@pytest.fixture
def notes_kb(tmp_path: Path, embedder):
    """Git 2.35.8's notes and their siblings in collection 'notes', 2.30.9's in collection 'security'."""
    files = [("notes", "2.35.8.txt", MERGES), ("security", "2.30.9.txt", FIXES)]
    for folder, name, text in files + [("notes", name, text) for name, text in SIBLINGS.items()]:
        (tmp_path / folder / "RelNotes").mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "RelNotes" / name).write_text(text, encoding="utf-8")
    settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"}, answer={"abstain_threshold": 0.0})
    with KnowledgeBase(settings, embedder=embedder) as kb:
        kb.add([tmp_path / "notes"], "notes")
        kb.add([tmp_path / "security"], "security")
        yield kb


def test_a_question_across_two_files_quotes_both_each_cited(notes_kb):
    answer = notes_kb.ask(ASKED)
    assert answer.mode == "extractive"
    files = [Path(c.path).name for c in answer.citations]
    assert files[0] != "2.30.9.txt" and files[-1] == "2.30.9.txt"  # first the releases that merge it, then its own
    hop = answer.citations[-1]
    assert "arbitrary\n   configuration injection" in hop.quote or "arbitrary configuration injection" in " ".join(hop.quote.split())
    assert notes_kb.documents.text(hop.document_id)[hop.char_start : hop.char_end] == hop.quote  # the file's own text
    assert answer.answer.rstrip().endswith(f"configuration injection. [{hop.n}]")  # cited like the first hop's


def test_the_second_hop_never_reaches_a_collection_the_asker_cannot_see(notes_kb):
    reader = Principal("reader", ("notes",), "k1", remote=True)
    for answer in (notes_kb.ask(ASKED, principal=reader), notes_kb.ask(ASKED, collection="notes")):
        assert answer.citations and "2.30.9.txt" not in {Path(c.path).name for c in answer.citations}
        assert "injection" not in answer.answer
        hops = [e for e in notes_kb.log.run(answer.run_id).trace if e.get("stage") == "second hop"]
        assert [(e["entity"], e["followed"]) for e in hops] == [("v2.30.9", False)]  # the link was there; its file was not
    # the same question from who sees both collections follows the link (the refusal above is the scope's)
    assert "2.30.9.txt" in {Path(c.path).name for c in notes_kb.ask(ASKED).citations}
