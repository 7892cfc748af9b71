"""Hybrid retrieval quality: BM25, dense, and their fusions, through docqa's own index, in one run.

    python benchmarks/retrieval_hybrid.py scifact [--window 500] [--max-windows 1]
    python benchmarks/retrieval_hybrid.py cmrc2018-dev
    python benchmarks/retrieval_hybrid.py scifact --queries 150 --distractors 600 --batch-size 32

`--queries N` takes a sub-corpus (the first N queries, their relevant documents and `--distractors`
other documents, seeded: embed_batch.py's); `--batch-size` sets the local embedder's batch (its
default otherwise), so two batch sizes can be compared on the same sub-corpus.

Each corpus document becomes a Markdown file, ingested with `KnowledgeBase.add` (the real
pipeline: chunks, enriched text, embeddings in the same SQLite file).  For every query the BM25
list and the dense list (top 100 chunks each) are taken once from the store; the fusions are
computed from those same lists, so the rows differ only in how they fuse.  The last row runs
`KnowledgeBase.search` with the shipped defaults end to end.  No reranker row: no cross-encoder
ships its weights in a package usable offline here (see ../shared/models/README.md).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from beir import evaluate, load  # noqa: E402
from embed_batch import subset  # noqa: E402
from embed_shapes import apply_shape  # noqa: E402
from retrieval_bm25 import write_corpus  # noqa: E402

from docqa.embed import make_embedder  # noqa: E402
from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.retrieve import convex, parse_query, rrf  # noqa: E402
from docqa.settings import Settings  # noqa: E402

WORK = Path(__file__).resolve().parent / ".work"
DEPTH = 100


def fold(ranked: list[tuple[str, float]], doc_of: dict[str, str]) -> list[str]:
    """Chunk ranking -> document ranking (first occurrence)."""
    return list(dict.fromkeys(doc_of[cid] for cid, _ in ranked))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset", nargs="?", default="scifact")
    ap.add_argument("--window", type=int, default=500, help="window_chars of the local embedder")
    ap.add_argument("--max-windows", type=int, default=0, help="read only the first N windows of a chunk (0: all)")
    ap.add_argument("--model", default="", help="local model: use-multilingual-v3 (default) or multilingual-e5-small")
    ap.add_argument("--queries", type=int, default=0, help="a sub-corpus: the first N queries (0: all)")
    ap.add_argument("--distractors", type=int, default=600, help="other documents in the sub-corpus")
    ap.add_argument("--batch-size", type=int, default=0, help="the local embedder's batch (0: its default)")
    args = ap.parse_args()
    if args.queries:
        corpus, queries, qrels = subset(args.dataset, args.queries, args.distractors)
    else:
        corpus, queries, qrels = load(args.dataset)
    part = f"-q{args.queries}-d{args.distractors}" if args.queries else ""
    folder = WORK / args.dataset / f"docs{part}"
    write_corpus(corpus, folder)
    embedder = make_embedder("local", args.model)
    if args.model in ("", "use-multilingual-v3"):
        apply_shape(embedder, f"w{args.window}" + (f"x{args.max_windows}" if args.max_windows else ""))
    if args.batch_size:
        embedder.batch_size = args.batch_size
    db = WORK / args.dataset / f"hybrid-{embedder.name}-{embedder.version.rsplit('-', 1)[-1]}{part}-b{embedder.batch_size}.db"
    settings = Settings(kb=str(db), embed={"provider": "local", "model": args.model})
    with KnowledgeBase(settings, embedder=embedder) as kb:
        started = time.perf_counter()
        report = kb.add([folder])
        ingest_s = time.perf_counter() - started
        store, key = kb.store, embedder.fingerprint.key
        doc_of = {}
        for record in kb.documents.list():
            for cid in store.documents.chunk_ids(record.document_id):
                doc_of[cid] = Path(record.path).stem
        lists, embed_ms = {}, []
        for qid, text in queries.items():
            t = time.perf_counter()
            vector = embedder.embed_query(text)
            embed_ms.append((time.perf_counter() - t) * 1000)
            lists[qid] = (store.fulltext.search_text(parse_query(text), DEPTH), store.vectors.search_vector(vector, key, DEPTH))
        runs = {
            "bm25": {q: fold(b, doc_of) for q, (b, d) in lists.items()},
            "dense": {q: fold(d, doc_of) for q, (b, d) in lists.items()},
            "rrf k=60": {q: fold(rrf([b, d], 60), doc_of) for q, (b, d) in lists.items()},
        }
        for alpha in (0.2, 0.3, 0.4, 0.5, 0.7):
            runs[f"convex dense {alpha}"] = {q: fold(convex(b, d, alpha), doc_of) for q, (b, d) in lists.items()}
        default_run, latency = {}, []
        for qid, text in queries.items():
            t = time.perf_counter()
            hits = kb.search(text, top_k=DEPTH)
            latency.append((time.perf_counter() - t) * 1000)
            default_run[qid] = list(dict.fromkeys(Path(h.path).stem for h in hits))
        runs[f"KnowledgeBase.search defaults ({kb.settings.search.fusion}, w={kb.models.retriever.dense_weight})"] = default_run
        chunks = kb.status.stats()["chunks"]
    print(f"dataset {args.dataset}: {len(corpus)} docs, {len(queries)} queries, {chunks} chunks; embedder {key}, "
          f"batch {embedder.batch_size}")
    print(f"ingest with embedding: {ingest_s:.1f} s ({chunks / ingest_s:.0f} chunks/s, {len(report.added)} files added now)")
    print(f"query embedding p50 {statistics.median(embed_ms):.1f} ms; default hybrid search (top {DEPTH}, snippets) "
          f"p50 {statistics.median(latency):.1f} ms p95 {sorted(latency)[int(len(latency) * 0.95)]:.1f} ms")
    print("\n| run | nDCG@10 | Recall@100 |\n|---|---|---|")
    for name, run in runs.items():
        m = evaluate(run, qrels)
        print(f"| {name} | {m['ndcg@10']:.4f} | {m['recall@100']:.4f} |")


if __name__ == "__main__":
    main()
