"""`docqa feedback` and `docqa log` as a user runs them, on runs written through the store."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from docqa.store import SQLiteStores
from docqa.types import FAILED, SUCCESS, RunRecord


def docqa(kb: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    env["DOCQA_EMBED__PROVIDER"] = "none"  # the log needs no embedding model
    env["COLUMNS"] = "200"
    proc = subprocess.run([sys.executable, "-m", "docqa", "--kb", str(kb), *args], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == code, proc.stderr
    return proc


@pytest.fixture
def kb(tmp_path) -> Path:
    path = tmp_path / "kb.db"
    with SQLiteStores(path) as store:
        store.runlog.save_run(RunRecord(
            id="good", session_id="s1", question="How often are backups made?", status=SUCCESS, mode="pipeline",
            answerable=True, confidence="high", answer="Every night at 02:00 [1].",
            result={"answer": "Every night at 02:00 [1].", "citations": [{"n": 1, "path": "/docs/ops.md"}]},
            trace=[{"stage": "retrieve", "hits": 3}], timings={"total": 1.2}, created_at="2026-01-30T09:00:00.000+00:00"))
        store.runlog.save_run(RunRecord(
            id="unknown", session_id="s1", question="What is the office wifi password?", status=SUCCESS,
            mode="pipeline", answerable=False, confidence="low", answer="The documents do not say.",
            created_at="2026-01-31T09:00:00.000+00:00"))
        store.runlog.save_run(RunRecord(
            id="broken", session_id="s2", question="Who approves releases?", status=FAILED,
            error="the chat model did not answer", created_at="2026-01-31T10:00:00.000+00:00"))
    return path


@pytest.mark.slow
def test_feedback_then_attention(kb):
    proc = docqa(kb, "feedback", "good", "down", "--comment", "the time changed to 03:00")
    assert "recorded 'down'" in proc.stdout
    record = json.loads(docqa(kb, "feedback", "good", "UP", "--json").stdout)
    assert record["run_id"] == "good" and record["rating"] == "up" and record["comment"] is None
    rows = [json.loads(line) for line in docqa(kb, "log", "--attention", "--format", "jsonl").stdout.splitlines()]
    reasons = {r["run_id"]: r["reason"] for r in rows}
    assert reasons == {
        "broken": "failed: the chat model did not answer",
        "unknown": "not answered: the documents do not seem to hold it",
        "good": "rated down: the time changed to 03:00",
    }
    assert [r["run_id"] for r in rows] == ["broken", "unknown", "good"]  # newest first


@pytest.mark.slow
def test_feedback_errors(kb):
    missing = docqa(kb, "feedback", "nope", "up", code=1)
    assert "no run 'nope'" in missing.stderr and "docqa log" in missing.stderr
    bad = docqa(kb, "feedback", "good", "meh", code=1)
    assert "'up' or 'down'" in bad.stderr


@pytest.mark.slow
def test_log_table_and_since(kb):
    out = docqa(kb, "log").stdout
    assert "How often are backups made?" in out and "Every night at 02:00" in out and "3 question(s)" in out
    assert "2026-01-31 10:00" in out and "broken" in out
    recent = docqa(kb, "log", "--since", "2026-01-31").stdout
    assert "backups" not in recent and "2 question(s)" in recent
    attention = docqa(kb, "log", "--attention").stdout
    assert "not answered" in attention and "2 question(s) need attention" in attention
    bad = docqa(kb, "log", "--since", "last tuesday", code=1)
    assert "since must be a date" in bad.stderr
    assert "unknown format" in docqa(kb, "log", "--format", "xml", code=2).stderr


@pytest.mark.slow
def test_log_exports_to_files(kb, tmp_path):
    target = tmp_path / "log.csv"
    proc = docqa(kb, "log", "--format", "csv", "--output", str(target))
    assert proc.stdout == "" and str(target) in proc.stderr
    rows = list(csv.DictReader(io.StringIO(target.read_text(encoding="utf-8"))))
    assert [r["run_id"] for r in rows] == ["broken", "unknown", "good"] and rows[2]["sources"] == "/docs/ops.md"
    markdown = docqa(kb, "log", "--attention", "--format", "md").stdout
    assert markdown.startswith("# Questions that need attention") and "Who approves releases?" in markdown
    table = tmp_path / "log.txt"
    docqa(kb, "log", "-o", str(table))
    assert "What is the office wifi password?" in table.read_text(encoding="utf-8")


@pytest.mark.slow
def test_log_run_prints_the_audit_record(kb, tmp_path):
    record = json.loads(docqa(kb, "log", "--run", "good").stdout)
    assert record["trace"] == [{"stage": "retrieve", "hits": 3}] and record["timings"] == {"total": 1.2}
    assert record["result"]["citations"][0]["path"] == "/docs/ops.md" and record["feedback"] == []
    missing = docqa(kb, "log", "--run", "nope", code=1)
    assert "docqa log" in missing.stderr
    target = tmp_path / "never.json"
    docqa(kb, "log", "--run", "nope", "--output", str(target), code=1)
    assert not target.exists()  # nothing is written when the run is unknown


@pytest.mark.slow
def test_empty_log(tmp_path):
    SQLiteStores(str(tmp_path / "kb.db")).close()  # 'docqa log' reads a knowledge base: it creates none
    assert "no questions asked yet" in docqa(tmp_path / "kb.db", "log").stdout
    assert "nothing needs attention" in docqa(tmp_path / "kb.db", "log", "--attention").stdout
