"""Incremental, parallel ingestion: scan → (read → chunk → enrich in worker processes) → write.

A file whose size and mtime match the index is skipped without being read; one whose content
hash matches is skipped without being parsed; anything else is parsed and its document replaced
in one transaction.  Folders that are added again are synced: documents whose files are gone
(ENOENT, checked) or now excluded are removed; those a folder holds that cannot be read right now
(EACCES, EIO, a stale or unmounted drive) are kept and reported, never taken for deleted.

Outcomes are honest: a file docqa does not read (unsupported or binary, an image without OCR, an
empty file, a FIFO, a symlink out of the folder) is *skipped* with its reason; *failed* means a
file docqa should read and could not.  Both are recorded in the store, with the readers that
judged them, so a re-run with nothing changed reads none of them again and reports them only as
"still skipped" / "still failing".  One bad file never stops the batch.

Two phases per group of files: a document's full text (chunks and their full-text entries) is
written and committed as soon as it is parsed, so a search during a long add already finds it
(BM25; `Retriever` says which hits have no vector yet); its missing vectors are embedded after
that and written on their own.  A document replaced by a new version is searchable throughout
(the replace is one transaction).  An add that stops between the two leaves its documents
searchable, and the next add (or `docqa reindex`) embeds what lacks a vector (`_finish_vectors`).
Every write is a short step taken under `gate` (the API server's single writer, api/jobs.py):
parsing and embedding hold nothing, so a small write waits for one step at most, never for a parse.

An archive (.zip, .tar, .tar.gz ...) is one file and many documents: each member is a document at
`<archive>!/<member>`, and the archive's own document (the list of its members) is written after
them, so a crash midway leaves the archive's old hash and the next run reads it again.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from docqa.clock import now
from docqa.embed import Embedder, embed_text, text_hash
from docqa.errors import EmptyDocumentError, FileTooLargeError, IngestError, UnreadableFileError
from docqa.store import ChunkVectors, DocumentWrite, EmbedInput, FileState, Stores
from docqa.store.documents import fulltext_inputs
from docqa.text import segmented_forms
from docqa.ingest.archives import parse_archive, skipped_lines, sort_members
from docqa.ingest.embedding import EmbeddingThread
from docqa.ingest.readers import bounds
from docqa.ingest.readers.archive import archive_of, is_archive_name
from docqa.ingest.ocr import OcrOptions
from docqa.ingest.ocr import configure as configure_ocr
from docqa.ingest.scan import GONE, Scanner, real_paths, safe_path
from docqa.ingest.sync import absent_paths
from docqa.types import Chunk, Document, DocumentRecord
from docqa.heap import keep_large_blocks_apart, share_heap_arenas
from docqa.ingest.pool import QUIET, ParsePool
from docqa.ingest.readers.zipguard import ZipLimits, applied

Progress = Callable[[int, int, str], None]  # (done, total, path)
# A gate is held around each write step (see the module's text): the API server's writer turn, else nothing.
Gate = Callable[[], AbstractContextManager]
# An engine turns parse jobs into results, one per job, in any order: `parse_jobs` (worker processes
# on this machine) or ray_engine.RayEngine (a Ray cluster).  The writer below is the same for both.
# An engine may also yield QUIET when no result came for a while (`parse_jobs` with quiet=gather_seconds):
# the files parsed so far are written then, not held until the slow file in progress is done.
Engine = Callable[[list[tuple], "IngestOptions"], Iterator["Parsed"]]
# With ingest.parse_timeout and ingest.worker_memory_mb both 0 (no bounds asked for), this few
# small files are parsed in-process: a pool costs more than it saves.  Otherwise every file goes
# to a worker process, where it has a time limit and a memory cap (pool.py): only a process can be
# stopped (measured: ~50 ms more for one small file).  The zip guard refuses bombs either way.
_INLINE_MAX = 3
_INLINE_BYTES = 1024 * 1024
# Small files travel to workers in groups: one message per file costs ~2 ms of round trip, more
# than parsing a 2 KB file.  Groups stay small so progress and memory stay smooth.  A worker
# answers file by file, so a worker killed mid-group costs only the file it was parsing.
_GROUP_FILES = 32
_GROUP_BYTES = 512 * 1024
# Parsed files are written once this many chunks are pending (or after gather_seconds).
_EMBED_CHUNKS = 128
# The model embeds on its own thread (ingest/embedding.py) whatever was written while it was busy, as
# one group; up to this many texts may wait for it, then the writer waits for the model (bounded memory).
_EMBED_AHEAD = 4 * _EMBED_CHUNKS
# Without an embedder, parsed files are written in groups gathered for at most this long (one
# `replace_documents` each: on PostgreSQL one COPY per table), so progress still moves often;
# at most half of ingest.commit_seconds, so every commit has a group to take.
_GROUP_SECONDS = 0.25
# An ingest of at least this many files is a bulk load: the store may defer what it can do once at
# the end cheaper than per document (PostgreSQL: a new model's HNSW index, built after the load).
_BULK_FILES = 1000
# Chunk texts left without a vector (an add that stopped before embedding them) are embedded this many at a time.
_CATCH_UP = 256


@dataclass(slots=True)
class IngestReport:
    """What one `add` did."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    moved: list[tuple[str, str]] = field(default_factory=list)  # (old path, new path): renamed, not re-parsed
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason): not read, newly so
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (path, kind, reason): newly failed
    still_skipped: list[str] = field(default_factory=list)  # skipped before, for the same reason
    still_failing: list[str] = field(default_factory=list)  # failed before, with the same error
    unreadable: list[tuple[str, str, int]] = field(default_factory=list)  # (path, reason, documents kept)
    ocr: list[tuple[str, int, float]] = field(default_factory=list)  # (path, pages recognised, seconds) per file OCR read
    chunks: int = 0
    bytes_parsed: int = 0
    by_type: Counter = field(default_factory=Counter)
    elapsed: float = 0.0
    first_searchable: float | None = None  # seconds until the first new document's text was committed
    searchable: float | None = None  # seconds until the last one's was (every parsed document searchable)
    vectors: int = 0  # chunk texts embedded in this add (equal texts share one vector)
    vectors_elapsed: float | None = None  # seconds until the last of them was written
    crawl: dict | None = None  # a crawled site's figures (docqa.crawl.CrawlStats), None for files


    def to_dict(self) -> dict:
        return {
            "added": self.added, "updated": self.updated, "unchanged": self.unchanged, "removed": self.removed,
            "moved": [{"from": a, "to": b} for a, b in self.moved],
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "failed": [{"path": p, "kind": k, "reason": r} for p, k, r in self.failed],
            "still_skipped": self.still_skipped, "still_failing": self.still_failing,
            "unreadable": [{"path": p, "reason": r, "kept": n} for p, r, n in self.unreadable],
            "ocr": [{"path": p, "pages": n, "seconds": round(s, 2)} for p, n, s in self.ocr],
            "chunks": self.chunks, "bytes_parsed": self.bytes_parsed, "by_type": dict(self.by_type),
            "elapsed_s": round(self.elapsed, 3), "first_searchable_s": _rounded(self.first_searchable),
            "searchable_s": _rounded(self.searchable), "vectors": self.vectors, "vectors_s": _rounded(self.vectors_elapsed),
            **({"crawl": self.crawl} if self.crawl is not None else {}),
        }

    def phases(self) -> str | None:
        """'searchable in X s; vectors for N chunks in Y s' (None when nothing was written or embedded)."""
        parts = [f"searchable in {self.searchable:.2f} s"] if self.searchable is not None else []
        if self.vectors_elapsed is not None:
            parts.append(f"vectors for {self.vectors} chunks in {self.vectors_elapsed:.2f} s")
        return "; ".join(parts) or None


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 3)


