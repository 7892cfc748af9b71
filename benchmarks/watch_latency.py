"""`docqa watch` latency: from a file saved to searchable (`kb.search` finds the word just written).

    python benchmarks/watch_latency.py                 # every case, 20 saves each
    python benchmarks/watch_latency.py --saves 5 small # some cases: small, large; --embed none|local|both
    python benchmarks/watch_latency.py --debounce 50   # a shorter quiet period than docqa watch's 200 ms

A watcher runs on its own thread with its own KnowledgeBase (as `docqa watch` does); this thread
saves a file with a new unique word, then polls `kb.search(word)` (BM25: the chunk, its full-text
row and its vector are written in one transaction, so the word is findable exactly when the save
is indexed) every 5 ms until it is found.  Each save waits for the one before it.

Cases: a small text file (a new file each save: created); a 1 MB Markdown file (the same file
edited each save: one paragraph changes, so with embeddings only the changed chunks are embedded);
a rename in a folder of 300 files (each "save" renames one: the whole folder is synced, so the
pipeline sees both ends and moves the document; polled with `kb.documents.get(new path)`).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import threading
import time
from pathlib import Path

from docqa.errors import NotFoundError
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

WORK = Path(__file__).resolve().parent / ".work" / "watch"
RNG = random.Random(15)
WORDS = ("river stone harbor lantern meadow signal copper garden window market bridge winter summer forest "
         "engine paper circle travel silver yellow morning evening letter number island valley thunder").split()


def big_markdown(size: int = 1_000_000) -> list[str]:
    """About `size` bytes of Markdown: sections of paragraphs (a list, so one paragraph can change)."""
    parts, total, n = [], 0, 0
    while total < size:
        if n % 8 == 0:
            parts.append(f"## Section {n // 8}\n")
        words = [RNG.choice(WORDS) for _ in range(120)]
        parts.append(" ".join(words).capitalize() + ".\n")
        total += len(parts[-1]) + 1
        n += 1
    return parts


def run_case(name: str, embed: str, saves: int, quiet_ms: int) -> dict:
    folder = WORK / f"{name}-{embed}"
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "docs").mkdir(parents=True)
    settings = Settings(kb=str(folder / "kb.db"), embed={"provider": embed})
    docs = folder / "docs"
    big = big_markdown() if name == "large" else []
    if big:
        (docs / "big.md").write_text("# Big\n\n" + "\n".join(big), encoding="utf-8")
    for i in range(300 if name == "rename" else 0):
        (docs / f"doc{i}.md").write_text(f"# Document {i}\n\n" + " ".join(RNG.choices(WORDS, k=200)) + "\n", encoding="utf-8")
    batches, stop, ready = [], threading.Event(), threading.Event()

    def watch() -> None:
        with KnowledgeBase(settings) as kb:
            kb.documents.watcher([docs], quiet_ms=quiet_ms).run(stop, lambda b: (batches.append(b), ready.set()))

    thread = threading.Thread(target=watch, daemon=True)
    started = time.perf_counter()
    thread.start()
    ready.wait()
    resync = time.perf_counter() - started
    latencies = []
    with KnowledgeBase(settings, embedder=None) as reader:
        for i in range(saves):
            word = f"zq{i}x{RNG.randint(10**6, 10**7)}"
            saved = _save(docs, name, big, word, i)
            while not _found(reader, name, docs, word, i):
                time.sleep(0.005)
            latencies.append(time.perf_counter() - saved)
    stop.set()
    thread.join(60)
    changes = [b for b in batches[1:] if b.report is not None]
    if name == "rename":  # each a move, none re-parsed
        assert sum(len(b.report.moved) for b in changes) == saves and not any(b.report.added for b in changes)
    return {"case": name, "embed": embed, "saves": saves, "resync_s": resync, "batches": len(changes),
            "median": statistics.median(latencies), "p95": _p95(latencies), "max": max(latencies),
            "ingest_median": statistics.median(b.latency - quiet_ms / 1000 for b in changes)}


def _found(reader: KnowledgeBase, name: str, docs: Path, word: str, i: int) -> bool:
    if name != "rename":
        return bool(reader.search(word, top_k=1, mode="bm25"))
    try:
        return reader.documents.get(docs / f"renamed{i}.md").status == "ok"
    except NotFoundError:
        return False


def _save(docs: Path, name: str, big: list[str], word: str, i: int) -> float:
    if name == "rename":
        os.rename(docs / f"doc{i}.md", docs / f"renamed{i}.md")
    elif name == "small":
        (docs / f"note{i}.txt").write_text(f"Note {i}\n\nToday the {word} arrived at the harbor.\n", encoding="utf-8")
    else:
        big[len(big) // 2] = f"The edited paragraph now mentions {word} once.\n"
        (docs / "big.md").write_text("# Big\n\n" + "\n".join(big), encoding="utf-8")
    return time.perf_counter()


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", default=["small", "large", "rename"])
    parser.add_argument("--saves", type=int, default=20)
    parser.add_argument("--embed", choices=["none", "local", "both"], default="both")
    parser.add_argument("--debounce", type=int, default=200, help="the quiet period in ms (docqa watch --debounce)")
    args = parser.parse_args()
    embeds = ["none", "local"] if args.embed == "both" else [args.embed]
    print("| file | embeddings | quiet period | saves | median | p95 | max | ingest median (batch, less the quiet period) | resync at start |")
    print("|---|---|---|---|---|---|---|---|---|")
    for embed in embeds:
        for case in args.cases:
            r = run_case(case, embed, args.saves, args.debounce)
            label = {"small": "small .txt (created)", "large": "1 MB .md (edited)", "rename": "rename in 300 files"}[case]
            print(f"| {label} | {embed} | {args.debounce} ms | {r['saves']} | {r['median']:.2f} s | {r['p95']:.2f} s | {r['max']:.2f} s | "
                  f"{r['ingest_median']:.2f} s | {r['resync_s']:.1f} s |", flush=True)
    shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
