"""PDFs at the text layer's pace (issue 34, item 1): pages per second, tables, OCR, and the text against a baseline.

    python benchmarks/pdf_speed.py --baseline /work/main/src [--reps 3] [--pdf more.pdf ...]

Each code tree (`--baseline` and this checkout's src, or `--new`) reads every PDF in a fresh
process (`PdfReader.read`, the whole reader: text layer, tables, OCR), the trees taking turns;
the figure is the median of `--reps` reads.  Then both trees' texts are compared page by page:
pages with the same text, pages that differ where either tree found a table, pages that differ
without one (those would be a regression of the prose).  Each process first reads a generated
one-page PDF with a ruled table (imports outside the clock).  `--two` also reads every text PDF (no page
OCR'd by the new tree; the baseline may OCR a cover) twice with two worker processes at once (one PDF each at a time), as `docqa add` does on two cores.

The corpus: the real PDFs of ../shared/data (DOCQA_SHARED_DATA overrides), /usr/share/doc's
libtasn1.pdf when installed, and the Debian Reference (261 pages, 89 ruled tables), fetched with
`apt-get download debian-reference-en` into --cache and unpacked with dpkg-deb when missing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DOCQA_SHARED_DATA", REPO.parent / "shared" / "data"))
DEBIAN_REFERENCE = "usr/share/debian-reference/debian-reference.en.pdf"

# Run in a fresh interpreter with PYTHONPATH set to one tree: read one PDF, print JSON.
READ = r"""
import json, sys, time
from pathlib import Path
from docqa.ingest.readers.pdf import PdfReader
from docqa.types import PAGE, TABLE
warm = Path(sys.argv[2]); PdfReader().read(warm, warm.read_bytes())  # imports (pdfplumber's tables) outside the clock
path = Path(sys.argv[1]); data = path.read_bytes()
start = time.perf_counter()
doc = PdfReader().read(path, data)
seconds = time.perf_counter() - start
pages = {b.page: doc.text[b.start:b.end] for b in doc.blocks if b.kind == PAGE}
ocr = doc.metadata.get("ocr") or {}
print(json.dumps({"seconds": seconds, "pages": doc.metadata.get("pages"), "text": pages,
                  "table_pages": sorted({b.page for b in doc.blocks if b.kind == TABLE}),
                  "tables": sum(b.kind == TABLE for b in doc.blocks), "ocr_pages": len(ocr.get("pages") or []),
                  "ocr_seconds": ocr.get("seconds")}))
"""

# Two worker processes reading the PDFs (each PDF once per worker task), wall time for all.
POOL = r"""
import json, sys, time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

def read(name):
    from docqa.errors import IngestError
    from docqa.ingest.readers.pdf import PdfReader
    path = Path(name)
    try:
        return PdfReader().read(path, path.read_bytes()).metadata.get("pages", 0)
    except IngestError:
        return 0

if __name__ == "__main__":
    names = sys.argv[1:]
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(read, [names[0]] * 2))  # each worker imports the reader once, outside the clock
        start = time.perf_counter()
        pages = sum(pool.map(read, names))
    print(json.dumps({"seconds": time.perf_counter() - start, "pages": pages}))
"""


# Run with PYTHONPATH set to the new tree: its tables against pdfplumber's on every page.
PLUMBER = r"""
import io, json, re, sys, time
from pathlib import Path
import pdfplumber, pypdfium2 as pdfium
from docqa.ingest.readers.pdf import read_page
from docqa.ingest.readers.pdf_tables import _looks_tabular
data = Path(sys.argv[1]).read_bytes()
start = time.perf_counter()
ref = {}
with pdfplumber.open(io.BytesIO(data)) as doc:
    for i, page in enumerate(doc.pages):
        x0, _, _, y1 = (float(v) for v in page.mediabox)
        for t in page.find_tables():
            rows = t.extract()
            if _looks_tabular(rows):
                lines = [" | ".join(" ".join((c or "").split()) for c in row) for row in rows]
                l, top, r, b = t.bbox
                ref.setdefault(i, []).append(((x0 + l, y1 - b, x0 + r, y1 - top), [x.rstrip(" |") for x in lines if x.replace("|", "").strip()]))
