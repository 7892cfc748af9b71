"""Main-content extraction on saved pages of real documentation sites (issue 32): the HTML reader's
text against each page's own content element, and trafilatura's when it is importable.

    python benchmarks/crawl_extract.py [--trafilatura PATH] [--split dev|test|all]

Pages: /usr/share/doc's Node.js API pages (the generator's `#apicontent` holds the content: the
sidebar, the version picker, the table of contents and the header links are not), Valgrind's
manual (DocBook: everything but the `table.nav` bars and the `div.toc` tables of contents) and
libffi's manual (Texinfo: everything but the `div.header` Next/Previous/Up bar).  Split: the pages
in name order, even positions dev, odd test (tune on dev, report test).

Recall: the share of the content's words (a multiset) the extracted text holds.  Boilerplate: the
share of the extracted words that are not content.  `--trafilatura PATH`: a folder trafilatura was
installed into (`pip install --target PATH trafilatura`), appended to sys.path (never ahead of the
project's own packages).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser

from docqa.ingest.readers import read_file

SETS = {  # folder -> (selector of the content, selectors of what inside it is not content)
    "/usr/share/doc/nodejs/api": ("#apicontent", ""),
    "/usr/share/doc/valgrind/html": ("body", "table.nav, div.toc"),
    "/usr/share/doc/libffi8/html": ("body", "div.header"),
}
SKIP = {"all.html", "index.html", "Index.html"}  # every page in one; link lists
_WORD = re.compile(r"\w+")


def pages() -> list[Path]:
    found = []
    for folder in SETS:
        found += [p for p in sorted(Path(folder).glob("*.html")) if p.name not in SKIP]
    return found


def gold(path: Path, html: str) -> str:
    content, drop = SETS[str(path.parent)]
    tree = LexborHTMLParser(html)
    for node in tree.css("script, style" + (", " + drop if drop else "")):
        node.decompose()
    node = tree.css_first(content)
    return node.text(deep=True, separator=" ") if node is not None else ""


def words(text: str) -> Counter:
    return Counter(w.lower() for w in _WORD.findall(text))


def score(extracted: str, reference: str) -> tuple[float, float]:
    ex, ref = words(extracted), words(reference)
    overlap = sum((ex & ref).values())
    return overlap / max(sum(ref.values()), 1), 1 - overlap / max(sum(ex.values()), 1)


def reader_text(path: Path, data: bytes) -> str:
    return read_file(Path("page.html"), data).text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trafilatura", help="a folder trafilatura is installed in (appended to sys.path)")
    parser.add_argument("--split", choices=["dev", "test", "all"], default="test")
    args = parser.parse_args()
    extractors = {"docqa HTML reader (selectolax)": reader_text}
    if args.trafilatura:
        sys.path.append(args.trafilatura)
        import trafilatura

        extractors["trafilatura " + trafilatura.__version__] = lambda path, data: trafilatura.extract(
            data.decode("utf-8", "replace"), include_tables=True, include_comments=False) or ""
        extractors["trafilatura, favor_recall"] = lambda path, data: trafilatura.extract(
            data.decode("utf-8", "replace"), include_tables=True, include_comments=False, favor_recall=True) or ""
    chosen = [p for i, p in enumerate(pages()) if args.split == "all" or (i % 2 == 0) == (args.split == "dev")]
    print(f"{len(chosen)} pages ({args.split} split)")
    for name, extract in extractors.items():
        by_set: dict[str, list[tuple[float, float]]] = {}
        started = time.perf_counter()
        for path in chosen:
            data = path.read_bytes()
            by_set.setdefault(path.parent.parts[4], []).append(score(extract(path, data), gold(path, data.decode("utf-8", "replace"))))
        took = time.perf_counter() - started
        rows = [f"{s}: recall {sum(r for r, _ in v) / len(v):.3f}, boilerplate {sum(b for _, b in v) / len(v):.3f} ({len(v)})"
                for s, v in by_set.items()]
        every = [x for v in by_set.values() for x in v]
        print(f"{name}: recall {sum(r for r, _ in every) / len(every):.3f}, boilerplate "
              f"{sum(b for _, b in every) / len(every):.3f} · {took / len(chosen) * 1000:.0f} ms/page · " + "; ".join(rows))


if __name__ == "__main__":
    main()
