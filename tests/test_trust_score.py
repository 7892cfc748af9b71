"""The trust dev set's scorer (benchmarks/trust/score.py): claims, answer groups, the support rule."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "trust" / "score.py"
_spec = importlib.util.spec_from_file_location("trust_score", _PATH)
score = importlib.util.module_from_spec(_spec)
sys.modules["trust_score"] = score  # dataclasses look their module up by name
_spec.loader.exec_module(score)


@pytest.mark.parametrize("answer, expected", [
    ("Git 2.39.5 reverts changes [1]. It was released for git lfs [2].",
     [("Git 2.39.5 reverts changes.", [1]), ("It was released for git lfs.", [2])]),
    # a marker after the full stop belongs to the sentence before it
    ("It fixes CVE-2024-32002. [1] It also fixes CVE-2024-32004. [1, 2]",
     [("It fixes CVE-2024-32002.", [1]), ("It also fixes CVE-2024-32004.", [1, 2])]),
    ("Uncited sentence. Cited one [3].", [("Uncited sentence.", []), ("Cited one.", [3])]),
    ("它在2002年创始【1】。到2007年已有1800门课程[2]。", [("它在2002年创始。", [1]), ("到2007年已有1800门课程。", [2])]),
    # the note flagging a quotation in the other language is no claim; a lone marker is none either
    ("The notes say 2002. [1]\n（以上引文为英文原文。）", [("The notes say 2002.", [1])]),
    ("[1]", []),
    # an ordered-list number cut off by the splitter joins the sentence after it
    ("Reserved names stay. [1]5. More versions *(may change)* 1. A screen version is bolder. [2]",
     [("Reserved names stay.", [1]), ("5. More versions *(may change)* 1. A screen version is bolder.", [2])]),
])
def test_split_claims(answer, expected):
    assert [(c.text, c.sources) for c in score.split_claims(answer)] == expected


@pytest.mark.parametrize("text, groups, expected", [
    ("Fixed in Git 2.39.5 [1].", [["2.39.5"]], [True]),
    ("It addresses cve-2024-32002 and CVE-2024-32004.", [["CVE-2024-32002"], ["CVE-2024-32004"], ["CVE-2024-32020"]],
     [True, True, False]),
    ("Use git  config --global", [["git config"]], [True]),  # whitespace-insensitive
    ("ＧＩＴ　２．３９", [["git 2.39"]], [True]),  # full-width folds to half-width
    ("修复了安全问题", [["security", "安全"]], [True]),  # any string of a group
    ("see source [1] only", [["1"]], [False]),  # a citation marker is not answer text
])
def test_matched_groups(text, groups, expected):
    assert score.matched_groups(text, groups) == expected


@pytest.mark.parametrize("kwargs, expected", [
    ({"answerable": True, "abstained": False, "failed": False, "all_matched": True, "cited": True}, "correct"),
    ({"answerable": True, "abstained": False, "failed": False, "all_matched": True, "cited": False}, "uncited"),
    ({"answerable": True, "abstained": False, "failed": False, "all_matched": False, "cited": True}, "wrong"),
    ({"answerable": True, "abstained": True, "failed": False, "all_matched": False, "cited": False}, "false_abstention"),
    ({"answerable": False, "abstained": True, "failed": False, "all_matched": False, "cited": False}, "abstained"),
    ({"answerable": False, "abstained": False, "failed": False, "all_matched": False, "cited": False}, "answered"),
    ({"answerable": False, "abstained": False, "failed": True, "all_matched": False, "cited": False}, "failed"),
])
def test_outcome(kwargs, expected):
    assert score.outcome(**kwargs) == expected


def test_multihop_needs_every_evidence_file_cited():
    assert score.cites_evidence(["a.txt"], ["a.txt", "b.txt"], multihop=False)
    assert not score.cites_evidence(["a.txt"], ["a.txt", "b.txt"], multihop=True)
    assert score.cites_evidence(["b.txt", "a.txt", "c.txt"], ["a.txt", "b.txt"], multihop=True)
    assert not score.cites_evidence(["a.txt"], [], multihop=False)


DOC = "Git v2.39.4 Release Notes\n\nThis addresses the security issues CVE-2024-32002,\nCVE-2024-32004 and more.\nOther text here."
QUOTE = "This addresses the security issues CVE-2024-32002, CVE-2024-32004 and more."


def test_locate_collapses_whitespace():
    start, end = score.locate(DOC, QUOTE)
    assert DOC[start:end].split() == QUOTE.split()
    assert score.locate(DOC, "not in the document") is None


def _gold() -> list:
    start, end = score.locate(DOC, QUOTE)
    return [score.Span("git/RelNotes/2.39.4.txt", start, end, QUOTE)]


@pytest.mark.parametrize("citation, claim, answerable, expected", [
    # overlaps the gold quote's span in the gold file
    (score.Span("git/RelNotes/2.39.4.txt", 30, 60, DOC[30:60]), "It fixes some issues.", True, True),
    # the gold file, away from the quote, but holding the claim's answer string
    (score.Span("git/RelNotes/2.39.4.txt", 0, 11, "Git v2.39.4"), "The release is Git v2.39.4.", True, True),
    # the gold file, away from the quote, no answer string shared with the claim
    (score.Span("git/RelNotes/2.39.4.txt", 105, 121, "Other text here."), "Other text here.", True, False),
    # the same words in another file do not support
    (score.Span("git/RelNotes/2.39.5.txt", 30, 60, DOC[30:60]), "It fixes CVE-2024-32002.", True, False),
    # an unanswerable question answered anyway: nothing supports
    (score.Span("git/RelNotes/2.39.4.txt", 30, 60, DOC[30:60]), "It fixes some issues.", False, False),
    (score.Span(None, 30, 60, DOC[30:60]), "It fixes some issues.", True, False),
])
def test_supports(citation, claim, answerable, expected):
    groups = [["CVE-2024-32002"], ["2.39.4"]]
    assert score.supports(citation, claim, _gold(), groups, answerable) is expected


def test_score_claims_counts_per_claim_and_per_source():
    start, end = score.locate(DOC, QUOTE)
    cites = {1: [score.Span("x.txt", 0, 5, "Git v"), score.Span("git/RelNotes/2.39.4.txt", start, end, QUOTE)],
             2: [score.Span("y.txt", 0, 5, "other")]}
    claims = score.score_claims("It fixes CVE-2024-32002 [1][2]. Nothing cited here. Invented [7].", cites, _gold(),
                                [["CVE-2024-32002"]], True)
    assert [(c.citations, c.supported) for c in claims] == [([1, 2], [True, False]), ([], []), ([], [])]


@pytest.mark.parametrize("claim, span, expected", [
    ("Backups are kept for 35 days.", "Full backups run nightly. Backups are kept for 35 days.", True),  # a quote
    ("Backups are kept 35 days.", "Backups are kept for 35 days.", True),  # most words, every number
    ("Backups are kept for 40 days.", "Backups are kept for 35 days.", False),  # a number the span lacks
    ("Keys are rotated by the security team.", "Backups are kept for 35 days.", False),
    ("备份保留 35 天。", "每天凌晨 2 点进行全量备份，备份保留 35 天。", True),
    ("备份保留 40 天。", "每天凌晨 2 点进行全量备份，备份保留 35 天。", False),
])
def test_a_citation_entails_its_claim_when_its_span_alone_bears_it_out(claim, span, expected):
    assert score.entails(score.Span("ops.md", 0, len(span), span), claim) is expected


# journald.conf(5), zh_CN (manpages-zh): a quote ending in a semicolon runs into the next quote, and the published
# answer's sentence splitter makes the two one claim that cites both sources.
_MAX_USE = "SystemMaxUse= 与 RuntimeMaxUse= 的默认值是10%空间与4G空间两者中的较小者；"
_KEEP_FREE = "SystemKeepFree= 与 RuntimeKeepFree= 的默认值是15%空间与4G空间两者中的较大者；"


@pytest.mark.parametrize("claim, sources, expected", [
    # each source alone bears out a claim that is a quote of it
    (_MAX_USE, [[_MAX_USE], [_MAX_USE]], [True, True]),
    # two quotes run into one claim: neither bears it out alone, each is needed for it (ALCE's precision)
    (_MAX_USE + _KEEP_FREE, [[_MAX_USE], [_KEEP_FREE]], [True, True]),
    # ... a third source that adds nothing is not needed
    (_MAX_USE + _KEEP_FREE, [[_MAX_USE], [_KEEP_FREE], ["日志文件的最大保存时间。"]], [True, True, False]),
    # one source cites several spans: together they are what it says
    (_MAX_USE + _KEEP_FREE, [[_MAX_USE, _KEEP_FREE]], [True]),
    # a claim that none of them bears out
    ("默认值是50%空间。", [[_MAX_USE], [_KEEP_FREE]], [False, False]),
])
def test_a_source_is_precise_when_it_bears_the_claim_out_or_is_needed_for_it(claim, sources, expected):
    spans = [[score.Span("journald.conf.5", 0, len(t), t) for t in texts] for texts in sources]
    assert score.needed(claim, spans) == expected


# valgrind's NEWS (dist.news.html as text): a release heading, then its list of changes.
_NEWS = """Release 3.11.0 (22 September 2015)