plumber_s = time.perf_counter() - start
pdf = pdfium.PdfDocument(data)
start = time.perf_counter()
new = {i: [((t.left, t.bottom, t.right, t.top), t.rows) for t in ts] for i in range(len(pdf)) if (ts := read_page(pdf, i)[1])}
new_s = time.perf_counter() - start
squeeze = lambda rows: [re.sub(r"\s", "", x) for x in rows]
pairs = [(a, b) for i in set(new) & set(ref) for a, b in zip(new[i], ref[i])]
print(json.dumps({"plumber_s": plumber_s, "new_s": new_s, "ref_tables": sum(map(len, ref.values())),
    "new_tables": sum(map(len, new.values())), "ref_pages": len(ref), "new_pages": len(new),
    "pages_only_ref": sorted(set(ref) - set(new)), "pages_only_new": sorted(set(new) - set(ref)),
    "same_box": sum(max(abs(x - y) for x, y in zip(a[0], b[0])) < 0.5 for a, b in pairs),
    "rows": sum(len(b[1]) for a, b in pairs),
    "rows_same": sum(x == y for a, b in pairs for x, y in zip(a[1], b[1])),
    "rows_same_but_spaces": sum(x == y for a, b in pairs for x, y in zip(squeeze(a[1]), squeeze(b[1])))}))
