"""Searchable before the embedding ends (issue 34, item 2): an add commits each document's text
(chunks and full-text entries) before it embeds the chunks, a search meanwhile finds the new
documents by full text and says which hits have no vector yet, and an add stopped in between
leaves them searchable, with the next add embedding what is missing.  On SQLite and PostgreSQL.

The progress callback runs after a group's text is committed and before its vectors are made:
the tests look (through another connection) or stop the add there.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from docqa.errors import EmbedError
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.testing import HashEmbedder
from store.backends import BACKENDS, kb_url

FILES = {
    "ops.md": "# Operations\n\nThe zebra backup runs every 6 hours and is kept for 35 days.\n",
    "keys.md": "# Keys\n\nAPI keys are rotated every 90 days with the quartz tool.\n",
    "net.md": "# Network\n\nThe walrus gateway forwards port 8443 to the cluster.\n",
}
QUERIES = {"ops.md": "zebra backup", "keys.md": "quartz rotated", "net.md": "walrus gateway"}


class Stop(Exception):
    """Stops an add from its progress callback (as Ctrl-C would)."""


@pytest.fixture(params=BACKENDS)
def setup(request, tmp_path, hash_embedder):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in FILES.items():
        (docs / name).write_text(text, encoding="utf-8")
    settings = Settings(kb=kb_url(request.param, request, tmp_path), embed={"provider": "local"})
    opened: list[KnowledgeBase] = []

    def open_kb() -> KnowledgeBase:
        opened.append(KnowledgeBase(settings, embedder=hash_embedder))
        return opened[-1]

    yield docs, open_kb
    for kb in reversed(opened):
        kb.close()


def _vectors(kb: KnowledgeBase) -> tuple[int, int]:
    return kb.store.vectors.vector_count(kb.models.embedder.fingerprint.key)


def test_documents_are_searchable_before_their_vectors_are_written(setup):
    docs, open_kb = setup
    kb, reader = open_kb(), open_kb()
    seen = []

    def look(done: int, total: int, path: str) -> None:  # `path` was just committed; its vectors come later
        name = path.rsplit("/", 1)[-1]
        seen.append((name, reader.search(QUERIES[name], mode="hybrid"), _vectors(reader)))

    report = kb.add([docs], progress=look)
    assert sorted(name for name, _, _ in seen) == sorted(FILES)
    for name, hits, (embedded, chunks) in seen:
        assert hits[0].path.endswith(name) and hits[0].chunk_id in hits.without_vectors  # found by full text alone
        assert "no vector yet" in hits.vectors_note and embedded < chunks
    assert seen[0][2][0] == 0  # the first documents were searchable before any vector existed
    assert _vectors(kb) == (len(FILES), len(FILES))
    for name, query in QUERIES.items():
        after = reader.search(query, mode="hybrid")
        assert after[0].path.endswith(name) and after.without_vectors == [] and after.vectors_note is None
    assert report.vectors == len(FILES)
    assert 0 < report.first_searchable <= report.searchable <= report.vectors_elapsed <= report.elapsed
    assert report.phases().startswith("searchable in ") and f"; vectors for {len(FILES)} chunks in " in report.phases()


def test_an_answer_says_when_its_sources_have_no_vector_yet(setup):
    docs, open_kb = setup
    kb = open_kb()
    written = []

    def stop(done: int, total: int, path: str) -> None:
        written.append(path.rsplit("/", 1)[-1])
        raise Stop

    with pytest.raises(Stop):
        kb.add([docs], progress=stop)
    question = f"What about the {QUERIES[written[0]]}?"
    answer = kb.ask(question, mode="pipeline")
    assert answer.retrieval.without_vectors and any("no vector yet" in note for note in answer.notes)
    kb.add([docs])
    answer = kb.ask(question, mode="pipeline")
    assert "without_vectors" not in answer.retrieval.to_dict() and not any("no vector yet" in note for note in answer.notes)


def test_an_add_stopped_before_embedding_leaves_its_documents_searchable_and_the_next_add_embeds_them(setup):
    docs, open_kb = setup
    kb = open_kb()
    written = []

    def stop(done: int, total: int, path: str) -> None:
        written.append(path.rsplit("/", 1)[-1])
        raise Stop

    with pytest.raises(Stop):
        kb.add([docs], progress=stop)
    (name,) = written
    embedded, chunks = _vectors(kb)
    assert embedded == 0 and chunks >= 1
    hits = kb.search(QUERIES[name], mode="hybrid")
    assert hits[0].path.endswith(name) and hits.to_dict()["without_vectors"] == [h.chunk_id for h in hits]
    report = kb.add([docs])
    assert str(docs / name) in report.unchanged  # not parsed again, yet embedded now
    assert report.vectors == len(FILES) and f"vectors for {len(FILES)} chunks in " in report.phases()
    assert _vectors(kb) == (len(FILES), len(FILES))
    assert kb.search(QUERIES[name], mode="hybrid").without_vectors == []
    assert kb.add([docs]).phases() is None  # nothing written, nothing left to embed: nothing said


def test_the_next_add_embeds_what_a_stopped_add_left_though_no_file_changed(setup):
    docs, open_kb = setup
    kb = open_kb()

    def stop(done: int, total: int, path: str) -> None:
        if done == total:
            raise Stop

    with pytest.raises(Stop):
        kb.add([docs], progress=stop)
    embedded, chunks = _vectors(kb)
    assert chunks == len(FILES) and embedded < chunks
    report = kb.add([docs])
    assert sorted(report.unchanged) == sorted(str(docs / n) for n in FILES)
    assert report.vectors == chunks - embedded and report.phases().startswith(f"vectors for {chunks - embedded} chunks in ")
    assert _vectors(kb) == (len(FILES), len(FILES))


def test_a_changed_document_is_its_new_version_while_it_is_embedded(setup):
    """A replaced document is never left with neither version searchable: its new text is in before
    its new vectors are made, and its old text is gone with the same commit."""
    docs, open_kb = setup
    kb, reader = open_kb(), open_kb()
    kb.add([docs])
    (docs / "net.md").write_text("# Network\n\nThe narwhal gateway forwards port 9443 to the cluster.\n", encoding="utf-8")
    seen = []

    def look(done: int, total: int, path: str) -> None:
        seen.append((reader.search("narwhal gateway", mode="hybrid"), reader.search("walrus", mode="bm25")))
        raise Stop

    with pytest.raises(Stop):
        kb.add([docs], progress=look)
    (new, old), = seen
    assert new[0].path.endswith("net.md") and new.without_vectors == [new[0].chunk_id]
    assert not old  # the old version's text left with the same commit
    assert _vectors(kb) == (len(FILES) - 1, len(FILES))
    kb.add([docs])
    assert _vectors(kb) == (len(FILES), len(FILES))


class HeldModel(HashEmbedder):
    """The test's model: its first batch of passages waits until the test lets it go (`release`)."""

    def __init__(self) -> None:
        super().__init__()
        self.started, self.release = threading.Event(), threading.Event()

    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        if kind == "passage" and not self.started.is_set():
            self.started.set()
            if not self.release.wait(timeout=60):  # the add never went on while this batch was held
                raise AssertionError("no document was committed while the model embedded the first group")
        return super()._embed(texts, kind)


