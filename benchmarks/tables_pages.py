"""Tables and PDF pages (issue 15, items 6 and 7): cell questions, page attribution, table cost.

    PYTHONPATH=src python benchmarks/tables_pages.py [--json out.json]

Run it once per code base (PYTHONPATH=<worktree>/src) to compare before and after; it needs
../shared/data (DOCQA_SHARED_DATA overrides) for the fixture parts.

- tables: for each table row, a BM25 search for the row's first cell plus a header word
  within the row's file; hit@1 / hit@3 = the row (all its cells, in order) stands in the first /
  one of the first three chunks.  The fixture tables (docs/multiformat: docx, pptx, the Chinese
  PDF/DOCX/Markdown trio, the LayoutParser PDF's Table 1) are small; the generated set (the
  30-row tables of tests/ingest/test_tables.py in PDF, DOCX, PPTX and HTML, 64-token chunks) is
  the case where a table is split into row groups.
- pages: every chunk of every readable shared PDF (default 512/50 chunks): does its text stand
  on the page(s) it claims, in pypdfium2's raw page text?  Two checks: the whole chunk, and each
  of its lines / table cells (a table's rows follow pdfplumber's order, not pdfium's).
- cost: PdfReader.read per shared PDF (best of 3) and, when present, the table finder alone.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DOCQA_SHARED_DATA", REPO.parent / "shared" / "data"))
MULTI = SHARED / "docs" / "multiformat"
_DROP = re.compile(r"[\s|\-\u00ad\ufffe\x00-\x1f]+")


def norm(text: str) -> str:
    """NFKC, no whitespace, no '|' separators, hyphens or control marks (pdfium's and ours differ)."""
    return _DROP.sub("", unicodedata.normalize("NFKC", text))


def md_table(path: Path) -> list[list[str]]:
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("|")]
    return [r for r in rows if not all(set(c) <= set("-: ") for c in r)]


def fixture_tables() -> dict[str, list[list[str]]]:
    """file -> table rows (header first), from an independent reading of each fixture."""
    import docx
    import pptx

    out: dict[str, list[list[str]]] = {}
    first = docx.Document(str(MULTI / "office/docx-tables.docx")).tables[0]
    out["office/docx-tables.docx"] = [[c.text for c in r.cells] for r in first.rows]  # the others: single letters
    deck = pptx.Presentation(str(MULTI / "office/fake-power-point-table.pptx"))
    shape = next(s for slide in deck.slides for s in slide.shapes if s.has_table)
    out["office/fake-power-point-table.pptx"] = [[c.text for c in r.cells] for r in shape.table.rows]
    zh = md_table(MULTI / "zh/cmrc2018-trial-zh-CN.md")
    for name in ("zh/cmrc2018-trial-zh-CN.md", "zh/cmrc2018-trial-zh-CN.docx", "zh/cmrc2018-trial-zh-CN.pdf"):
        out[name] = zh
    out["pdf/layout-parser-paper-with-table.pdf"] = [  # Table 1, read by eye (no ruling lines)
        ["Dataset", "Base Model", "Large Model", "Notes"],
        ["PubLayNet [38]", "F / M", "M", "Layouts of modern scientific documents"],
        ["PRImA [3]", "M", "-", "Layouts of scanned modern magazines and scientific reports"],
        ["Newspaper [17]", "F", "-", "Layouts of scanned US newspapers from the 20th century"],
        ["TableBank [18]", "F", "F", "Table region on modern scientific and business document"],
        ["HJDataset [31]", "F / M", "-", "Layouts of history Japanese documents"],
    ]
    return out


def row_hits(kb, folder: Path, tables: dict[str, list[list[str]]]) -> dict[str, dict]:
    """Per file: rows, hit@1 and hit@3 of a cell question (first cell + the last header word)."""
    out = {}
    for name, rows in tables.items():
        header, data = rows[0], rows[1:]
        h1 = h3 = 0
        for row in data:
            query = f"{row[0]} {header[-1]}"
            hits = kb.search(query, top_k=3, mode="bm25", path_glob=str(folder / name))
            want = norm("".join(row))
            found = [want in norm(h.text) for h in hits]
            h1 += bool(found[:1] and found[0])
            h3 += any(found)
        out[name] = {"rows": len(data), "hit@1": h1, "hit@3": h3}
    return out