@dataclass(slots=True)
class Parsed:
    """A worker's result for one file."""

    path: str
    size: int
    mtime_ns: int
    content_hash: str = ""
    unchanged: bool = False
    type: str = ""
    language: str | None = None
    text: str = ""
    chunks: list[Chunk] = field(default_factory=list)
    title: str = ""
    keywords: list[str] = field(default_factory=list)
    summary: str = ""
    metadata: dict = field(default_factory=dict)
    error: IngestError | None = None
    members: list[Parsed] | None = None  # an archive's members, each a document of its own
    vectors: dict | None = None  # text hash -> vector, when an engine's workers embedded the chunks (ray_engine.py)
    segmented: dict[str, str] | None = None  # the full-text index's Chinese segmentation, made here (DocumentWrite)


@dataclass(slots=True)
class IngestOptions:
    max_tokens: int = 512
    overlap: int = 50
    max_bytes: int = 200 * 1024 * 1024
    workers: int = 0
    ocr: OcrOptions = field(default_factory=OcrOptions)
    parse_timeout: float = 300.0  # seconds per file in a worker process (0: none)
    worker_memory: int = 2048 * 1024 * 1024  # bytes a worker process may grow by (0: no cap)
    zip_limits: ZipLimits = field(default_factory=ZipLimits)
    # Seconds between the commits of written documents (ingest.commit_seconds); not part of the
    # readers' fingerprint (repr), since it changes no outcome.
    commit_seconds: float = field(default=0.5, repr=False)


