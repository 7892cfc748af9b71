"""The first search in a fresh process over a large SQLite index (issue 34, item 5).

    python benchmarks/first_search.py --build --chunks 304000      # once: a synthetic knowledge base
    python benchmarks/first_search.py --baseline /work/main/src [--reps 5]

The knowledge base is written through the store API's bulk path by scale_latency.py's builder
(documents of 100 chunks of 30 SciFact words, a random unit vector of 384 dimensions — the bundled
model's size — per chunk, under a synthetic embedder whose query embedding costs nothing), so the
figures are what reading the index costs, not the model.  Each run is a fresh interpreter with
PYTHONPATH set to one tree: it opens the knowledge base and times one hybrid search (top 10),
reporting the search's seconds and the whole process's; the trees take turns.  The new tree's
packed copy of the vectors is removed before its first run, so that run shows the rebuild, and
the runs after it read the packed copy.  Both trees' hits are compared (the same chunk ids and scores).
Then one more document is written and each tree searches twice: the new tree's first search brings
the copy in step by difference (only the new rows' vectors are read from SQLite).
Note: the knowledge base grows by one document per run of this step.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

RUN = r"""
import json, sys, time
started = time.perf_counter()
sys.path.insert(0, sys.argv[2])
from scale_latency import EMBEDDER
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
settings = Settings(kb=sys.argv[1], embed={"provider": "none"}, llm={"provider": "none"})
with KnowledgeBase(settings, embedder=EMBEDDER) as kb:
    t = time.perf_counter()
    hits = kb.search(sys.argv[3], top_k=10, mode="hybrid")
    search = time.perf_counter() - t
print(json.dumps({"search": search, "process": time.perf_counter() - started,
                  "hits": [[h.chunk_id, round(h.score, 5)] for h in hits]}))
"""


# One more document of 100 chunks written through the store API (a small add after the copy was made).
WRITE = r"""
import random, sys
import numpy as np
sys.path.insert(0, sys.argv[2])
from ingest_speed import vocabulary
from scale_latency import document
from docqa.store import open_store
with open_store(sys.argv[1]) as stores:
    n = stores.stats()["documents"]
    record, text, parts, vectors = document(n, vocabulary(), 30, random.Random(n), np.random.default_rng(n))
    stores.documents.replace_document(record, text, parts, vectors=vectors)
"""


def build(kb: Path, chunks: int) -> None:
    sys.path.insert(0, str(HERE))
    from ingest_speed import vocabulary
    from scale_latency import build_all

    kb.parent.mkdir(parents=True, exist_ok=True)
    written, _ = build_all(str(kb), chunks, vocabulary(), 30, 20, False)
    print(f"built {kb}: {chunks:,} chunks in {written:.0f} s")


def run(src: str, kb: Path, query: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(Path(src).resolve()), "DOCQA_LOG_LEVEL": "error"}
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", RUN, str(kb), str(HERE), query], env=env, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(proc.stderr)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall"] = time.perf_counter() - started
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kb", default="/tmp/docqa-first-search/kb.db")
    parser.add_argument("--build", action="store_true")
    parser.add_argument("--chunks", type=int, default=304_000)
    parser.add_argument("--baseline", help="the src directory of the tree to compare with (e.g. main's)")
    parser.add_argument("--new", default=str(REPO / "src"))
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--query", default="vitamin d bone density")
    args = parser.parse_args()
    kb = Path(args.kb)
    if args.build:
        build(kb, args.chunks)
        return
    for packed in kb.parent.glob(kb.name + ".vectors*"):  # the new tree's first run rebuilds it
        packed.unlink()
    trees = {"baseline": args.baseline, "new": args.new} if args.baseline else {"new": args.new}
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    for _ in range(args.reps):
        for name, src in trees.items():
            runs[name].append(run(src, kb, args.query))
    print("| tree | first run: search s (process s) | later runs: search s, median (min) | process s, median |")
    print("|---|---:|---:|---:|")
    for name, rows in runs.items():
        later = rows[1:] or rows
        print(f"| {name} | {rows[0]['search']:.2f} ({rows[0]['process']:.2f}) | "
              f"{statistics.median(r['search'] for r in later):.2f} ({min(r['search'] for r in later):.2f}) | "
              f"{statistics.median(r['process'] for r in later):.2f} |")
    if args.baseline:
        same = all(r["hits"] == runs["baseline"][0]["hits"] for rows in runs.values() for r in rows)
        print(f"hits identical across trees and runs: {same}")
    env = {**os.environ, "PYTHONPATH": str(Path(args.new).resolve())}
    subprocess.run([sys.executable, "-c", WRITE, str(kb), str(HERE)], env=env, check=True)
    after = {name: [run(src, kb, args.query) for _ in range(2)] for name, src in trees.items()}
    print("after one more document (100 chunks) was written: " + "; ".join(
        f"{name} first {rows[0]['search']:.2f} s (process {rows[0]['process']:.2f} s), then {rows[1]['search']:.2f} s"
        for name, rows in after.items()))
    if args.baseline:
        print(f"hits identical across trees after the write: {after['new'][0]['hits'] == after['baseline'][0]['hits']}")


if __name__ == "__main__":
    main()
