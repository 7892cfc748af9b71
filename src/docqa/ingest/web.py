"""A documentation site as a source: each page a document whose path is its URL (docqa.crawl fetches).

The crawl runs on a thread of its own (an asyncio loop); this thread parses each page through the
readers by its content type and writes through the pipeline's writer, in groups.  A page indexed
before is asked for with its validators (ETag, Last-Modified): a 304 is unchanged, not parsed.
A page answering 404 or 410 is flagged the first time and removed the second; a timeout, a 5xx
or a crawl cut short by a limit never removes anything (a site that is down is not deleted).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from docqa.clock import now
from docqa.crawl import AddressGuard, Crawler, CrawlLimits, CrawlStats, Fetched, Validators, fold, prefix_of
from docqa.embed import Embedder
from docqa.errors import InputError
from docqa.ingest.pipeline import (IngestOptions, IngestReport, Ingestor, Parsed, document_id, failed_job,
                                   parse_fetched_job, parse_workers, warm_up)
from docqa.ingest.pool import QUIET, ParsePool
from docqa.ingest.scan import Scanner
from docqa.store import FileState, Stores
from docqa.types import DocumentRecord

CrawlProgress = Callable[[CrawlStats, str], None]  # (figures so far, the URL just handled)
GONE = "gone"  # the error kind of a page that answered 404 or 410 once (removed when it does again)
_WRITE_EVERY = 32  # pages parsed before they are written together
_WRITE_SECONDS = 0.5  # ...or parsed this long ago, whichever comes first
_GROUP = 8  # pages sent to a parsing process at once (at most)
_BY_TYPE = {"text/html": ".html", "application/xhtml+xml": ".xhtml", "application/pdf": ".pdf",
            "text/markdown": ".md", "text/x-markdown": ".md", "text/x-rst": ".rst", "application/json": ".json"}
_TEXT_SUFFIXES = {".md", ".markdown", ".rst", ".txt", ".adoc"}


def reader_name(url: str, content_type: str) -> str:
    """The file name whose extension picks a page's reader: by content type, else by the URL's suffix."""
    suffix = PurePosixPath(urlsplit(url).path).suffix.lower()
    if content_type == "text/plain":
        return "page" + (suffix if suffix in _TEXT_SUFFIXES else ".txt")
    return "page" + _BY_TYPE.get(content_type, suffix or ".html")


class SiteIngestor:
    """Keeps one collection in step with one site (`run` once per add or watch tick)."""

    def __init__(self, store: Stores, opts: IngestOptions, embedder: Embedder | None, limits: CrawlLimits,
                 guard: AddressGuard | None = None, progress: CrawlProgress | None = None, transport=None):
        self.store, self.opts, self.limits, self.guard = store, opts, limits, guard
        self.progress = progress or (lambda stats, url: None)
        self.writer = Ingestor(store, Scanner(), opts, None, embedder)
        self.embedder, self.transport = embedder, transport
        self._spool_dir, self._spooled = "", 0  # where fetched pages wait for their parsing process (run)

    def run(self, start: str, collection: str) -> IngestReport:
        started = time.perf_counter()
        url = fold(start)
        if url is None:
            raise InputError(f"{start}: not an http(s) URL a site can be crawled from")
        states, known = self._known(url, collection)
        report = IngestReport()
        pages: queue.Queue[tuple[Fetched, CrawlStats] | CrawlStats | BaseException] = queue.Queue(maxsize=256)
        crawler = Crawler(self.limits, self.guard, self.transport)
        thread = threading.Thread(target=_crawl, args=(crawler, url, known, pages), name="docqa-crawl", daemon=True)
        thread.start()
        with tempfile.TemporaryDirectory(prefix="docqa-crawl-") as self._spool_dir:
            self._spooled = 0
            stats = self._consume(pages, states, collection, report)
        thread.join()
        report.crawl = {"start": url, "prefix": prefix_of(url), **stats.to_dict()}
        report.elapsed = time.perf_counter() - started
        return report

    def _known(self, url: str, collection: str) -> tuple[dict[str, FileState], dict[str, Validators]]:
        """What the index holds under the site's prefix, and the validators to ask again with (none for
        a page flagged as failed: it is fetched whole, so a 304 never leaves it flagged)."""
        states, known = {}, {}
        for record in self.store.documents.list_documents(collection, path_prefix=prefix_of(url)):
            states[record.path] = FileState(record.path, record.size, record.mtime_ns, record.content_hash,
                                            record.status, record.title, record.error)
            http = self.store.documents.document_metadata(record.document_id).get("http", {})
            known[record.path] = Validators(http.get("etag", ""), http.get("last_modified", "")) \
                if record.status == "ok" else Validators()
        return states, known

    def _consume(self, pages: queue.Queue, states: dict[str, FileState], collection: str,
                 report: IngestReport) -> CrawlStats:
        """Parse the fetched pages in the pool's worker processes (each page with the time and memory
        bounds of a file) as they come, and write them in groups; the crawl's figures at the end."""
        source = _Source(self, pages, states, collection, report)
        batch: list[Parsed] = []
        since = time.monotonic()
        for parsed in self._parsed(source.jobs()):
            if parsed is not QUIET:
                batch.append(parsed)
            if len(batch) >= _WRITE_EVERY or (batch and time.monotonic() - since >= _WRITE_SECONDS):
                self.writer.write(batch, states, collection, report)
                batch, since = [], time.monotonic()
        self.writer.write(batch, states, collection, report)
        return source.stats

    def _parsed(self, jobs: Iterator[list[tuple]]) -> Iterator[Parsed]:
        """Each page's Parsed, from worker processes (inline when no bound is asked for: no pool)."""
        opts = self.opts
        if opts.parse_timeout <= 0 and opts.worker_memory <= 0:
            for group in jobs:
                yield from (parse_fetched_job(job, opts) for job in group)
            return
        warm_up()  # forked workers inherit the loaded tokenizer and dictionaries
        context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
        pool = ParsePool(partial(parse_fetched_job, opts=opts), failed_job, workers=parse_workers(opts, self.embedder),
                         timeout=opts.parse_timeout, memory_bytes=opts.worker_memory, context=context)
        yield from pool.run(jobs, quiet=_WRITE_SECONDS)

    def _spool(self, data: bytes) -> str:
        """The file a page's bytes wait in for its parsing process (parse_fetched_job removes it)."""
        self._spooled += 1
        path = os.path.join(self._spool_dir, str(self._spooled))
        with open(path, "wb") as f:
            f.write(data)
        return path

    def decide(self, page: Fetched, states: dict[str, FileState], collection: str, report: IngestReport) -> tuple | None:
        """A fetched page's parse job, or None when it is decided here: unchanged, gone, failed."""
        path = page.final_url or page.url
        old = states.get(path)
        if page.state == "ok":
            http = {"url": path, "content_type": page.content_type, **page.validators.to_dict()}
            old_hash = old.content_hash if old and old.status == "ok" else None
            return (path, len(page.data), page.mtime_ns, old_hash, self._spool(page.data), reader_name(path, page.content_type),
                    {"http": http})
        if page.state == "unchanged":
            report.unchanged.append(path)
        elif page.state == "gone":
            self._gone(page, states.get(page.url), collection, report)
        elif old is not None:  # a timeout, a 5xx: the indexed version stays, as a file that cannot be read now
            report.unreadable.append((path, page.reason, int(old.status == "ok")))
        else:
            report.failed.append((path, "fetch", page.reason))
        return None

    def _gone(self, page: Fetched, old: FileState | None, collection: str, report: IngestReport) -> None:
        """404/410: flagged the first time (kept, still searchable), removed when it answers so again."""
        if old is None:
            report.failed.append((page.url, GONE, page.reason))
            return
        doc_id = document_id(collection, page.url)
        if old.status == "error" and (old.error or "").startswith(GONE + ":"):
            self.store.documents.delete_documents([doc_id])
            report.removed.append(page.url)
            return
        reason = f"{page.reason} (removed if it answers so again at the next crawl)"
        record = DocumentRecord(document_id=doc_id, path=page.url, collection=collection, type=page.content_type or "html",
                                title=old.title, keywords=[], summary="", size=old.size, content_hash=old.content_hash,
                                chunks=0, status="error", error=f"{GONE}: {reason}", indexed_at=now("seconds"),
                                mtime_ns=old.mtime_ns)
        self.store.documents.record_failure(record)
        report.unreadable.append((page.url, reason, int(old.status == "ok")))


