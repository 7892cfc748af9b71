"""The command line as a person meets it (issue 19): the real `docqa` in a subprocess, and in a
pseudo-terminal 80 columns wide where the terminal matters (widths, hyperlinks)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from rich.cells import cell_len

from docqa.answer.sources import distinct_name
from docqa.cli.paths import PathNamer, shorten

REPO = Path(__file__).resolve().parents[1]
OFFLINE = {"DOCQA_EMBED__PROVIDER": "none", "DOCQA_LLM__PROVIDER": "none"}
OSC8 = re.compile(r"\x1b]8;[^;]*;([^\x1b]*)\x1b\\")
ESCAPES = re.compile(r"\x1b\][^\x1b]*\x1b\\|\x1b\[[0-9;?]*[A-Za-z]")
DEEP = "guides/platform/networking/load-balancers/configuration/advanced-health-checks.md"
READ_COMMANDS = [["search", "x"], ["ask", "x"], ["list"], ["show", "abc"], ["stats"], ["log"], ["mcp"]]  # serve creates one (issue 30)


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_") and k not in ("COLUMNS", "LINES")}
    return {**env, **OFFLINE, "HOME": str(home), "TERM": "xterm-256color", **extra}


def docqa(kb: Path, *args: str, home: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "docqa", "--kb", str(kb), *args], capture_output=True, text=True,
                          input=stdin, env=_env(home), timeout=300)


def in_terminal(kb: Path, *args: str, home: Path, columns: int = 80) -> str:
    """What `docqa` writes to a terminal `columns` wide (stdout and stderr, as the user sees them)."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "docqa", "--kb", str(kb), *args], stdin=subprocess.DEVNULL,
                            stdout=child, stderr=child, env=_env(home), close_fds=True)
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
    return b"".join(chunks).decode().replace("\r\n", "\n")


def visible(text: str) -> list[str]:
    """The lines as the terminal shows them: colour codes and hyperlink escapes removed."""
    return ESCAPES.sub("", text).splitlines()


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def kb(home: Path) -> Path:
    """Documents under ~/projects/handbook: a deep path, a Chinese name, and two files named index.md."""
    docs = home / "projects" / "handbook"
    for rel, text in {
        DEEP: "# Health checks\n\nA health check probes each backend every 10 seconds on port 8080.\n",
        "运维手册/数据库备份与恢复的详细操作步骤说明.md": "# 备份\n\n每天凌晨 2 点进行一次全量备份，保留 35 天。\n",
        "backup/index.md": "# Backups\n\nBackups of the database run every night at 02:00 with restic.\n",
        "restore/index.md": "# Restores\n\nRestores of the database backups are tested every month.\n",
    }.items():
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text(text, encoding="utf-8")
    path = home / "kb.db"
    added = docqa(path, "add", str(docs), home=home)
    assert added.returncode == 0 and added.stderr.count("created a new knowledge base") == 1, added.stderr
    again = docqa(path, "add", str(docs), home=home)
    assert again.returncode == 0 and "created" not in again.stderr  # said once, when it was created
    for i in range(3):
        docqa(path, "ask", f"How often does the health check probe backend number {i} of the fleet?", home=home)
    return path


# -- paths: one way everywhere, shortened in the middle, tables within 80 columns -------------------

@pytest.mark.slow
def test_list_fits_80_columns_with_paths_relative_to_the_added_folder(kb, home):
    shown = visible(in_terminal(kb, "list", home=home))
    assert shown[0] == "under ~/projects/handbook/"
    assert all(cell_len(line) <= 80 for line in shown), "\n".join(shown)
    deep = next(line for line in shown if "advanced" in line or "…" in line and "health" in line)
    assert deep.startswith("guides/…/") and "advanced-health-checks.md" in deep  # the middle goes, the name stays
    assert any(line.startswith("backup/index.md ") for line in shown)
    assert any(line.startswith("运维手册/") for line in shown)


@pytest.mark.slow
def test_list_wide_shows_whole_paths_and_json_keeps_them_absolute(kb, home):
    wide = visible(in_terminal(kb, "list", "--wide", home=home))
    assert any(line.startswith(DEEP) for line in wide) and "indexed at" in wide[1]
    docs = json.loads(docqa(kb, "list", "--json", home=home).stdout)
    assert str(home / "projects" / "handbook" / DEEP) in {d["path"] for d in docs}


