"""BEIR-layout loading and trec_eval-style metrics (nDCG@k, Recall@k) shared by the benchmarks."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def load(name: str) -> tuple[dict, dict, dict]:
    """(corpus {id: {title, text}}, queries {id: text}, qrels {qid: {docid: grade}})."""
    root = SHARED / "retrieval" / name
    if not root.is_dir():
        raise SystemExit(f"{root} not found: the benchmark data ships beside the repo in ../shared/data")
    corpus = {d["_id"]: d for d in map(json.loads, (root / "corpus.jsonl").open(encoding="utf-8"))}
    queries = {q["_id"]: q["text"] for q in map(json.loads, (root / "queries.jsonl").open(encoding="utf-8"))}
    qrels: dict[str, dict[str, int]] = {}
    with (root / "qrels" / "test.tsv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    return corpus, {q: t for q, t in queries.items() if q in qrels}, qrels


def ndcg_at(ranked: list[str], rels: dict[str, int], k: int = 10) -> float:
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(rels.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], rels: dict[str, int], k: int = 100) -> float:
    relevant = {d for d, g in rels.items() if g > 0}
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


def evaluate(run: dict[str, list[str]], qrels: dict) -> dict[str, float]:
    """Mean nDCG@10 and Recall@100 over the queries in qrels (missing runs count as zero)."""
    n = len(qrels)
    return {
        "ndcg@10": sum(ndcg_at(run.get(q, []), r) for q, r in qrels.items()) / n,
        "recall@100": sum(recall_at(run.get(q, []), r) for q, r in qrels.items()) / n,
    }