def document_id(collection: str, path: str) -> str:
    """Stable id of a (collection, path) pair (the path's file-system bytes: any name hashes)."""
    return hashlib.blake2b(f"{collection}\0".encode() + os.fsencode(path), digest_size=8).hexdigest()


def parse_file(path: str, size: int, mtime_ns: int, old_hash: str | None, opts: IngestOptions) -> Parsed:
    """Read, hash, parse, chunk and enrich one file (runs in a worker process)."""
    with applied(opts.zip_limits):
        return _parse(path, size, mtime_ns, old_hash, opts)


def _parse(path: str, size: int, mtime_ns: int, old_hash: str | None, opts: IngestOptions) -> Parsed:
    configure_ocr(opts.ocr)  # worker processes do not share the parent's settings
    result = Parsed(path=safe_path(path), size=size, mtime_ns=mtime_ns)  # the stored, printable form
    try:
        if size > opts.max_bytes:
            raise FileTooLargeError(path, f"{size / 1e6:.1f} MB is over the {opts.max_bytes / 1e6:.0f} MB limit (ingest.max_file_mb)")
        data = Path(path).read_bytes()
        result.content_hash = _hash_bytes(data)
        if result.content_hash == old_hash:
            result.unchanged = True
            return result
        if is_archive_name(path):  # one file, many documents
            parse_archive(result, data, opts, _parse_bytes)
        else:
            _parse_bytes(result, data, opts)
    except IngestError as exc:
        result.error = exc
    except OSError as exc:
        result.error = UnreadableFileError(result.path, f"cannot read the file now: {exc.strerror or exc}")
    except MemoryError:  # the worker's memory cap (RLIMIT_DATA, pool.py) was reached
        result = Parsed(path=result.path, size=size, mtime_ns=mtime_ns, content_hash=result.content_hash)
        result.error = FileTooLargeError(path, f"parsing needed more memory than the {opts.worker_memory // 2**20} MB "
                                               "a parsing process may use (ingest.worker_memory_mb)")
    except Exception as exc:  # a reader bug must not kill the batch; report it with the file
        result.error = IngestError(path, f"unexpected {type(exc).__name__} while parsing: {exc}")
    return result


def _parse_bytes(result: Parsed, data: bytes, opts: IngestOptions, doc: Document | None = None) -> None:
    """Read (unless `doc` is given), chunk and enrich one document into `result`."""
    from docqa.ingest.chunkers import chunk_document
    from docqa.ingest.enrich import enrich
    from docqa.ingest.readers import read_file

    if doc is None:
        with bounds.limit(opts.max_bytes):
            doc = read_file(Path(result.path), data)
    result.chunks = chunk_document(doc, opts.max_tokens, opts.overlap)
    if not result.chunks:
        raise EmptyDocumentError(result.path, "no text extracted")
    meta = enrich(doc)
    # Segmented here, in the parser process: the process that writes needs no segmenter then.
    result.segmented = segmented_forms(fulltext_inputs(meta.title, meta.keywords, meta.summary, result.chunks)) or None
    for chunk in result.chunks:  # the spans suffice: halves what goes back to the parent process
        chunk.text = ""
    result.type, result.language, result.text, result.metadata = doc.type, doc.language, doc.text, doc.metadata
    result.title, result.keywords, result.summary = meta.title, meta.keywords, meta.summary



def parse_fetched(path: str, data: bytes, name: str, opts: IngestOptions, metadata: dict | None = None,
                  old_hash: str | None = None, mtime_ns: int = 0) -> Parsed:
    """Read, chunk and enrich bytes fetched from elsewhere (a web page) as the document `path`: `name`
    is the file name whose extension picks the reader; `metadata` joins the reader's; the same
    content as `old_hash` is not parsed (unchanged)."""
    from docqa.ingest.readers import read_file

    result = Parsed(path=path, size=len(data), mtime_ns=mtime_ns, content_hash=_hash_bytes(data))
    if result.content_hash == old_hash:
        result.unchanged = True
        return result
    try:
        if len(data) > opts.max_bytes:
            raise FileTooLargeError(path, f"{len(data) / 1e6:.1f} MB is over the {opts.max_bytes / 1e6:.0f} MB limit (ingest.max_file_mb)")
        with applied(opts.zip_limits), bounds.limit(opts.max_bytes):
            doc = read_file(Path(name), data)
        doc.path = path
        doc.metadata.update(metadata or {})
        _parse_bytes(result, data, opts, doc)
    except IngestError as exc:
        result.error = exc if exc.path == path else type(exc)(path, exc.reason)
    except Exception as exc:  # a reader bug must not stop the crawl; report it with the page
        result.error = IngestError(path, f"unexpected {type(exc).__name__} while parsing: {exc}")
    return result


