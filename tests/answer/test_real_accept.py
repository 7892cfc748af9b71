"""The acceptance rule with the REAL small model (Qwen2.5-Coder-1.5B on llama.cpp, on loopback):
whatever the model writes, what is published is verified or quoted, never an invented answer.
Skipped with the install command when the model is not installed (docqa model install)."""

from __future__ import annotations

import pytest

from docqa.answer.citer import strip_markers
from docqa.answer.statement import is_statement
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.text.sentences import sentence_spans

pytestmark = pytest.mark.real_llm

OPS = """# Operations

## Backups

The database is backed up every 6 hours to object storage.
Backups are kept for 35 days.
"""


@pytest.fixture(scope="module")
def kb(real_llm, tmp_path_factory, local_embedder):
    root = tmp_path_factory.mktemp("real_accept")
    (root / "ops.md").write_text(OPS, encoding="utf-8")
    settings = Settings(kb=str(root / "kb.db"),
                        llm={"provider": "openai", "base_url": real_llm, "model": "qwen2.5-coder-1.5b",
                             "context_window": 4096, "max_tokens": 160, "temperature": 0.0, "timeout": 300})
    with KnowledgeBase(settings, embedder=local_embedder) as kb:
        kb.add([root])
        yield kb


def test_a_published_answer_is_verified_or_quoted(kb):
    answer = kb.ask("How long are backups kept?")
    assert answer.answerable and "35" in answer.answer and answer.citations
    assert answer.retrieval.acceptance.outcome in ("model", "extractive")
    assert "[unverified]" not in answer.answer
    text = strip_markers(answer.answer)  # a quoted sentence's marker after its full stop belongs to it
    assert all(is_statement(text[s:e]) for s, e in sentence_spans(text))
    assert answer.usage["model_calls"] >= 1 and answer.timings["total"] > 0


def test_an_unanswerable_question_stays_not_found(kb):
    answer = kb.ask("What is the capital of Peru?")
    assert not answer.answerable and "Lima" not in answer.answer
