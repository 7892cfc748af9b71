"""Reranking: nDCG@10 and latency of the rerank stage against the fused order, in one run.

    python benchmarks/rerank.py scifact --queries 40 --llm-url http://127.0.0.1:8080/v1 --styles listwise,graded
    python benchmarks/rerank.py cmrc2018-dev --queries 40 --llm-url ... --styles listwise
    python benchmarks/rerank.py scifact --queries 0        # the no-model rows only, every query

Each corpus document becomes a Markdown file ingested with `KnowledgeBase.add` (as
retrieval_hybrid.py does).  Every query is searched once with the shipped defaults (top 100,
`search.rerank: none`): that is the baseline.  The no-model rows re-rank the same BM25 and dense
lists (pseudo-relevance feedback over BM25, other fusion weights).  The LLM rows rerank the
baseline's best `--depth` hits of the first `--queries` queries (a fixed shuffle) with the chat
model at `--llm-url` (e.g. `docqa model serve`), and are compared with the baseline on the same
queries.  Documents are ranked by their best chunk.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from beir import evaluate, load  # noqa: E402
from retrieval_bm25 import write_corpus  # noqa: E402

from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.llm.deadline import reply_within  # noqa: E402
from docqa.retrieve import convex, parse_query  # noqa: E402
from docqa.retrieve.fusion import min_max  # noqa: E402
from docqa.retrieve.rerank import LLMReranker  # noqa: E402
from docqa.retrieve.weights import term_weights  # noqa: E402
from docqa.settings import Settings  # noqa: E402
from docqa.store.fulltext import TextQuery  # noqa: E402
from docqa.text import query_terms  # noqa: E402

WORK = Path(__file__).resolve().parent / ".work"
DEPTH = 100


def fold(chunk_ids: list[str], doc_of: dict[str, str]) -> list[str]:
    return list(dict.fromkeys(doc_of[c] for c in chunk_ids))


def prf(store, query: str, bm25: list[tuple[str, float]], docs: int, terms: int, weight: float) -> list[tuple[str, float]]:
    """RM3-like feedback: the best `terms` new words of the top `docs` BM25 hits (tf x idf), searched
    alone, their normalised scores added to the original's with `weight`."""
    original = set(query_terms(query))
    heads = store.documents.text_heads([c for c, _ in bm25[:docs]], chars=4000)
    tf = Counter(t for text in heads.values() for t in query_terms(text) if t not in original and len(t) > 2)
    idf = term_weights(store.fulltext.term_counts, list(tf))
    expansion = sorted(tf, key=lambda t: -tf[t] * idf.get(t, 0.0))[:terms]
    extra = store.fulltext.search_text(TextQuery(terms=expansion), DEPTH) if expansion else []
    a, b = min_max(bm25), min_max(extra)
    fused = {c: a.get(c, 0.0) + weight * b.get(c, 0.0) for c in {**a, **b}}
    return sorted(fused.items(), key=lambda kv: -kv[1])[:DEPTH]


def open_kb(dataset: str) -> tuple[KnowledgeBase, dict[str, str]]:
    corpus, _, _ = load(dataset)
    folder = WORK / dataset / "docs"
    write_corpus(corpus, folder)
    db = WORK / dataset / "rerank.db"
    kb = KnowledgeBase(Settings(kb=str(db)))
    kb.add([folder])
    doc_of = {}
    for record in kb.documents():
        for cid in kb.store.documents.chunk_ids(record.document_id):
            doc_of[cid] = Path(record.path).stem
    return kb, doc_of