"""


def debian_reference(cache: Path) -> Path | None:
    """The Debian Reference PDF, downloaded (`apt-get download`) and unpacked once into `cache`."""
    pdf = cache / "x" / DEBIAN_REFERENCE
    if pdf.exists():
        return pdf
    cache.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(["apt-get", "download", "debian-reference-en"], cwd=cache, check=True, capture_output=True)
        deb = next(cache.glob("debian-reference-en_*.deb"))
        subprocess.run(["dpkg-deb", "-x", str(deb), str(cache / "x")], check=True)
    except (OSError, subprocess.CalledProcessError, StopIteration) as exc:
        print(f"debian-reference-en not available ({exc}); left out", file=sys.stderr)
        return None
    return pdf if pdf.exists() else None


def corpus(cache: Path, extra: list[str]) -> list[Path]:
    files = sorted(p for p in (SHARED / "docs").rglob("*.pdf") if p.name != "copy-protected.pdf") if SHARED.exists() else []
    files += [p for p in [Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf"), debian_reference(cache)] if p and p.exists()]
    return files + [Path(p) for p in extra]


def warm_up_pdf(cache: Path) -> Path:
    """A one-page PDF with a ruled table, read before the clock starts (the same imports in both trees)."""
    from fpdf import FPDF

    path = cache / "warm-up.pdf"
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        pdf = FPDF()
        pdf.add_page()
        pdf.set_font("helvetica", size=10)
        with pdf.table() as table:
            for row in (["a", "b"], ["1", "2"], ["3", "4"]):
                table.row(row)
        pdf.output(str(path))
    return path


def run(src: str, code: str, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(Path(src).resolve()), "DOCQA_LOG_LEVEL": "error"}
    proc = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True)
    if proc.returncode:
        last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
        return {"error": last.split(":")[0].rsplit(".", 1)[-1]}  # the exception's class
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compare(base: dict, new: dict) -> dict:
    """Pages with the same text; differing pages with a table in either tree; differing pages without."""
    same = table = other = 0
    tables = set(base.get("table_pages", [])) | set(new.get("table_pages", []))
    for page, text in new.get("text", {}).items():
        if base.get("text", {}).get(page) == text:
            same += 1
        elif int(page) in tables:
            table += 1
        else:
            other += 1
    return {"same": same, "differ_with_table": table, "differ_without_table": other}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="the src directory of the tree to compare with (e.g. main's)")
    parser.add_argument("--new", default=str(REPO / "src"), help="the src directory of the tree measured (default: this checkout's)")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--two", action="store_true", help="also read all the PDFs with two worker processes")
    parser.add_argument("--cache", default="/tmp/docqa-pdf-speed", help="where the Debian Reference is unpacked")
    parser.add_argument("--pdf", nargs="*", default=[], help="more PDFs to read")
    parser.add_argument("--plumber", action="store_true",
                        help="also compare the new tree's tables with pdfplumber's on every page of each PDF")
    args = parser.parse_args()
    files = corpus(Path(args.cache), args.pdf)
    warm = warm_up_pdf(Path(args.cache))
    trees = {"baseline": args.baseline, "new": args.new}
    print("| PDF | pages | baseline s | new s | new pages/s | tables (pages) baseline → new | OCR pages baseline → new (s) | "
          "pages same text / differ at a table / differ elsewhere |")
    print("|---|---:|---:|---:|---:|---|---|---|")
    totals = {"baseline": 0.0, "new": 0.0, "pages": 0}
    text_pdfs = []  # read by both trees, no page OCR'd by the new one: the two-worker run reads these
    for path in files:
        seconds: dict[str, list[float]] = {"baseline": [], "new": []}
        last: dict[str, dict] = {}
        for _ in range(args.reps):
            for name, src in trees.items():  # the trees take turns
                last[name] = run(src, READ, str(path), str(warm))
                if "error" not in last[name]:
                    seconds[name].append(last[name]["seconds"])
        if any("error" in r for r in last.values()):
            print(f"| {path.name} | | {last['baseline'].get('error', 'read')} | {last['new'].get('error', 'read')} | | | | |")
            continue
        b, n = last["baseline"], last["new"]
        bs, ns = statistics.median(seconds["baseline"]), statistics.median(seconds["new"])
        totals["baseline"] += bs
        totals["new"] += ns
        totals["pages"] += n["pages"]
        c = compare(b, n)
        if not n["ocr_pages"]:
            text_pdfs.append(path)
        ocr = f"{b['ocr_pages']} → {n['ocr_pages']} ({n['ocr_seconds'] or 0:.1f} s)"
        print(f"| {path.name} | {n['pages']} | {bs:.2f} | {ns:.2f} | {n['pages'] / ns:.0f} | "
              f"{b['tables']} ({len(b['table_pages'])}) → {n['tables']} ({len(n['table_pages'])}) | {ocr} | "
              f"{c['same']} / {c['differ_with_table']} / {c['differ_without_table']} |")
    print(f"| **all** | {totals['pages']} | {totals['baseline']:.2f} | {totals['new']:.2f} | "
          f"{totals['pages'] / max(totals['new'], 1e-9):.0f} | | | |")
    if args.plumber:
        print("\n| PDF | pdfplumber, every page: s, tables (pages) | new: s, tables (pages) | pages only pdfplumber / only new | "
              "same box | rows equal / equal but for spaces / all |")
        print("|---|---|---|---|---|---|")
        for path in text_pdfs:
            r = run(args.new, PLUMBER, str(path))
            if "error" in r:
                continue
            print(f"| {path.name} | {r['plumber_s']:.2f}, {r['ref_tables']} ({r['ref_pages']}) | {r['new_s']:.2f}, "
                  f"{r['new_tables']} ({r['new_pages']}) | {r['pages_only_ref']} / {r['pages_only_new']} | {r['same_box']} | "
                  f"{r['rows_same']} / {r['rows_same_but_spaces']} / {r['rows']} |")
    if args.two:  # every PDF twice, the largest first, so both workers stay busy
        names = [str(p) for p in sorted(text_pdfs, key=lambda p: -p.stat().st_size) for _ in range(2)]
        for name, src in trees.items():
            started = time.perf_counter()
            result = run(src, POOL, *names)
            if "error" in result:
                print(f"two workers, {name}: {result['error']}")
                continue
            print(f"two workers, {name}: {result['pages']} pages in {result['seconds']:.2f} s = "
                  f"{result['pages'] / result['seconds']:.0f} pages/s (process {time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
