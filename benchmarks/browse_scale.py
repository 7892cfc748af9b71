"""Browsing at scale: list_docs, fetch_doc and grep_docs latency over 10,000 Markdown documents.

    python benchmarks/browse_scale.py [--docs 10000] [--calls 30] [--reuse]

Writes N small Markdown files (folders two or three deep, a title, 3-6 paragraphs of words from
the same vocabulary as ingest_speed.py, an error code or a version number in some), ingests them
without embeddings into benchmarks/.work/browse<N>/kb.db (kept with --reuse), then times each
browse call `--calls` times with varied arguments and prints p50 / p95 as a Markdown table.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest_speed import WORK, prose, vocabulary  # noqa: E402

from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.settings import Settings  # noqa: E402

AREAS = ["platform", "billing", "search", "security", "mobile", "data", "infra", "support", "legal", "sales",
         "research", "design"]
TOPICS = ["guides", "runbooks", "adr", "reference", "howto", "postmortems", "specs", "notes"]
RNG = random.Random(7)


def build(folder: Path, n: int) -> None:
    words = vocabulary()
    for i in range(n):
        area, topic = AREAS[i % len(AREAS)], TOPICS[(i // len(AREAS)) % len(TOPICS)]
        sub = folder / area / topic / (f"part{i % 5}" if i % 3 == 0 else "")
        sub.mkdir(parents=True, exist_ok=True)
        title = " ".join(RNG.choices(words, k=RNG.randint(2, 4))).title()
        paragraphs = [prose(words, RNG.randint(40, 90)) for _ in range(RNG.randint(3, 6))]
        if i % 20 == 0:
            paragraphs.insert(1, f"The service fails with ERR-{RNG.randint(1000, 9999)} when the quota is exceeded.")
        if i % 7 == 0:
            paragraphs.append(f"Fixed in version {RNG.randint(1, 4)}.{RNG.randint(0, 20)}.{RNG.randint(0, 9)}.")
        body = "\n\n".join(paragraphs[:2] + [f"## {words[RNG.randrange(len(words))].title()}"] + paragraphs[2:])
        (sub / f"doc{i:05}.md").write_text(f"# {title}\n\n{body}\n", encoding="utf-8")


def timed(calls: list[Callable[[], object]]) -> tuple[list[float], list[object]]:
    for call in calls[:2]:
        call()  # warm the page cache and the statement cache
    times, results = [], []
    for call in calls:
        t = time.perf_counter()
        results.append(call())
        times.append((time.perf_counter() - t) * 1000)
    return times, results


def row(name: str, times: list[float], detail: str) -> str:
    times = sorted(times)
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    return f"| {name} | {len(times)} | {statistics.median(times):.1f} | {p95:.1f} | {detail} |"


def measure(kb: KnowledgeBase, calls: int) -> list[str]:
    docs = [r for r in kb.documents.list() if r.status == "ok"]
    words = sorted({w for r in docs[:2000] for w in r.keywords if w.isalpha() and len(w) > 4})
    sample = RNG.sample(docs, calls)
    pages = kb.browse.list_docs().pages
    rows = []

    t, res = timed([lambda: kb.browse.list_docs()] * calls)
    rows.append(row("list_docs page 1 (50 lines)", t, f"{res[0].total:,} documents, {res[0].pages} pages"))
    greps = RNG.sample(words, calls)
    t, res = timed([lambda g=g: kb.browse.list_docs(grep=g) for g in greps])
    rows.append(row("list_docs grep=<keyword>", t, f"median {statistics.median(r.total for r in res):.0f} matches"))
    t, res = timed([lambda p=p: kb.browse.list_docs(page=p) for p in RNG.choices(range(pages // 2, pages + 1), k=calls)])
    rows.append(row("list_docs deep page", t, f"pages {pages // 2}–{pages}"))

    t, res = timed([lambda d=d: kb.browse.fetch_doc(d.document_id) for d in sample])
    rows.append(row("fetch_doc offset=1", t, f"median {statistics.median(len(r.text) for r in res):,.0f} chars"))
    middles = [(d.document_id, max(1, kb.browse.fetch_doc(d.document_id).total_lines // 2)) for d in sample]
    t, res = timed([lambda d=d, o=o: kb.browse.fetch_doc(d, offset=o, limit=50) for d, o in middles])
    rows.append(row("fetch_doc middle offset", t, "limit 50"))
    t, res = timed([lambda d=d: kb.browse.fetch_doc("/".join(Path(d.path).parts[-2:])) for d in sample])
    rows.append(row("fetch_doc by path suffix", t, "folder/file.md"))

    literals = RNG.sample(words, calls)
    t, res = timed([lambda w=w: kb.browse.grep_docs(w) for w in literals])
    rows.append(row("grep_docs literal", t, _grep_detail(res)))
    regexes = [r"ERR-\d{4}", r"version \d+\.\d+\.\d+", r"\bquota\b.*exceeded", r"^## [A-Z]\w+$"]
    patterns = [regexes[i % len(regexes)] for i in range(calls)]
    t, res = timed([lambda p=p: kb.browse.grep_docs(p) for p in patterns])
    rows.append(row("grep_docs regex", t, _grep_detail(res)))
    globs = [f"{AREAS[i % len(AREAS)]}/**" for i in range(calls)]
    t, res = timed([lambda w=w, g=g: kb.browse.grep_docs(w, path_glob=g) for w, g in zip(literals, globs)])
    rows.append(row("grep_docs literal + path_glob", t, _grep_detail(res)))
    t, res = timed([lambda: kb.browse.grep_docs("zzzz-no-match")] * calls)
    rows.append(row("grep_docs no match (full scan)", t, _grep_detail(res)))
    return rows


def _grep_detail(results: list) -> str:
    total = statistics.median(r.total for r in results)
    searched = statistics.median(r.searched for r in results)
    complete = sum(r.complete for r in results)
    return f"median {total:,.0f} matching lines, {searched:,.0f} docs searched, {complete}/{len(results)} complete"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=10_000)
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--reuse", action="store_true", help="keep the knowledge base built by an earlier run")
    args = ap.parse_args()
    root = WORK.parent / f"browse{args.docs // 1000}k"
    db = root / "kb.db"
    settings = Settings(kb=str(db), embed={"provider": "none"})
    if not (args.reuse and db.exists()):
        for stale in root.glob("kb.db*"):
            stale.unlink()
        if not (root / "docs").exists():
            build(root / "docs", args.docs)
        with KnowledgeBase(settings) as kb:
            t = time.perf_counter()
            report = kb.add([root / "docs"])
            print(f"ingested {len(report.added):,} documents in {time.perf_counter() - t:.1f} s")
    with KnowledgeBase(settings) as kb:
        stats = kb.status.stats()
        print(f"{stats['documents']:,} documents, {stats['chunks']:,} chunks, {stats['index_bytes'] / 1e6:.0f} MB\n")
        print("| call | calls | p50 ms | p95 ms | result |")
        print("|---|---|---|---|---|")
        for line in measure(kb, args.calls):
            print(line)


if __name__ == "__main__":
    main()