class _Source:
    """The crawl's pages as groups of parse jobs for the pool: what is waiting is sent together (at
    most _GROUP pages), so a worker never waits for a group to fill while the crawl goes on."""

    def __init__(self, site: SiteIngestor, pages: queue.Queue, states: dict[str, FileState], collection: str,
                 report: IngestReport):
        self.site, self.pages, self.states, self.collection, self.report = site, pages, states, collection, report
        self.stats = CrawlStats()

    def jobs(self) -> Iterator[list[tuple]]:
        while True:
            group: list[tuple] = []
            item = self.pages.get()
            while True:
                if isinstance(item, BaseException):
                    raise item
                if isinstance(item, CrawlStats):
                    self.stats = item
                    if group:
                        yield group
                    return
                job = self._job(item)
                if job is not None:
                    group.append(job)
                if len(group) >= _GROUP:
                    break
                try:
                    item = self.pages.get_nowait()
                except queue.Empty:
                    break
            if group:
                yield group

    def _job(self, item: tuple[Fetched, CrawlStats]) -> tuple | None:
        page, stats = item
        self.stats = stats
        job = self.site.decide(page, self.states, self.collection, self.report)
        self.site.progress(stats, page.url)
        return job


def merged(reports: list[IngestReport]) -> IngestReport:
    """Several crawls' (and adds') reports as one: lists joined, counts added, `crawl` a list of each site's figures."""
    out = IngestReport()
    for r in reports:
        for name in ("added", "updated", "unchanged", "removed", "moved", "skipped", "failed", "still_skipped",
                     "still_failing", "unreadable"):
            getattr(out, name).extend(getattr(r, name))
        out.chunks += r.chunks
        out.bytes_parsed += r.bytes_parsed
        out.by_type.update(r.by_type)
        out.elapsed += r.elapsed
    sites = [r.crawl for r in reports if r.crawl is not None]
    out.crawl = {"sites": sites} if sites else None
    return out


def _crawl(crawler: Crawler, url: str, known: dict[str, Validators], out: queue.Queue) -> None:
    try:
        stats = crawler.run(url, known, lambda page, stats: out.put((page, stats)))
    except BaseException as exc:  # handed to the consuming thread, which raises it
        out.put(exc)
        return
    out.put(stats)