def no_model_rows(kb: KnowledgeBase, queries: dict, doc_of: dict) -> dict[str, dict]:
    store, embedder = kb.store, kb.embedder
    key = embedder.fingerprint.key
    lists = {q: (store.fulltext.search_text(parse_query(t), DEPTH), store.vectors.search_vector(embedder.embed_query(t), key, DEPTH))
             for q, t in queries.items()}
    runs = {}
    for w in (0.2, 0.3):
        runs[f"convex dense {w}"] = {q: fold([c for c, _ in convex(b, d, w)], doc_of) for q, (b, d) in lists.items()}
    for docs, terms, weight in ((3, 10, 0.3), (5, 10, 0.3), (3, 20, 0.5), (5, 20, 0.2)):
        name = f"BM25 PRF (top {docs} docs, {terms} terms, weight {weight}) + convex 0.3"
        runs[name] = {q: fold([c for c, _ in convex(prf(store, queries[q], b, docs, terms, weight), d, 0.3)], doc_of)
                      for q, (b, d) in lists.items()}
    return runs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset", nargs="?", default="scifact")
    ap.add_argument("--queries", type=int, default=40, help="queries the LLM reranks (0: no LLM rows)")
    ap.add_argument("--depth", type=int, default=10, help="hits the reranker reads")
    ap.add_argument("--llm-url", default="http://127.0.0.1:8080/v1")
    ap.add_argument("--styles", default="listwise,graded")
    ap.add_argument("--timeout", type=float, default=600.0, help="the rerank time budget per query (s)")
    ap.add_argument("--no-prf", action="store_true")
    args = ap.parse_args()
    _, queries, qrels = load(args.dataset)
    kb, doc_of = open_kb(args.dataset)
    with kb:
        baseline, hits_of, latency = {}, {}, []
        for qid, text in queries.items():
            t = time.perf_counter()
            hits = kb.search(text, top_k=DEPTH, rerank="none")
            latency.append((time.perf_counter() - t) * 1000)
            hits_of[qid] = hits
            baseline[qid] = fold([h.chunk_id for h in hits], doc_of)
        print(f"dataset {args.dataset}: {len(queries)} queries, {kb.stats()['chunks']} chunks; "
              f"search p50 {statistics.median(latency):.0f} ms", flush=True)
        print("\n| run (every query) | nDCG@10 | Recall@100 |\n|---|---|---|")
        rows = {"KnowledgeBase.search defaults (rerank none) — baseline": baseline}
        if not args.no_prf:
            rows.update(no_model_rows(kb, queries, doc_of))
        for name, run in rows.items():
            m = evaluate(run, qrels)
            print(f"| {name} | {m['ndcg@10']:.4f} | {m['recall@100']:.4f} |", flush=True)
        if args.queries:
            llm_rows(args, kb, queries, qrels, hits_of, baseline, doc_of)


def llm_rows(args, kb, queries, qrels, hits_of, baseline, doc_of) -> None:
    from docqa.llm.openai_compat import OpenAICompatModel

    model = OpenAICompatModel(args.llm_url, "local", timeout=args.timeout + 60, max_retries=0)
    subset = sorted(queries)
    random.Random(16).shuffle(subset)
    subset = subset[: args.queries]
    sub_qrels = {q: qrels[q] for q in subset}
    print(f"\nLLM reranking of the best {args.depth} hits, {len(subset)} queries (shuffle seed 16), model at {args.llm_url}")
    print("\n| run (subset) | nDCG@10 | rerank p50 s | p95 s | fallbacks |\n|---|---|---|---|---|")
    m = evaluate({q: baseline[q] for q in subset}, sub_qrels)
    print(f"| fused order (rerank none) — baseline | {m['ndcg@10']:.4f} | 0 | 0 | – |", flush=True)
    styles = args.styles.split(",")
    rerankers = {st: LLMReranker(lambda s, u, k, d: reply_within(model, s, u, k, d), st) for st in styles}
    runs, seconds, fallbacks = ({st: {} for st in styles}, {st: [] for st in styles}, {st: Counter() for st in styles})
    for qid in subset:  # the styles one after the other per query: the server reuses the cached passages
        hits = hits_of[qid]
        for st, reranker in rerankers.items():
            ordered, report = reranker.rerank(queries[qid], hits[: args.depth], args.timeout)
            seconds[st].append(report.ms / 1000)
            if report.status == "fallback":
                fallbacks[st][report.reason.split(":")[0]] += 1
            runs[st][qid] = fold([h.chunk_id for h in [*ordered, *hits[args.depth:]]], doc_of)
    for st in styles:
        m = evaluate(runs[st], sub_qrels)
        p95 = sorted(seconds[st])[int(len(seconds[st]) * 0.95)]
        print(f"| llm {st} | {m['ndcg@10']:.4f} | {statistics.median(seconds[st]):.1f} | {p95:.1f} | "
              f"{sum(fallbacks[st].values())} {dict(fallbacks[st]) or ''} |", flush=True)


if __name__ == "__main__":
    main()