@pytest.mark.slow
def test_the_same_file_reads_the_same_from_any_folder(kb, home, tmp_path):
    here = subprocess.run([sys.executable, "-m", "docqa", "--kb", str(kb), "search", "health check probes", "-k", "1"],
                          capture_output=True, text=True, env=_env(home, COLUMNS="200"), cwd=tmp_path, timeout=300)
    there = subprocess.run([sys.executable, "-m", "docqa", "--kb", str(kb), "search", "health check probes", "-k", "1"],
                           capture_output=True, text=True, env=_env(home, COLUMNS="200"), cwd=kb.parent, timeout=300)
    first = lambda proc: proc.stdout.splitlines()[0].split("  ")[1]  # noqa: E731 - "1. 0.87  PATH  chunk-id"
    assert first(here) == first(there)


@pytest.mark.slow
def test_log_shows_each_question_on_two_lines_in_80_columns(kb, home):
    shown = visible(in_terminal(kb, "log", home=home))
    assert all(cell_len(line) <= 80 for line in shown), "\n".join(shown)
    rows = [i for i, line in enumerate(shown) if line.startswith("20")]
    assert len(rows) == 3 and all("How often does the health" in shown[i] for i in rows)
    assert all(shown[i + 1].startswith(" " * 18) and shown[i + 1].strip() for i in rows)  # the answer, cut to fit
    assert shown[rows[-1] + 2].startswith("3 question(s)")


# -- hyperlinks ------------------------------------------------------------------------------------

@pytest.mark.slow
def test_search_and_citations_link_to_the_files_in_a_terminal_only(kb, home):
    hits = in_terminal(kb, "search", "health check probes", "-k", "2", home=home)
    target = (home / "projects" / "handbook" / DEEP).as_uri()
    assert target in OSC8.findall(hits)
    answer = in_terminal(kb, "ask", "How often does the health check probe each backend?", home=home)
    assert target in OSC8.findall(answer)
    sources = visible(answer)
    assert any("advanced-health-checks.md" in line and line.startswith(" [1]") for line in sources), "\n".join(sources)
    piped = docqa(kb, "ask", "How often does the health check probe each backend?", home=home)
    assert "\x1b" not in piped.stdout and "advanced-health-checks.md" in piped.stdout


@pytest.mark.slow
def test_citation_labels_tell_files_of_the_same_name_apart(kb, home):
    answer = json.loads(docqa(kb, "ask", "When do database backups run and are restores tested?", "--json",
                              home=home).stdout)
    labels = [c["label"] for c in answer["citations"] if c["path"].endswith("index.md")]
    assert labels, answer
    assert all(("backup/index.md" in label) != ("restore/index.md" in label) for label in labels), labels


@pytest.mark.parametrize("path, among, name", [
    ("/d/a/cache.rst", ["/d/b/x.md"], "cache.rst"),
    ("/d/howto/cache.rst", ["/d/reference/cache.rst"], "howto/cache.rst"),
    ("/d/x/y/index.rst", ["/d/z/y/index.rst", "/d/x/y/index.rst"], "x/y/index.rst"),
    ("/d/a/index.rst", ["/d/a/index.rst"], "index.rst"),  # itself is no other file
])
def test_distinct_name(path, among, name):
    assert distinct_name(path, among) == name


@pytest.mark.parametrize("path, width, short", [
    ("docs/a/b/install/guide.md", 80, "docs/a/b/install/guide.md"),
    ("docs/a/b/c/install/guide.md", 24, "docs/…/install/guide.md"),
    ("handbook/operations.md", 15, "…/operations.md"),
    ("a-very-long-file-name-here.md", 12, "a-very…re.md"),
    ("运维手册/很长很长的文件名.md", 14, "…/很长很长….md"),
    ("运维手册/很长很长的文件名.md", 8, "很长…md"),
])
def test_shorten_keeps_the_end(path, width, short):
    assert shorten(path, width) == short and cell_len(short) <= width


def test_paths_outside_the_added_folder_are_named_from_home():
    namer = PathNamer.for_root("/srv/docs/", home="/home/ann")
    assert namer.name("/srv/docs/a/b.md") == "a/b.md"
    assert namer.name("/home/ann/notes/c.md") == "~/notes/c.md" and namer.name("/etc/d.md") == "/etc/d.md"
    assert PathNamer.for_root("/home/ann/", home="/home/ann").name("/home/ann/x/y.md") == "~/x/y.md"
    assert PathNamer.for_root("/", home="/home/ann").name("/srv/e.md") == "/srv/e.md"


# -- knowledge bases that do not exist or hold nothing ---------------------------------------------