def parse_fetched_job(job: tuple, opts: IngestOptions) -> Parsed:
    """parse_fetched on one (path, size, mtime_ns, old_hash, spooled, name, metadata) job, in a pool
    worker: the fetched bytes wait in the file `spooled` (a pipe full of page bodies would block the
    pool's parent and worker on each other), which is removed once read."""
    path, _, mtime_ns, old_hash, spooled, name, metadata = job
    try:
        data = Path(spooled).read_bytes()
        os.unlink(spooled)
    except OSError as exc:
        return Parsed(path=path, size=job[1], mtime_ns=mtime_ns, error=UnreadableFileError(path, f"the fetched page's copy is gone: {exc}"))
    return parse_fetched(path, data, name, opts, metadata, old_hash, mtime_ns)


def parse_job(job: tuple, opts: IngestOptions) -> Parsed:
    """parse_file on one (path, size, mtime_ns, old_hash) job: what a pool worker runs."""
    return parse_file(*job, opts)  # type: ignore[call-arg]  # mypy takes a star tuple to fill every parameter


def failed_job(job: tuple, error: IngestError) -> Parsed:
    """The result of a job whose worker was killed or stopped while parsing it."""
    return Parsed(path=safe_path(job[0]), size=job[1], mtime_ns=job[2], error=error)


def groups(jobs: list[tuple]):
    """Consecutive jobs grouped up to _GROUP_FILES files or _GROUP_BYTES bytes (a big file goes alone)."""
    group: list[tuple] = []
    size = 0
    for job in jobs:
        if group and (len(group) >= _GROUP_FILES or size + job[1] > _GROUP_BYTES):
            yield group
            group, size = [], 0
        group.append(job)
        size += job[1]
    if group:
        yield group


