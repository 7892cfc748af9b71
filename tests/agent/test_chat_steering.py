"""`docqa chat` in a terminal: what the user types while the agent works steers it, and a
'+question' line is asked after the answer (a real pseudo-terminal, a real subprocess)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import time

import pytest

from llm.scripted_server import ScriptedServer  # tests/ is on sys.path (rootdir conftest)

OPS = "# Operations\n\n## Backups\n\nBackups are kept for 35 days.\n\n## Passwords\n\nPasswords need 14 characters.\n"


def call(name: str, **arguments) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


@pytest.mark.slow
def test_typing_while_the_agent_works_steers_it(tmp_path):
    (tmp_path / "ops.md").write_text(OPS, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    env.update(DOCQA_EMBED__PROVIDER="none", DOCQA_KB=str(tmp_path / "kb.db"))
    subprocess.run([sys.executable, "-m", "docqa", "add", str(tmp_path / "ops.md")], env=env, check=True,
                   capture_output=True)
    script = [{**call("search_docs", query="backups"), "delay": 2.0},
              call("answer", text="Passwords need 14 characters [2]."),
              call("search_docs", query="backups kept"), call("answer", text="Backups are kept for 35 days [1].")]
    with ScriptedServer(script) as server:
        env.update(DOCQA_LLM__BASE_URL=server.base_url, DOCQA_LLM__MODEL="scripted", DOCQA_AGENT__CHECK="false")
        master, slave = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "docqa", "chat", "--mode", "agent"], stdin=slave,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        os.close(slave)
        os.write(master, b"What are the rules?\n")
        time.sleep(1.0)  # the model is thinking (its reply is delayed 2 s)
        os.write(master, b"look at passwords instead\n+How long are backups kept?\n")
        deadline = time.time() + 60
        while len(server.requests) < 4 and time.time() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)
        os.write(master, b"/exit\n")
        out, err = proc.communicate(timeout=60)
        os.close(master)
    second = server.requests[1]["messages"]
    assert any("look at passwords instead" in (m.get("content") or "") for m in second), second
    # the steered answer reached the model; the acceptance rule did not publish it ("What are the rules?" has no
    # passage that answers it well enough), so it is not printed: only published answers are (issue 28, item 5)
    assert "model's answer was not published" in err.decode() and "Passwords need 14 characters" not in out.decode()
    assert "35 days" in out.decode(), err.decode()
    assert b"steering: look at passwords instead" in err and b"follow-up queued" in err
