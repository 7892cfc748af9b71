"""`docqa watch` and its core: real folders, real SQLite, real watchfiles events; every wait polls
the index against a deadline (no sleep is an assertion)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from docqa.ingest.watch import Batch, Watcher
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

DEADLINE = 20.0  # seconds: a change must be searchable well within this on a busy 2-core machine


def wait_for(predicate, timeout: float = DEADLINE, step: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(step)
    raise AssertionError("condition not met in time")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


class Running:
    """A Watcher on its own thread, writing with its own KnowledgeBase (as `docqa watch` does)."""

    def __init__(self, settings: Settings, roots: list[Path], include=None, exclude=None, fail_on: str | None = None):
        self.settings, self.roots, self.include, self.exclude, self.fail_on = settings, roots, include, exclude, fail_on
        self.batches: list[Batch] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with KnowledgeBase(self.settings, embedder=None) as kb:
            def sync(targets: list[Path]):
                if self.fail_on and any(t.name == self.fail_on for t in targets):
                    self.fail_on = None  # once: the caller's sync failing, as a full disk would
                    raise RuntimeError("the disk hiccuped")
                return kb.add(targets, include=self.include, exclude=self.exclude)

            Watcher(sync, self.roots, kb.documents.scanner(self.include, self.exclude), quiet_ms=100).run(self.stop, self.batches.append)

    def __enter__(self) -> Running:
        self.thread.start()
        wait_for(lambda: self.batches)  # the resync at start: from here on every change is seen
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(15)
        assert not self.thread.is_alive()

    def total(self, key: str) -> int:
        return sum(b.counts()[key] for b in self.batches[1:])


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, search={"mode": "bm25"})


@pytest.fixture
def reader(settings):
    kb = KnowledgeBase(settings, embedder=None)
    yield kb
    kb.close()


def found(kb: KnowledgeBase, word: str) -> set[str]:
    return {Path(h.path).name for h in kb.search(word, top_k=20)}


def indexed(kb: KnowledgeBase) -> set[str]:
    return {Path(r.path).name for r in kb.documents.list() if r.status == "ok"}


@pytest.mark.slow
def test_create_modify_rename_delete_are_picked_up(tmp_path, settings, reader):
    docs = tmp_path / "docs"
    write(docs / "keep.md", "# Keep\n\nnothing changes here\n")
    with Running(settings, [docs]) as watch:
        write(docs / "guide.md", "# Guide\n\nzebras are striped animals\n")
        wait_for(lambda: found(reader, "zebras") == {"guide.md"})
        write(docs / "guide.md", "# Guide\n\ngiraffes are tall animals\n")
        wait_for(lambda: found(reader, "giraffes") == {"guide.md"} and not found(reader, "zebras"))
        (docs / "sub").mkdir()
        os.rename(docs / "guide.md", docs / "sub" / "moved.md")
        wait_for(lambda: indexed(reader) == {"keep.md", "moved.md"})
        assert found(reader, "giraffes") == {"moved.md"}
        wait_for(lambda: watch.total("moved") == 1)  # the batch is counted just after its commit
        assert watch.total("removed") == 0  # a move, not a delete and an add
        (docs / "sub" / "moved.md").unlink()
        wait_for(lambda: indexed(reader) == {"keep.md"})
        assert not found(reader, "giraffes")
    assert all(b.error is None for b in watch.batches)
    assert all(0 < b.latency < DEADLINE for b in watch.batches[1:])


@pytest.mark.slow
def test_an_atomic_save_updates_the_document(tmp_path, settings, reader):
    """Editors save by writing a temporary file and renaming it over the original."""
    docs = tmp_path / "docs"
    write(docs / "plan.md", "# Plan\n\nfirst we build a raft\n")
    with Running(settings, [docs]) as watch:
        write(docs / "plan.md.tmp~", "# Plan\n\nthen we sail the catamaran\n")
        os.replace(docs / "plan.md.tmp~", docs / "plan.md")
        # the temporary file may be seen (and indexed) for one batch if a batch closes between the two steps
        wait_for(lambda: found(reader, "catamaran") == {"plan.md"} and indexed(reader) == {"plan.md"})
        wait_for(lambda: watch.total("updated") == 1)
        assert not found(reader, "raft")


@pytest.mark.slow
def test_a_burst_of_saves_is_one_batch(tmp_path, settings, reader):
    docs = tmp_path / "docs"
    docs.mkdir()
    with Running(settings, [docs]) as watch:
        for i in range(20):
            write(docs / f"note{i}.md", f"# Note {i}\n\nburst number {i}\n")
        wait_for(lambda: len(indexed(reader)) == 20)
        wait_for(lambda: watch.total("added") == 20)
        assert len(watch.batches) - 1 <= 3  # 20 files, one burst: one batch (two or three on a busy machine)


@pytest.mark.slow
def test_resync_at_start_catches_what_changed_while_stopped(tmp_path, settings, reader):
    docs = tmp_path / "docs"
    write(docs / "old.md", "# Old\n\nobsolete words\n")
    write(docs / "edit.md", "# Edit\n\nfirst draft\n")
    write(docs / "same.md", "# Same\n\nstays the same\n")
    reader.add([docs])
    (docs / "old.md").unlink()
    write(docs / "edit.md", "# Edit\n\nsecond draft with pelicans\n")
    write(docs / "new.md", "# New\n\nflamingos arrived\n")
    with Running(settings, [docs]) as watch:
        c = watch.batches[0].counts()
        assert (c["added"], c["updated"], c["removed"], c["unchanged"]) == (1, 1, 1, 1)
    assert indexed(reader) == {"edit.md", "same.md", "new.md"}
    assert found(reader, "pelicans") == {"edit.md"} and found(reader, "flamingos") == {"new.md"}


@pytest.mark.slow
def test_excluded_hidden_and_gitignored_changes_are_ignored(tmp_path, settings, reader):
    docs = tmp_path / "docs"
    write(docs / ".gitignore", "build/\n*.log\n")
    with Running(settings, [docs], exclude=["drafts/**"]) as watch:
        write(docs / "drafts" / "wip.md", "# Draft\n\nokapi draft\n")
        write(docs / ".hidden.md", "# Hidden\n\nokapi hidden\n")
        write(docs / "build" / "out.md", "# Built\n\nokapi built\n")
        write(docs / "run.log", "okapi logged\n")
        write(docs / "real.md", "# Real\n\nokapi real\n")
        wait_for(lambda: "real.md" in indexed(reader))
        assert found(reader, "okapi") == {"real.md"}
        wait_for(lambda: watch.total("added") == 1)


def test_rules_judge_a_path_as_the_walk_would(tmp_path, settings):
    docs = tmp_path / "docs"
    write(docs / ".gitignore", "build/\n")
    write(docs / "a" / ".gitignore", "secret.md\n")
    for name in ("a/secret.md", "a/open.md", "build/x.md", ".git/config", "drafts/d.md", "a/.swp.md", "ok.txt"):
        write(docs / name, "text\n")
    with KnowledgeBase(settings, embedder=None) as kb:
        watcher = Watcher(kb.add, [docs], kb.documents.scanner(include=["*.md"], exclude=["drafts/"]))
        plan = watcher.plan(str(docs / n) for n in ("a/secret.md", "a/open.md", "build/x.md", ".git/config",
                                                     "drafts/d.md", "a/.swp.md", "ok.txt", "gone/x.md"))
        walked = {str(p) for p in kb.documents.scanner(include=["*.md"], exclude=["drafts/"]).scan([docs]).files}
    assert {str(p) for p in plan.files} == walked == {str(docs / "a" / "open.md")}
    assert plan.roots == {docs}  # gone/x.md: really gone, so its folder is synced whole


def test_a_path_that_cannot_be_read_now_is_kept(tmp_path, settings):
    """Only ENOENT means gone: any other error (EACCES, EIO, here ENAMETOOLONG, which root can make) keeps it."""
    docs = tmp_path / "docs"
    docs.mkdir()
    with KnowledgeBase(settings, embedder=None) as kb:
        plan = Watcher(kb.add, [docs], kb.documents.scanner()).plan([str(docs / ("x" * 300))])
    assert not plan.files and not plan.roots
    assert len(plan.unreadable) == 1 and "kept in the index" in plan.unreadable[0][1]


@pytest.mark.slow
def test_a_broken_file_is_reported_and_the_watch_goes_on(tmp_path, settings, reader):
    docs = tmp_path / "docs"
    docs.mkdir()
    with Running(settings, [docs], fail_on="boom.md") as watch:
        write(docs / "broken.pdf", "%PDF-1.7\nthis is not a PDF at all\n")
        write(docs / "fine.md", "# Fine\n\nwombats dig\n")
        wait_for(lambda: found(reader, "wombats"))
        wait_for(lambda: watch.total("failed") >= 1)
        failed = [b for b in watch.batches if b.counts()["failed"]][0]
        assert failed.report.failed[0][0].endswith("broken.pdf")
        write(docs / "boom.md", "# Boom\n\nquokkas\n")  # this batch's sync raises
        wait_for(lambda: any(b.error for b in watch.batches))
        write(docs / "after.md", "# After\n\nnumbats\n")
        wait_for(lambda: found(reader, "numbats") == {"after.md"})
        wait_for(lambda: found(reader, "quokkas") == {"boom.md"})  # the failed batch's file went with the next one
    assert [b for b in watch.batches if b.error][0].error == "RuntimeError: the disk hiccuped"


def test_a_root_that_is_not_a_folder_is_refused(tmp_path, settings):
    from docqa.errors import InputError

    write(tmp_path / "file.md", "x")
    with KnowledgeBase(settings, embedder=None) as kb, pytest.raises(InputError, match="not a folder"):
        Watcher(kb.add, [tmp_path / "file.md"], kb.documents.scanner())


def _lines(stream) -> queue.Queue:
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


def _rest(lines: queue.Queue) -> str:
    """Every line still to come, up to the end of the stream."""
    rest = []
    while (line := lines.get(timeout=30)) is not None:
        rest.append(line)
    return "".join(rest)


def _line_with(lines: queue.Queue, text: str, seen: list[str]) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        assert line is not None, f"the stream ended without {text!r}: {''.join(seen)}"
        seen.append(line)
        if text in line:
            return line
    raise AssertionError(f"no line with {text!r} in: {''.join(seen)}")


@pytest.mark.slow
def test_docqa_watch_as_a_process(tmp_path):
    docs = tmp_path / "docs"
    write(docs / "first.md", "# First\n\nalready here\n")
    kb = str(tmp_path / "kb.db")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}, "DOCQA_EMBED__PROVIDER": "none"}
    command = [sys.executable, "-m", "docqa", "--kb", kb]
    proc = subprocess.Popen([*command, "watch", str(docs), "-c", "notes"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    seen: list[str] = []
    try:
        lines = _lines(proc.stdout)
        assert "added 1" in _line_with(lines, "resync", seen)
        write(docs / "pangolin.md", "# Pangolins\n\npangolins eat ants\n")

        def searchable():
            out = subprocess.run([*command, "search", "pangolins", "-c", "notes", "--json"], env=env,
                                 capture_output=True, text=True, timeout=120)
            return out.returncode == 0 and any(h["path"].endswith("pangolin.md") for h in json.loads(out.stdout))

        wait_for(searchable, timeout=60, step=0.2)
        assert "searchable" in _line_with(lines, "batch 1", seen)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
        output = "".join(seen) + _rest(lines)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
    assert output.rstrip().endswith("stopped") and "Traceback" not in output