class Ingestor:
    """Runs one `add` against a store."""

    def __init__(self, store: Stores, scanner: Scanner, opts: IngestOptions, progress: Progress | None = None,
                 embedder: Embedder | None = None, engine: Engine | None = None, gate: Gate | None = None):
        self.store, self.scanner, self.opts = store, scanner, opts
        self.gate = gate  # None: nothing else writes meanwhile; commits are grouped by time (store.batch)
        self.engine = engine  # None: the local engine, parse_jobs (see _results)
        self.progress = progress or (lambda done, total, path: None)
        self.embedder = embedder
        self._warming = False  # a local model is being loaded on a thread (_warm_model)
        self.model = embedder.fingerprint.key if embedder else None
        self._embedding = EmbeddingThread(partial(embedder.embed_batch, kind="passage")) if embedder else None

    def run(self, paths: list[Path], collection: str) -> IngestReport:
        from docqa.ingest.readers.registry import readers_fingerprint

        started = self.started = time.perf_counter()
        report = IngestReport()
        self.readers = readers_fingerprint(repr(replace(self.opts, workers=0)))  # a new limit retries what it refused
        scan = self.scanner.scan(paths)
        report.failed.extend((p, "missing", "no such file or folder: check the path") for p in scan.missing)
        states = self.store.documents.file_states(collection)
        found = {safe_path(f) for f in scan.files} | {p for p, _ in scan.skipped}
        with self.store.batch(), self._step():
            for path, reason in scan.skipped:
                self._skip(path, 0, 0, "", "not-read", reason, states.get(path), collection, report)
        jobs = self._triage(scan.files, states, report)
        gone, pruned, unreadable = absent_paths(scan, found, states)
        report.unreadable.extend(unreadable)
        jobs = self._moves(jobs, gone, states, collection, report)
        self._parse_all(jobs, states, collection, report)
        doomed = [p for p in gone + pruned if p in states]  # a moved document left `states`
        if doomed:
            with self._step():
                self.store.documents.delete_documents(document_id(collection, p) for p in doomed)
            report.removed.extend(doomed)
        self._finish_vectors(report)
        report.elapsed = time.perf_counter() - started
        return report

    @contextmanager
    def _step(self):
        """One write step: under the gate, committed before the gate is let go (a writer waiting
        behind it must not find the database locked)."""
        with self.gate() if self.gate is not None else nullcontext():
            yield
            if self.gate is not None:
                self.store.commit_pending()

    def write(self, parsed: list[Parsed], states: dict[str, FileState], collection: str, report: IngestReport) -> None:
        """Write and embed documents parsed elsewhere (parse_fetched: a crawl's pages) as `run` writes
        its files: each replaced in one transaction (its text searchable before its vectors), a failure
        recorded with its reason.  `states`: what the index held of these paths before."""
        from docqa.ingest.readers.registry import readers_fingerprint

        self.readers = readers_fingerprint(repr(replace(self.opts, workers=0)))
        if getattr(self, "started", None) is None:
            self.started = time.perf_counter()
        unembedded: dict[str, str] = {}
        with self.store.batch(self.opts.commit_seconds):
            self._flush(parsed, states, collection, report, 0, len(parsed), unembedded)
            self._embed(unembedded, report)

    def _triage(self, files: list[Path], states: dict[str, FileState], report: IngestReport) -> list[tuple]:
        """Skip files whose size and mtime are unchanged (and skipped or failed ones the same readers
        judged, unless they could not be read); the rest become parse jobs."""
        jobs = []
        for file in files:
            key = safe_path(file)
            old = states.get(key)
            try:
                st = file.stat()
            except OSError as exc:
                if exc.errno not in GONE:  # gone since the scan: the vanished check decides
                    report.unreadable.append((key, exc.strerror or str(exc), int(bool(old and old.status == "ok"))))
                continue
            if old and old.size == st.st_size and old.mtime_ns == st.st_mtime_ns:
                if old.status == "ok":
                    report.unchanged.append(key)
                    continue
                if old.readers == self.readers and not (old.error or "").startswith(UnreadableFileError.kind):
                    (report.still_failing if old.status == "error" else report.still_skipped).append(key)
                    continue
            jobs.append((str(file), st.st_size, st.st_mtime_ns, old.content_hash if old and old.status == "ok" else None))
        return jobs

    def _parse_all(self, jobs: list[tuple], states: dict, collection: str, report: IngestReport) -> None:
        """Write parsed files in groups as they come (every _GROUP_SECONDS, or sooner at _EMBED_CHUNKS
        chunks); their texts that lack a vector are embedded on the embedding thread meanwhile, a group
        at a time: what was written while the model was busy is its next group."""
        total, done = len(jobs), 0
        pending: list[Parsed] = []
        waiting = 0  # chunks in `pending`
        unembedded: dict[str, str] = {}  # text hash -> text of written chunks, to embed
        since, commit, gather = time.monotonic(), self.opts.commit_seconds, gather_seconds(self.opts)
        with self.store.bulk_load(commit) if total >= _BULK_FILES else self.store.batch(commit):
            for parsed in self._results(jobs):
                self._take_vectors(report, wait=False)
                if not self._warming and parsed is not QUIET and (parsed.chunks or parsed.members):
                    self._warm_model()  # something to embed: load the model while the parser works on
                if parsed is QUIET:  # no result for a while (a slow file): write, commit and embed what waits meanwhile
                    if pending:
                        done = self._flush(pending, states, collection, report, done, total, unembedded)
                        pending, waiting, since = [], 0, time.monotonic()
                    self.store.commit_pending()  # nothing stays uncommitted while a slow file is parsed
                    self._embed_ahead(unembedded, report)
                    continue
                expanded = self._expand(parsed, states, collection, report)
                pending.extend(expanded)
                waiting += sum(len(p.chunks) for p in expanded)
                if waiting >= _EMBED_CHUNKS or time.monotonic() - since >= gather:
                    done = self._flush(pending, states, collection, report, done, total, unembedded)
                    pending, waiting, since = [], 0, time.monotonic()
                self._embed_ahead(unembedded, report)
            self._flush(pending, states, collection, report, done, total, unembedded)
            self._embed(unembedded, report)

    def _warm_model(self) -> None:
        """Load a local model on a thread while the parser works on (its workers are started by now:
        a fork never copies the model).  Its 0.3 s are off the first batch's path."""
        self._warming = True
        if self.embedder is not None and self.embedder.runs_here:
            threading.Thread(target=self.embedder.warm, name="docqa-model-load", daemon=True).start()

    def _flush(self, batch: list[Parsed], states: dict, collection: str, report: IngestReport, done: int, total: int,
               unembedded: dict[str, str]) -> int:
        """Write the parsed files' documents and commit them (searchable now); their chunk texts join
        `unembedded` (embedded later, by `_embed`)."""
        vectors, texts = self._hashes(batch)
        group: dict[str, DocumentWrite] = {}  # the documents written together at the end (one replace_documents)
        with self._step():
            for parsed in batch:
                self._write(parsed, states.get(parsed.path), collection, report, vectors.get(parsed.path), group)
            self.store.documents.replace_documents(list(group.values()))
            if self.embedder is not None and group:
                self.store.vectors.set_vectors_pending(True)  # with the texts: a stop before their vectors is known
                self.store.commit_pending()  # searchable before the embedding; no write lock held while embedding
        if group:
            report.searchable = time.perf_counter() - self.started
            if report.first_searchable is None:
                report.first_searchable = report.searchable
        for parsed in batch:
            if archive_of(parsed.path) is None:  # an archive's members are part of its one step
                done += 1
                self.progress(done, total, parsed.path)
        unembedded.update(texts)
        return done

    def _hashes(self, batch: list[Parsed]) -> tuple[dict[str, ChunkVectors], dict[str, str]]:
        """Per file path: its chunks' text hashes (with the vectors an engine's workers made, if any);
        and every text to embed by hash."""
        out: dict[str, ChunkVectors] = {}
        texts: dict[str, str] = {}
        for parsed in batch:
            if parsed.unchanged or parsed.error is not None:
                continue
            inputs = embed_inputs(parsed)
            texts.update(inputs)
            made = parsed.vectors or {}  # ray_engine.py: embedded beside the parse
            out[parsed.path] = ChunkVectors(self.model, [h for h, _ in inputs], {h: made[h] for h, _ in inputs if h in made})
        return out, texts

    def _embed_ahead(self, texts: dict[str, str], report: IngestReport) -> None:
        """Start embedding the written texts as soon as the model is free (a group grows while it is
        busy: the model's batches stay full); once _EMBED_AHEAD wait, after waiting for the model."""
        busy = self._embedding is not None and self._embedding.busy
        if len(texts) >= _EMBED_AHEAD or (texts and not busy):
            self._embed(texts, report, wait=False)

    def _embed(self, texts: dict[str, str], report: IngestReport, wait: bool = True) -> None:
        """Embed the texts that have no vector yet (their chunks are written) and empty `texts`: the
        group the model is on is finished and written first, then these start on the embedding
        thread; with `wait`, their vectors are written before this returns."""
        self._take_vectors(report, wait=True)  # also lets known_vectors see that group's vectors
        if self._embedding is None or not texts:
            texts.clear()
            return
        known = self.store.vectors.known_vectors(self.model, texts)
        missing = [h for h in texts if h not in known]
        inputs = [texts[h] for h in missing]
        texts.clear()
        if missing:
            self._embedding.start(missing, inputs)
        if wait:
            self._take_vectors(report, wait=True)

    def _take_vectors(self, report: IngestReport, wait: bool) -> None:
        """Write the vectors of the group the embedding thread finished (waiting for it if `wait`)."""
        vectors = self._embedding.take(wait) if self._embedding is not None else None
        if not vectors:
            return
        with self._step():
            self.store.vectors.put_vectors(self.model, vectors)
            self.store.commit_pending()
        report.vectors += len(vectors)
        report.vectors_elapsed = time.perf_counter() - self.started

    def _finish_vectors(self, report: IngestReport) -> None:
        """Embed the chunk texts this add or an earlier one (stopped between its phases) wrote without
        their vectors; then no chunk lacks one."""
        if self.embedder is None or not self.store.vectors.vectors_pending():
            return
        while batch := self.store.vectors.unembedded(self.model, _CATCH_UP):
            before = report.vectors
            self._embed({b.text_hash: _input_text(b) for b in batch}, report)
            if report.vectors == before:  # nothing could be added (never expected): do not loop
                return
        with self._step():
            self.store.vectors.set_vectors_pending(False)

    def _expand(self, parsed: Parsed, states: dict, collection: str, report: IngestReport) -> list[Parsed]:
        """What to write for one parsed file: itself, or an archive's members then the archive, last
        (see archives.py).  Members gone from the archive, or no longer readable, are removed now."""
        members, parsed.members = parsed.members, None
        if members is None or parsed.error is not None:  # a file, or an unreadable archive (members kept)
            return [parsed]
        keep, skipped, gone = sort_members(parsed.path, members, states)
        report.skipped.extend(skipped_lines(parsed.path, skipped))
        if gone:
            with self._step():
                self.store.documents.delete_documents(document_id(collection, p) for p in gone)
            report.removed.extend(gone)
            for path in gone:
                del states[path]
        return [*keep, parsed]

    def _results(self, jobs: list[tuple]) -> Iterator[Parsed]:
        if self.engine is not None:
            return self.engine(jobs, self.opts)
        workers = parse_workers(self.opts, self.embedder)
        embeds_here = self.embedder is not None and self.embedder.runs_here
        return parse_jobs(jobs, replace(self.opts, workers=workers), lean_parent=embeds_here and workers == 1,
                          quiet=gather_seconds(self.opts))

    def _write(self, parsed: Parsed, old: FileState | None, collection: str, report: IngestReport,
               vectors: ChunkVectors | None, group: dict[str, DocumentWrite]) -> None:
        """Record what became of a parsed file; a good document joins `group` (written by the caller)."""
        doc_id = document_id(collection, parsed.path)
        if doc_id in group:  # the same document twice in one flush: its first version goes in first
            self.store.documents.replace_documents(list(group.values()))
            group.clear()
        if parsed.unchanged:
            self.store.documents.touch(doc_id, parsed.size, parsed.mtime_ns)
            report.unchanged.append(parsed.path)
            return
        if parsed.error is not None:
            self._fail(parsed, old, doc_id, collection, report)
            return
        record = DocumentRecord(
            document_id=doc_id, path=parsed.path, collection=collection, type=parsed.type, title=parsed.title,
            keywords=parsed.keywords, summary=parsed.summary, size=parsed.size, content_hash=parsed.content_hash,
            chunks=len(parsed.chunks), status="ok", error=None, indexed_at=now("seconds"), mtime_ns=parsed.mtime_ns,
            language=parsed.language,
        )
        group[doc_id] = DocumentWrite(record, parsed.text, parsed.chunks, parsed.metadata, vectors, parsed.segmented)
        (report.updated if old else report.added).append(parsed.path)
        report.chunks += len(parsed.chunks)
        report.bytes_parsed += parsed.size
        report.by_type[parsed.type] += 1
        if (ocr := parsed.metadata.get("ocr")) and ocr.get("pages"):
            report.ocr.append((parsed.path, len(ocr["pages"]), float(ocr.get("seconds", 0.0))))

    def _fail(self, parsed: Parsed, old: FileState | None, doc_id: str, collection: str, report: IngestReport) -> None:
        """A file that was skipped, failed, or could not be read now (its indexed version stays)."""
        err = parsed.error
        if err.skip:
            self._skip(parsed.path, parsed.size, parsed.mtime_ns, parsed.content_hash, err.kind, err.reason, old,
                       collection, report)
            return
        error = f"{err.kind}: {err.reason}"
        if isinstance(err, UnreadableFileError):
            report.unreadable.append((parsed.path, err.reason, int(bool(old and old.status == "ok"))))
        elif old and old.status == "error" and old.error == error:
            report.still_failing.append(parsed.path)
        else:
            report.failed.append((parsed.path, err.kind, err.reason))
        record = DocumentRecord(
            document_id=doc_id, path=parsed.path, collection=collection, type=_type_guess(parsed.path), title="",
            keywords=[], summary="", size=parsed.size, content_hash=parsed.content_hash, chunks=0, status="error",
            error=error, indexed_at=now("seconds"), mtime_ns=parsed.mtime_ns,
        )
        self.store.documents.record_failure(record, {"readers": self.readers})

    def _skip(self, path: str, size: int, mtime_ns: int, content_hash: str, kind: str, reason: str,
              old: FileState | None, collection: str, report: IngestReport) -> None:
        """Record a file docqa does not read; whatever it held before leaves the index (an emptied file)."""
        error = f"{kind}: {reason}"
        if old and old.status == "skipped" and old.error == error:
            report.still_skipped.append(path)
            if (old.size, old.mtime_ns, old.readers) == (size, mtime_ns, self.readers):
                return
        else:
            report.skipped.append((path, reason))
        record = DocumentRecord(
            document_id=document_id(collection, path), path=path, collection=collection, type=_type_guess(path),
            title="", keywords=[], summary="", size=size, content_hash=content_hash, chunks=0, status="skipped",
            error=error, indexed_at=now("seconds"), mtime_ns=mtime_ns,
        )
        self.store.documents.replace_document(record, "", [], {"readers": self.readers})

    def _moves(self, jobs: list[tuple], vanished: list[str], states: dict, collection: str, report: IngestReport) -> list[tuple]:
        """A new file with the content of a vanished one is that file renamed: move it, don't parse it."""
        by_hash = {states[p].content_hash: p for p in vanished  # a file-name title must change; an archive is re-read
                   if states[p].status == "ok" and states[p].title != Path(p).name and not is_archive_name(p)}
        if not by_hash:
            return jobs
        remaining = []
        for job in jobs:
            path, size, mtime_ns, old_hash = job
            movable = old_hash is None and size <= self.opts.max_bytes and not is_archive_name(path)
            old = by_hash.pop(_hash_file(path), None) if movable else None
            if old is None:
                remaining.append(job)
                continue
            key = safe_path(path)
            with self._step():
                self.store.documents.move_document(document_id(collection, old), document_id(collection, key), key, size, mtime_ns)
            del states[old]
            report.moved.append((old, key))
        return remaining


