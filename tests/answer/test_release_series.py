"""A release series the question names ("Which 2.39.x release carries the fix for CVE-2023-29007?", issue 28, item 4):
the maintenance releases of every other series merge the same fix in the same words and fill the hits; the notes of the
series asked (`RelNotes/2.39.3.txt`) are searched too when no hit is from one (docqa.answer.spread.with_series), and a
sentence that names only other series' releases is led by the heading that names its own (release.names_release)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.answer import spread
from docqa.answer.release import names_release
from docqa.kb import KnowledgeBase
from docqa.retrieve import SearchResults
from docqa.settings import Settings

from .hits import hit_in
from .test_hop import _merges

SERIES_NOTES = r"""Git v2.39.3 Release Notes
=========================

This release merges up the fix that appears in v2.30.9, v2.31.8,
v2.32.7, v2.33.8, v2.34.8, v2.35.8, v2.36.6, v2.37.7 and v2.38.5 to
address the security issues CVE-2023-25652, CVE-2023-25815, and
CVE-2023-29007; see the release notes for these versions for
details.

Fixes since v2.39.2
-------------------

 * Stop running win+VS build by default.

 * CI updates.  We probably want a clean-up to move the long shell
   script embedded in yaml file into a separate file, but that can
   come later.

 * Avoid unnecessary builds in CI, with settings configured in
   ci-config.
"""
MERGE = ("This release merges up the fix that appears in v2.30.9, v2.31.8, v2.32.7, v2.33.8, v2.34.8, v2.35.8, v2.36.6, "
         "v2.37.7 and v2.38.5 to address the security issues CVE-2023-25652, CVE-2023-25815, and CVE-2023-29007.")


@pytest.mark.parametrize(("question", "text", "names"), [
    # a series asked: only a release of it names the answer's release
    ("Which 2.39.x release carries the fix for CVE-2023-29007?", MERGE, False),
    ("Which 2.39.x release carries the fix for CVE-2023-29007?", "Git 2.39.3 merges up the fix.", True),
    ("Which v2.30.x point release first let me put '*' in safe.directory?", "Git v2.30.4 Release Notes", True),
    # no series asked: any version the question does not name
    ("Which release carries the fix for CVE-2023-29007?", MERGE, True),
    ("Which point release of 2.35 fixed rebase?", "Git 2.35 shipped with a regression.", False),
])
def test_a_sentence_names_a_release_of_the_series_the_question_asks(question, text, names):
    assert names_release(question, text) is names


@pytest.mark.parametrize(("query", "prefix"), [
    ("Which 2.39.x release carries the fix?", "2.39."),
    ("在 v3.x 里默认值是多少？", "3."),
    ("Which release of 2.39 fixed it?", None),  # a version, no series
    ("What does 2.39.3 fix?", None),
])
def test_the_series_a_question_names(query, prefix):
    assert spread.series(query) == prefix


def _hit(name: str, text: str):
    return hit_in(text, 0, len(text), path=f"/doc/git/RelNotes/{name}", chunk_id=name)


def test_the_series_own_files_take_the_last_places_only_when_no_hit_is_from_one():
    others = [_hit(f"2.3{i}.8.txt", _merges(f"2.3{i}.8", ["v2.30.9"])) for i in range(1, 7)]
    results = SearchResults(others, "q", "hybrid", low_relevance=False, threshold=0.0)
    own = [_hit("2.39.3.txt", SERIES_NOTES), _hit("2.39.2.txt", SERIES_NOTES), _hit("2.39.1.txt", SERIES_NOTES)]
    mixed = spread.with_series(results, own + [_hit("12.39.0.txt", SERIES_NOTES)], "2.39.")
    assert [h.path.rsplit("/", 1)[-1] for h in mixed] == ["2.31.8.txt", "2.32.8.txt", "2.33.8.txt", "2.34.8.txt",
                                                         "2.39.3.txt", "2.39.2.txt"]
    assert spread.with_series(results, [_hit("12.39.0.txt", SERIES_NOTES)], "2.39.") is results  # 12.39 is no 2.39
    already = SearchResults(others[:5] + own[:1], "q", "hybrid", low_relevance=False, threshold=0.0)
    assert spread.with_series(already, own[1:], "2.39.") is already


@pytest.fixture
def notes_kb(tmp_path: Path, embedder):
    """Maintenance releases of other series that merge the same fixes, and 2.39.3's own notes."""
    notes = tmp_path / "RelNotes"
    notes.mkdir()
    earlier = ["v2.30.9", "v2.31.8", "v2.32.7", "v2.33.8", "v2.34.8", "v2.35.8", "v2.36.6", "v2.37.7", "v2.38.5"]
    for i, version in enumerate(earlier[1:], start=1):
        (notes / f"{version[1:]}.txt").write_text(_merges(version[1:], earlier[:i]), encoding="utf-8")
    # later series merge the fixes of 2.39's releases: their notes name them too
    for version, merged in (("2.40.1", [*earlier, "v2.39.3"]), ("2.41.1", ["v2.39.4", "v2.40.2"]),
                            ("2.42.2", ["v2.39.4", "v2.40.2", "v2.41.1"])):
        (notes / f"{version}.txt").write_text(_merges(version, merged), encoding="utf-8")
    (notes / "2.39.3.txt").write_text(SERIES_NOTES, encoding="utf-8")
    settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"}, answer={"abstain_threshold": 0.0, "top_k": 2})
    with KnowledgeBase(settings, embedder=embedder) as kb:
        kb.add([notes], "notes")
        yield kb


def test_a_series_question_is_answered_from_a_release_of_the_series_and_says_which(notes_kb):
    answer = notes_kb.ask("Which 2.39.x release carries the fix for CVE-2023-29007?")
    first = answer.citations[0]
    assert Path(first.path).name == "2.39.3.txt" and answer.answer.startswith("Git v2.39.3 Release Notes")
    assert notes_kb.documents.text(first.document_id)[first.char_start : first.char_end] == first.quote