def ingest(folder: Path, files: list[Path] | None, max_tokens: int, db: Path):
    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings

    kb = KnowledgeBase(Settings(kb=str(db), embed={"provider": "none"},
                                chunk={"max_tokens": max_tokens, "overlap": min(50, max_tokens // 8)}))
    kb.add(files or [folder], exclude=["LICENSES/**", "*.tsv", "README.md"])
    return kb


def tables_part(tmp: Path) -> dict:
    sys.path.insert(0, str(REPO / "tests"))
    from ingest.test_tables import HEADER, MAX_TOKENS, ROWS, WRITERS, filler_text

    result = {}
    if MULTI.exists():
        kb = ingest(MULTI, None, 512, tmp / "multi.db")
        result["fixtures"] = row_hits(kb, MULTI, fixture_tables())
        kb.close()
    gen = tmp / "generated"
    gen.mkdir()
    for kind, write in WRITERS.items():
        write(gen / f"stock.{kind}")
    (gen / "notes.txt").write_text(filler_text(), encoding="utf-8")
    kb = ingest(gen, None, MAX_TOKENS, tmp / "gen.db")
    rows = [HEADER, *ROWS]
    result["generated"] = row_hits(kb, gen, {f"stock.{k}": rows for k in WRITERS})
    kb.close()
    return result


def shared_pdfs() -> list[Path]:
    return sorted(p for p in SHARED.rglob("*.pdf")) if SHARED.exists() else []


def page_check(path: Path) -> dict | None:
    """Chunks whose text stands on their claimed pages: whole chunk, and line by line."""
    import pypdfium2 as pdfium

    from docqa.errors import IngestError
    from docqa.ingest.chunkers import chunk_document
    from docqa.ingest.readers.pdf import PdfReader

    try:
        doc = PdfReader().read(path, path.read_bytes())
    except IngestError:
        return None
    pdf = pdfium.PdfDocument(str(path))
    pages = [norm(pdf[i].get_textpage().get_text_range()) for i in range(len(pdf))]
    pdf.close()
    chunks = chunk_document(doc)
    whole = lines = spanning = 0
    for c in chunks:
        claimed = "".join(pages[p - 1] for p in range(c.page_start, (c.page_end or c.page_start) + 1))
        whole += norm(c.text) in claimed
        parts = [norm(p) for p in re.split(r"\n| \| ", c.text) if norm(p)]
        lines += all(p in claimed for p in parts)
        spanning += c.page_end != c.page_start
    return {"pages": len(pages), "chunks": len(chunks), "whole_ok": whole, "lines_ok": lines,
            "spanning": spanning}


def cost_part(repeat: int = 3) -> dict:
    from docqa.ingest.readers.pdf import PdfReader

    try:
        from docqa.ingest.readers import pdf_tables
    except ImportError:
        pdf_tables = None
    out = {}
    for path in shared_pdfs():
        data = path.read_bytes()
        row = {}
        try:
            row["read_s"] = min(_timed(lambda: PdfReader().read(path, data)) for _ in range(repeat))
        except Exception as exc:  # noqa: BLE001 - encrypted, corrupt, no text: not timed
            row["read_s"] = type(exc).__name__
        # the table finder on its own: the pdfplumber-era API (the pdfium finder runs inside each page's read)
        if pdf_tables is not None and hasattr(pdf_tables, "find_tables") and isinstance(row["read_s"], float):
            import pypdfium2 as pdfium

            from docqa.ingest.readers import pdf as pdf_module
            found, pdf_module.find_tables = pdf_module.find_tables, lambda *_: {}
            try:
                row["read_no_tables_s"] = min(_timed(lambda: PdfReader().read(path, data)) for _ in range(repeat))
            finally:
                pdf_module.find_tables = found
            pdf = pdfium.PdfDocument(data)
            row["candidate_pages"] = len(pdf_tables.candidate_pages(pdf))
            row["tables_s"] = min(_timed(lambda: pdf_tables.find_tables(pdf, data)) for _ in range(repeat))
            row["tables"] = sum(len(v) for v in pdf_tables.find_tables(pdf, data).values())
            pdf.close()
        out[str(path.relative_to(SHARED))] = row
    return out


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return round(time.perf_counter() - start, 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the results to this file as well")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = {"tables": tables_part(Path(tmp))}
    result["pages"] = {str(p.relative_to(SHARED)): r for p in shared_pdfs() if (r := page_check(p))}
    result["cost"] = cost_part()
    text = json.dumps(result, indent=1, ensure_ascii=False)
    print(text)
    if args.json:
        Path(args.json).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