def parse_workers(opts: IngestOptions, embedder: Embedder | None) -> int:
    """Parser processes: ingest.workers, else one per core, or one while a model embeds on these cores.
    That model is then the bottleneck and one parser keeps ahead of it; a second only holds memory
    (200 Markdown files: peak RSS 764 -> 611 MB, CPU the same; RESULTS.md, issue 18)."""
    if opts.workers:
        return opts.workers
    if embedder is not None and embedder.runs_here:
        return 1
    return os.cpu_count() or 1


def gather_seconds(opts: IngestOptions) -> float:
    """How long parsed files may wait to be written together: _GROUP_SECONDS, at most half a commit interval."""
    return min(_GROUP_SECONDS, opts.commit_seconds / 2)


def parse_jobs(jobs: list[tuple], opts: IngestOptions, lean_parent: bool = False,
               quiet: float | None = None) -> Iterator[Parsed]:
    """The local engine: parse every job in bounded worker processes (pool.py), or inline when few and small.
    `lean_parent`: a lone worker loads the tokenizer and dictionaries itself, so this process (which
    embeds) does not hold ~120 MB it never uses.  With `quiet`, QUIET comes between results whenever
    the workers were silent that long."""
    workers = opts.workers or os.cpu_count() or 1
    bounded = opts.parse_timeout > 0 or opts.worker_memory > 0  # only a worker can be stopped
    if not bounded and len(jobs) <= _INLINE_MAX and sum(job[1] for job in jobs) <= _INLINE_BYTES:
        for job in jobs:
            yield parse_file(*job, opts)  # type: ignore[call-arg]  # mypy takes a star tuple to fill every parameter
        return
    workers = min(workers, len(jobs))
    lean = lean_parent and workers == 1
    if not lean:
        warm_up()  # forked workers inherit the loaded tokenizer and dictionaries
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    pool = ParsePool(partial(parse_job, opts=opts), failed_job, workers=workers, ready=warm_up if lean else None,
                     timeout=opts.parse_timeout, memory_bytes=opts.worker_memory, context=context)
    yield from pool.run(groups(jobs), quiet=quiet)


