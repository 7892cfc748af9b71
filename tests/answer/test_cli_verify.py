"""`docqa verify` as a user runs it: real subprocesses, a real knowledge base, the scripted model server on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from llm.scripted_server import ScriptedServer  # tests/ is on sys.path (rootdir conftest)

OPS = """# Operations

## Backups

The database is backed up every 6 hours to object storage.
Backups are kept for 35 days.
"""
HR = "# Leave\n\nEmployees get 25 days of paid leave a year.\n"


def docqa(kb: Path, *args: str, llm: str | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    env["DOCQA_EMBED__PROVIDER"] = "none"
    if llm:
        env.update(DOCQA_LLM__BASE_URL=llm, DOCQA_LLM__MODEL="scripted", DOCQA_LLM__MAX_RETRIES="0", DOCQA_LLM__TIMEOUT="5")
    else:
        env["DOCQA_LLM__PROVIDER"] = "none"
    return subprocess.run([sys.executable, "-m", "docqa", "--kb", str(kb), *args], capture_output=True, text=True,
                          env=env, timeout=300, input=stdin)


@pytest.fixture(scope="module")
def kb(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("verify")
    for folder, name, text in (("ops", "ops.md", OPS), ("hr", "hr.md", HR)):
        (root / folder).mkdir()
        (root / folder / name).write_text(text, encoding="utf-8")
    db = root / "kb.db"
    for folder in ("ops", "hr"):
        assert docqa(db, "add", str(root / folder), "-c", folder).returncode == 0
    return db


@pytest.mark.slow
def test_supported_text_exits_0_and_shows_each_claims_span(kb):
    proc = docqa(kb, "verify", "Backups are kept for 35 days. The database is backed up every 6 hours.")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "supported  Backups are kept for 35 days."
    assert "[source: ops.md §Backups, L6]" in lines[1] and "“Backups are kept for 35 days.”" in lines[1]
    assert "supported · 2 claim(s) · checked by deterministic" in proc.stderr


@pytest.mark.slow
def test_contradicted_text_exits_1_with_the_json_shape(kb):
    proc = docqa(kb, "verify", "Backups are kept for 90 days. Backups are copied to tape.", "--json")
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout)
    assert result["verdict"] == "contradicted"
    assert [(c["text"], c["verdict"]) for c in result["claims"]] == [
        ("Backups are kept for 90 days.", "contradicted"), ("Backups are copied to tape.", "not_found")]
    said = result["claims"][0]["citation"]
    assert said["quote"] == "Backups are kept for 35 days." and said["path"].endswith("ops.md") and said["line_start"] == 6
    assert result["claims"][1]["citation"] is None and result["claims"][0]["reasons"] == ["the passage gives 35, not 90"]


@pytest.mark.slow
def test_text_from_standard_input_and_one_collection(kb):
    claim = "Employees get 25 days of paid leave a year."
    assert docqa(kb, "verify", stdin=claim).returncode == 0
    scoped = docqa(kb, "verify", "-", "-c", "ops", "--json", stdin=claim)
    assert scoped.returncode == 1 and json.loads(scoped.stdout)["verdict"] == "not_found"
    assert json.loads(scoped.stdout)["collection"] == "ops"


@pytest.mark.slow
def test_nothing_to_check_is_a_clear_error(kb):
    proc = docqa(kb, "verify", "How long are backups kept?")
    assert proc.returncode == 1 and "nothing to check" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_the_configured_model_gives_its_verdict_unless_told_not_to(kb):
    with ScriptedServer([{"text": "REJECTED"}]) as server:
        asked = docqa(kb, "verify", "Backups are kept for 35 days.", "--json", llm=server.base_url)
        assert asked.returncode == 1, asked.stderr
        result = json.loads(asked.stdout)
        assert (result["verdict"], result["checker"]) == ("not_found", "deterministic+llm")
        (request,) = server.requests
        assert "Backups are kept for 35 days." in request["messages"][-1]["content"]
        unasked = docqa(kb, "verify", "Backups are kept for 35 days.", "--no-llm", llm=server.base_url)
        assert unasked.returncode == 0 and len(server.requests) == 1
    with ScriptedServer([{"text": "VERIFIED"}]) as server:
        confirmed = docqa(kb, "verify", "Yes", "--question", "Are backups kept for 35 days?", "--llm", llm=server.base_url)
        assert confirmed.returncode == 0 and "checked by deterministic+llm" in confirmed.stderr
        assert "Are backups kept for 35 days?" in server.requests[0]["messages"][-1]["content"]


@pytest.mark.slow
def test_help_names_both_switches_of_a_flag(kb):
    proc = docqa(kb, "verify", "--help")
    assert proc.returncode == 0 and "--llm / --no-llm" in proc.stdout and "[default: standard input]" in proc.stdout