3.11.0 is a feature release with many improvements and the usual collection of bug fixes.

* ==================== TOOL CHANGES ====================

The following changes to the command line apply:
* The command line options --db-attach and --db-command have been removed.
* The default value of --keep-stacktraces is now alloc-and-free.

Release 3.10.1 (25 November 2014)
"""


def _at(text: str) -> tuple[int, int]:
    start = _NEWS.index(text)
    return start, start + len(text)


@pytest.mark.parametrize("cited, expected", [
    ("* The command line options --db-attach and --db-command have been removed.", True),  # the gold quote
    ("* The default value of --keep-stacktraces is now alloc-and-free.", True),  # the rest of its paragraph
    ("The following changes to the command line apply:", True),  # the lead-in of the list it is an item of
    ("3.11.0 is a feature release with many improvements", False),  # another paragraph, no heading
    ("Release 3.10.1 (25 November 2014)", False),  # the next release's heading
])
def test_a_citation_in_the_gold_quotes_own_passage_supports(cited, expected):
    gold = "* The command line options --db-attach and --db-command have been removed."
    where = _at(gold)
    golds = [score.Span("valgrind/NEWS", *where, gold, score.context(_NEWS, *where))]
    citation = score.Span("valgrind/NEWS", *_at(cited), cited)
    assert score.supports(citation, "Those options are gone.", golds, [["3.11.0"]], True) is expected


def test_a_heading_line_just_above_the_gold_quotes_paragraph_is_its_passage():
    gold = "3.11.0 is a feature release with many improvements"
    lo, hi = score.context(_NEWS, *_at(gold))
    assert _NEWS[lo:].startswith("Release 3.11.0 (22 September 2015)")
    assert _NEWS[hi:].startswith("\n\n* ====")