def embed_inputs(parsed: Parsed) -> list[tuple[str, str]]:
    """(text hash, enriched text to embed) of each chunk of a parsed file, in chunk order (chunk
    texts are restored from the document's text first: workers send spans only)."""
    inputs = []
    for chunk in parsed.chunks:
        chunk.text = parsed.text[chunk.char_start : chunk.char_end]
        enriched = embed_text(parsed.title, chunk.section, chunk.text, chunk.context, chunk.symbol)
        inputs.append((text_hash(enriched), enriched))
    return inputs


def _input_text(item: EmbedInput) -> str:
    return embed_text(item.title, item.section, item.text, item.context, item.symbol)


def _hash_bytes(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _hash_file(path: str) -> str | None:
    try:
        return _hash_bytes(Path(path).read_bytes())
    except OSError:
        return None


def disk_change(record: DocumentRecord) -> tuple[str, str] | None:
    """How an indexed file differs on disk now: ("changed", what: size, content) or ("unreadable",
    why: it cannot be read now, which does not make it deleted); None when it is as indexed (same
    size and mtime, or the same content hash).  An archive's members are not checked (None)."""
    if archive_of(record.path) is not None:
        return None
    path = real_paths(record.path)[-1]
    try:
        st = os.stat(path)
    except OSError as exc:
        return "unreadable", exc.strerror or str(exc)
    if st.st_size == record.size and st.st_mtime_ns == record.mtime_ns:
        return None
    if st.st_size != record.size:
        return "changed", f"size {record.size} -> {st.st_size} bytes"
    digest = _hash_file(path)
    if digest is None:
        return "unreadable", "the file cannot be read now"
    return ("changed", "content hash differs (mtime changed too)") if digest != record.content_hash else None


def warm_up() -> None:
    """Load parsers, tokenizer and dictionaries once, before forking, so workers inherit them."""
    keep_large_blocks_apart()  # the tables' large temporaries must not stay behind as heap holes
    share_heap_arenas()  # the model's and the writer's threads, started after this, keep no heaps of their own
    import docqa.ingest.chunkers  # noqa: F401
    import docqa.ingest.readers  # noqa: F401
    from docqa.ingest.enrich import enrich
    from docqa.text import count_tokens, segment_for_index

    count_tokens("warm up")
    segment_for_index("预热")
    enrich(Document(path="warm-up.txt", type="text", text="warm up 预热"))


def _type_guess(path: str) -> str:
    return Path(path).suffix.lower().lstrip(".") or "unknown"


