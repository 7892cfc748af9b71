"""Runs never left running: a run whose process died is marked FAILED, with the reason, the next time the
knowledge base is opened — tested with a real `docqa ask` process killed while the model is answering."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from docqa.kb import KnowledgeBase
from docqa.run import owner
from docqa.settings import Settings
from docqa.types import FAILED, RUNNING, RunRecord
from llm.scripted_server import ScriptedServer
from store.backends import BACKENDS, kb_url

OPS = "# Operations\n\n## Backups\n\nBackups are kept for 35 days.\n"


@pytest.fixture(params=BACKENDS)
def kb_at(request, tmp_path) -> str:
    """A fresh knowledge base of each backend: a SQLite file, a PostgreSQL database."""
    return kb_url(request.param, request, tmp_path)


def _settings(url: str) -> Settings:
    return Settings(kb=url, embed={"provider": "none"}, llm={"provider": "none"})


@pytest.mark.slow
def test_a_killed_ask_leaves_a_failed_run_not_a_running_one(tmp_path, kb_at):
    (tmp_path / "ops.md").write_text(OPS, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    env.update(DOCQA_EMBED__PROVIDER="none", DOCQA_KB=kb_at)
    subprocess.run([sys.executable, "-m", "docqa", "add", str(tmp_path / "ops.md")], env=env, check=True,
                   capture_output=True)
    with ScriptedServer([{"text": "Backups are kept for 35 days [1].", "delay": 60}]) as server:
        env.update(DOCQA_LLM__BASE_URL=server.base_url, DOCQA_LLM__MODEL="scripted")
        proc = subprocess.Popen([sys.executable, "-m", "docqa", "ask", "How long are backups kept?",
                                 "--mode", "pipeline"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while not server.requests and time.time() < deadline:  # the run is recorded, the model is answering
            time.sleep(0.1)
        assert server.requests, "the ask never reached the model"
        with KnowledgeBase(_settings(kb_at)) as kb:  # opened while it runs: a live run is left alone
            (run,) = kb.store.runlog.list_runs()
            assert run.status == RUNNING and run.owner.split("/")[1] == str(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    with KnowledgeBase(_settings(kb_at)) as kb:
        (run,) = kb.store.runlog.list_runs()
        assert run.status == FAILED and run.finished_at
        assert f"pid {proc.pid}" in run.error and "killed or crashed" in run.error
        (row,) = kb.log.qa_log(attention=True)  # `docqa log --attention` shows it
        assert row["run_id"] == run.id and row["reason"].startswith("failed: the process answering")


def test_only_runs_of_dead_processes_on_this_host_are_reaped(kb_at):
    me = owner.current()
    host, pid, start = me.split("/")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    owners = {"mine": me, "recycled": f"{host}/{pid}/{int(start or 0) + 1}" if start else None,
              "dead": f"{host}/{dead.pid}/", "elsewhere": f"another-host/{pid}/{start}", "unknown": None}
    with KnowledgeBase(_settings(kb_at)) as kb:
        for name, who in owners.items():
            kb.store.runlog.save_run(RunRecord(id=name, session_id="s", question=name, owner=who))
    with KnowledgeBase(_settings(kb_at)) as kb:
        status = {run.id: run.status for run in kb.store.runlog.list_runs()}
    expected = {"mine": RUNNING, "dead": FAILED, "elsewhere": RUNNING, "unknown": RUNNING}
    if start:  # /proc tells a recycled pid from the process that recorded the run
        expected["recycled"] = FAILED
    assert {k: status[k] for k in expected} == expected


@pytest.mark.slow
def test_a_run_another_process_answers_out_of_reach_is_said_so(kb_at):
    """`docqa run cancel` on a run a process answers that no cluster reaches (a `docqa ask`, here this test's
    own process): refused, naming that process, not called 'not running'."""
    with KnowledgeBase(_settings(kb_at)) as kb:
        kb.store.runlog.save_run(RunRecord(id="theirs", session_id="s", question="q", owner=owner.current()))
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    env.update(DOCQA_EMBED__PROVIDER="none", DOCQA_KB=kb_at)
    refused = subprocess.run([sys.executable, "-m", "docqa", "run", "cancel", "theirs"], env=env, capture_output=True,
                             text=True, timeout=120)
    missing = subprocess.run([sys.executable, "-m", "docqa", "run", "steer", "nothing", "be brief"], env=env,
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1 and f"answered by another process (pid {os.getpid()})" in refused.stderr
    assert missing.returncode == 1 and "no run 'nothing'" in missing.stderr
    with KnowledgeBase(_settings(kb_at)) as kb:
        assert kb.log.run("theirs").status == RUNNING  # nothing was done to it
