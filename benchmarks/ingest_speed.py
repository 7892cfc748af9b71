"""Ingest throughput, BM25 latency at 100k chunks, no-change re-sync, peak memory.

    python benchmarks/ingest_speed.py            # all parts
    python benchmarks/ingest_speed.py text sync  # some parts: multiformat text chunks100k sync

Each part prints its figures next to a baseline measured in the same run (reading and hashing
the same files, or walking and stat-ing them), so the numbers can be compared across machines.
"""

from __future__ import annotations

import hashlib
import os
import random
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path

from docqa.store import SQLiteStores
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

WORK = Path(__file__).resolve().parent / ".work" / "ingest"
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
RNG = random.Random(42)


def vocabulary() -> list[str]:
    """Realistic English words (SciFact text when present, else a synthetic list)."""
    corpus = SHARED / "retrieval" / "scifact" / "corpus.jsonl"
    if corpus.exists():
        words = corpus.read_text(encoding="utf-8")[:3_000_000].split()
        return [w.strip(".,;:()[]\"'").lower() for w in words if w.isalpha()]
    return [f"word{RNG.randint(0, 30000)}" for _ in range(200_000)]


def prose(words: list[str], n_words: int) -> str:
    out, sentence = [], []
    for w in RNG.choices(words, k=n_words):
        sentence.append(w)
        if len(sentence) >= RNG.randint(8, 25):
            out.append(" ".join(sentence).capitalize() + ".")
            sentence = []
    return " ".join(out + [" ".join(sentence)])


def fresh(name: str) -> tuple[Path, Path]:
    folder = WORK / name
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "docs").mkdir(parents=True)
    return folder / "docs", folder / "kb.db"


def read_and_hash(files: list[Path]) -> float:
    started = time.perf_counter()
    for f in files:
        hashlib.blake2b(f.read_bytes(), digest_size=16).digest()
    return time.perf_counter() - started


def timed_add(db: Path, folder: Path, **ingest) -> tuple[float, object, dict]:
    # Parsing and full-text indexing speed: no embedding here (hybrid_scale.py measures that).
    with KnowledgeBase(Settings(kb=str(db), ingest=ingest, embed={"provider": "none"})) as kb:
        started = time.perf_counter()
        report = kb.add([folder])
        elapsed = time.perf_counter() - started
        stats = kb.status.stats()
    stats["index_bytes"] = db.stat().st_size  # after close: the WAL is checkpointed and removed
    return elapsed, report, stats


def part_multiformat() -> None:
    src = SHARED / "docs" / "multiformat"
    if not src.is_dir():
        print("multiformat: skipped (../shared/data absent)")
        return
    files = [p for p in src.rglob("*") if p.is_file() and p.suffix not in {".tsv"} and "LICENSES" not in p.parts and p.name != "README.md"]
    nbytes = sum(f.stat().st_size for f in files)
    db = WORK / "multiformat.db"
    for stale in WORK.glob("multiformat.db*"):
        stale.unlink()
    elapsed, report, stats = timed_add(db, src)
    base = read_and_hash(files)
    print(f"multiformat: {len(files)} files, {nbytes / 1e6:.2f} MB in {elapsed:.2f} s = {nbytes / 1e6 / elapsed:.2f} MB/s, "
          f"{len(files) / elapsed:.1f} files/s, {stats['chunks']} chunks, {len(report.failed)} failed (expected 7-8 edge cases); "
          f"baseline read+hash {nbytes / 1e6 / base:.0f} MB/s")


def part_text(total_mb: int = 60) -> None:
    docs, db = fresh("text")
    words = vocabulary()
    size, i = 0, 0
    while size < total_mb * 1e6:
        if i % 2:
            body = "\n\n".join(f"## Section {s}\n\n{prose(words, 150)}\n\n{prose(words, 90)}" for s in range(12))
            text = f"# Document {i}\n\n{body}\n"
            size += (docs / f"doc{i:05}.md").write_text(text, encoding="utf-8")
        else:
            text = "\n\n".join(prose(words, 120) for _ in range(40)) + "\n"
            size += (docs / f"doc{i:05}.txt").write_text(text, encoding="utf-8")
        i += 1
    files = sorted(docs.iterdir())
    nbytes = sum(f.stat().st_size for f in files)
    elapsed, report, stats = timed_add(db, docs)
    base = read_and_hash(files)
    print(f"text+markdown: {len(files)} files, {nbytes / 1e6:.1f} MB in {elapsed:.2f} s = {nbytes / 1e6 / elapsed:.1f} MB/s "
          f"({len(files) / elapsed:.0f} files/s), {stats['chunks']} chunks, index {stats['index_bytes'] / 1e6:.0f} MB; "
          f"baseline read+hash {nbytes / 1e6 / base:.0f} MB/s")


