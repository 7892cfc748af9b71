"""What is particular to the PostgreSQL backend: URL selection, migrations, the missing extra,
and filtered vector search that keeps its recall against exact search."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from docqa.errors import SchemaError
from docqa.store import ChunkFilter, ChunkVectors, DocumentWrite, open_store
from docqa.store.fulltext import TextQuery
from docqa.store.postgres import PostgresStores
from store.backends import chunks, record


def test_a_search_reads_the_statistics_of_one_moment_while_a_writer_commits(postgres_server):
    """A writer adds 30 chunks holding a term in one commit and deletes them in the next, over and
    over; every search meanwhile sees the corpus of one moment: none of the 30 or all of them, and
    never the term's document frequency above the chunk count (read apart: a negative IDF's log,
    'math domain error', the API's 500 in tests/api/test_workers.py)."""
    url = postgres_server.new_database()
    with open_store(url) as reader, open_store(url) as writer:
        writer.documents.replace_document(record("base", "/d/base.md"), *chunks(["a note about backups"]))
        writes = [DocumentWrite(record(f"s{i}", f"/d/s{i}.md", content_hash=f"s{i}"), *chunks([f"service {i} keeps logs"]))
                  for i in range(30)]
        stop, rounds = threading.Event(), []

        def write() -> None:
            while not stop.is_set():
                writer.documents.replace_documents(writes)
                writer.documents.delete_documents([w.record.document_id for w in writes])
                rounds.append(1)

        thread = threading.Thread(target=write)
        thread.start()
        try:
            found, deadline = set(), time.monotonic() + 4
            while time.monotonic() < deadline or len(rounds) < 20:
                found.add(len(reader.fulltext.search_text(TextQuery(terms=["service", "logs"]), 50)))
                assert reader.fulltext.term_counts(["service"])[0]["service"] in (0, 30)
        finally:
            stop.set()
            thread.join()
    assert found == {0, 30}


def test_url_selects_postgres_and_migrates(postgres_server):
    url = postgres_server.new_database()
    with open_store(url) as stores:
        assert isinstance(stores, PostgresStores) and stores.schema_version == 13
        assert "password" not in stores.path


def test_newer_schema_is_refused(postgres_server):
    import psycopg

    url = postgres_server.new_database()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO _migrations VALUES (999, 'from the future', now()::text)")
    with pytest.raises(SchemaError, match="schema 999.*upgrade docqa"):
        open_store(url)


@pytest.mark.slow
def test_missing_extra_names_the_install_command(tmp_path):
    code = ("import sys; sys.modules['psycopg'] = None\n"  # as if docqa[postgres] were not installed
            "from docqa.store import open_store\n"
            "try:\n    open_store('postgresql://localhost/x')\n"
            "except Exception as exc:\n    print(type(exc).__name__, exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith("MissingExtraError") and "pip install 'docqa[postgres]'" in out


@pytest.mark.parametrize("exact_limit", [20_000, 0], ids=["exact-fallback", "hnsw-iterative-scan"])
def test_filtered_vector_search_keeps_recall(postgres_server, exact_limit):
    """Filtered search finds what an exact scan finds: narrow filters scan exactly; with the
    fallback off, HNSW's iterative scan keeps walking until enough rows pass the filter."""
    rng = np.random.default_rng(14)
    vectors = rng.standard_normal((3000, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with open_store(postgres_server.new_database()) as stores:
        stores.vectors.exact_limit = exact_limit
        for d in range(30):  # 30 documents of 100 chunks; every third is markdown
            text, found = chunks([f"chunk {d}-{i}" for i in range(100)])
            hashes = [f"v{d * 100 + i}" for i in range(100)]
            new = {h: vectors[d * 100 + i] for i, h in enumerate(hashes)}
            ext = "md" if d % 3 == 0 else "txt"
            stores.documents.replace_document(record(f"d{d}", f"/docs/{d}.{ext}", content_hash=f"h{d}"), text, found,
                                              vectors=ChunkVectors("m", hashes, new))
        owner = {cid: d for d in range(30) for cid in stores.documents.chunk_ids(f"d{d}")}
        ids = {cid: d * 100 + i for d in range(30) for i, cid in enumerate(stores.documents.chunk_ids(f"d{d}"))}
        recalls = {"all": [], "md": [], "one file": []}
        for q in rng.standard_normal((20, 32)).astype(np.float32):
            q /= np.linalg.norm(q)
            exact = np.argsort(-(vectors @ q))
            for name, where, keep in (("all", None, lambda d: True), ("md", ChunkFilter(types=("md",)), lambda d: d % 3 == 0),
                                      ("one file", ChunkFilter(path_glob="docs/7.txt"), lambda d: d == 7)):
                want = [int(i) for i in exact if keep(int(i) // 100)][:10]
                got = [ids[cid] for cid, _ in stores.vectors.search_vector(q, "m", 10, where)]
                assert all(keep(owner[cid]) for cid, _ in stores.vectors.search_vector(q, "m", 10, where))
                recalls[name].append(len(set(got) & set(want)) / 10)
        mean = {k: float(np.mean(v)) for k, v in recalls.items()}
        print(f"recall@10 against exact search, exact_limit {exact_limit}: {mean}")
        floor = 1.0 if exact_limit else 0.9  # the fallback is exact; HNSW is approximate, and must not collapse
        assert mean["one file"] >= floor and mean["md"] >= floor, mean
        assert mean["all"] >= 0.9, mean


FORKED_WRITER = """
import os, signal, sys, time
from docqa.store.postgres.db import PostgresDB, WRITE_LOCK
db = PostgresDB(sys.argv[1])
with db.transaction(documents=True):  # holds the writers' lock, as an ingest batch does
    child = os.fork()
    if child == 0:  # a parsing worker, forked while the batch is open
        time.sleep(60)
        os._exit(0)
    print("locked", child, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # the writer dies; its child lives on
"""


def test_a_killed_writers_forked_child_does_not_keep_its_lock(postgres_server, tmp_path):
    """A forked child lets go of the parent's connections, so the server ends the killed writer's session."""
    import os
    import signal
    import subprocess
    import sys
    import time

    import psycopg

    from docqa.store.postgres.db import WRITE_LOCK

    url = postgres_server.new_database()
    script = tmp_path / "writer.py"
    script.write_text(FORKED_WRITER, encoding="utf-8")
    out = tmp_path / "writer.out"
    with out.open("w") as sink:  # a file, not a pipe: the orphaned child holds it open
        subprocess.run([sys.executable, str(script), url], stdout=sink, stderr=subprocess.STDOUT, timeout=60)
    assert "locked" in out.read_text(), out.read_text()
    child = int(out.read_text().split()[1])
    try:
        started = time.monotonic()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SET lock_timeout = '20s'")
            conn.execute("SELECT pg_advisory_lock(%s)", (WRITE_LOCK,))  # LockNotAvailable if the child kept it
        assert time.monotonic() - started < 20
    finally:
        os.kill(child, signal.SIGKILL)
