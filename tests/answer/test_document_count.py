"""One count of documents everywhere (issue 33): a not-found answer, the collections and 'docqa list'
count the indexed documents only; files skipped or failed are not documents."""

from __future__ import annotations

import re

from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.testing import HashEmbedder


def test_not_found_counts_the_indexed_documents_as_list_and_collections_do(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ops.md").write_text("# Operations\n\nThe database is backed up every 6 hours.\n", encoding="utf-8")
    (docs / "herons.md").write_text("# Herons\n\nHerons nest in colonies near water.\n", encoding="utf-8")
    (docs / "empty.txt").write_text("", encoding="utf-8")  # skipped: an empty file
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 truncated")  # failed
    settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"})
    with KnowledgeBase(settings, embedder=HashEmbedder(), create=True) as kb:
        kb.add([docs])
        records = kb.documents.list()
        assert {r.status for r in records} == {"ok", "skipped", "error"}  # the files the count must leave out
        indexed = sum(r.status == "ok" for r in records)
        answer = kb.ask("Which volcano erupted in 1815 on Sumbawa?")
        assert not answer.answerable
        said = re.search(r"\((\d+) documents?\)", answer.answer)
        assert said, answer.answer
        assert int(said.group(1)) == indexed == kb.documents.collections()["default"] == 2
        catalog = kb.ask("What documents do you have?")
        assert catalog.retrieval.documents == indexed