def part_chunks100k(target: int = 100_000) -> None:
    docs, db = fresh("chunks100k")
    words = vocabulary()
    per_file = 100  # sections per file; each section is one chunk (no merging across headings)
    for i in range(target // per_file):
        body = "\n\n".join(f"## Part {s}\n\n{prose(words, 70)}" for s in range(per_file - 1))
        (docs / f"doc{i:05}.md").write_text(f"# Doc {i}\n\n{prose(words, 60)}\n\n{body}\n", encoding="utf-8")
    nbytes = sum(f.stat().st_size for f in docs.iterdir())
    elapsed, report, stats = timed_add(db, docs)
    print(f"100k chunks: {stats['chunks']} chunks from {len(report.added)} files, {nbytes / 1e6:.0f} MB, ingest {elapsed:.1f} s "
          f"({nbytes / 1e6 / elapsed:.1f} MB/s, {stats['chunks'] / elapsed:.0f} chunks/s), index {stats['index_bytes'] / 1e6:.0f} MB")
    queries = [" ".join(RNG.choices(words, k=RNG.randint(2, 6))) for _ in range(300)]
    for label, store in (("docqa (common terms pruned)", SQLiteStores(db)),
                         ("baseline: every term scored", SQLiteStores(db, common_term_share=2.0))):
        with KnowledgeBase(Settings(kb=str(db), embed={"provider": "none"}), store=store) as kb:
            lat = query_latencies(kb, queries)
        print(f"BM25 latency at {stats['chunks']} chunks, top 10, {len(queries)} queries of 2-6 words, {label}: "
              f"p50 {statistics.median(lat):.1f} ms, p95 {lat[int(len(lat) * 0.95)]:.1f} ms, max {lat[-1]:.1f} ms")


def query_latencies(kb: KnowledgeBase, queries: list[str]) -> list[float]:
    for q in queries[:20]:
        kb.search(q)  # warm the page cache
    lat = []
    for q in queries:
        started = time.perf_counter()
        kb.search(q, top_k=10)
        lat.append((time.perf_counter() - started) * 1000)
    return sorted(lat)


def part_sync(n: int = 10_000) -> None:
    docs, db = fresh("sync")
    words = vocabulary()
    for i in range(n):
        sub = docs / f"d{i % 100:02}"
        sub.mkdir(exist_ok=True)
        (sub / f"note{i:05}.txt").write_text(prose(words, 80) + "\n", encoding="utf-8")
    first, report, _ = timed_add(db, docs)
    again, report2, _ = timed_add(db, docs)
    started = time.perf_counter()
    count = sum(1 for root, _, files in os.walk(docs) for f in files if os.stat(os.path.join(root, f)))
    walk = time.perf_counter() - started
    print(f"re-sync: {n} files, first ingest {first:.1f} s ({n / first:.0f} files/s); no-change re-sync {again:.2f} s "
          f"({len(report2.unchanged)} unchanged, {len(report2.added) + len(report2.updated)} re-parsed); "
          f"baseline walk+stat {walk:.2f} s for {count} files")


PARTS = {"multiformat": part_multiformat, "text": part_text, "chunks100k": part_chunks100k, "sync": part_sync}


def main(names: list[str]) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}")
    for name in names or list(PARTS):
        RNG.seed(42)  # each part builds the same corpus and queries whichever parts run
        PARTS[name]()
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak memory: main process {me:.0f} MB, largest worker {kids:.0f} MB")


if __name__ == "__main__":
    main(sys.argv[1:])
