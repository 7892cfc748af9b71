"""Hybrid search at scale: embedding throughput, query latency per mode, index size, memory.

    python benchmarks/hybrid_scale.py [--chunks 100000] [--reuse]

Builds ~100k one-section chunks (the same synthetic corpus as ingest_speed.py's chunks100k),
ingests them without vectors, then embeds every chunk with `KnowledgeBase.reindex` and the
bundled model (the same batching code the ingest path uses), timing chunks/s.  Then 300 queries
of 2-6 words run in each mode, top 10 with snippets: BM25 alone is the same-run baseline.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest_speed import RNG, WORK, prose, vocabulary  # noqa: E402

from docqa.embed.local import LocalEmbedder  # noqa: E402
from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.settings import Settings  # noqa: E402


def build(folder: Path, target: int) -> None:
    words = vocabulary()
    folder.mkdir(parents=True, exist_ok=True)
    per_file = 100
    for i in range(target // per_file):
        body = "\n\n".join(f"## Part {s}\n\n{prose(words, 70)}" for s in range(per_file - 1))
        (folder / f"doc{i:05}.md").write_text(f"# Doc {i}\n\n{prose(words, 60)}\n\n{body}\n", encoding="utf-8")


def latencies(kb: KnowledgeBase, queries: list[str], mode: str) -> list[float]:
    for q in queries[:20]:
        kb.search(q, mode=mode)  # warm caches (the vector matrix loads on the first dense query)
    out = []
    for q in queries:
        t = time.perf_counter()
        kb.search(q, top_k=10, mode=mode)
        out.append((time.perf_counter() - t) * 1000)
    return sorted(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--reuse", action="store_true", help="keep an index built by an earlier run")
    args = ap.parse_args()
    root = WORK / f"hybrid{args.chunks}"
    db = root / "kb.db"
    embedder = LocalEmbedder()
    if not args.reuse:
        for stale in root.glob("kb.db*"):
            stale.unlink()
        build(root / "docs", args.chunks)
        with KnowledgeBase(Settings(kb=str(db), embed={"provider": "none"})) as kb:
            t = time.perf_counter()
            kb.add([root / "docs"])
            parse_s = time.perf_counter() - t
            chunks = kb.status.stats()["chunks"]
        print(f"ingest without vectors: {chunks} chunks in {parse_s:.1f} s ({chunks / parse_s:.0f} chunks/s)")
        with KnowledgeBase(Settings(kb=str(db)), embedder=embedder) as kb:
            t = time.perf_counter()
            last = [0.0]

            def progress(done: int, total: int) -> None:
                if time.perf_counter() - last[0] > 30:
                    last[0] = time.perf_counter()
                    print(f"  embedded {done}/{total} after {last[0] - t:.0f} s", flush=True)

            report = kb.documents.reindex(progress)
            embed_s = time.perf_counter() - t
        print(f"embedding (reindex, {embedder.fingerprint.key}): {report.embedded} chunks in {embed_s:.1f} s "
              f"= {report.embedded / embed_s:.1f} chunks/s")
    words = vocabulary()
    queries = [" ".join(RNG.choices(words, k=RNG.randint(2, 6))) for _ in range(300)]
    with KnowledgeBase(Settings(kb=str(db)), embedder=embedder) as kb:
        stats = kb.status.stats()
        embedder.embed_query("load the model")  # its load time is not a query's
        t = time.perf_counter()
        for q in queries:
            embedder.embed_query(q)
        query_embed = (time.perf_counter() - t) / len(queries) * 1000
        t = time.perf_counter()
        kb.search("load the vectors", mode="dense")
        load_s = time.perf_counter() - t
        print(f"index: {stats['chunks']} chunks, {stats['vectors']} vectors, {stats['index_bytes'] / 1e6:.0f} MB on disk; "
              f"vector matrix load {load_s:.2f} s; query embedding {query_embed:.1f} ms mean")
        for mode in ("bm25", "dense", "hybrid"):
            lat = latencies(kb, queries, mode)
            label = "baseline: BM25 alone" if mode == "bm25" else mode
            print(f"{label}: top 10, p50 {statistics.median(lat):.1f} ms, p95 {lat[int(len(lat) * 0.95)]:.1f} ms")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
