"""The first ten minutes on the command line (issue 33): a mistyped path creates nothing, Ctrl-C during
'add' says what was kept and how to resume (in a real pseudo-terminal), and 'eval' says in words what it
measured.  The real `docqa` in subprocesses."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
OFFLINE = {"DOCQA_EMBED__PROVIDER": "none", "DOCQA_LLM__PROVIDER": "none"}
ESCAPES = re.compile(r"\x1b\][^\x1b]*\x1b\\|\x1b\[[0-9;?]*[A-Za-z]")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_") and k not in ("COLUMNS", "LINES")}
    return {**env, **OFFLINE, "HOME": str(home), "TERM": "xterm-256color"}


def docqa(kb: Path, *args: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "docqa", "--kb", str(kb), *args], capture_output=True, text=True,
                          env=_env(home), timeout=300)


@pytest.mark.slow
def test_add_of_a_missing_path_refuses_before_creating_anything(tmp_path):
    kb = tmp_path / "kb.db"
    proc = docqa(kb, "add", str(tmp_path / "no-such-folder"), home=tmp_path)
    assert proc.returncode == 1 and "no such file or folder" in proc.stderr and "no-such-folder" in proc.stderr
    assert "created" not in proc.stderr.replace("was created", "") and "Traceback" not in proc.stderr
    assert not any(p.name.startswith("kb.db") for p in tmp_path.iterdir())  # no file, no -wal, no -shm
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nHerons nest in colonies.\n", encoding="utf-8")
    both = docqa(kb, "add", str(tmp_path / "docs"), str(tmp_path / "typo"), home=tmp_path)
    assert both.returncode == 1 and "typo" in both.stderr and not kb.exists()  # one wrong path: nothing added


def _interrupt_add(kb: Path, folder: Path, home: Path) -> tuple[int, str]:
    """`docqa add FOLDER` in a pseudo-terminal that is its controlling terminal; Ctrl-C typed once the
    progress bar shows documents done.  Returns the exit code and what the terminal showed."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 120, 0, 0))

    def own_terminal() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        # a suite run in the background (nohup, `&`) ignores SIGINT, and an ignored signal stays ignored
        # across exec: the child gets the default back, as a shell's foreground job has it
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    proc = subprocess.Popen([sys.executable, "-m", "docqa", "--kb", str(kb), "add", str(folder)], stdin=child,
                            stdout=child, stderr=child, env=_env(home), close_fds=True, preexec_fn=own_terminal)
    os.close(child)
    shown, typed = b"", False
    while True:
        ready, _, _ = select.select([main], [], [], 120)
        if not ready:
            proc.kill()
            raise AssertionError("docqa wrote nothing for 120 s:\n" + shown.decode(errors="replace"))
        try:
            data = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        shown += data
        if not typed and re.search(rb"\b[1-9]\d*/\d+", ESCAPES.sub("", shown.decode(errors="replace")).encode()):
            os.write(main, b"\x03")  # what Ctrl-C types: the terminal sends SIGINT to docqa
            typed = True
    os.close(main)
    return proc.wait(timeout=120), ESCAPES.sub("", shown.decode(errors="replace")).replace("\r\n", "\n")


@pytest.mark.slow
def test_ctrl_c_during_add_says_what_was_kept_and_how_to_resume(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    for i in range(2500):  # enough that the add is still running when Ctrl-C arrives
        (folder / f"note-{i:04}.md").write_text(f"# Note {i}\n\nMeeting note number {i} about the heron survey.\n",
                                                encoding="utf-8")
    kb = tmp_path / "kb.db"
    code, shown = _interrupt_add(kb, folder, tmp_path)
    assert code == 130, shown
    said = re.search(r"interrupted: ([\d,]+) document\(s\) indexed before it were kept \(([\d,]+) in the collection now\)",
                     shown)
    assert said, shown
    kept = int(said.group(1).replace(",", ""))
    listed = json.loads(docqa(kb, "list", "--json", home=tmp_path).stdout)
    assert kept == int(said.group(2).replace(",", "")) == sum(d["status"] == "ok" for d in listed) < 2500
    assert f"docqa --kb {kb} add {folder}" in shown and "Run the same command again to resume" in shown
    resumed = docqa(kb, "add", str(folder), "--json", home=tmp_path)
    report = json.loads(resumed.stdout)
    assert resumed.returncode == 0 and len(report["unchanged"]) == kept and len(report["added"]) == 2500 - kept


@pytest.mark.slow
def test_eval_says_what_it_measured_on_how_many_questions_and_what_is_good(tmp_path):
    kb = tmp_path / "kb.db"
    assert docqa(kb, "add", str(REPO / "samples"), home=tmp_path).returncode == 0
    proc = docqa(kb, "eval", str(REPO / "eval" / "samples.jsonl"), home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    questions = [json.loads(line) for line in (REPO / "eval" / "samples.jsonl").read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    answerable = sum(not q["is_impossible"] for q in questions)
    text = " ".join(proc.stdout.split())
    assert f"{len(questions)} question(s) asked: {answerable} the documents answer" in text
    figure = re.search(r"answer accuracy: (\d\.\d\d) (\d+) of (\d+) answerable questions", text)
    assert figure and int(figure.group(3)) == answerable
    assert abs(float(figure.group(1)) - int(figure.group(2)) / answerable) < 0.006  # the figure is the count's share
    assert "good: 0.7 or more" in text and "citation accuracy:" in text and "judge a setting on 100 or more" in text


@pytest.mark.slow
def test_a_question_asked_on_the_command_line_is_recorded_as_such(tmp_path):
    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings

    kb = tmp_path / "kb.db"
    assert docqa(kb, "add", str(REPO / "samples"), home=tmp_path).returncode == 0
    assert docqa(kb, "ask", "How long are database backups kept?", home=tmp_path).returncode == 0
    with KnowledgeBase(Settings(kb=str(kb), embed={"provider": "none"}, llm={"provider": "none"})) as opened:
        sessions = opened.log.sessions(10)
    assert [s.origin for s in sessions] == ["cli"]  # the page groups these apart from its own (issue 33)
