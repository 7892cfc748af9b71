"""Does the local model's batch size change its vectors or its ranking?  One process, one session.

    python benchmarks/embed_batch.py [--queries 150] [--distractors 600] [--sizes 32,8]

The bundled USE model pads each batch to its longest window, so a vector depends a little on its
batch-mates.  For SciFact and CMRC 2018 dev: the first `queries` test queries, their relevant
documents plus `distractors` other documents (seeded), embedded as `KnowledgeBase` embeds chunks
(title and text, 500-character windows averaged, batches sorted by length) once per batch size.
Reported: the cosine between each document's vectors at the two sizes and the largest absolute
difference of any component (float noise would be ~1e-6; the quantized model scales a batch's
activations together, DynamicQuantizeLinear, so it is more), dense nDCG@10 / Recall@100
of the queries over that sub-corpus, and CPU seconds of each pass.  A sub-corpus, not the full
benchmark: it compares the batch sizes, it does not reproduce retrieval_hybrid.py's figures.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from beir import evaluate, load  # noqa: E402

from docqa.embed.base import embed_text  # noqa: E402
from docqa.embed.local import LocalEmbedder  # noqa: E402


def subset(name: str, n_queries: int, n_distractors: int) -> tuple[dict, dict, dict]:
    corpus, queries, qrels = load(name)
    picked = dict(list(queries.items())[:n_queries])
    qrels = {q: qrels[q] for q in picked}
    keep = {d for rels in qrels.values() for d in rels if d in corpus}
    others = sorted(set(corpus) - keep)
    keep |= set(random.Random(18).sample(others, min(n_distractors, len(others))))
    return {d: corpus[d] for d in sorted(keep)}, picked, qrels


def rank(embedder: LocalEmbedder, docs: dict, queries: dict) -> tuple[np.ndarray, dict, float]:
    started = time.process_time()
    ids = list(docs)
    vectors = embedder.embed_batch([embed_text(docs[d].get("title", ""), [], docs[d]["text"]) for d in ids], "passage")
    query_vectors = embedder.embed_batch(list(queries.values()), "query")
    cpu = time.process_time() - started
    scores = query_vectors @ vectors.T
    run = {q: [ids[k] for k in np.argsort(-scores[i])[:100]] for i, q in enumerate(queries)}
    return vectors, run, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--distractors", type=int, default=600)
    parser.add_argument("--sizes", default="32,8")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    embedder = LocalEmbedder()
    print("| data | docs | queries | batch | dense nDCG@10 | Recall@100 | CPU s | cosine to batch "
          f"{sizes[0]}: min / mean | max abs difference |\n|---|---:|---:|---:|---:|---:|---:|---|---:|")
    for name in ("scifact", "cmrc2018-dev"):
        docs, queries, qrels = subset(name, args.queries, args.distractors)
        first = None
        for size in sizes:
            embedder.batch_size = size
            vectors, run, cpu = rank(embedder, docs, queries)
            m = evaluate(run, qrels)
            cos = (vectors * first).sum(axis=1) if first is not None else np.ones(len(vectors))
            diff = np.abs(vectors - first).max() if first is not None else 0.0
            first = vectors if first is None else first
            print(f"| {name} | {len(docs)} | {len(queries)} | {size} | {m['ndcg@10']:.4f} | {m['recall@100']:.4f} | "
                  f"{cpu:.1f} | {cos.min():.5f} / {cos.mean():.6f} | {diff:.2e} |", flush=True)


if __name__ == "__main__":
    main()
