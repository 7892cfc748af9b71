"""A rare exact token of the question (a version, a path, an option) is never lost by fusion.

Release notes of sibling versions read almost alike: BM25 sees `2.39.5` as the pieces `2 39 5`
that its siblings share, and their dense vectors are near neighbours, so the fused order of the
siblings used to be close to chance.  Real files, real SQLite, the bundled multilingual model.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.kb import KnowledgeBase
from docqa.settings import Settings


def notes(version: str, body: str) -> str:
    title = f"Tool v{version} Release Notes"
    return f"{title}\n{'=' * len(title)}\n\n{body}\n"


MERGE = "This release merges up the fixes that appear in v{0}, v{1} and v{2} to address the security issues {3}."
FILES = {
    "tool/RelNotes/2.37.1.txt": notes("2.37.1", "Fixes since v2.37\n\n * The build with the latest compiler was broken; "
                                      "this release is a maintenance release to fix it.\n * A crash in the "
                                      "index reader when a pack file is truncated has been fixed."),
    "tool/RelNotes/2.38.3.txt": notes("2.38.3", MERGE.format("2.30.7", "2.31.6", "2.32.5", "CVE-2022-41903") +
                                      " See the release notes for these versions for details."),
    "tool/RelNotes/2.39.1.txt": notes("2.39.1", MERGE.format("2.30.7", "2.31.6", "2.32.5", "CVE-2022-23521") +
                                      " See the release notes for these versions for details."),
    "tool/RelNotes/2.39.2.txt": notes("2.39.2", MERGE.format("2.30.8", "2.31.7", "2.32.6", "CVE-2023-22490") +
                                      " See the release notes for these versions for details."),
    "tool/RelNotes/2.39.3.txt": notes("2.39.3", MERGE.format("2.30.9", "2.31.8", "2.32.7", "CVE-2023-25652") +
                                      " This release also merges fixes for the 2.39.x maintenance track."),
    "tool/RelNotes/2.39.4.txt": notes("2.39.4", "This addresses the security issues CVE-2024-32002 and CVE-2024-32004 "
                                      "with defense in depth changes to clone and fetch."),
    "tool/RelNotes/2.39.5.txt": notes("2.39.5", "In preparing security fixes for four CVEs, we made overly aggressive "
                                      "defense in depth changes that broke legitimate uses of Tool with large "
                                      "file storage. This release is to revert these misguided changes that "
                                      "were shipped in 2.39.4 and were not direct security fixes."),
    "guide/install.md": "# Installing\n\nRun the installer with --prefix=/opt/tool to choose where the files go; "
                        "the default prefix is /usr/local.\n",
}


@pytest.fixture(scope="module")
def kb(tmp_path_factory, local_embedder):
    root = tmp_path_factory.mktemp("exact_tokens")
    for rel, text in FILES.items():
        path = root / "docs" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    settings = Settings(kb=str(root / "kb.db"), llm={"provider": "none"})
    with KnowledgeBase(settings, embedder=local_embedder) as base:
        report = base.add([root / "docs"])
        assert len(report.added) == len(FILES) and not report.failed
        yield base


def names(hits) -> list[str]:
    return [Path(h.path).name for h in hits]


QUESTIONS = [
    "Why was Tool 2.39.5 released?",
    "Tool 2.39.5 为什么发布？",  # a Chinese question over English notes: the version still decides
    "What did Tool 2.39.2 fix?",
    "Tool 2.39.2 修复了哪些问题？",
]


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_exact_version_comes_first_in_every_mode_that_can_see_it(kb, question):
    version = next(w for w in question.split() if w[0].isdigit())
    assert names(kb.search(question, mode="bm25"))[0] == f"{version}.txt"
    assert names(kb.search(question))[0] == f"{version}.txt"  # hybrid: fusion keeps what BM25 found


def test_chunks_holding_the_token_lead_those_that_lack_it(kb):
    hits = kb.search("Which security issues did 2.30.8 address?", top_k=len(FILES))
    holders = [i for i, h in enumerate(hits) if "2.30.8" in h.text]
    assert names(hits)[0] == "2.39.2.txt" and holders == list(range(len(holders)))
    hits = kb.search("where does --prefix put the files?", top_k=3)
    assert names(hits)[0] == "install.md"


def test_ask_without_a_model_answers_from_the_exact_version(kb):
    answer = kb.ask("Why was Tool 2.39.5 released?")
    assert answer.mode == "extractive" and answer.answerable, answer.answer
    cited = {Path(c.path).name for c in answer.citations}
    assert cited and "2.39.5.txt" in cited and "revert" in answer.answer
    assert names([c for c in answer.citations])[0] == "2.39.5.txt"
