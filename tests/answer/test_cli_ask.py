"""`docqa ask`, `docqa chat` and `docqa eval` as a user runs them: real subprocesses, a real
knowledge base, the scripted model server on loopback."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import time
import sys
import termios
from pathlib import Path

import pytest

from llm.scripted_server import ScriptedServer  # tests/ is on sys.path (rootdir conftest)

DOC = """# Operations

## Backups

The database is backed up every 6 hours to object storage.
Backups are kept for 35 days.
"""


def _env(llm: str | None, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    if llm:
        env.update(DOCQA_LLM__BASE_URL=llm, DOCQA_LLM__MODEL="scripted", DOCQA_LLM__MAX_RETRIES="0", DOCQA_LLM__TIMEOUT="5")
    else:
        env["DOCQA_LLM__PROVIDER"] = "none"
    return {**env, **settings}


def docqa(kb: Path, *args: str, llm: str | None = None, stdin: str | None = None, ok: bool = True,
          cwd: Path | None = None, **settings: str) -> subprocess.CompletedProcess:
    env = _env(llm, **settings)
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_ask_streams_the_answer_then_its_sources(kb):
    with ScriptedServer([{"text": "Backups are kept for 35 days [1]."}, {"text": "VERIFIED"}]) as server:
        proc = docqa(kb, "ask", "How long are backups kept?", llm=server.base_url)
    assert proc.stdout.startswith("Backups are kept for 35 days [1].")
    assert "Sources" in proc.stdout and "[source: ops.md §Backups, L" in proc.stdout
    assert "verified" in proc.stderr and "docqa feedback" in proc.stderr


@pytest.mark.slow
def test_ask_without_a_model_says_so_and_extracts(kb):
    proc = docqa(kb, "ask", "How long are backups kept?")
    assert "35 days" in proc.stdout
    assert "llm.provider is 'none'" in proc.stderr


@pytest.mark.slow
def test_model_failure_is_a_clean_message_not_a_traceback(kb):
    with ScriptedServer([{"status": 500}]) as server:
        proc = docqa(kb, "ask", "How long are backups kept?", llm=server.base_url)
    assert "refused the request" in proc.stderr and "Traceback" not in proc.stderr
    assert "35 days" in proc.stdout  # the extractive fallback still answers


@pytest.mark.slow
def test_empty_question_is_refused(kb):
    proc = docqa(kb, "ask", "  ", ok=False)
    assert proc.returncode == 1 and "the question is empty" in proc.stderr


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_ctrl_c_cancels_the_run_and_records_it(kb):
    import signal

    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings

    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    with ScriptedServer([{"text": "Backups are kept for 35 days [1]. " * 40, "chunk_delay": 0.05}]) as server:
        env.update(DOCQA_LLM__BASE_URL=server.base_url, DOCQA_LLM__MODEL="scripted", DOCQA_LLM__MAX_RETRIES="0")
        # Ctrl-C as in a terminal: a suite run in the background (nohup, `&`) ignores SIGINT, and an ignored
        # signal stays ignored across exec; the child gets the default back, as a shell's foreground job has it.
        proc = subprocess.Popen([sys.executable, "-m", "docqa", "--kb", str(kb), "ask", "How long are backups kept?"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        # wait until the model is streaming its draft (nothing reaches stdout before the checked answer)
        deadline = time.monotonic() + 120
        while not server.requests and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.requests, "the run never reached the model"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        calls = len(server.requests)
    assert proc.returncode == 130 and b"cancelled" in err and calls == 1, err.decode()
    assert out == b""  # the draft that streamed before Ctrl-C was never checked: it is not printed as an answer
    with KnowledgeBase(Settings(kb=str(kb), embed={"provider": "none"}, llm={"provider": "none"}), embedder=None) as base:
        last = base.log.runs(limit=1)[0]
    assert last.question == "How long are backups kept?" and last.status == "CANCELLED" and last.finished_at


# -- drafts are not answers (issue 28) ---------------------------------------------------------------
REJECTED_FIRST = [{"text": "Backups are kept for 40 days [1].", "chunk_delay": 0.05},
                  {"text": "Backups are kept for 35 days [1]."}, {"text": "VERIFIED"}]


def test_piped_only_the_checked_answer_is_printed(kb):
    with ScriptedServer(REJECTED_FIRST) as server:
        proc = docqa(kb, "ask", "How long are backups kept?", llm=server.base_url)
        calls = len(server.requests)
    assert calls == 3 and proc.stdout.startswith("Backups are kept for 35 days [1].\n")
    assert "40 days" not in proc.stdout + proc.stderr and "revised" not in proc.stdout
    assert "pipeline · verified" in proc.stderr


@pytest.mark.parametrize("reply", ["NOT_FOUND", "NOT_FOUND.", "The sources do not say who approves it. NOT_FOUND"])
def test_a_not_found_reply_prints_the_not_found_answer_and_no_token(kb, reply):
    with ScriptedServer([{"text": reply}] * 3) as server:
        proc = docqa(kb, "ask", "Who approves the backup policy?", llm=server.base_url, DOCQA_ANSWER__ACCEPT_SHARE="0")
        calls = len(server.requests)
    assert calls == 1 and proc.stdout.startswith("The documents do not contain an answer")
    assert "not found in the documents" in proc.stderr
    assert not re.search(r"(?i:NOT_FOUND)|NOT FOUND", proc.stdout + proc.stderr)


def test_not_found_from_the_model_over_good_evidence_quotes_the_documents(kb):
    with ScriptedServer([{"text": "NOT_FOUND"}]) as server:
        proc = docqa(kb, "ask", "How long are backups kept?", llm=server.base_url)
    assert "Backups are kept for 35 days." in proc.stdout and "NOT_FOUND" not in proc.stdout + proc.stderr


_CSI = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])|\x1b\][^\x1b\x07]*(?:\x1b\\|\x07)")


def screen(raw: str, columns: int = 80) -> list[str]:
    """What is left on a terminal after `raw` was written to it: the cursor moves and line erases
    that a transient area (rich's Live) uses are applied, colours and links dropped."""
    rows: list[list[str]] = [[]]
    r = c = 0
    i = 0
    while i < len(raw):
        m = _CSI.match(raw, i) if raw[i] == "\x1b" else None
        if m is not None:
            arg, op = m.group(1), m.group(2)
            if op == "A":
                r = max(0, r - int(arg or 1))
            elif op == "K" and arg == "2":
                rows[r] = []
            elif op == "K":
                del rows[r][c:]
            i = m.end()
            continue
        ch = raw[i]
        i += 1
        if ch == "\r":
            c = 0
            continue
        if ch == "\n" or c >= columns:
            r, c = r + 1, 0
            while len(rows) <= r:
                rows.append([])
            if ch == "\n":
                continue
        row = rows[r]
        row.extend(" " * (c + 1 - len(row)))
        row[c] = ch
        c += 1
    return ["".join(row).rstrip() for row in rows]


def in_terminal(kb: Path, *args: str, llm: str) -> str:
    """`docqa` in a pseudo-terminal 80 columns wide: all it wrote (stdout and stderr)."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 80, 0, 0))
    env = {**_env(llm), "TERM": "xterm-256color"}
    env.pop("COLUMNS", None)
    proc = subprocess.Popen([sys.executable, "-m", "docqa", "--kb", str(kb), *args], stdin=subprocess.DEVNULL,
                            stdout=child, stderr=child, env=env, close_fds=True)
    os.close(child)
    chunks = []
    while True:
        ready, _, _ = select.select([main], [], [], 120)
        if not ready:
            proc.kill()
            raise AssertionError("docqa wrote nothing for 120 s")
        try:
            data = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    assert proc.wait(timeout=60) == 0, b"".join(chunks).decode()
    return b"".join(chunks).decode()


def test_in_a_terminal_the_draft_is_shown_as_a_draft_then_gives_way_to_the_checked_answer(kb):
    with ScriptedServer(REJECTED_FIRST) as server:
        raw = in_terminal(kb, "ask", "How long are backups kept?", llm=server.base_url)
    plain = _CSI.sub("", raw)
    assert "drafting…" in plain and "draft 1, not checked yet" in plain  # shown while it was written...
    assert "Backups are kept for 40 days" in plain
    shown = screen(raw)
    assert "Backups are kept for 35 days [1]." in shown  # ...and what is left is the checked answer
    assert "Sources" in shown and any("pipeline · verified" in line for line in shown)
    left = [line for line in shown if "40 days" in line]  # (not "40": a run id may hold it)
    assert len(left) == 1 and left[0].startswith("draft 1 rejected by the fact-check:"), shown
    assert not any("not checked yet" in line or "drafting…" in line for line in shown), shown
