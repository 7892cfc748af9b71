"""A PDF page as a PNG, rendered with pypdfium2, bounded in size, kept in a small in-memory LRU.

The scale is clamped to [MIN_SCALE, MAX_SCALE] and lowered further so that no image has more than
MAX_PIXELS pixels (a poster-sized page renders no larger than a letter page at a high scale).
Images are cached by (document, content hash, page, scale): a changed file is never served stale.
With a time limit or a memory cap (ingest.parse_timeout, ingest.worker_memory_mb: the defaults) a
page is rendered in a forked worker of the ingest pool, so a hostile page that hangs pdfium or eats
memory costs that worker, not the server; the wait is at most RENDER_TIMEOUT seconds.
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

from docqa.errors import DocqaError, NotFoundError
from docqa.ingest.readers.pdf import open_pdf, pdfium_lock

if TYPE_CHECKING:
    import pypdfium2 as pdfium
    from PIL.Image import Image

    from docqa.view.original import Original

MIN_SCALE, MAX_SCALE, DEFAULT_SCALE = 0.25, 3.0, 1.5  # 1.0 = 72 dpi
MAX_PIXELS = 4_000_000
RENDER_TIMEOUT = 20.0  # seconds, at most (a viewer is waiting)
CACHE_BYTES = 48 * 1024 * 1024


class PageCache:
    """Least-recently-used PNGs, bounded by their total size; safe across threads."""

    def __init__(self, max_bytes: int = CACHE_BYTES):
        self.max_bytes, self.size = max_bytes, 0
        self._items: OrderedDict[tuple, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> bytes | None:
        with self._lock:
            png = self._items.get(key)
            if png is not None:
                self._items.move_to_end(key)
            return png

    def put(self, key: tuple, png: bytes) -> None:
        with self._lock:
            if key in self._items or len(png) > self.max_bytes:
                return
            self._items[key] = png
            self.size += len(png)
            while self.size > self.max_bytes:
                _, old = self._items.popitem(last=False)
                self.size -= len(old)


CACHE = PageCache()


def page_png(original: Original, key: tuple, page: int, scale: float = DEFAULT_SCALE,
             timeout: float = 0.0, memory_bytes: int = 0) -> bytes:
    """Page `page` (1-based) as a PNG; NotFoundError past the last page.  `key` names the file's
    version (document id, content hash) for the cache; with a `timeout` or `memory_bytes` the page
    is rendered in a worker process (ParseTimeoutError, WorkerKilledError past them)."""
    scale = min(max(scale, MIN_SCALE), MAX_SCALE)
    cached = CACHE.get((*key, page, scale))
    if cached is not None:
        return cached
    job = (original.path or original.name, original, page, scale)
    with pdfium_lock:  # held across the fork too: no thread is inside pdfium when the worker is copied
        png = _in_worker(job, timeout, memory_bytes) if timeout or memory_bytes else _render_job(job)
    if isinstance(png, Exception):
        raise png
    CACHE.put((*key, page, scale), png)
    return png


def _in_worker(job: tuple, timeout: float, memory_bytes: int) -> bytes | Exception:
    import multiprocessing

    import PIL.PngImagePlugin  # noqa: F401  (loaded here, so the forked worker inherits them)
    import pypdfium2  # noqa: F401

    from docqa.ingest.pool import ParsePool

    if "fork" not in multiprocessing.get_all_start_methods():
        return _render_job(job)  # a spawned worker would start from nothing: slower than the page
    limit = min(timeout, RENDER_TIMEOUT) if timeout else RENDER_TIMEOUT
    pool = ParsePool(_render_job, lambda _, error: error, workers=1, timeout=limit, memory_bytes=memory_bytes,
                     context=multiprocessing.get_context("fork"))
    return list(pool.run([[job]]))[0]


def _render_job(job: tuple) -> bytes | Exception:
    """(name, original, page, scale) -> the PNG, or the error (returned: a worker answers, never raises)."""
    _, original, page, scale = job
    try:
        pdf = open_pdf(original.path or original.name, original.read())
        try:
            return _render(pdf, page, scale)
        finally:
            pdf.close()
    except DocqaError as exc:
        return exc


def check_page(pdf: pdfium.PdfDocument, page: int) -> None:
    """NotFoundError unless 1 <= page <= the number of pages."""
    if not 1 <= page <= len(pdf):
        raise NotFoundError(f"no page {page}: the document has {len(pdf)} page{'s' if len(pdf) != 1 else ''}")


def _render(pdf: pdfium.PdfDocument, page: int, scale: float) -> bytes:
    check_page(pdf, page)
    handle = pdf[page - 1]
    try:
        width, height = handle.get_size()
        scale = min(scale, (MAX_PIXELS / max(width * height, 1.0)) ** 0.5)
        image = handle.render(scale=scale, may_draw_forms=True).to_pil()
    finally:
        handle.close()
    return encode(image)


def encode(image: Image) -> bytes:
    """A 256-colour PNG: a quarter of a full-colour one's size, and faster to make (benchmarks/RESULTS.md)."""
    from PIL import Image as PIL

    out = io.BytesIO()
    image.quantize(colors=256, method=PIL.Quantize.FASTOCTREE).save(out, "PNG", compress_level=6)
    return out.getvalue()
