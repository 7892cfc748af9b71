"""A large first ingest into PostgreSQL is a bulk load: the HNSW index is built once, after the
documents are in, not grown by one graph insert per vector (store/postgres/bulk.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.embed.local import LocalEmbedder
from docqa.ingest import pipeline
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

FILES = 6


def _index_count(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute("SELECT count(*) FROM pg_indexes WHERE indexname LIKE 'embeddings_hnsw_%%'").fetchone()[0]


class ObservedModel(LocalEmbedder):
    """The bundled model, noting as it is given each group of passages how many HNSW indexes exist."""

    def __init__(self, url: str):
        super().__init__()
        self.url, self.indexes = url, []

    def embed_batch(self, texts, kind="passage", progress=None):
        if kind == "passage":
            self.indexes.append(_index_count(self.url))
        return super().embed_batch(texts, kind, progress)


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk-load", "below-the-threshold"])
def test_the_index_is_built_at_the_end_of_a_large_first_ingest(postgres_server, tmp_path, monkeypatch, bulk):
    monkeypatch.setattr(pipeline, "_BULK_FILES", FILES if bulk else FILES + 1)
    monkeypatch.setattr(pipeline, "_EMBED_CHUNKS", 1)  # one flush (and commit) per file: the progress sees each
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(FILES):
        text = f"# Topic {i}\n\nThe river number {i} runs past stone bridge {i}.\n"
        Path(folder / f"f{i}.md").write_text(text, encoding="utf-8")
    url = postgres_server.new_database()
    seen: list[int] = []
    model = ObservedModel(url)
    with KnowledgeBase(Settings(kb=url), embedder=model) as kb:
        report = kb.add([folder], progress=lambda done, total, path: seen.append(_index_count(url)))
        assert len(report.added) == FILES
        assert _index_count(url) == 1
        hits = kb.search("stone bridge 3", top_k=3, mode="dense")
        assert hits and all(Path(h.path).suffix == ".md" for h in hits)
    assert len(model.indexes) >= 2  # the first file's text goes to the model alone, the others after it
    if bulk:
        assert seen == [0] * FILES and set(model.indexes) == {0}  # never an index while loading
    else:  # indexed with the first vectors, as before: every later group finds the index
        assert model.indexes[0] == 0 and set(model.indexes[1:]) == {1}
