"""`docqa log` and `docqa recheck` as a user runs them: an answer goes stale when its file is edited and
added again; the log shows it (table, --stale, jsonl, --attention) and recheck says what changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

def docqa(kb: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess:
    """The CLI as a user runs it, offline: extractive answers, BM25 (no model of the machine answers)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    env |= {"DOCQA_EMBED__PROVIDER": "none", "DOCQA_LLM__PROVIDER": "none", "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, "-m", "docqa", "--kb", str(kb), *args], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == code, proc.stderr
    return proc


DB = "# Database\n\nThe database listens on port 5432 by default.\n\nBackups run every night at 02:00.\n"


@pytest.mark.slow
def test_an_edited_file_makes_its_answer_stale_in_the_log_and_recheck_shows_the_diff(tmp_path: Path):
    kb, folder = tmp_path / "kb.db", tmp_path / "docs"
    folder.mkdir()
    (folder / "db.md").write_text(DB, encoding="utf-8")
    docqa(kb, "add", str(folder))
    port = json.loads(docqa(kb, "ask", "Which port does the database listen on?", "--json").stdout)["run_id"]
    backups = json.loads(docqa(kb, "ask", "When do backups run?", "--json").stdout)["run_id"]
    assert docqa(kb, "log", "--stale").stdout.startswith("no questions asked yet")
    (folder / "db.md").write_text(DB.replace("5432", "6543"), encoding="utf-8")
    docqa(kb, "add", str(folder))

    rows = {r["run_id"]: r for r in map(json.loads, docqa(kb, "log", "-f", "jsonl").stdout.splitlines())}
    assert rows[port]["stale"] is True and rows[backups]["stale"] is False
    stale = [json.loads(line)["run_id"] for line in docqa(kb, "log", "--stale", "-f", "jsonl").stdout.splitlines()]
    assert stale == [port]
    table = docqa(kb, "log").stdout
    assert table.count("stale 20") == 1 and "stale" in table.splitlines()[0]
    attention = [json.loads(line) for line in docqa(kb, "log", "--attention", "-f", "jsonl").stdout.splitlines()]
    assert [(r["run_id"], r["attention"]) for r in attention] == [(port, ["stale"])]
    assert json.loads(docqa(kb, "log", "--run", port).stdout)["stale"] is True

    checked = json.loads(docqa(kb, "recheck", port, "--json", code=1).stdout)
    assert checked["verdict"] == "contradicted" and checked["run_id"] == port
    source = checked["claims"][0]["sources"][0]
    assert source["verdict"] == "contradicted" and "6543" in source["new"] and source["location"]["line_start"] == 3
    text = docqa(kb, "recheck", "--stale", code=1).stdout
    assert "contradicted" in text and "5432" in text and "6543" in text and "db.md:3" in text
    assert "stale 20" in docqa(kb, "log", "--wide").stdout and "contradicted" in docqa(kb, "log", "--wide").stdout
    assert json.loads(docqa(kb, "recheck", backups, "--json").stdout)["verdict"] == "supported"  # exit 0
    docqa(kb, "recheck", code=2)  # neither a run nor --stale
