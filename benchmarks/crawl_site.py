"""Crawling documentation sites (issue 32): speed on loopback, unchanged re-crawls, retrieval parity with files.

    python benchmarks/crawl_site.py [--workers 1]

The site is real documentation saved on this machine, served by the test's loopback server
(tests/crawl/site.py: ETag, Last-Modified, robots.txt, a sitemap index): the Node.js API pages,
Valgrind's manual and libffi's manual from /usr/share/doc, kept under /docs/<set>/.  Measured:

- first crawl: pages per second, against adding the same files from disk (the baseline, same run);
- an unchanged re-crawl: the share of 304 answers and its time against the first crawl's;
- retrieval: recall@5 of held-out style queries (a sentence of a page's main text with every third
  word dropped, two per page, seeded) over the crawled site and over the same pages added as files.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from crawl.site import Site  # noqa: E402
from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.settings import Settings  # noqa: E402

SETS = {"node": "/usr/share/doc/nodejs/api", "valgrind": "/usr/share/doc/valgrind/html", "libffi": "/usr/share/doc/libffi8/html"}
SKIP = {"all.html"}  # Node's every page in one: a duplicate of the others


def saved_pages() -> dict[str, Path]:
    """URL path -> saved file of every page of the documentation sets found on this machine."""
    out = {}
    for name, folder in SETS.items():
        for file in sorted(Path(folder).glob("*.html")) if Path(folder).is_dir() else []:
            if file.name not in SKIP:
                out[f"/docs/{name}/{file.name}"] = file
    return out


def settings(kb: Path, workers: int) -> Settings:
    return Settings(kb=str(kb), embed={"provider": "none"}, llm={"provider": "none"}, search={"mode": "bm25"},
                    ingest={"workers": workers}, crawl={"rate": 0, "max_pages": 5000, "max_depth": 20})


def queries(kb: KnowledgeBase, per_page: int = 2, seed: int = 7) -> list[tuple[str, str]]:
    """(query, page file name): sentences of each page's stored text, every third word dropped."""
    rng = random.Random(seed)
    out = []
    for record in sorted(kb.documents.list(), key=lambda r: r.path):
        text = kb.documents.text(record.document_id)
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if 8 <= len(s.split()) <= 30]
        for s in rng.sample(sentences, min(per_page, len(sentences))):
            words = s.split()
            out.append((" ".join(w for i, w in enumerate(words) if i % 3 != 2), page_name(record.path)))
    return out


def page_name(path: str) -> str:
    """`node/fs.html` for a URL or a file path alike."""
    parts = path.replace("\\", "/").split("/")
    return "/".join(parts[-2:])


def recall(kb: KnowledgeBase, qs: list[tuple[str, str]], k: int = 5) -> float:
    found = sum(any(page_name(h.path) == gold for h in kb.search(q, top_k=k)) for q, gold in qs)
    return found / len(qs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, default=1, help="parser processes for the files baseline (ingest.workers)")
    args = parser.parse_args()
    pages = saved_pages()
    if not pages:
        sys.exit("no saved documentation pages under /usr/share/doc (nodejs, valgrind, libffi8)")
    work = Path(tempfile.mkdtemp(prefix="crawl-bench-"))
    files = work / "files"
    for path, file in pages.items():
        target = files / path.removeprefix("/docs/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(file, target)
    size = sum(f.stat().st_size for f in pages.values())
    print(f"{len(pages)} pages, {size / 1e6:.1f} MB ({', '.join(SETS)})")
    served = {path: ("text/html", file.read_bytes()) for path, file in pages.items()}
    served["/docs/"] = ("text/html", "".join(f'<a href="{p}">{p}</a>' for p in pages).encode())
    with Site(served) as site, KnowledgeBase(settings(work / "web.db", args.workers)) as web, \
            KnowledgeBase(settings(work / "files.db", args.workers)) as disk:
        t = time.perf_counter()
        first = web.add_site(site.url("/docs/"))
        t_first = time.perf_counter() - t
        asked = len(site.requests)
        t = time.perf_counter()
        again = web.add_site(site.url("/docs/"))
        t_again = time.perf_counter() - t
        answers = [s for p, s in site.requests[asked:] if p.startswith("/docs/") and p.endswith(".html")]
        t = time.perf_counter()
        added = disk.add([files])
        t_files = time.perf_counter() - t
        n = len(first.added)
        print(f"first crawl: {n} pages in {t_first:.2f} s = {n / t_first:.1f} pages/s "
              f"({first.crawl['bytes'] / 1e6:.1f} MB fetched, failed {len(first.failed)})")
        print(f"files baseline: {len(added.added)} files in {t_files:.2f} s = {len(added.added) / t_files:.1f} files/s")
        print(f"unchanged re-crawl: {len(again.unchanged)} unchanged, {answers.count(304)}/{len(answers)} page answers "
              f"304 ({answers.count(304) / max(len(answers), 1):.0%}), {t_again:.2f} s = {t_again / t_first:.1%} of the "
              f"first crawl; parsed {len(again.added) + len(again.updated)}")
        qs = queries(disk)
        print(f"recall@5 over {len(qs)} queries: crawled site {recall(web, qs):.3f}, same pages as files {recall(disk, qs):.3f}")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
