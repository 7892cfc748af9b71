"""A large first ingest into PostgreSQL is a bulk load: the HNSW index is built once, after the
documents are in, not grown by one graph insert per vector (store/postgres/bulk.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.ingest import pipeline
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

FILES = 6


def _index_count(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute("SELECT count(*) FROM pg_indexes WHERE indexname LIKE 'embeddings_hnsw_%%'").fetchone()[0]


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk-load", "below-the-threshold"])
def test_the_index_is_built_at_the_end_of_a_large_first_ingest(postgres_server, tmp_path, local_embedder, monkeypatch, bulk):
    monkeypatch.setattr(pipeline, "_BULK_FILES", FILES if bulk else FILES + 1)
    monkeypatch.setattr(pipeline, "_EMBED_CHUNKS", 1)  # one flush (and commit) per file: the progress sees each
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(FILES):
        text = f"# Topic {i}\n\nThe river number {i} runs past stone bridge {i}.\n"
        Path(folder / f"f{i}.md").write_text(text, encoding="utf-8")
    url = postgres_server.new_database()
    seen: list[int] = []
    with KnowledgeBase(Settings(kb=url), embedder=local_embedder) as kb:
        report = kb.add([folder], progress=lambda done, total, path: seen.append(_index_count(url)))
        assert len(report.added) == FILES
        assert _index_count(url) == 1
        hits = kb.search("stone bridge 3", top_k=3, mode="dense")
        assert hits and all(Path(h.path).suffix == ".md" for h in hits)
    if bulk:
        assert seen == [0] * FILES  # never an index while loading
    else:
        assert seen[1:] == [1] * (FILES - 1)  # indexed with the first vectors, as before
