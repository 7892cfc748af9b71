"""Retrieval on the trust dev set: is the gold file (an evidence file) among the files of the top k hits?

    python benchmarks/trust/retrieval.py [--docset manpages-zh|all] [--mode bm25|hybrid] [--kb PATH] [--corpus DIR] [--reuse]
                                         [--split dev|test|all] [--chunks] [--by-kind] [--out rows.jsonl]

One knowledge base holds the whole built corpus (every corpus_*.tsv, `devset.py build` first): every other
file is a distractor, as in evaluate.py.  Each answerable question of the docset is searched as asked
(`KnowledgeBase.search`, top 20 chunks); hit@k is 1 when an evidence file holds one of the first k
chunks, and MRR uses the rank of the first such chunk.  Figures per split (dev, test) and overall.
BM25 only by default (no embedder: minutes, not an hour, on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import devset  # noqa: E402
import evaluate  # noqa: E402
import stages  # noqa: E402

from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.settings import Settings  # noqa: E402

TOP = 20


def questions(docset: str) -> list[dict]:
    """The answerable questions with evidence of one docset (`all`: of every docset)."""
    rows = [q for _, _, q, err in devset.load_questions() if q and not err]
    return [q for q in rows if docset in ("all", q["docset"]) and q["answerable"] and q.get("evidence")]


def rank_of_gold(kb: KnowledgeBase, q: dict, mode: str, corpus: evaluate.Corpus | None = None) -> tuple[int | None, int | None]:
    """1-based ranks of the first hit in an evidence file and of the first right chunk (one in an evidence
    file that overlaps a gold quote or holds every answers group: stages.right), None when none of the top TOP is.
    Without `corpus` the chunk rank is None."""
    gold = {devset.corpus_path(e["file"]) for e in q["evidence"]}
    hits = kb.search(q["question"], top_k=TOP, mode=mode)
    in_file = next((rank for rank, hit in enumerate(hits, 1) if any(hit.path.endswith("/" + g) for g in gold)), None)
    if corpus is None:
        return in_file, None
    golds = corpus.golds(q)
    chunk = next((rank for rank, h in enumerate(hits, 1)
                  if stages.right(corpus.file_of(h.path), h.char_start, h.char_end, h.text, q, golds)), None)
    return in_file, chunk


def summary(ranks: list[int | None]) -> str:
    n = len(ranks)
    at = {k: sum(1 for r in ranks if r is not None and r <= k) / n for k in (1, 5, 10, 20)}
    mrr = sum(1 / r for r in ranks if r is not None) / n
    return f"n={n:3d}  hit@1 {at[1]:.3f}  hit@5 {at[5]:.3f}  hit@10 {at[10]:.3f}  hit@20 {at[20]:.3f}  MRR {mrr:.3f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docset", default="manpages-zh", help="a docset's questions, or all")
    ap.add_argument("--corpus", default=str(devset.WORK / "corpus"), help="the built corpus (devset.py build)")
    ap.add_argument("--mode", default="bm25", choices=["bm25", "hybrid"])
    ap.add_argument("--kb", default=str(devset.WORK / "retrieval-kb.db"))
    ap.add_argument("--reuse", action="store_true", help="search the knowledge base as it is (no rebuild)")
    ap.add_argument("--split", default="all", choices=["dev", "test", "valid", "all"], help="the questions of one split (all: every split)")
    ap.add_argument("--chunks", action="store_true", help="also the rank of the first right chunk (the gold quote's, stages.right)")
    ap.add_argument("--by-kind", action="store_true", help="also the dev split by question kind and language")
    ap.add_argument("--out", help="write one JSON row per question (id, split, rank)")
    args = ap.parse_args(argv)
    corpus = Path(args.corpus)
    db = Path(args.kb)
    if not args.reuse:
        for stale in db.parent.glob(db.name + "*"):
            stale.unlink()
    embed = {"provider": "none"} if args.mode == "bm25" else {}
    with KnowledgeBase(Settings(kb=str(db), embed=embed, search={"mode": args.mode})) as kb:
        if not args.reuse:
            started = time.perf_counter()
            report = kb.add([corpus])
            print(f"added {len(report.added)} files, failed {len(report.failed)}, {time.perf_counter() - started:.1f} s")
        qs = [q for q in questions(args.docset) if args.split == "all" or devset.split(q["id"]) == args.split]
        corpus = evaluate.Corpus(kb, corpus) if args.chunks else None
        both = {q["id"]: rank_of_gold(kb, q, args.mode, corpus) for q in qs}
    ranks = {qid: r[0] for qid, r in both.items()}
    chunk_ranks = {qid: r[1] for qid, r in both.items()}
    for split in ("dev", "test", "valid"):
        if args.split in ("all", split):
            print(f"{args.docset} {split:4s} {summary([ranks[q['id']] for q in qs if devset.split(q['id']) == split])}")
            if args.chunks:
                print(f"{args.docset} {split:4s} chunk {summary([chunk_ranks[q['id']] for q in qs if devset.split(q['id']) == split])}")
    if args.split == "all":
        print(f"{args.docset} all  {summary(list(ranks.values()))}")
    if args.by_kind:  # the dev split by question kind and language: where retrieval loses
        dev = [q for q in qs if devset.split(q["id"]) == "dev"]
        for key in sorted({q["kind"] for q in dev} | {q["lang"] for q in dev}):
            ranked = [(chunk_ranks if args.chunks else ranks)[q["id"]] for q in dev if key in (q["kind"], q["lang"])]
            if ranked:
                print(f"  dev {key:14s} {summary(ranked)}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            out.writelines(json.dumps({"id": q["id"], "split": devset.split(q["id"]), "rank": ranks[q["id"]],
                                       "chunk_rank": chunk_ranks[q["id"]]}) + "\n" for q in qs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
