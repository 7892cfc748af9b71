"""The sentence ranking's `dense_headed` feature: the question against a candidate sentence as a reader meets it, under
its section's own heading and the option its description belongs to (a man page's "-d, --max-depth=N" line, a manual's
"Error-related Options"), computed when the ranking weighs it or while the ranking's candidates are dumped for a refit."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from docqa.answer import extractive
from docqa.answer.extractive import Sentence, _headed, rank

from .hits import hit_in, sources

# valgrind's manual (manual-core.html, 2.7.3): the description never says "frames", its heading says "Error-related"
VALGRIND = """--num-callers=<number> [default: 12]

Specifies the maximum number of entries shown in stack traces that identify program locations.
Note that errors are commoned up using only the top four function locations.
"""
# du(1) in Chinese (manpages-zh): a short option line, its description on the next line
DU = """-d, --max-depth=N
仅当目录（或在 --all 选项启用时包括文件）层级不高于命令行参数指定的 N 层时输出对应目录或文件的对应大小
"""

CASES = [  # (document, section, title, sentence start, sentence end, term, expected headed text)
    (VALGRIND, "2. Using and understanding the Valgrind core > 2.7. Core Command-line Options > 2.7.3. Error-related Options",
     "Config", 38, 132, "--num-callers=<number> [default: 12]",
     "2.7.3. Error-related Options\n--num-callers=<number> [default: 12]\n"
     "Specifies the maximum number of entries shown in stack traces that identify program locations."),
    (VALGRIND, "2.7.3. Error-related Options", "Config", 0, 132, "--num-callers=<number> [default: 12]",
     "2.7.3. Error-related Options\n" + VALGRIND[:132]),  # the sentence begins with its label: not said twice
    (DU, "", "du", 18, len(DU) - 1, "-d, --max-depth=N",
     "du\n-d, --max-depth=N\n" + DU[18:-1]),  # no section: the document's title heads it
    (DU, "选项", "du", 18, len(DU) - 1, "", "选项\n" + DU[18:-1]),  # not an option's description: its heading alone
]


@pytest.mark.parametrize(("document", "section", "title", "start", "end", "term", "expected"), CASES)
def test_a_sentence_is_read_under_its_heading_and_its_options_label(document, section, title, start, end, term, expected):
    hit = replace(hit_in(document, 0, len(document), section=section), title=title)
    assert _headed(Sentence(1, start, end, document[start:end], term=term), hit) == expected


def _candidates() -> tuple[list[Sentence], object]:
    section = "2.7. Core Command-line Options > 2.7.3. Error-related Options"
    pool = sources(hit_in(VALGRIND, 0, len(VALGRIND), section=section))
    first = VALGRIND.index("Specifies")
    second = VALGRIND.index("Note that")
    return [Sentence(1, first, second - 1, VALGRIND[first:second - 1], term="--num-callers=<number> [default: 12]"),
            Sentence(1, second, len(VALGRIND) - 1, VALGRIND[second:-1])], pool


def test_the_headed_similarity_is_the_question_against_the_headed_text(hash_embedder, monkeypatch):
    """Computed only when asked for (no cost while SELECT_MODEL does not weigh it); then it is the question's
    similarity to the headed text, and the heading's and label's words raise it above the bare sentence's."""
    embed = lambda texts, kind: hash_embedder.embed_batch(texts, kind)  # noqa: E731
    question = "Which error-related option sets how many callers Valgrind shows?"
    candidates, pool = _candidates()
    rank(question, candidates, pool, {}, embed)  # type: ignore[arg-type]
    assert all("dense_headed" not in s.features for s in candidates)
    monkeypatch.setattr(extractive, "SELECT_HEADED", True)
    candidates, pool = _candidates()
    rank(question, candidates, pool, {}, embed)  # type: ignore[arg-type]
    unit = lambda v: v / np.linalg.norm(v)  # noqa: E731
    query = unit(np.asarray(embed([question], "query"))[0])
    for s in candidates:
        headed = unit(np.asarray(embed([_headed(s, pool.get(1).hit)], "passage"))[0])  # type: ignore[attr-defined]
        assert s.features["dense_headed"] == pytest.approx(max(float(headed @ query), 0.0), abs=1e-5)
        assert s.features["dense_headed"] > s.dense
    monkeypatch.setattr(extractive, "SELECT_HEADED", False)
    monkeypatch.setattr(extractive, "SELECT_MODEL", {**extractive.SELECT_MODEL, "dense_headed": 1.0})
    candidates, pool = _candidates()
    rank(question, candidates, pool, {}, embed)  # type: ignore[arg-type]
    assert all("dense_headed" in s.features for s in candidates)
