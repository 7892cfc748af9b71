"""The extractive answerer can read the chunks next to a hit (pipeline.read_beside, off by default: BESIDE_HITS 0).

A chunk boundary cuts Valgrind's option list: "How many frames does Valgrind show in a stack trace by default?"
finds the chunk of `--unw-stack-scan-frames` (its words: stack, frames), while the answer, `--num-callers=<number>
[default: 12]` ("the maximum number of entries shown in stack traces"), stands in the chunk before it (the trust
dev set's valgrind-html-003).  Real text from the Valgrind manual (manual-core.html, 2.7.3), real SQLite, chunks
made small so that the list spans two, cut where the manual's chunks cut it.
"""

from __future__ import annotations

import pytest

from docqa.answer import extractive, pipeline
from docqa.answer.sources import Source, SourceSet
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.testing import HashEmbedder

OPTIONS = [
    ("--demangle=<yes|no> [default: yes]",
     "Enable/disable automatic demangling (decoding) of C++ names. Enabled by default. When enabled, Valgrind will "
     "attempt to translate encoded C++ names back to something approaching the original. The demangler handles "
     "symbols mangled by g++ versions 2.X, 3.X and 4.X."),
    ("--num-callers=<number> [default: 12]",
     "Specifies the maximum number of entries shown in stack traces that identify program locations. Note that "
     "errors are commoned up using only the top four function locations (the place in the current function, and "
     "that of its three immediate callers). So this doesn't affect the total number of errors reported."),
    ("--unw-stack-scan-thresh=<number> [default: 0] , --unw-stack-scan-frames=<number> [default: 5]",
     "Stack-scanning support is available only on ARM targets. These flags enable and control stack unwinding by "
     "stack scanning. When the normal stack unwinding mechanisms -- usage of Dwarf CFI records, and frame-pointer "
     "following -- fail, stack scanning may be able to recover a stack trace."),
    ("--error-limit=<yes|no> [default: yes]",
     "When enabled, Valgrind stops reporting errors after 10,000,000 in total, or 1,000 different ones, have been "
     "seen. This is to stop the error tracking machinery from becoming a huge performance overhead in programs with "
     "many errors."),
]
MANUAL = "# 2.7.3. Error-related Options\n\n" + "\n\n".join(f"{label}\n\n{text}" for label, text in OPTIONS) + "\n"
QUESTION = "How many frames does Valgrind show in a stack trace by default?"
ANSWER = "Specifies the maximum number of entries shown in stack traces"


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    root = tmp_path_factory.mktemp("beside")
    (root / "docs").mkdir()
    (root / "docs" / "manual-core.md").write_text(MANUAL, encoding="utf-8")
    settings = Settings(kb=str(root / "kb.db"), llm={"provider": "none"}, chunk={"max_tokens": 180, "overlap": 0})
    with KnowledgeBase(settings, embedder=HashEmbedder(), create=True) as base:
        report = base.add([root / "docs"])
        assert len(report.added) == 1 and not report.failed
        yield base


def _chunks(kb):
    (record,) = kb.documents.list()
    return kb.documents.chunks(record.document_id)


def _found(kb) -> Source:
    """The chunk the question's words match: the stack-scanning option's, not the answer's."""
    hit = next(h for h in _chunks(kb) if "--unw-stack-scan-frames" in h.text)
    assert "--num-callers" not in hit.text  # the boundary this is about
    hit.score, hit.bm25_rank, hit.bm25_score, hit.dense_rank, hit.dense_score = 0.7, 1, 9.5, 2, 0.6
    return Source(1, hit)


def test_the_chunk_before_a_hit_is_read_beside_it(kb):
    pool = SourceSet([_found(kb)])
    pipeline.read_beside(pool, kb.answers.library(), hits=1)
    beside = [x for x in pool.sources if x.beside]
    assert [x.beside for x in beside] == [1] and [x.n for x in beside] == [2]  # the chunk before (none comes after)
    assert any("--num-callers=<number> [default: 12]" in x.hit.text for x in beside)
    assert all((x.hit.score, x.hit.bm25_rank, x.hit.dense_score) == (0.7, 1, 0.6) for x in beside)  # read as hit 1 is
    texts = [s.text for s in extractive._candidates(pool, 1, QUESTION)]
    assert any(t.startswith("--num-callers=<number> [default: 12]") and ANSWER in t for t in texts)  # label and sentence


def test_off_by_default_and_never_twice(kb):
    pool = SourceSet([_found(kb)])
    pipeline.read_beside(pool, kb.answers.library())  # BESIDE_HITS: off
    assert len(pool.sources) == pipeline.BESIDE_HITS * 2 + 1 == 1
    assert not any(ANSWER in s.text for s in extractive._candidates(pool, 1, QUESTION))
    before = next(h for h in _chunks(kb) if "--num-callers" in h.text)
    pool = SourceSet([_found(kb), Source(2, before)])
    pipeline.read_beside(pool, kb.answers.library(), hits=2)
    ids = [x.hit.chunk_id for x in pool.sources]
    assert len(ids) == len(set(ids))  # a chunk the pool holds is not read again beside another


def test_the_first_chunk_has_nothing_before_it(kb):
    chunks = _chunks(kb)
    around = kb.answers.library().around(chunks[0])
    assert [h.chunk_id for h in around] == [chunks[1].chunk_id]
    last = kb.answers.library().around(chunks[-1])
    assert [h.chunk_id for h in last] == [chunks[-2].chunk_id]
