"""`docqa estimate`: per question from stated defaults when the run log holds no run (said so), from
the averages of recent runs once there are some (made with the scripted model), money from the
configured prices; `--ingest FOLDER`; the API and MCP doors, and their refusal for a reader key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docqa.errors import InputError, PermissionDeniedError
from docqa.access import Principal
from docqa.kb import KnowledgeBase
from docqa.llm import OpenAICompatModel
from docqa.settings import Settings
from llm.scripted_server import ScriptedServer
from plan.test_init import docqa

OPS = """# Operations

## Backups

The database is backed up every 6 hours to object storage.
Backups are kept for 35 days.
"""
ANSWER = "Backups are kept for 35 days [1]."
QUESTION = "How long are backups kept?"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "ops.md").write_text(OPS, encoding="utf-8")
    return folder


def _kb(tmp_path: Path, docs: Path, server: ScriptedServer | None, **llm) -> KnowledgeBase:
    settings = Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, answer={"mode": "pipeline"},
                        llm={"provider": "openai" if server else "none", "base_url": server.base_url if server else "",
                             "model": "scripted", **llm}, api={"ingest_roots": [str(docs)]})
    model = OpenAICompatModel(server.base_url, "scripted", timeout=10, max_retries=0) if server else None
    kb = KnowledgeBase(settings, chat_model=model)
    kb.add([docs])
    return kb


@pytest.mark.slow
def test_without_runs_the_estimate_comes_from_defaults_and_says_so(tmp_path: Path, docs: Path):
    with ScriptedServer() as server, _kb(tmp_path, docs, server, prompt_price=2.0, completion_price=8.0) as kb:
        est = kb.estimates.question(QUESTION, "pipeline")
        agent = kb.estimates.question("Compare the backup policies across all documents", "auto")
        catalog = kb.estimates.question("What files do you have?", "auto")
        assert server.requests == []  # estimating never calls the model
    assert est["basis"] == "defaults" and est["runs"] == 0 and est["mode"] == "pipeline"
    assert any("no recorded pipeline run" in n for n in est["notes"])
    assert est["model_calls"] == 2 and est["prompt_tokens"] > 2000 and est["completion_tokens"] > 0
    assert est["cost"] == pytest.approx((est["prompt_tokens"] * 2 + est["completion_tokens"] * 8) / 1e6, rel=1e-6)
    assert agent["mode"] == "agent" and agent["model_calls"] > est["model_calls"]
    assert catalog["mode"] == "catalog" and catalog["prompt_tokens"] == 0 and catalog["cost"] == 0
    with pytest.raises(InputError, match="unknown mode 'fast'"):
        kb.estimates.question(QUESTION, "fast")


@pytest.mark.slow
def test_after_runs_the_estimate_is_their_average(tmp_path: Path, docs: Path):
    replies = []
    for prompt, completion in ((1000, 40), (1400, 60), (1300, 50)):
        replies += [{"text": ANSWER, "usage": (prompt, completion)}, {"text": "VERIFIED", "usage": (500, 5)}]
    with ScriptedServer(replies) as server, _kb(tmp_path, docs, server) as kb:
        for _ in range(3):
            assert kb.ask(QUESTION).status == "SUCCESS"
        est = kb.estimates.question(QUESTION)
        runs = kb.log.runs()
    assert est["basis"] == "runs" and est["runs"] == 3 and est["mode"] == "pipeline" and est["model"] == "scripted"
    assert (est["prompt_tokens"], est["completion_tokens"], est["model_calls"]) == (1733, 55, 2)  # (1500 + 1900 + 1800) / 3, (45 + 65 + 55) / 3
    seconds = [r.timings["total"] for r in runs]
    assert est["seconds"] == pytest.approx(sum(seconds) / 3, abs=1e-3)
    assert est["seconds_range"] == [pytest.approx(min(seconds), abs=1e-3), pytest.approx(max(seconds), abs=1e-3)] \
        or tuple(est["seconds_range"]) == pytest.approx((min(seconds), max(seconds)), abs=1e-3)
    assert est["cost"] == 0.0 and est["chat"]["local"] is True  # a model on this machine, no prices: free
    assert not any("defaults" in n for n in est["notes"])


def test_a_remote_model_without_prices_has_no_cost(tmp_path: Path, docs: Path):
    with _kb(tmp_path, docs, None) as kb:
        kb.settings.llm.provider, kb.settings.llm.base_url = "openai", "https://api.example.com/v1"
        kb.models.choose_again()  # choose again from the changed settings (a remote server, never called)
        est = kb.estimates.question(QUESTION, "pipeline")
    assert est["chat"]["local"] is False and est["cost"] is None
    assert any("llm.prompt_price" in n for n in est["notes"])


def test_without_a_model_every_question_is_extractive(tmp_path: Path, docs: Path):
    with _kb(tmp_path, docs, None) as kb:
        est = kb.estimates.question(QUESTION, "agent")
    assert est["mode"] == "extractive" and est["model"] is None and est["model_calls"] == 0 and est["cost"] == 0


def test_estimating_reads_the_log_so_a_reader_is_refused(tmp_path: Path, docs: Path):
    with _kb(tmp_path, docs, None) as kb:
        with pytest.raises(PermissionDeniedError, match="read the question-and-answer log"):
            kb.estimates.question(QUESTION, principal=Principal("reader", remote=True))
        with pytest.raises(PermissionDeniedError, match="add and remove documents"):
            kb.estimates.ingest(docs, principal=Principal("reader", remote=True))
        with pytest.raises(PermissionDeniedError, match="not under a folder in api.ingest_roots"):
            kb.estimates.ingest(tmp_path, principal=Principal("editor", remote=True))
        assert kb.estimates.ingest(docs, principal=Principal("editor", remote=True))["files"] == 1


@pytest.mark.slow
def test_cli_estimate_for_a_question_and_for_a_folder(tmp_path: Path, docs: Path):
    kb = tmp_path / "kb.db"
    assert docqa(tmp_path, "--kb", str(kb), "add", str(docs), DOCQA_EMBED__PROVIDER="none").returncode == 0
    with ScriptedServer() as server:
        proc = docqa(tmp_path, "--kb", str(kb), "estimate", QUESTION, "--mode", "pipeline",
                     DOCQA_LLM__BASE_URL=server.base_url, DOCQA_LLM__MODEL="scripted", DOCQA_EMBED__PROVIDER="none")
        shown = docqa(tmp_path, "--kb", str(kb), "estimate", QUESTION, "--json",
                      DOCQA_LLM__BASE_URL=server.base_url, DOCQA_LLM__MODEL="scripted", DOCQA_EMBED__PROVIDER="none")
    assert proc.returncode == 0, proc.stderr
    assert "per question, pipeline mode, scripted" in proc.stdout and "estimated from defaults" in proc.stdout
    assert json.loads(shown.stdout)["basis"] == "defaults"
    folder = docqa(tmp_path, "estimate", "--ingest", str(docs), "--json", DOCQA_EMBED__PROVIDER="none")
    data = json.loads(folder.stdout)
    assert data["files"] == 1 and data["chunks"] >= 1 and data["embedder"] is None and data["embed_tokens"] == 0
    paid = docqa(tmp_path, "estimate", "--ingest", str(docs), "--json", DOCQA_EMBED__PROVIDER="openai",
                 DOCQA_EMBED__MODEL="text-embedding-3-small", DOCQA_EMBED__BASE_URL="https://api.example.com/v1",
                 DOCQA_EMBED__PRICE="0.02")
    priced = json.loads(paid.stdout)
    assert priced["embed_tokens"] > 0 and priced["embed_cost"] == pytest.approx(priced["embed_tokens"] * 0.02 / 1e6, abs=1e-4)
