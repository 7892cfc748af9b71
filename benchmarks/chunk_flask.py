"""How many Flask functions and methods land whole in one chunk, and how fast code chunks.

Usage: python benchmarks/chunk_flask.py [--max-tokens 512] [--overlap 50]
Reads ../shared/data/docs/code/flask-3.1.1 (symbols.tsv: file, kind, qualname, start_line,
end_line, lines, docstring).  A symbol is whole when some chunk's line range covers its span.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

from docqa.ingest.chunkers import chunk_document
from docqa.text import count_tokens
from docqa.types import Document

FLASK = Path(__file__).resolve().parents[2] / "shared" / "data" / "docs" / "code" / "flask-3.1.1"


def measure(root: Path, max_tokens: int = 512, overlap: int = 50) -> dict:
    """Whole/total for functions and methods, the cut ones, and chunking time."""
    with (root / "symbols.tsv").open(encoding="utf-8") as tsv:
        rows = list(csv.DictReader(tsv, delimiter="\t"))
    files = sorted({r["file"] for r in rows} | {str(p.relative_to(root)) for p in (root / "src").rglob("*.py")})
    ranges: dict[str, list[tuple[int, int]]] = {}
    texts: dict[str, str] = {}
    elapsed = 0.0
    for name in files:
        text = (root / name).read_bytes().decode("utf-8")
        texts[name] = text
        started = time.perf_counter()
        chunks = chunk_document(Document(name, "code", text, language="python"), max_tokens, overlap)
        elapsed += time.perf_counter() - started
        ranges[name] = [(c.line_start, c.line_end) for c in chunks]
    symbols = [r for r in rows if r["kind"] in ("function", "method")]
    cut = []
    for r in symbols:
        a, b = int(r["start_line"]), int(r["end_line"])
        if not any(s <= a and b <= e for s, e in ranges[r["file"]]):
            lines = texts[r["file"]].split("\n")[a - 1 : b]
            cut.append((r["file"], r["qualname"], a, b, count_tokens("\n".join(lines))))
    size = sum(len(t.encode("utf-8")) for t in texts.values())
    return {"total": len(symbols), "cut": cut, "seconds": elapsed, "bytes": size, "max_tokens": max_tokens}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--overlap", type=int, default=50)
    args = parser.parse_args()
    if not FLASK.is_dir():
        print(f"{FLASK} not found", file=sys.stderr)
        return 1
    count_tokens("warm up")  # loading the BPE ranks takes ~0.3 s once per process
    result = measure(FLASK, args.max_tokens, args.overlap)
    total, cut = result["total"], result["cut"]
    fitting = [c for c in cut if c[4] <= args.max_tokens]
    too_big = len(cut) - len(fitting)
    print(f"whole: {total - len(cut)}/{total} = {(total - len(cut)) / total:.1%} of functions and methods")
    print(f"whole among those that fit in {args.max_tokens} tokens: "
          f"{total - len(cut)}/{total - too_big} = {(total - len(cut)) / (total - too_big):.1%}")
    print(f"cut ({len(cut)}; {len(fitting)} of them would fit):")
    for file, name, a, b, tokens in cut:
        print(f"  {name:40s} {file}:{a}-{b}  {tokens} tokens")
    mb = result["bytes"] / 1e6
    print(f"chunking: {mb:.2f} MB in {result['seconds'] * 1000:.0f} ms = {mb / result['seconds']:.1f} MB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
