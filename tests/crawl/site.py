"""A documentation site on a loopback HTTP server, built in the test: nested sections, an llms.txt,
a sitemap index, robots.txt with a disallowed folder, redirects, a 404, a slow page, a huge page,
an endless link trap, ETags and Last-Modified.  Tests change `pages` to make the site change."""

from __future__ import annotations

import hashlib
import sys
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECTIONS = {"guide": 12, "reference": 14, "howto": 10, "tutorial": 9, "api/v1": 8}  # 53 pages
_TEMPLATE = """<!doctype html><html><head><title>{title} — Acme docs</title>
<link rel="canonical" href="{canonical}"></head>
<body><header><a href="/docs/">Acme</a> <nav>{nav}</nav></header>
<nav class="sidebar"><ul>{sidebar}</ul></nav>
<main><article>
<section id="{slug}"><h1>{title}<a class="headerlink" href="#{slug}">¶</a></h1>
<p>{intro}</p>
<section id="details"><h2>Details</h2><p>{details}</p></section>
<section id="upgrading"><h2>Upgrading</h2><p>{upgrade}</p></section>
</section>
<p>{links}</p>
</article></main>
<footer>Copyright Acme Corp. All rights reserved. Built with a docs generator.</footer>
</body></html>"""


def page_html(path: str, title: str, intro: str, details: str, upgrade: str, links: list[str]) -> str:
    nav = " ".join(f'<a href="/docs/{s}/index.html">{s}</a>' for s in SECTIONS)
    sidebar = "".join(f'<li><a href="{link}">{link}</a></li>' for link in links[:5])
    slug = title.lower().replace(" ", "-")
    body_links = " ".join(f'<a href="{link}">see {link}</a>' for link in links)
    return _TEMPLATE.format(title=title, canonical=f"http://HOST{path}", nav=nav, sidebar=sidebar, slug=slug,
                            intro=intro, details=details, upgrade=upgrade, links=body_links)


def build_pages() -> dict[str, tuple[str, str]]:
    """path -> (content type, body) of the whole site: 53 section pages, indexes, a Markdown page, a PDF-less site."""
    pages: dict[str, tuple[str, str]] = {}
    for section, count in SECTIONS.items():
        names = [f"/docs/{section}/page{i}.html" for i in range(count)]
        for i, path in enumerate(names):
            word = f"{section.replace('/', '')}{i}"
            links = [names[(i + 1) % count], f"/docs/{section}/page{i}.html#details", f"/docs/{section}/page{i}.html?utm_source=nav"]
            pages[path] = ("text/html", page_html(
                path, f"{section.title()} Page {i}", f"This page explains the {word} setting of Acme.",
                f"The {word} option accepts a value between {i} and {i * 7 + 3}; codeword zx{word}q.",
                f"When upgrading, the {word} option keeps its value; run acme migrate {word}.", links))
        pages[f"/docs/{section}/index.html"] = ("text/html", page_html(
            f"/docs/{section}/index.html", f"{section.title()} Index", f"The {section} section.", "Pages below.",
            "Nothing changes.", names))
    pages["/docs/"] = ("text/html", page_html("/docs/", "Acme Docs", "Welcome to Acme.", "Start with the guide.",
                                             "See the changelog.", [f"/docs/{s}/index.html" for s in SECTIONS]
                                             + ["/docs/private/secret.html", "/docs/old/start.html", "/docs/missing.html",
                                                "/docs/slow.html", "/docs/huge.html", "/docs/trap/1/", "/elsewhere/page.html",
                                                "/docs/notes.md", "/docs/out.html"]))
    pages["/docs/notes.md"] = ("text/markdown", "# Release notes\n\n## Version 2\n\nVersion 2 adds the zxnotesq flag.\n")
    pages["/docs/private/secret.html"] = ("text/html", "<html><body><p>secret zxsecretq</p></body></html>")
    pages["/elsewhere/page.html"] = ("text/html", "<html><body><p>outside the prefix zxoutsideq</p></body></html>")
    return pages


