"""Polite HTTP fetching on httpx: conditional requests, per-host concurrency and pace, size limits,
redirects followed by hand (each checked against the crawl's prefix and the address guard)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime

import httpx

from docqa.crawl.guard import AddressGuard
from docqa.crawl.urls import fold, within
from docqa.errors import DocqaError
from docqa.version import __version__

USER_AGENT = f"docqa/{__version__} (documentation crawler)"
REDIRECTS = (301, 302, 303, 307, 308)


@dataclass(slots=True)
class CrawlLimits:
    """How much one crawl may do, and how fast (settings.crawl)."""

    max_pages: int = 1000
    max_depth: int = 8
    max_page_bytes: int = 10 * 1024 * 1024
    max_bytes: int = 500 * 1024 * 1024
    request_timeout: float = 30.0
    crawl_timeout: float = 3600.0
    per_host: int = 2  # requests in flight to one host
    rate: float = 10.0  # requests a second to one host (robots.txt's Crawl-delay can only slow it down)
    max_redirects: int = 5


@dataclass(slots=True)
class Validators:
    """What a page's last response said about its version (sent back as a conditional request)."""

    etag: str = ""
    last_modified: str = ""

    def headers(self) -> dict[str, str]:
        out = {}
        if self.etag:
            out["If-None-Match"] = self.etag
        if self.last_modified:
            out["If-Modified-Since"] = self.last_modified
        return out

    def to_dict(self) -> dict[str, str]:
        return {"etag": self.etag, "last_modified": self.last_modified}


@dataclass(slots=True)
class Fetched:
    """One URL's outcome.  `state`: ok (200, `data` holds the body), unchanged (304), gone (404 or
    410: the page was removed), failed (anything else: a timeout, a 5xx, a refused redirect...)."""

    url: str  # the folded URL asked for
    state: str
    final_url: str = ""  # after redirects within the prefix
    status: int = 0
    data: bytes = b""
    content_type: str = ""
    validators: Validators = field(default_factory=Validators)
    reason: str = ""
    depth: int = 0

    @property
    def mtime_ns(self) -> int:
        """Last-Modified as nanoseconds since the epoch (0 when absent or unreadable)."""
        try:
            return int(parsedate_to_datetime(self.validators.last_modified).timestamp() * 1e9)
        except (TypeError, ValueError, IndexError, OverflowError):
            return 0


class Fetcher:
    """Fetches URLs of one crawl: at most `per_host` at once and `rate` a second per host."""

    def __init__(self, client: httpx.AsyncClient, limits: CrawlLimits, prefix: str, guard: AddressGuard | None):
        self.client, self.limits, self.prefix, self.guard = client, limits, prefix, guard
        self.delay = 1.0 / limits.rate if limits.rate > 0 else 0.0
        self.bytes = 0
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._next: dict[str, float] = {}
        self._pace = asyncio.Lock()

    def slow_down(self, seconds: float) -> None:
        """robots.txt's Crawl-delay: at least this long between two requests to the host."""
        self.delay = max(self.delay, seconds)

    async def get(self, url: str, known: Validators | None = None, *, anywhere: bool = False) -> Fetched:
        """One page (redirects followed within the prefix, or `anywhere`: robots.txt, sitemaps)."""
        target = url
        for _ in range(self.limits.max_redirects + 1):
            try:
                if self.guard is not None:
                    await self.guard.check(target)
                response, data = await self._request(target, known)
            except DocqaError as exc:
                return Fetched(url, "failed", target, reason=str(exc))
            except httpx.TimeoutException:
                return Fetched(url, "failed", target, reason=f"no answer within {self.limits.request_timeout:g} s")
            except httpx.HTTPError as exc:
                return Fetched(url, "failed", target, reason=f"{type(exc).__name__}: {exc}")
            if response.status_code in REDIRECTS and "location" in response.headers:
                nxt = fold(response.headers["location"], target)
                if nxt is None or not (anywhere or within(nxt, self.prefix)):
                    return Fetched(url, "failed", target, response.status_code,
                                   reason=f"redirected out of the crawl's prefix {self.prefix} to {nxt or response.headers['location']}")
                target = nxt
                continue
            return _outcome(url, target, response, data)
        return Fetched(url, "failed", target, reason=f"more than {self.limits.max_redirects} redirects")

    async def _request(self, url: str, known: Validators | None) -> tuple[httpx.Response, bytes]:
        host = httpx.URL(url).host
        slot = self._slots.setdefault(host, asyncio.Semaphore(self.limits.per_host))
        async with slot:
            await self._wait_turn(host)
            headers = known.headers() if known else {}
            async with self.client.stream("GET", url, headers=headers) as response:
                return response, await self._body(url, response)

    async def _wait_turn(self, host: str) -> None:
        """Until `delay` has passed since the host's last request left (not since its planned time:
        a request that left late never lets the next one follow it sooner)."""
        while True:
            async with self._pace:
                now = time.monotonic()
                wait = self._next.get(host, now) - now
                if wait <= 0:
                    self._next[host] = now + self.delay
                    return
            await asyncio.sleep(wait)

    async def _body(self, url: str, response: httpx.Response) -> bytes:
        if response.status_code != 200:
            return b""
        cap = self.limits.max_page_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise _TooLarge(url, int(declared), cap)
        chunks, size = [], 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > cap:
                raise _TooLarge(url, size, cap)
            chunks.append(chunk)
        self.bytes += size
        return b"".join(chunks)


class _TooLarge(DocqaError):
    def __init__(self, url: str, size: int, cap: int):
        super().__init__(f"over the {cap / 1e6:g} MB a page may have (crawl.max_page_mb): {size / 1e6:.1f} MB or more")


def _outcome(url: str, final: str, response: httpx.Response, data: bytes) -> Fetched:
    status = response.status_code
    validators = Validators(response.headers.get("etag", ""), response.headers.get("last-modified", ""))
    kind = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if status == 200:
        return Fetched(url, "ok", final, status, data, kind, validators)
    if status == 304:
        return Fetched(url, "unchanged", final, status, validators=validators)
    if status in (404, 410):
        return Fetched(url, "gone", final, status, reason=f"{status} {response.reason_phrase or 'Not Found'}")
    return Fetched(url, "failed", final, status, reason=f"{status} {response.reason_phrase}".strip())
