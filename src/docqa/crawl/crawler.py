"""One crawl of a documentation site: discover pages, fetch them politely, hand each outcome on.

Discovery, in order: the site's `llms.txt`, its sitemaps (robots.txt's `Sitemap:` lines and
`sitemap.xml`, indexes followed), then the links of the pages fetched, breadth first.  Every URL
is folded (no fragment, sorted query, canonical URL) and must lie under the start URL's folder
and be allowed by robots.txt.  Pages indexed before (`known`) are asked for again with their
validators, so an unchanged page costs a 304 and a page gone from the site answers 404 or 410.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from docqa.crawl.discover import llms_links, page_links, sitemap_urls
from docqa.crawl.fetch import USER_AGENT, CrawlLimits, Fetched, Fetcher, Validators
from docqa.crawl.guard import AddressGuard
from docqa.crawl.robots import Robots
from docqa.crawl.urls import fold, prefix_of, site_root, within

_MAX_SITEMAPS = 50
_HTML = ("text/html", "application/xhtml+xml")


@dataclass(slots=True)
class CrawlStats:
    """Progress of a crawl: pages found, fetched (changed or new), unchanged (304) and failed."""

    found: int = 0
    fetched: int = 0
    unchanged: int = 0
    failed: int = 0
    gone: int = 0
    folded: int = 0  # pages that named another URL as canonical, or redirected to one already seen
    bytes: int = 0
    stopped: str = ""  # why the crawl stopped early (a limit), '' when it ran out of pages

    def to_dict(self) -> dict:
        return {"found": self.found, "fetched": self.fetched, "unchanged": self.unchanged, "failed": self.failed,
                "gone": self.gone, "folded": self.folded, "bytes": self.bytes, "stopped": self.stopped}


class Crawler:
    """Crawls one site within a start URL's prefix; `emit` receives every page's outcome."""

    def __init__(self, limits: CrawlLimits, guard: AddressGuard | None = None,
                 transport: httpx.AsyncBaseTransport | None = None):
        self.limits, self.guard, self.transport = limits, guard, transport

    def run(self, start: str, known: dict[str, Validators], emit: Callable[[Fetched, CrawlStats], None]) -> CrawlStats:
        """crawl() on its own event loop (call it from a thread of its own)."""
        return asyncio.run(self.crawl(start, known, emit))

    async def crawl(self, start: str, known: dict[str, Validators], emit: Callable[[Fetched, CrawlStats], None]) -> CrawlStats:
        timeout = httpx.Timeout(self.limits.request_timeout)
        pool = httpx.Limits(max_connections=self.limits.per_host * 4, max_keepalive_connections=self.limits.per_host * 2)
        transport = self.transport or (self.guard.transport(pool) if self.guard is not None else None)
        async with httpx.AsyncClient(timeout=timeout, limits=pool, transport=transport, follow_redirects=False,
                                     headers={"User-Agent": USER_AGENT}) as client:
            run = _Run(self, Fetcher(client, self.limits, prefix_of(start), self.guard), start, known, emit)
            try:
                await asyncio.wait_for(run.go(), self.limits.crawl_timeout)
            except TimeoutError:
                run.stats.stopped = f"the crawl took longer than {self.limits.crawl_timeout:g} s (crawl.max_minutes)"
            run.stats.bytes = run.fetcher.bytes
            return run.stats


class _Run:
    """The state of one crawl."""

    def __init__(self, crawler: Crawler, fetcher: Fetcher, start: str, known: dict[str, Validators],
                 emit: Callable[[Fetched, CrawlStats], None]):
        self.limits, self.fetcher, self.known, self.emit = crawler.limits, fetcher, known, emit
        self.start = fold(start) or start
        self.prefix = fetcher.prefix
        self.robots = Robots.allow_all()
        self.stats = CrawlStats()
        self.queue: asyncio.Queue[tuple[str, int]] = asyncio.Queue()
        self.seen: set[str] = set()
        self.done: set[str] = set()  # final URLs handed on

    async def go(self) -> None:
        await self._robots()
        self._add(self.start, 0)
        for url in await self._llms():
            self._add(url, 1)
        for url in await self._sitemaps():
            self._add(url, 1)
        for url in self.known:  # pages indexed before: checked even when no longer linked (their links
            self._add(url, self.limits.max_depth)  # are not followed: a link trap grows no deeper each crawl)
        workers = [asyncio.create_task(self._work()) for _ in range(self.limits.per_host)]
        await self.queue.join()
        for task in workers:
            task.cancel()

    def _add(self, url: str | None, depth: int) -> None:
        if url is None or url in self.seen or not within(url, self.prefix) or depth > self.limits.max_depth:
            return
        if not self.robots.allowed(url):
            return
        if len(self.seen) >= self.limits.max_pages:
            self.stats.stopped = f"reached {self.limits.max_pages} pages (crawl.max_pages)"
            return
        self.seen.add(url)
        self.stats.found += 1
        self.queue.put_nowait((url, depth))

    async def _work(self) -> None:
        while True:
            url, depth = await self.queue.get()
            try:
                await self._visit(url, depth)
            except Exception as exc:  # a page's failure costs only that page
                self.stats.failed += 1
                self.emit(Fetched(url, "failed", url, reason=f"unexpected {type(exc).__name__}: {exc}"), self.stats)
            finally:
                self.queue.task_done()

    async def _visit(self, url: str, depth: int) -> None:
        if self.fetcher.bytes >= self.limits.max_bytes:
            self.stats.stopped = f"reached {self.limits.max_bytes / 1e6:g} MB (crawl.max_total_mb)"
            return
        page = await self.fetcher.get(url, self.known.get(url))
        page.depth = depth
        final = page.final_url or url
        if final in self.done or (final != url and not self.robots.allowed(final)):
            self.stats.folded += 1  # a redirect to a page handed on already
            return
        if page.state == "ok" and page.content_type in _HTML:
            if self._folded(page, depth):
                return
        self.done.add(final)
        self._count(page)
        self.emit(page, self.stats)

    def _folded(self, page: Fetched, depth: int) -> bool:
        """Queue the page's links; True when it names another URL as its canonical one (queued instead)."""
        final = page.final_url or page.url
        links, canonical, _ = page_links(page.data.decode("utf-8", "replace"), final)
        if depth < self.limits.max_depth:
            for link in links:
                self._add(link, depth + 1)
        if canonical and canonical != final and within(canonical, self.prefix):
            self._add(canonical, depth)
            self.stats.folded += 1
            return True
        return False

    def _count(self, page: Fetched) -> None:
        if page.state == "ok":
            self.stats.fetched += 1
        elif page.state == "unchanged":
            self.stats.unchanged += 1
        elif page.state == "gone":
            self.stats.gone += 1
        else:
            self.stats.failed += 1

    async def _robots(self) -> None:
        page = await self.fetcher.get(site_root(self.start) + "robots.txt", anywhere=True)
        if page.state == "ok":
            self.robots = Robots.parse(page.data.decode("utf-8", "replace"), USER_AGENT)
            if self.robots.delay:
                self.fetcher.slow_down(self.robots.delay)
        elif page.state == "failed" and page.status >= 500:  # RFC 9309: an unreachable robots.txt allows nothing
            self.robots = Robots.deny_all()
            self.stats.stopped = f"robots.txt answered {page.status}: nothing may be crawled now"

    async def _llms(self) -> list[str]:
        """The links of the site's llms.txt (its folder's, else the root's), else of its llms-full.txt."""
        names = ("llms.txt", "llms-full.txt")
        for url in dict.fromkeys(base + name for name in names for base in (self.prefix, site_root(self.start))):
            page = await self.fetcher.get(url)
            if page.state == "ok" and page.data:
                return llms_links(page.data.decode("utf-8", "replace"), page.final_url or url)
        return []

    async def _sitemaps(self) -> list[str]:
        todo = list(dict.fromkeys([*self.robots.sitemaps, self.prefix + "sitemap.xml", site_root(self.start) + "sitemap.xml"]))
        pages: list[str] = []
        read = 0
        while todo and read < _MAX_SITEMAPS:
            url = todo.pop(0)
            read += 1
            page = await self.fetcher.get(url, anywhere=True)
            if page.state != "ok":
                continue
            found, more = sitemap_urls(page.data, page.final_url or url)
            pages += found
            todo += [m for m in more if m not in todo]
        return pages
