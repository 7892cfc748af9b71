"""BM25 retrieval quality and ingest speed through docqa's own index, with bm25s as the same-run baseline.

    python benchmarks/retrieval_bm25.py scifact          # BEIR SciFact (5,183 docs, 300 queries)
    python benchmarks/retrieval_bm25.py cmrc2018-dev     # Chinese CMRC 2018 dev (848 docs, 3,219 queries)

Each corpus document becomes a Markdown file `<id>.md` ("# title" + text), is ingested with
`KnowledgeBase.add` (parallel workers, the real pipeline), then every query is searched
(top 100 chunks, folded to documents).  The baseline is bm25s (Lucene BM25, k1=0.9, b=0.4 —
the data pack's reference setup) over the same texts in the same run, when installed
(`pip install bm25s PyStemmer jieba`).
"""

from __future__ import annotations

import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from beir import evaluate, load  # noqa: E402

from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.settings import Settings  # noqa: E402

WORK = Path(__file__).resolve().parent / ".work"


def write_corpus(corpus: dict, folder: Path) -> int:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    total = 0
    for doc_id, doc in corpus.items():
        text = f"# {doc.get('title') or doc_id}\n\n{doc['text']}\n"
        data = text.encode("utf-8")
        (folder / f"{doc_id}.md").write_bytes(data)
        total += len(data)
    return total


def docqa_run(kb: KnowledgeBase, queries: dict) -> tuple[dict, list[float]]:
    run, latencies = {}, []
    for qid, text in queries.items():
        started = time.perf_counter()
        hits = kb.search(text, top_k=100)
        latencies.append((time.perf_counter() - started) * 1000)
        ranked: list[str] = []
        for hit in hits:
            doc_id = Path(hit.path).stem
            if doc_id not in ranked:
                ranked.append(doc_id)
        run[qid] = ranked
    return run, latencies


def bm25s_run(corpus: dict, queries: dict, chinese: bool) -> dict | None:
    try:
        import bm25s
    except ImportError:
        print("baseline skipped: pip install bm25s PyStemmer jieba")
        return None
    ids = list(corpus)
    texts = [f"{corpus[i].get('title', '')} {corpus[i]['text']}" for i in ids]
    if chinese:
        import jieba

        jieba.setLogLevel(60)

        def cut(text: str) -> list[str]:
            return [w for w in jieba.cut_for_search(text) if w.strip() and any(ch.isalnum() for ch in w)]

        retriever = bm25s.BM25(k1=0.9, b=0.4)
        retriever.index([cut(t) for t in texts], show_progress=False)
        q_tokens = [cut(q) for q in queries.values()]
        docs, scores = retriever.retrieve(q_tokens, k=100, show_progress=False)
        results = [[j for j, sc in zip(row, srow) if sc > 0] for row, srow in zip(docs.tolist(), scores.tolist())]
    else:
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
        retriever = bm25s.BM25(k1=0.9, b=0.4)
        retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
        q = bm25s.tokenize(list(queries.values()), stopwords="en", stemmer=stemmer, show_progress=False)
        results = retriever.retrieve(q, k=100, show_progress=False, return_as="documents")
    return {qid: [ids[j] for j in row] for qid, row in zip(queries, results)}


def main(name: str) -> None:
    corpus, queries, qrels = load(name)
    folder = WORK / name / "docs"
    nbytes = write_corpus(corpus, folder)
    db = WORK / name / "kb.db"
    for stale in db.parent.glob("kb.db*"):
        stale.unlink()
    with KnowledgeBase(Settings(kb=str(db), embed={"provider": "none"}, search={"mode": "bm25"})) as kb:
        started = time.perf_counter()
        report = kb.add([folder])
        elapsed = time.perf_counter() - started
        run, lat = docqa_run(kb, queries)
        stats = kb.status.stats()
    stats["index_bytes"] = db.stat().st_size  # after close: WAL checkpointed and removed
    ours = evaluate(run, qrels)
    print(f"dataset {name}: {len(corpus)} docs, {len(queries)} queries, {nbytes / 1e6:.1f} MB as Markdown")
    print(f"ingest: {elapsed:.1f} s, {len(report.added) / elapsed:.0f} files/s, {nbytes / 1e6 / elapsed:.2f} MB/s, "
          f"{stats['chunks']} chunks, index {stats['index_bytes'] / 1e6:.1f} MB, failed {len(report.failed)}")
    lat.sort()
    print(f"docqa BM25: nDCG@10 {ours['ndcg@10']:.4f}  Recall@100 {ours['recall@100']:.4f}  "
          f"latency (top 100 with snippets) p50 {statistics.median(lat):.1f} ms p95 {lat[int(len(lat) * 0.95)]:.1f} ms")
    base = bm25s_run(corpus, queries, chinese=name.startswith("cmrc"))
    if base is not None:
        b = evaluate(base, qrels)
        print(f"bm25s baseline: nDCG@10 {b['ndcg@10']:.4f}  Recall@100 {b['recall@100']:.4f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "scifact")