@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda c: c[0])
@pytest.mark.slow
def test_a_reading_command_on_a_missing_knowledge_base_stops_and_creates_nothing(command, tmp_path):
    typo = tmp_path / "typo.db"
    proc = docqa(typo, *command, home=tmp_path, stdin="")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"no knowledge base at {typo} — create it with 'docqa add FOLDER --kb {typo}'" in proc.stderr
    assert not typo.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_an_empty_knowledge_base_says_how_to_fill_it(tmp_path):
    (tmp_path / "empty").mkdir()
    kb = tmp_path / "kb.db"
    assert docqa(kb, "add", str(tmp_path / "empty"), home=tmp_path).returncode == 0
    for command in (["search", "anything"], ["list"], ["stats"], ["ask", "anything?"]):
        proc = docqa(kb, *command, home=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert f"the knowledge base at {kb} is empty — fill it with 'docqa add FOLDER --kb {kb}'" in proc.stderr


# -- eval question files ---------------------------------------------------------------------------

@pytest.mark.parametrize("content, message", [
    (None, "no question file at {path}: give a JSON lines file, such as eval/samples.jsonl"),
    ('{"question": "a?", "answers": ["b"]}\n\n{"question": "c?", "answers": ["d"\n', "{path}:3: not valid JSON"),
    ('{"question": "a?"}\n["a list"]\n', "{path}:2: a JSON list, not an object"),
    ('{"answers": ["b"]}\n', '{path}:1: "question" is missing or not a text'),
    ('{"question": "a?", "answers": "b"}\n', '{path}:1: "answers" must be a list of texts'),
    ("\n\n", "{path}: no questions in it"),
], ids=["missing", "bad-json", "not-an-object", "no-question", "answers-not-a-list", "empty"])
@pytest.mark.slow
def test_eval_reports_a_bad_question_file_cleanly(content, message, kb, home, tmp_path):
    path = tmp_path / "questions.jsonl"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    proc = docqa(kb, "eval", str(path), home=home)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert message.format(path=path) in proc.stderr


@pytest.mark.slow
def test_the_sample_question_file_runs(kb, home):
    report = json.loads(docqa(kb, "eval", str(REPO / "eval" / "samples.jsonl"), "-n", "2", "--json",
                              home=home).stdout)
    assert report["questions"] == 2 and report["failed"] == 0


# -- help, version ---------------------------------------------------------------------------------

def _commands() -> list[list[str]]:
    from typer.main import get_command

    from docqa.cli import app

    root, found = get_command(app), []
    for name, command in root.commands.items():
        subs = getattr(command, "commands", None)
        found += [[name, sub] for sub in subs] if subs else [[name]]
    return found


@pytest.mark.slow
def test_help_uses_human_names_and_shows_every_default(home):
    from typer.main import get_command

    from docqa.cli import app
    from docqa.cli.help import default_text

    for path in [[], *_commands()]:
        text = subprocess.run([sys.executable, "-m", "docqa", *path, "--help"], capture_output=True, text=True,
                              env=_env(home, COLUMNS="80"), timeout=60).stdout
        assert text.startswith("Usage: docqa"), path
        assert not re.search(r"<\w+(\[\w+\])?>|\{\w+\}|list\[", text), (path, text)
        command = get_command(app)
        for part in path:
            command = command.commands[part]
        for param in command.params:  # an option that takes a value says what it is without one
            if param.param_type_name == "option" and not param.is_flag and not param.required:
                assert default_text(param) is not None, (path, param.name)
    search = " ".join(subprocess.run([sys.executable, "-m", "docqa", "search", "--help"], capture_output=True,
                                     text=True, env=_env(home), timeout=60).stdout.split())
    assert "-c, --collection NAME Only this collection. [default: every collection]" in search
    assert "-k, --top-k N Number of hits. [default: 10 (search.top_k)]" in search
    assert "Usage: docqa search [OPTIONS] QUERY" in search


@pytest.mark.slow
def test_version_is_printed_and_in_stats(kb, home):
    import importlib.metadata

    version = importlib.metadata.version("docqa")
    assert subprocess.run([sys.executable, "-m", "docqa", "--version"], capture_output=True, text=True,
                          env=_env(home), timeout=60).stdout == f"docqa {version}\n"
    assert json.loads(docqa(kb, "stats", "--json", home=home).stdout)["docqa_version"] == version


# -- chat as a transcript --------------------------------------------------------------------------

@pytest.mark.slow
def test_piped_chat_echoes_each_question_before_its_answer(kb, home):
    questions = ["How often does the health check probe each backend?", "/new", "When do database backups run?"]
    out = docqa(kb, "chat", home=home, stdin="\n".join(questions) + "\n").stdout
    first, second = out.index("› " + questions[0] + "\n"), out.index("› " + questions[2] + "\n")
    assert first < out.index("10 seconds") < out.index("› /new\n") < second < out.index("02:00")
    assert out.endswith("› \n")  # the end of input, on a line of its own