class _Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:
        """A client that closed its kept-alive connection is no error worth a traceback."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class Site:
    """The server and its state; `url(path)` names a page on it."""

    def __init__(self, pages: dict[str, tuple[str, str | bytes]] | None = None):
        self.pages = build_pages() if pages is None else pages
        self.llms = pages is None  # the built site has an llms.txt; given pages have none
        self.requests: list[tuple[str, int]] = []  # (path, status) of every request answered
        self.release = threading.Event()  # the slow page answers once this is set
        self.down = False  # every page answers 503
        self.lock = threading.Lock()
        self.crawl_delay: float | None = None  # robots.txt's Crawl-delay, when set
        self.times: list[tuple[str, float]] = []  # (path, time.monotonic() at arrival) of every request
        self.inflight = 0
        self.most_inflight = 0  # the most requests answered at once
        self.server = _Server(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://{self.host}{path}"

    def statuses(self, status: int) -> list[str]:
        with self.lock:
            return [p for p, s in self.requests if s == status]

    def __enter__(self) -> Site:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def _etag(body: bytes) -> str:
    return '"' + hashlib.sha1(body).hexdigest()[:16] + '"'


def _handler(site: Site):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as documentation hosts answer

        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            with site.lock:
                site.times.append((self.path, time.monotonic()))
                site.inflight += 1
                site.most_inflight = max(site.most_inflight, site.inflight)
            try:
                status = self._answer(path)
            finally:
                with site.lock:
                    site.inflight -= 1
            with site.lock:
                site.requests.append((self.path, status))

        def _answer(self, path: str) -> int:
            if site.down:
                return self._send(503, "text/plain", b"down for maintenance")
            special = {"/robots.txt": self._robots, "/docs/llms.txt": self._llms, "/sitemap.xml": self._index,
                       "/sitemaps/a.xml": lambda: self._sitemap(0), "/sitemaps/b.xml": lambda: self._sitemap(1),
                       "/docs/slow.html": self._slow, "/docs/huge.html": self._huge}
            if path in special:
                return special[path]()
            if path == "/docs/old/start.html":
                return self._redirect("/docs/guide/page0.html")
            if path == "/docs/out.html":
                return self._redirect("/elsewhere/page.html")
            if path.startswith("/docs/trap/"):
                n = path.rstrip("/").rsplit("/", 1)[-1]
                return self._send(200, "text/html", f'<html><body><p>trap {n}</p><a href="{path}{int(n) + 1}/">next</a>'
                                  f'</body></html>'.encode())
            page = site.pages.get(path)
            if page is None:
                return self._send(404, "text/html", b"<html><body>Not Found</body></html>")
            body = page[1] if isinstance(page[1], bytes) else page[1].replace("HOST", site.host).encode()
            etag = _etag(body)
            if self.headers.get("If-None-Match") == etag:
                return self._send(304, page[0], b"", {"ETag": etag})
            return self._send(200, page[0] + "; charset=utf-8", body, {"ETag": etag,
                              "Last-Modified": formatdate(1_700_000_000, usegmt=True)})

        def _send(self, status: int, kind: str, body: bytes, headers: dict | None = None) -> int:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD" and body:
                self.wfile.write(body)
            return status

        def _redirect(self, to: str) -> int:
            self.send_response(301)
            self.send_header("Location", to)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return 301

        def _robots(self) -> int:
            delay = f"Crawl-delay: {site.crawl_delay}\n" if site.crawl_delay else ""
            text = f"User-agent: *\nDisallow: /docs/private/\n{delay}\nSitemap: http://{site.host}/sitemap.xml\n"
            return self._send(200, "text/plain", text.encode())

        def _llms(self) -> int:
            if not site.llms:
                return self._send(404, "text/plain", b"")
            links = "\n".join(f"- [{s}](/docs/{s}/index.html): the {s} section" for s in SECTIONS)
            return self._send(200, "text/plain", f"# Acme\n\n> Acme's documentation.\n\n## Sections\n\n{links}\n".encode())

        def _index(self) -> int:
            body = ('<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                    f'<sitemap><loc>http://{site.host}/sitemaps/a.xml</loc></sitemap>'
                    f'<sitemap><loc>http://{site.host}/sitemaps/b.xml</loc></sitemap></sitemapindex>')
            return self._send(200, "application/xml", body.encode())

        def _sitemap(self, half: int) -> int:
            paths = sorted(p for p in site.pages if p.endswith(".html"))[half::2]
            locs = "".join(f"<url><loc>http://{site.host}{p}</loc></url>" for p in paths)
            body = f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
            return self._send(200, "application/xml", body.encode())

        def _slow(self) -> int:
            site.release.wait(60)  # longer than the test's request timeout: the crawler gives up first
            try:
                return self._send(200, "text/html", b"<html><body>slow</body></html>")
            except OSError:
                return 0

        def _huge(self) -> int:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Connection", "close")
            self.close_connection = True
            self.end_headers()  # no Content-Length: the crawler must count what it reads
            try:
                for _ in range(64):
                    self.wfile.write(b"<p>" + b"x" * 65536 + b"</p>")
            except OSError:
                pass
            return 200

    return Handler
