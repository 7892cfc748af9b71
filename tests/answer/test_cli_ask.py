"""`docqa ask`, `docqa chat` and `docqa eval` as a user runs them: real subprocesses, a real
knowledge base, the scripted model server on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from llm.scripted_server import ScriptedServer  # tests/ is on sys.path (rootdir conftest)

DOC = """# Operations

## Backups

The database is backed up every 6 hours to object storage.
Backups are kept for 35 days.
"""


def docqa(kb: Path, *args: str, llm: str | None = None, stdin: str | None = None, ok: bool = True,
          cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    if llm:
        env.update(DOCQA_LLM__BASE_URL=llm, DOCQA_LLM__MODEL="scripted", DOCQA_LLM__MAX_RETRIES="0", DOCQA_LLM__TIMEOUT="5")
    else:
        env["DOCQA_LLM__PROVIDER"] = "none"
    proc = subprocess.run([sys.executable, "-m", "docqa", "--kb", str(kb), *args], capture_output=True, text=True,
                          env=env, timeout=300, input=stdin, cwd=cwd)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def kb(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ask")
    (root / "ops.md").write_text(DOC, encoding="utf-8")
    db = root / "kb.db"
    docqa(db, "add", str(root / "ops.md"))
    return db


def test_ask_json_shape(kb):
    with ScriptedServer([{"text": "Backups are kept for 35 days [1]."}, {"text": "VERIFIED"}]) as server:
        result = json.loads(docqa(kb, "ask", "How long are backups kept?", "--json", llm=server.base_url).stdout)
    for key in ("run_id", "session_id", "status", "answerable", "answer", "citations", "verification", "confidence",
                "key_points", "retrieval", "timings", "usage"):
        assert key in result, key
    assert result["status"] == "SUCCESS" and result["answerable"] is True
    citation = result["citations"][0]
    assert set(citation) >= {"n", "chunk_id", "path", "section", "page", "line_start", "line_end", "char_start", "char_end", "quote"}
    assert citation["quote"] == "Backups are kept for 35 days."
    assert result["verification"]["status"] == "VERIFIED"
    assert result["retrieval"]["query"] == "How long are backups kept?" and result["retrieval"]["hits"]


def test_ask_streams_the_answer_then_its_sources(kb):
    with ScriptedServer([{"text": "Backups are kept for 35 days [1]."}, {"text": "VERIFIED"}]) as server:
        proc = docqa(kb, "ask", "How long are backups kept?", llm=server.base_url)
    assert proc.stdout.startswith("Backups are kept for 35 days [1].")
    assert "Sources" in proc.stdout and "[source: ops.md §Backups, L" in proc.stdout
    assert "verified" in proc.stderr and "docqa feedback" in proc.stderr


def test_ask_without_a_model_says_so_and_extracts(kb):
    proc = docqa(kb, "ask", "How long are backups kept?")
    assert "35 days" in proc.stdout
    assert "llm.provider is 'none'" in proc.stderr


def test_model_failure_is_a_clean_message_not_a_traceback(kb):
    with ScriptedServer([{"status": 500}]) as server:
        proc = docqa(kb, "ask", "How long are backups kept?", llm=server.base_url)
    assert "refused the request" in proc.stderr and "Traceback" not in proc.stderr
    assert "35 days" in proc.stdout  # the extractive fallback still answers


def test_empty_question_is_refused(kb):
    proc = docqa(kb, "ask", "  ", ok=False)
    assert proc.returncode == 1 and "the question is empty" in proc.stderr


def test_chat_understands_follow_ups_and_feedback_is_recorded(kb):
    proc = docqa(kb, "chat", stdin="How often is the database backed up?\nhow long are they kept?\n/exit\n")
    assert "6 hours" in proc.stdout and "35 days" in proc.stdout
    logged = [json.loads(line) for line in docqa(kb, "log", "--format", "jsonl").stdout.splitlines()]
    chat_runs = [r for r in logged if r["question"] in ("How often is the database backed up?", "how long are they kept?")]
    assert len(chat_runs) == 2 and chat_runs[0]["session_id"] == chat_runs[1]["session_id"]
    last = json.loads(docqa(kb, "ask", "How long are backups kept?", "--json").stdout)
    docqa(kb, "feedback", last["run_id"], "down", "--comment", "too short")
    attention = [json.loads(line) for line in docqa(kb, "log", "--attention", "--format", "jsonl").stdout.splitlines()]
    assert any(r["run_id"] == last["run_id"] and "too short" in json.dumps(r) for r in attention)


def test_eval_reports_accuracy_and_abstention(kb, tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text("\n".join(json.dumps(q) for q in [
        {"question": "How long are backups kept?", "answers": ["35 days"], "is_impossible": False,
         "context": "Backups are kept for 35 days."},
        {"question": "Which team won the 1998 football world cup?", "answers": [], "is_impossible": True},
    ]), encoding="utf-8")
    summary = json.loads(docqa(kb, "eval", str(questions), "--json").stdout)
    assert summary["questions"] == 2 and summary["answer_accuracy"] == 1.0
    assert summary["abstention_accuracy"] == 1.0 and summary["citation_accuracy"] == 1.0
    assert "total" in summary["latency"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"q": 1}\n', encoding="utf-8")
    proc = docqa(kb, "eval", str(bad), ok=False)
    assert proc.returncode == 1 and "bad.jsonl:1" in proc.stderr


def test_ctrl_c_cancels_the_run_and_records_it(kb):
    import signal
    import time

    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings

    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    with ScriptedServer([{"text": "Backups are kept for 35 days [1]. " * 40, "chunk_delay": 0.05}]) as server:
        env.update(DOCQA_LLM__BASE_URL=server.base_url, DOCQA_LLM__MODEL="scripted", DOCQA_LLM__MAX_RETRIES="0")
        proc = subprocess.Popen([sys.executable, "-m", "docqa", "--kb", str(kb), "ask", "How long are backups kept?"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        deadline = time.time() + 60
        while not server.requests and time.time() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)  # the answer is streaming
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        calls = len(server.requests)
    assert proc.returncode == 130 and b"cancelled" in err and calls == 1
    assert b"Backups are kept" in out  # what streamed before Ctrl-C was shown
    with KnowledgeBase(Settings(kb=str(kb), embed={"provider": "none"}, llm={"provider": "none"}), embedder=None) as base:
        last = base.log.runs(limit=1)[0]
    assert last.question == "How long are backups kept?" and last.status == "CANCELLED" and last.finished_at
