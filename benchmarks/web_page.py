"""The web page's weight and first paint, in Debian's chromium under Playwright, against `docqa serve` on loopback.

    python benchmarks/web_page.py [--runs 15] [--out build/benchmarks/web_page.json]

- weight: everything `/` loads until the network is idle (the HTML, its CSS and JavaScript modules, and the
  API calls the page makes at start: /whoami, /collections), as the Performance API counts it (encoded body
  bytes, and with headers), without any PDF viewer (URLs with "pdf" in them); and, for reference, the size of
  every file shipped in docqa/web/static;
- first paint: `first-paint` and `first-contentful-paint` from the Performance API (paint entries) of `/`,
  each run in a fresh browser context (nothing cached), the median and minimum of --runs; the baseline,
  measured in the same run with the same browser, taking turns with the page, is a blank static page (one
  line of text) served by the standard library's http.server on another loopback port.

The knowledge base is samples/ with extractive answers (no model); the targets are first paint <= 300 ms
and <= 500 KB.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
BLANK = b"<!doctype html><html><head><meta charset='utf-8'><title>blank</title></head><body><p>baseline</p></body></html>"
PAINTS = """() => Object.fromEntries(performance.getEntriesByType("paint").map((e) => [e.name, e.startTime]))"""
WEIGHT = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  return [nav, ...performance.getEntriesByType("resource")].map((e) => ({
    url: e.name, body: e.encodedBodySize, transfer: e.transferSize, type: e.initiatorType || "navigation"}));
}"""


class Blank:
    """The baseline: a blank static page on another loopback port."""

    def __init__(self):
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(BLANK)))
                self.end_headers()
                self.wfile.write(BLANK)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def docqa_app(folder: Path):
    from docqa.api import create_app
    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings

    settings = Settings(kb=str(folder / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"},
                        api={"upload_dir": str(folder / "uploads")})
    with KnowledgeBase(settings) as kb:
        kb.add([ROOT / "samples"])
    return create_app(settings)


def paint(browser, url: str, wait: str) -> dict:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        page.goto(url, wait_until="load")
        page.wait_for_selector(wait, state="attached")
        page.wait_for_function("() => performance.getEntriesByType('paint').length >= 2", timeout=10_000)
        return page.evaluate(PAINTS)
    finally:
        context.close()


def weight(browser, url: str) -> list[dict]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        page.goto(url, wait_until="networkidle")
        page.wait_for_timeout(500)
        return [e for e in page.evaluate(WEIGHT) if "pdf" not in e["url"].lower()]
    finally:
        context.close()


def summary(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 1), "min": round(min(values), 1),
            "max": round(max(values), 1), "n": len(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--out", default=str(ROOT / "build" / "benchmarks" / "web_page.json"))
    args = parser.parse_args()
    if not os.path.exists(CHROMIUM):
        sys.exit(f"no {CHROMIUM}: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright
    from api.conftest import LiveServer
    from docqa.web import STATIC

    blank = Blank()
    with tempfile.TemporaryDirectory() as tmp, LiveServer(docqa_app(Path(tmp))) as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page_url = server.url + "/"
        entries = weight(browser, page_url)
        paint(browser, page_url, "#question")  # one warm-up of each, not counted
        paint(browser, blank.url, "p")
        page_runs, blank_runs = [], []
        for _ in range(args.runs):  # taking turns: a busy moment of the shared machine hits both alike
            page_runs.append(paint(browser, page_url, "#question"))
            blank_runs.append(paint(browser, blank.url, "p"))
        version = browser.version
        browser.close()
    blank.server.shutdown()

    shipped = {f.name: f.stat().st_size for f in sorted(STATIC.iterdir()) if "pdf" not in f.name.lower()}
    result = {
        "date": time.strftime("%Y-%m-%d", time.gmtime()), "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "python": platform.python_version(), "chromium": version, "runs": args.runs,
        "weight": {"requests": len(entries), "body_bytes": sum(e["body"] for e in entries),
                   "transfer_bytes": sum(e["transfer"] for e in entries),
                   "files": [{k: e[k] for k in ("url", "body", "type")} for e in entries]},
        "shipped_static_bytes": sum(shipped.values()), "shipped": shipped,
        "page": {name: summary([r[name] for r in page_runs]) for name in ("first-paint", "first-contentful-paint")},
        "baseline": {name: summary([r[name] for r in blank_runs]) for name in ("first-paint", "first-contentful-paint")},
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2), encoding="utf-8")

    kb = lambda n: f"{n / 1024:.1f} KB"  # noqa: E731
    print(f"chromium {version}, {args.runs} runs each, fresh context per run; figures in {out}")
    print(f"weight of / : {kb(result['weight']['body_bytes'])} in {len(entries)} requests "
          f"({kb(result['weight']['transfer_bytes'])} with headers); static files shipped: "
          f"{kb(result['shipped_static_bytes'])}")
    print("| page | first-paint median (min–max) | first-contentful-paint median (min–max) |")
    print("|---|---|---|")
    for label, key in (("docqa /", "page"), ("blank static page (baseline)", "baseline")):
        fp, fcp = result[key]["first-paint"], result[key]["first-contentful-paint"]
        print(f"| {label} | {fp['median']} ms ({fp['min']}–{fp['max']}) | {fcp['median']} ms ({fcp['min']}–{fcp['max']}) |")


if __name__ == "__main__":
    main()
