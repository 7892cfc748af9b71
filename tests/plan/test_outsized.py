"""The ingest estimate with one outsized file (issue 33): a gzipped test log that holds most of a folder's
text is measured, not scaled from a sample of small files; the estimate names it and how to leave it out."""

from __future__ import annotations

import gzip
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from docqa.kb import KnowledgeBase
from docqa.plan import ingest_estimate
from docqa.settings import Settings

WORDS = ("backup restore rollback deploy cluster node replica index shard query cache token latency "
         "throughput queue worker schedule retry timeout").split()


def _folder(root: Path) -> Path:
    rng = random.Random(5)
    docs = root / "docs"
    for i in range(80):
        page = docs / f"part{i % 4}" / f"page-{i:02}.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        sections = [f"## Section {j}\n\n" + " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 160))) + ".\n"
                    for j in range(rng.randint(1, 4))]
        page.write_text(f"# Page {i}\n\n" + "\n".join(sections), encoding="utf-8")
    for i in range(150):  # the usual compressed files: changelogs, three times smaller than their text
        text = "\n".join(f"  * {' '.join(rng.choice(WORDS) for _ in range(12))} ({rng.randint(1, 99999)})" for _ in range(20))
        (docs / f"pkg{i:03}").mkdir()
        (docs / f"pkg{i:03}" / "changelog.gz").write_bytes(gzip.compress(text.encode()))
    log = "".join(f"PASS: gdb.base/test-{n % 700}.exp: {rng.choice(WORDS)} {rng.choice(WORDS)} step {n}\n"
                  for n in range(60_000))  # repetitive: it compresses many times over, as a real test log does
    (docs / "logs").mkdir()
    (docs / "logs" / "check.log.gz").write_bytes(gzip.compress(log.encode()))
    return docs


@pytest.mark.slow
def test_an_outsized_compressed_log_is_measured_and_named(tmp_path: Path):
    docs = _folder(tmp_path)
    settings = Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"})
    estimate = ingest_estimate(docs, settings)
    with KnowledgeBase(settings, create=True) as kb:
        kb.add([docs])
        chunks = kb.status.stats()["chunks"]
        log_chunks = next(r.chunks for r in kb.documents.list() if r.path.endswith("check.log.gz"))
    assert log_chunks > chunks / 2  # the case of the issue: one file makes most of the index
    assert abs(estimate.chunks - chunks) <= 0.15 * chunks, (estimate.chunks, chunks)
    warning = next(n for n in estimate.notes if n.startswith("outsized:"))
    assert "logs/check.log.gz alone makes" in warning and "--exclude 'logs/check.log.gz'" in warning


@pytest.mark.slow
def test_init_shows_the_outsized_file_as_a_warning(tmp_path: Path):
    """What a user reads: `docqa init` prints the outsized file as a warning line (not a dimmed note) with the
    --exclude to leave it out, and a folder without one gets no warning."""
    docs = _folder(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}, "DOCQA_LLM__PROVIDER": "none",
           "DOCQA_EMBED__PROVIDER": "none", "COLUMNS": "400"}
    run = lambda folder: subprocess.run([sys.executable, "-m", "docqa", "init", str(folder), "--yes"], cwd=work,  # noqa: E731
                                        capture_output=True, text=True, env=env, timeout=300)
    proc = run(docs)
    assert proc.returncode == 0, proc.stderr
    warning = next(line for line in proc.stdout.splitlines() if line.startswith("warning:"))
    assert "logs/check.log.gz alone makes" in warning and "--exclude 'logs/check.log.gz'" in warning
    (docs / "logs" / "check.log.gz").unlink()
    quiet = run(docs)
    assert quiet.returncode == 0 and "warning:" not in quiet.stdout and "a first add" in quiet.stdout
