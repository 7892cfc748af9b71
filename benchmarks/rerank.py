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


def open_kb(dataset: str, embed_model: str = "") -> tuple[KnowledgeBase, dict[str, str]]:
    corpus, _, _ = load(dataset)
    folder = WORK / dataset / "docs"
    if not folder.is_dir():
        write_corpus(corpus, folder)
    db = WORK / dataset / (f"rerank-{embed_model}.db" if embed_model else "rerank.db")
    kb = KnowledgeBase(Settings(kb=str(db), embed={"provider": "local", "model": embed_model}))
    kb.add([folder])
    doc_of = {}
    for record in kb.documents.list():
        for cid in kb.store.documents.chunk_ids(record.document_id):
            doc_of[cid] = Path(record.path).stem
    return kb, doc_of


def no_model_rows(kb: KnowledgeBase, queries: dict, doc_of: dict) -> dict[str, dict]:
    store, embedder = kb.store, kb.models.embedder
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


def field_weight_run(kb: KnowledgeBase, queries: dict, doc_of: dict, weights: str) -> dict[str, list[str]]:
    """KnowledgeBase.search with other BM25 field weights (the SQLite store reads them per query)."""
    from docqa.store.sqlite import fulltext

    shipped = fulltext.BM25_WEIGHTS
    fulltext.BM25_WEIGHTS = tuple(float(w) for w in weights.split(","))
    try:
        return {q: fold([h.chunk_id for h in kb.search(t, top_k=DEPTH, rerank="none")], doc_of) for q, t in queries.items()}
    finally:
        fulltext.BM25_WEIGHTS = shipped


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset", nargs="?", default="scifact")
    ap.add_argument("--queries", type=int, default=40, help="queries the LLM reranks (0: no LLM rows)")
    ap.add_argument("--depth", type=int, default=10, help="hits the reranker reads")
    ap.add_argument("--llm-url", default="http://127.0.0.1:8080/v1")
    ap.add_argument("--styles", default="listwise,graded")
    ap.add_argument("--chars", type=int, default=240, help="characters of each hit the model reads")
    ap.add_argument("--timeout", type=float, default=600.0, help="the rerank time budget per query (s)")
    ap.add_argument("--no-prf", action="store_true")
    ap.add_argument("--embed-model", default="", help="the local embedding model (default: use-multilingual-v3)")
    ap.add_argument("--subset-only", action="store_true", help="search only the LLM subset (no every-query rows)")
    ap.add_argument("--field-weights", default="", help="BM25 weights of title,keywords,summary,content to try, ';'-separated")
    args = ap.parse_args()
    _, queries, qrels = load(args.dataset)
    if args.subset_only:
        order = sorted(queries)
        random.Random(16).shuffle(order)
        queries = {q: queries[q] for q in order[: args.queries]}
        qrels = {q: qrels[q] for q in queries}
    kb, doc_of = open_kb(args.dataset, args.embed_model)
    with kb:
        baseline, hits_of, latency = {}, {}, []
        for qid, text in queries.items():
            t = time.perf_counter()
            hits = kb.search(text, top_k=DEPTH, rerank="none")
            latency.append((time.perf_counter() - t) * 1000)
            hits_of[qid] = hits
            baseline[qid] = fold([h.chunk_id for h in hits], doc_of)
        print(f"dataset {args.dataset}: {len(queries)} queries, {kb.status.stats()['chunks']} chunks; "
              f"search p50 {statistics.median(latency):.0f} ms", flush=True)
        print("\n| run (every query) | nDCG@10 | Recall@100 |\n|---|---|---|")
        rows = {"KnowledgeBase.search defaults (rerank none) — baseline": baseline}
        if not args.no_prf:
            rows.update(no_model_rows(kb, queries, doc_of))
        for weights in filter(None, args.field_weights.split(";")):
            rows[f"field weights {weights} (title, keywords, summary, content)"] = field_weight_run(kb, queries, doc_of, weights)
        for name, run in rows.items():
            m = evaluate(run, qrels)
            print(f"| {name} | {m['ndcg@10']:.4f} | {m['recall@100']:.4f} |", flush=True)
        if args.queries:
            llm_rows(args, kb, queries, qrels, hits_of, baseline, doc_of)


def llm_rows(args, kb, queries, qrels, hits_of, baseline, doc_of) -> None:
    from beir import ndcg_at
    from docqa.llm.openai_compat import OpenAICompatModel

    model = OpenAICompatModel(args.llm_url, "local", timeout=args.timeout + 60, max_retries=0)
    subset = sorted(queries)
    random.Random(16).shuffle(subset)
    subset = subset[: args.queries]
    styles = args.styles.split(",")
    rerankers = {st: LLMReranker(lambda s, u, k, d: reply_within(model, s, u, k, d), st) for st in styles}
    for reranker in rerankers.values():
        reranker.passage_chars = args.chars
    print(f"\nLLM reranking of the best {args.depth} hits, up to {len(subset)} queries (shuffle seed 16), "
          f"model at {args.llm_url}, {args.chars} characters a passage; one line per query and style as it finishes:", flush=True)
    done: dict[str, list[tuple[float, float, float, str]]] = {st: [] for st in styles}
    for qid in subset:  # the styles one after the other per query: the server reuses the cached passages
        hits = hits_of[qid]
        base = ndcg_at(baseline[qid], qrels[qid])
        for st, reranker in rerankers.items():
            ordered, report = reranker.rerank(queries[qid], hits[: args.depth], args.timeout)
            ranked = fold([h.chunk_id for h in [*ordered, *hits[args.depth:]]], doc_of)
            done[st].append((base, ndcg_at(ranked, qrels[qid]), report.ms / 1000, report.status))
            print(f"q {qid} {st} fused {base:.4f} reranked {done[st][-1][1]:.4f} {report.ms / 1000:.0f} s "
                  f"{report.status} {report.reason or ''}", flush=True)
    summarize(done)


def summarize(done: dict[str, list[tuple[float, float, float, str]]]) -> None:
    print("\n| run (subset) | queries | nDCG@10 fused (baseline) | nDCG@10 reranked | rerank p50 s | max s | fallbacks |")
    print("|---|---|---|---|---|---|---|")
    for st, rows in done.items():
        if rows:
            n = len(rows)
            print(f"| llm {st} | {n} | {sum(r[0] for r in rows) / n:.4f} | {sum(r[1] for r in rows) / n:.4f} | "
                  f"{statistics.median(r[2] for r in rows):.0f} | {max(r[2] for r in rows):.0f} | "
                  f"{sum(r[3] == 'fallback' for r in rows)} |", flush=True)


if __name__ == "__main__":
    main()
