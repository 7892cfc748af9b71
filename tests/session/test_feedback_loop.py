"""The maintainers' feedback loop: corrections written from the log become documents later answers
cite, and a repeated question is answered from an earlier verified answer until a cited document
changes or the answer is rated down.  A real knowledge base and the scripted chat model (docqa.testing)."""

from __future__ import annotations

import re
import time

import pytest

from docqa.access import Principal
from docqa.errors import InputError, PermissionDeniedError
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.testing import ScriptedChat


OPS = "# Operations\n\n## Backups\n\nThe database is backed up every 6 hours.\nBackups are kept for 35 days.\n"
POLICY = "# Security policy\n\nPasswords must be at least 14 characters long.\n"
ANSWERS = {"kept": "Backups are kept for 35 days.", "backed up": "The database is backed up every 6 hours.",
           "restore": "A restore of the database takes about 40 minutes."}


def model(body: dict) -> dict:
    """A well-behaved model: it copies the sentence that answers and cites the source holding it."""
    if "fact-checker" in body["messages"][-1]["content"]:
        return {"text": "VERIFIED"}
    prompt = body["messages"][1]["content"]
    for sentence in ANSWERS.values():
        m = re.search(r'<source id="(\d+)"[^>]*>\n[^\n]*\n[^<]*' + re.escape(sentence.rstrip(".")), prompt)
        if m and any(k in prompt.lower().rsplit("question:", 1)[-1] for k, v in ANSWERS.items() if v == sentence):
            return {"text": f"{sentence[:-1]} [{m.group(1)}]."}
    return {"text": "NOT_FOUND"}


@pytest.fixture
def kb(tmp_path, embedder):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ops.md").write_text(OPS, encoding="utf-8")
    (docs / "policy.md").write_text(POLICY, encoding="utf-8")
    with ScriptedChat([model] * 200) as server:
        settings = Settings(kb=str(tmp_path / "kb.db"), answer={"recall": True},
                            llm={"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "timeout": 5, "max_retries": 0})
        with KnowledgeBase(settings, embedder=embedder,
                           chat_model=server) as base:
            base.add([docs], collection="ops")
            base.server, base.docs = server, docs  # type: ignore[attr-defined]
            yield base


def test_a_repeated_question_is_answered_from_the_earlier_verified_answer(kb, local_embedder):
    first = kb.ask("How long are backups kept?", mode="pipeline")
    assert first.verification.status == "VERIFIED" and first.mode == "pipeline"
    calls = len(kb.server.requests)
    t0 = time.perf_counter()
    again = kb.ask("how long are backups kept", mode="pipeline")
    took = time.perf_counter() - t0
    assert again.mode == "recall" and len(kb.server.requests) == calls  # no model call
    assert again.answer == first.answer and [c.quote for c in again.citations] == [c.quote for c in first.citations]
    assert again.retrieval.recalled_from == first.run_id
    assert any(f"from an earlier verified answer (run {first.run_id}" in n for n in again.notes)
    assert took < 1.0 and kb.log.run(again.run_id).mode == "recall"
    near = kb.ask("How long are the backups kept?", mode="pipeline")  # a near-duplicate, by embedding
    assert near.mode == "recall" and near.retrieval.similarity >= 0.95
    fresh = kb.ask("How long are backups kept?", mode="pipeline", fresh=True)
    assert fresh.mode == "pipeline" and len(kb.server.requests) > calls
    other = kb.ask("How often is the database backed up?", mode="pipeline")
    assert other.mode == "pipeline" and "6 hours" in other.answer
    scoped = kb.ask("How long are backups kept?", mode="pipeline", collection="ops")  # another collection scope
    assert scoped.mode == "pipeline"


def test_a_down_rating_or_a_changed_document_retires_it(kb):
    first = kb.ask("How long are backups kept?", mode="pipeline")
    assert kb.ask("How long are backups kept?", mode="pipeline").mode == "recall"
    kb.log.feedback(first.run_id, "down", "outdated")
    second = kb.ask("How long are backups kept?", mode="pipeline")
    assert second.mode == "pipeline"  # the rated-down one is retired; this answer is new and verified
    assert kb.ask("How long are backups kept?", mode="pipeline").retrieval.recalled_from == second.run_id
    repeated = kb.ask("How long are backups kept?", mode="pipeline")
    assert repeated.retrieval.recalled_from == second.run_id
    kb.log.feedback(repeated.run_id, "down")  # rating the repeat down retires the answer it repeated
    assert any(fb.rating == "down" and repeated.run_id in fb.comment for fb in kb.log.run(second.run_id).feedback)
    second = kb.ask("How long are backups kept?", mode="pipeline")
    assert second.mode == "pipeline"
    (kb.docs / "ops.md").write_text(OPS + "\n## Restore\n\nA restore of the database takes about 40 minutes.\n",
                                    encoding="utf-8")
    kb.add([kb.docs], collection="ops")
    third = kb.ask("How long are backups kept?", mode="pipeline")
    assert third.mode == "pipeline"
    recalling = next(t for t in kb.log.run(third.run_id).trace if t.get("stage") == "recalling")
    assert any(r["run_id"] == second.run_id and "ops.md changed" in r["reason"] for r in recalling["retired"])


def test_a_correction_is_a_document_later_answers_cite(kb):
    run = kb.ask("How long does a database restore take?", mode="pipeline")
    assert run.answerable is False
    row = next(r for r in kb.log.qa_log(attention=True) if r["run_id"] == run.run_id)
    assert row["corrected"] is False and "not_found" in row["attention"]
    reader, _ = kb.keys.create("reader")
    editor, _ = kb.keys.create("editor")
    with pytest.raises(PermissionDeniedError):
        kb.log.correct(run.run_id, "A restore takes 40 minutes.", principal=Principal.of(reader))
    with pytest.raises(InputError):
        kb.log.correct(run.run_id, "   ", principal=Principal.of(editor))
    record = kb.log.correct(run.run_id, "A restore of the database takes about 40 minutes.", principal=Principal.of(editor))
    assert record.collection == "corrections" and record.path.endswith(f"correction-{run.run_id}.md")
    note = kb.documents.text(record.document_id)
    assert "A restore of the database takes about 40 minutes." in note and f"for run {run.run_id}" in note
    assert f"API key {editor.id}" in note and "How long does a database restore take?" in note
    assert next(r for r in kb.log.qa_log(attention=True) if r["run_id"] == run.run_id)["corrected"] is True
    later = kb.ask("How long does a database restore take?", mode="pipeline")  # every collection: the note too
    assert later.answerable and "40 minutes" in later.answer
    assert later.citations[0].path == record.path and later.verification.status == "VERIFIED"