@pytest.mark.slow  # 400 files through the parser processes: ~2 s
def test_parsed_files_are_committed_while_the_model_embeds_an_earlier_group(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(400):  # one chunk each: the first 128 chunks start the model long before the last file is written
        (docs / f"note{i:03}.md").write_text(f"# Note {i}\n\nThe heron{i} valve opens at stage {i}.\n", encoding="utf-8")
    model = HeldModel()
    committed_meanwhile = []

    def look(done: int, total: int, path: str) -> None:  # `path`'s text was just committed
        if model.started.is_set() and not model.release.is_set():
            committed_meanwhile.append(path)
            model.release.set()

    with KnowledgeBase(Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "local"}), embedder=model) as kb:
        report = kb.add([docs], progress=look)
        assert committed_meanwhile and report.vectors == 400
        assert kb.store.vectors.vector_count(model.fingerprint.key) == (400, 400)
        assert kb.search("heron399 valve", mode="hybrid")[0].path.endswith("note399.md")


class BrokenModel(HashEmbedder):
    """A model whose service went away: every passage batch fails."""

    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        if kind == "passage":
            raise EmbedError("the embedding service went away")
        return super()._embed(texts, kind)


def test_a_model_failing_on_its_thread_stops_the_add_with_its_error_and_what_was_written_stays_searchable(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in FILES.items():
        (docs / name).write_text(text, encoding="utf-8")
    settings = Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "local"})
    with KnowledgeBase(settings, embedder=BrokenModel()) as kb, pytest.raises(EmbedError, match="went away"):
        kb.add([docs])
    with KnowledgeBase(settings, embedder=HashEmbedder()) as kb:
        written = [p.rsplit("/", 1)[-1] for p in kb.store.documents.file_states("default")]
        assert written  # the model's error came after the first group's text was committed
        for name in written:
            hits = kb.search(QUERIES[name], mode="hybrid")
            assert hits[0].path.endswith(name) and hits[0].chunk_id in hits.without_vectors
        assert kb.add([docs]).vectors == len(FILES)
        assert kb.search(QUERIES["net.md"], mode="hybrid").without_vectors == []
