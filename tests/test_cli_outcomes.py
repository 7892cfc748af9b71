"""`docqa add` and `docqa list` outcomes as a user sees them: the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ingest.fixtures import blank_png


def docqa(kb: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    env["DOCQA_EMBED__PROVIDER"] = "none"  # outcomes, not vectors
    return subprocess.run([sys.executable, "-m", "docqa", "--kb", str(kb), *args], capture_output=True, text=True,
                          env=env, timeout=300)


def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(3):
        (docs / f"note{i}.md").write_text(f"# Note {i}\n\nThe grebe number {i} dives.\n", encoding="utf-8")
    (docs / "bad.pdf").write_bytes(b"%PDF-1.4 truncated")
    (docs / "photo.png").write_bytes(blank_png())
    (docs / "blob.bin").write_bytes(bytes(range(256)) * 4)
    os.mkfifo(docs / "pipe")
    return docs


@pytest.mark.slow
def test_a_rerun_with_nothing_changed_says_so_in_one_line_and_exits_0(tmp_path):
    docs, kb = folder(tmp_path), tmp_path / "kb.db"
    first = docqa(kb, "add", str(docs))
    assert first.returncode == 1 and "failed  " in first.stdout and "bad.pdf" in first.stdout  # a new failure
    assert first.stdout.count("  skipped ") == 3 and "OCR" in first.stdout and "FIFO" in first.stdout
    again = docqa(kb, "add", str(docs))
    assert again.returncode == 0, again.stdout
    assert again.stdout.splitlines()[0].startswith("unchanged: 3; still skipped: 3; still failing: 1 — docqa list --failed")
    assert len(again.stdout.splitlines()) == 1


@pytest.mark.slow
def test_list_counts_indexed_apart_from_failed_and_skipped(tmp_path):
    docs, kb = folder(tmp_path), tmp_path / "kb.db"
    docqa(kb, "add", str(docs))
    listed = docqa(kb, "list")
    assert listed.returncode == 0 and "3 document(s) indexed · 1 failed" in listed.stdout and "· 3 skipped" in listed.stdout
    default = {Path(d["path"]).name: d["status"] for d in json.loads(docqa(kb, "list", "--json").stdout)}
    assert default == {"note0.md": "ok", "note1.md": "ok", "note2.md": "ok", "bad.pdf": "error"}
    failed = json.loads(docqa(kb, "list", "--failed", "--json").stdout)
    assert [(Path(d["path"]).name, d["error"].split(":")[0]) for d in failed] == [("bad.pdf", "corrupt")]
    skipped = {Path(d["path"]).name: d["error"] for d in json.loads(docqa(kb, "list", "--skipped", "--json").stdout)}
    assert sorted(skipped) == ["blob.bin", "photo.png", "pipe"] and "OCR" in skipped["photo.png"]
    stats = json.loads(docqa(kb, "stats", "--json").stdout)
    assert (stats["documents"], stats["failed"], stats["skipped"]) == (3, 1, 3)


@pytest.mark.slow
def test_a_fifo_given_by_name_says_it_is_a_fifo(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    proc = docqa(tmp_path / "kb.db", "add", str(tmp_path / "pipe"))
    assert proc.returncode == 0 and "FIFO (named pipe), not a regular file" in proc.stdout
    assert "no such file" not in proc.stdout
