"""`docqa model status`, `docqa config lint` on URLs, and the chat model said once: real subprocesses,
the scripted OpenAI-compatible server on loopback as the model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .scripted_server import ScriptedServer

DOC = "# Operations\n\n## Backups\n\nThe database is backed up every 6 hours.\nBackups are kept for 35 days.\n"


def docqa(*args: str, cwd: Path, env: dict[str, str] | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("DOCQA_", "OPENAI_")) and k != "OLLAMA_HOST"}
    clean.update({"OLLAMA_HOST": "127.0.0.1:9", "DOCQA_EMBED__PROVIDER": "none", **(env or {})})
    return subprocess.run([sys.executable, "-m", "docqa", *args], capture_output=True, text=True, env=clean,
                          cwd=cwd, timeout=300, input=stdin)


@pytest.mark.slow
def test_model_status_when_not_installed(tmp_path):
    proc = docqa("model", "status", cwd=tmp_path, env={"DOCQA_LLM__MODELS_DIR": str(tmp_path / "models")})
    assert proc.returncode == 1, proc.stderr
    lines = dict(line.split(":", 1) for line in proc.stdout.splitlines())
    assert lines["model"].strip().startswith("qwen2.5-coder-1.5b")
    assert lines["file"].strip() == f"{tmp_path / 'models' / 'qwen2.5-coder-1.5b-instruct-q4_k_m.gguf'} (no file)"
    assert lines["sha256"].strip().startswith("no file") and lines["serving"].strip() == "no"
    assert lines["status"].strip().startswith("not installed:") and "docqa model install" in lines["status"]
    data = json.loads(docqa("model", "status", "--json", cwd=tmp_path,
                            env={"DOCQA_LLM__MODELS_DIR": str(tmp_path / "models")}).stdout)
    assert data["installed"] is False and data["size"] is None and data["serving"] is None
    assert "docqa model install" in data["problem"]


@pytest.mark.slow
def test_config_lint_names_file_key_value_and_reason_for_a_bad_url(tmp_path):
    (tmp_path / "docqa.yml").write_text("llm:\n  base_url: htp://127.0.0.1:8080/v1\nembed:\n  base_url: http://:11434\n")
    proc = docqa("config", "lint", cwd=tmp_path, env={"OLLAMA_HOST": "htp://box"})
    assert proc.returncode == 1
    assert ('docqa.yml: llm.base_url: not a URL docqa can call: it must start with http:// or https:// '
            "(the scheme is 'htp') (got \"htp://127.0.0.1:8080/v1\")") in proc.stdout
    assert 'docqa.yml: embed.base_url: not a URL docqa can call: it has no host' in proc.stdout
    assert "env OLLAMA_HOST: not a URL docqa can call" in proc.stdout
    asked = docqa("ask", "anything", cwd=tmp_path)  # loading refuses it too, with the same reason
    assert asked.returncode == 2 and "llm.base_url: not a URL docqa can call" in asked.stderr


@pytest.mark.slow
def test_chat_uses_a_running_local_model_and_says_so_once(tmp_path):
    (tmp_path / "ops.md").write_text(DOC, encoding="utf-8")
    models = tmp_path / "models"
    models.mkdir()
    # the short-answer path (the chooser, the default, is tests/answer/test_choose.py): asked for the words
    env = {"DOCQA_LLM__MODELS_DIR": str(models), "DOCQA_LLM__MAX_RETRIES": "0", "DOCQA_ANSWER__CHOOSE_SENTENCE": "false"}
    assert docqa("--kb", str(tmp_path / "kb.db"), "add", str(tmp_path / "ops.md"), cwd=tmp_path, env=env).returncode == 0
    with ScriptedServer([lambda body: {"text": "1 | 35 days"}] * 20) as server:  # a small model
        (models / "server.json").write_text(json.dumps({"url": server.base_url, "pid": os.getpid()}))
        proc = docqa("--kb", str(tmp_path / "kb.db"), "chat", cwd=tmp_path, env=env,
                     stdin="How long are backups kept?\nHow often is the database backed up?\n")
    assert proc.returncode == 0, proc.stderr
    # the model gave "35 days" for both; it leads the first answer, not the second ("how often" asks for a
    # frequency: docqa.answer.kind), which quotes the documents instead
    first, second = proc.stdout.split("› How often is the database backed up?")
    assert "\n35 days [1]\n" in first and "Backups are kept for 35 days" in first
    assert "35 days [" not in second and "every 6 hours" in second
    assert len({r["messages"][-1]["content"] for r in server.requests}) >= 2
    assert proc.stderr.count("using the local model qwen2.5-coder-1.5b served by 'docqa model serve'") == 1
    assert "llm.provider: none" in proc.stderr
    assert {r["model"] for r in server.requests} == {"qwen2.5-coder-1.5b"}


@pytest.mark.slow
def test_ask_with_nothing_configured_says_how_to_get_a_model(tmp_path):
    (tmp_path / "ops.md").write_text(DOC, encoding="utf-8")
    env = {"DOCQA_LLM__MODELS_DIR": str(tmp_path / "models")}
    assert docqa("--kb", str(tmp_path / "kb.db"), "add", str(tmp_path / "ops.md"), cwd=tmp_path, env=env).returncode == 0
    proc = docqa("--kb", str(tmp_path / "kb.db"), "ask", "How long are backups kept?", cwd=tmp_path, env=env)
    assert proc.returncode == 0 and "35 days" in proc.stdout
    assert proc.stderr.count("no chat model configured") == 1 and "docqa model install" in proc.stderr
