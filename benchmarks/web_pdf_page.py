"""The viewer's PDF page: render time (first request and cached) and PNG size, and the time to find a
cited span's boxes, through the real API over loopback.

    python benchmarks/web_pdf_page.py [--scale 1.5] [PDF ...]

Default PDFs: the dense ones of the shared data pack (a 13-page two-column paper, a one-page paper
with a table, a Chinese document).  Each PDF is indexed into a fresh knowledge base (BM25 only), the
app runs under uvicorn on a free loopback port, and for every page: GET /pages/{n} twice (the first
renders, the second comes from the in-memory cache) and GET /pages/{n}/boxes for the page's first
sentence-sized span; then how many 60-character spans, one every 250 characters of each page's
text, get boxes on their page (the matching's coverage).  Twice: with the default limits (each page rendered in a forked worker) and
with both limits off (rendered in the server's process).  Baseline in the same run: the same pages rendered in process and saved as
full-colour PNGs (what the endpoint sent before it made 256-colour ones).  Prints a Markdown table
(medians and maxima over the pages).
"""

from __future__ import annotations

import argparse
import socket
import statistics
import struct
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn

from docqa.api import create_app
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "docs" / "multiformat"
DEFAULT = [DATA / "pdf" / "multi-column.pdf", DATA / "pdf" / "layout-parser-paper-with-table.pdf",
           DATA / "zh" / "cmrc2018-trial-zh-CN.pdf", DATA / "pdf" / "copy-protected.pdf"]


def serve(app) -> tuple[uvicorn.Server, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.02)
    return server, f"http://127.0.0.1:{port}/api/v1"


def timed(client: httpx.Client, url: str) -> tuple[float, httpx.Response]:
    start = time.perf_counter()
    response = client.get(url)
    response.raise_for_status()
    return time.perf_counter() - start, response


def measure(pdf: Path, scale: float, ingest: dict) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        folder.mkdir()
        (folder / pdf.name).write_bytes(pdf.read_bytes())
        settings = Settings(kb=str(Path(tmp) / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"},
                            ingest=ingest)
        with KnowledgeBase(settings) as kb:
            kb.add([folder])
        server, api = serve(create_app(settings, kb_factory=lambda: KnowledgeBase(settings)))
        try:
            with httpx.Client(base_url=api, timeout=60) as client:
                return _pages(client, scale)
        finally:
            server.should_exit = True


def _pages(client: httpx.Client, scale: float) -> dict:
    doc = client.get("/documents").json()["documents"][0]["document_id"]
    view = client.get(f"/documents/{doc}/text").json()
    first, cached, sizes, pixels, boxes = [], [], [], [], []
    for unit in view["layout"]["units"]:
        url = f"/documents/{doc}/pages/{unit['n']}?scale={scale}"
        seconds, response = timed(client, url)
        first.append(seconds)
        cached.append(timed(client, url)[0])
        sizes.append(len(response.content))
        pixels.append(struct.unpack(">II", response.content[16:24]))
        start = unit["char_start"] + 40  # a sentence-sized span inside the page
        span = f"char_start={start}&char_end={min(start + 120, unit['char_end'])}"
        boxes.append(timed(client, f"/documents/{doc}/pages/{unit['n']}/boxes?{span}")[0])
    found, tried = _coverage(client, doc, view)
    return {"pages": len(first), "first": first, "cached": cached, "sizes": sizes, "pixels": pixels[0], "boxes": boxes,
            "found": found, "tried": tried}


def _coverage(client: httpx.Client, doc: str, view: dict) -> tuple[int, int]:
    """How many 60-character spans (one every 250 characters of each page's text) get boxes on their page."""
    found = tried = 0
    for unit in view["layout"]["units"]:
        for start in range(unit["char_start"], unit["char_end"] - 60, 250):
            if not view["text"][start:start + 60].strip():
                continue
            tried += 1
            body = client.get(f"/documents/{doc}/pages/{unit['n']}/boxes?char_start={start}&char_end={start + 60}").json()
            found += bool(body["boxes"])
    return found, tried


def baseline(pdf: Path, scale: float) -> tuple[list[float], list[int]]:
    """(render + encode seconds, PNG bytes) per page as full-colour PNGs."""
    import io

    import pypdfium2 as pdfium

    seconds, sizes = [], []
    document = pdfium.PdfDocument(str(pdf))
    for index in range(len(document)):
        start = time.perf_counter()
        out = io.BytesIO()
        document[index].render(scale=scale).to_pil().save(out, "PNG", compress_level=6)
        seconds.append(time.perf_counter() - start)
        sizes.append(len(out.getvalue()))
    document.close()
    return seconds, sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pdfs", nargs="*", type=Path, default=DEFAULT)
    parser.add_argument("--scale", type=float, default=1.5)
    args = parser.parse_args()
    ms = lambda xs: f"{statistics.median(xs) * 1000:.0f} / {max(xs) * 1000:.0f}"  # noqa: E731
    print(f"scale {args.scale}; times in ms as median / max over the pages\n")
    print("| PDF | pages | image px | first render: worker | in process | cached | PNG KB | boxes "
          "| spans boxed | baseline: full-colour PNG ms; KB |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    kb = lambda xs: f"{statistics.median(xs) / 1024:.0f} / {max(xs) / 1024:.0f}"  # noqa: E731
    for pdf in args.pdfs:
        r = measure(pdf, args.scale, {})
        local = measure(pdf, args.scale, {"parse_timeout": 0, "worker_memory_mb": 0})
        base_s, base_kb = baseline(pdf, args.scale)
        print(f"| {pdf.name} | {r['pages']} | {r['pixels'][0]}×{r['pixels'][1]} | {ms(r['first'])} | "
              f"{ms(local['first'])} | {ms(r['cached'])} | {kb(r['sizes'])} | {ms(r['boxes'])} | "
              f"{r['found']}/{r['tried']} | {ms(base_s)}; {kb(base_kb)} |")


if __name__ == "__main__":
    main()
