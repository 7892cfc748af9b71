"""GET /api/v1/overview (issue 33): what the knowledge base holds for someone about to ask — counts,
collections, languages, example questions drawn from the documents' headings — scoped to the caller's
collections."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from docqa.kb import KnowledgeBase
from docqa.settings import Settings

OPS = """# Operations Handbook

## Backups

Full backups run every night and are kept for 35 days.

## Rollback

A rollback takes about 4 minutes.
"""
ZH = """# 运维手册

## 数据库备份

数据库每 6 小时备份一次，备份保留 35 天。
"""
FAQ = """<html><head><title>Support FAQ</title></head><body><h1>Support FAQ</h1>
<h2>How do I reset my password?</h2><p>Use the sign-in page's link.</p></body></html>"""


def _settings(tmp_path: Path) -> Settings:
    return Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"},
                    api={"upload_dir": str(tmp_path / "uploads"), "allowed_hosts": ["testserver"]})


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    for folder, name, text in (("ops", "handbook.md", OPS), ("zh", "运维.md", ZH), ("support", "faq.html", FAQ)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_text(text, encoding="utf-8")
    (tmp_path / "ops" / "empty.txt").write_text("", encoding="utf-8")  # skipped: not a document
    with KnowledgeBase(_settings(tmp_path), create=True) as kb:
        kb.add([tmp_path / "ops", tmp_path / "zh"])
        kb.add([tmp_path / "support"], "support")
    return tmp_path


def test_the_overview_counts_documents_and_draws_questions_from_their_headings(filled: Path):
    with KnowledgeBase(_settings(filled)) as kb:
        seen = kb.browse.overview()
        again = kb.browse.overview()
    assert (seen.documents, seen.skipped) == (3, 1)
    assert seen.collections == [{"name": "default", "documents": 2}, {"name": "support", "documents": 1}]
    assert seen.languages == {"en": 2, "zh": 1}
    questions = [e.question for e in seen.examples]
    assert questions == [e.question for e in again.examples]  # by rules: the same documents, the same questions
    assert len(questions) == 3 and len({e.document_id for e in seen.examples}) == 3
    assert "How do I reset my password?" in questions  # a question heading is asked as it stands
    zh = next(e for e in seen.examples if e.language == "zh")
    assert "数据库备份" in zh.question and zh.question.endswith("？")  # in the document's language
    en = next(e for e in seen.examples if e.path.endswith("handbook.md"))
    assert en.section in ("Backups", "Rollback") and en.section.lower() in en.question
    for example in seen.examples:  # each names a section its document holds
        with KnowledgeBase(_settings(filled)) as kb:
            assert example.section in kb.browse.fetch_doc(example.document_id, limit=500).text


def test_an_empty_knowledge_base_has_nothing_to_suggest(tmp_path: Path):
    with KnowledgeBase(_settings(tmp_path), create=True) as kb:
        seen = kb.browse.overview()
    assert (seen.documents, seen.chunks, seen.collections, seen.examples) == (0, 0, [], [])


@pytest.mark.slow
def test_a_scoped_key_sees_only_its_collections_counts_and_examples(filled: Path):
    from docqa.api import create_app

    with KnowledgeBase(_settings(filled)) as kb:
        _, support = kb.keys.create("reader", ["support"])
        _, admin = kb.keys.create("admin")
    with TestClient(create_app(_settings(filled))) as client:
        def get(path: str, key: str):
            return client.get(path, headers={"Authorization": f"Bearer {key}"})

        whole = get("/api/v1/overview", admin).json()
        assert whole["documents"] == 3 and len(whole["examples"]) == 3
        scoped = get("/api/v1/overview", support).json()
        assert scoped["documents"] == 1 and scoped["skipped"] == 0
        assert scoped["collections"] == [{"name": "support", "documents": 1}] and scoped["languages"] == {"en": 1}
        assert [e["collection"] for e in scoped["examples"]] == ["support"]
        refused = get("/api/v1/overview?collection=default", support)
        assert refused.status_code == 403
        one = get("/api/v1/overview?collection=default", admin).json()
        assert one["documents"] == 2 and {e["collection"] for e in one["examples"]} == {"default"}
        assert client.get("/api/v1/overview").status_code == 401
