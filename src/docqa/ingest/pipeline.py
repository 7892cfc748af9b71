"""Incremental, parallel ingestion: scan → (read → chunk → enrich in worker processes) → write.

A file whose size and mtime match the index is skipped without being read; one whose content
hash matches is skipped without being parsed; anything else is parsed and its document replaced
in one transaction.  Folders that are added again are synced: documents whose files vanished
from them are removed.  One bad file never stops the batch; the report lists every failure.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from docqa.clock import now
from docqa.embed import Embedder, embed_text, text_hash
from docqa.errors import EmptyDocumentError, FileTooLargeError, IngestError
from docqa.store import ChunkVectors, FileState, Stores
from docqa.ingest.pool import ParsePool
from docqa.ingest.readers.zipguard import ZipLimits, applied
from docqa.ingest.scan import Scanner
from docqa.types import Chunk, DocumentRecord

Progress = Callable[[int, int, str], None]  # (done, total, path)
# Parse this few small files in-process: a pool costs more than it saves.  Everything else goes
# to worker processes, where each file has a time limit and a memory cap (pool.py); the zip
# guard refuses bombs in-process too.
_INLINE_MAX = 3
_INLINE_BYTES = 1024 * 1024
# Small files travel to workers in groups: one message per file costs ~2 ms of round trip, more
# than parsing a 2 KB file.  Groups stay small so progress and memory stay smooth.  A worker
# answers file by file, so a worker killed mid-group costs only the file it was parsing.
_GROUP_FILES = 32
_GROUP_BYTES = 512 * 1024
# Parsed files wait until this many chunks are pending, then are embedded in one go (the model
# runs far better on full batches than on the one or two chunks of a small file).
_EMBED_CHUNKS = 128


@dataclass(slots=True)
class IngestReport:
    """What one `add` did."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    moved: list[tuple[str, str]] = field(default_factory=list)  # (old path, new path): renamed, not re-parsed
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason): empty files, symlinks out
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (path, kind, reason)
    chunks: int = 0
    bytes_parsed: int = 0
    by_type: Counter = field(default_factory=Counter)
    elapsed: float = 0.0

    def to_dict(self) -> dict:
        return {
            "added": self.added, "updated": self.updated, "unchanged": self.unchanged, "removed": self.removed,
            "moved": [{"from": a, "to": b} for a, b in self.moved],
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "failed": [{"path": p, "kind": k, "reason": r} for p, k, r in self.failed],
            "chunks": self.chunks, "bytes_parsed": self.bytes_parsed, "by_type": dict(self.by_type),
            "elapsed_s": round(self.elapsed, 3),
        }


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


@dataclass(slots=True)
class IngestOptions:
    max_tokens: int = 512
    overlap: int = 50
    max_bytes: int = 200 * 1024 * 1024
    workers: int = 0
    parse_timeout: float = 300.0  # seconds per file in a worker process (0: none)
    worker_memory: int = 2048 * 1024 * 1024  # bytes a worker process may grow by (0: no cap)
    zip_limits: ZipLimits = field(default_factory=ZipLimits)


def document_id(collection: str, path: str) -> str:
    """Stable id of a (collection, path) pair."""
    return hashlib.blake2b(f"{collection}\0{path}".encode(), digest_size=8).hexdigest()


def parse_file(path: str, size: int, mtime_ns: int, old_hash: str | None, opts: IngestOptions) -> Parsed:
    """Read, hash, parse, chunk and enrich one file (runs in a worker process)."""
    with applied(opts.zip_limits):
        return _parse(path, size, mtime_ns, old_hash, opts)


def _parse(path: str, size: int, mtime_ns: int, old_hash: str | None, opts: IngestOptions) -> Parsed:
    from docqa.ingest.chunkers import chunk_document
    from docqa.ingest.enrich import enrich
    from docqa.ingest.readers import read_file

    result = Parsed(path=path, size=size, mtime_ns=mtime_ns)
    try:
        if size > opts.max_bytes:
            raise FileTooLargeError(path, f"{size / 1e6:.1f} MB is over the {opts.max_bytes / 1e6:.0f} MB limit (ingest.max_file_mb)")
        data = Path(path).read_bytes()
        result.content_hash = _hash_bytes(data)
        if result.content_hash == old_hash:
            result.unchanged = True
            return result
        doc = read_file(Path(path), data)
        result.chunks = chunk_document(doc, opts.max_tokens, opts.overlap)
        if not result.chunks:
            raise EmptyDocumentError(path, "no text extracted")
        meta = enrich(doc)
        for chunk in result.chunks:  # the spans suffice: halves what goes back to the parent process
            chunk.text = ""
        result.type, result.language, result.text, result.metadata = doc.type, doc.language, doc.text, doc.metadata
        result.title, result.keywords, result.summary = meta.title, meta.keywords, meta.summary
    except IngestError as exc:
        result.error = exc
    except OSError as exc:
        result.error = IngestError(path, f"cannot read the file: {exc.strerror or exc}")
    except MemoryError:  # the worker's memory cap (RLIMIT_DATA, pool.py) was reached
        result = Parsed(path=path, size=size, mtime_ns=mtime_ns, content_hash=result.content_hash)
        result.error = FileTooLargeError(path, f"parsing needed more memory than the {opts.worker_memory // 2**20} MB "
                                               "a parsing process may use (ingest.worker_memory_mb)")
    except Exception as exc:  # a reader bug must not kill the batch; report it with the file
        result.error = IngestError(path, f"unexpected {type(exc).__name__} while parsing: {exc}")
    return result


def parse_job(job: tuple, opts: IngestOptions) -> Parsed:
    """parse_file on one (path, size, mtime_ns, old_hash) job: what a pool worker runs."""
    return parse_file(*job, opts)


def failed_job(job: tuple, error: IngestError) -> Parsed:
    """The result of a job whose worker was killed or stopped while parsing it."""
    return Parsed(path=job[0], size=job[1], mtime_ns=job[2], error=error)


def _groups(jobs: list[tuple]):
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
                 embedder: Embedder | None = None):
        self.store, self.scanner, self.opts = store, scanner, opts
        self.progress = progress or (lambda done, total, path: None)
        self.embedder = embedder
        self.model = embedder.fingerprint.key if embedder else None

    def run(self, paths: list[Path], collection: str) -> IngestReport:
        started = time.perf_counter()
        report = IngestReport()
        scan = self.scanner.scan(paths)
        report.skipped.extend(scan.skipped)
        report.failed.extend((p, "missing", "no such file or folder: check the path") for p in scan.missing)
        states = self.store.documents.file_states(collection)
        found = {str(f) for f in scan.files}
        jobs = self._triage(scan.files, states, report)
        jobs = self._moves(jobs, self._vanished(scan.roots, found, states), states, collection, report)
        self._parse_all(jobs, states, collection, report)
        self._remove_vanished(scan.roots, found, states, collection, report)
        report.elapsed = time.perf_counter() - started
        return report

    def _triage(self, files: list[Path], states: dict[str, FileState], report: IngestReport) -> list[tuple]:
        """Skip files whose size and mtime are unchanged; the rest become parse jobs."""
        jobs = []
        for file in files:
            try:
                st = file.stat()
            except OSError as exc:
                report.failed.append((str(file), "error", f"cannot read the file: {exc.strerror}"))
                continue
            key = str(file)
            old = states.get(key)
            if old and old.status == "ok" and old.size == st.st_size and old.mtime_ns == st.st_mtime_ns:
                report.unchanged.append(key)
                continue
            jobs.append((key, st.st_size, st.st_mtime_ns, old.content_hash if old and old.status == "ok" else None))
        return jobs

    def _parse_all(self, jobs: list[tuple], states: dict, collection: str, report: IngestReport) -> None:
        total, done = len(jobs), 0
        pending: list[Parsed] = []
        waiting = 0  # chunks in `pending`
        with self.store.batch():
            for parsed in self._results(jobs):
                pending.append(parsed)
                waiting += len(parsed.chunks)
                if waiting >= _EMBED_CHUNKS or self.embedder is None:
                    done = self._flush(pending, states, collection, report, done, total)
                    pending, waiting = [], 0
            self._flush(pending, states, collection, report, done, total)

    def _flush(self, batch: list[Parsed], states: dict, collection: str, report: IngestReport, done: int, total: int) -> int:
        """Embed what the parsed files need (one model call for all of them), then write each."""
        vectors = self._vectors(batch)
        for parsed in batch:
            self._write(parsed, states.get(parsed.path), collection, report, vectors.get(parsed.path))
            done += 1
            self.progress(done, total, parsed.path)
        if self.embedder is not None:
            self.store.commit_pending()  # never hold the write lock while the next batch is embedded
        return done

    def _vectors(self, batch: list[Parsed]) -> dict[str, ChunkVectors]:
        """Per file path: its chunks' text hashes and the vectors the index does not hold yet."""
        out: dict[str, ChunkVectors] = {}
        texts: dict[str, str] = {}
        for parsed in batch:
            if parsed.unchanged or parsed.error is not None:
                continue
            hashes = []
            for chunk in parsed.chunks:
                chunk.text = parsed.text[chunk.char_start : chunk.char_end]
                enriched = embed_text(parsed.title, chunk.section, chunk.text, chunk.context, chunk.symbol)
                hashes.append(h := text_hash(enriched))
                texts.setdefault(h, enriched)
            out[parsed.path] = ChunkVectors(self.model, hashes)
        if self.embedder is None or not texts:
            return out
        known = self.store.vectors.known_vectors(self.model, texts)
        missing = [h for h in texts if h not in known]
        if missing:
            matrix = self.embedder.embed_batch([texts[h] for h in missing], "passage")
            fresh = dict(zip(missing, matrix))
            for entry in out.values():
                entry.new = {h: fresh[h] for h in entry.hashes if h in fresh}
        return out

    def _results(self, jobs: list[tuple]):
        workers = self.opts.workers or os.cpu_count() or 1
        if len(jobs) <= _INLINE_MAX and sum(job[1] for job in jobs) <= _INLINE_BYTES:
            for job in jobs:
                yield parse_file(*job, self.opts)
            return
        _warm_up()  # forked workers inherit the loaded tokenizer and dictionaries
        context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
        pool = ParsePool(partial(parse_job, opts=self.opts), failed_job, workers=min(workers, len(jobs)),
                         timeout=self.opts.parse_timeout, memory_bytes=self.opts.worker_memory, context=context)
        yield from pool.run(_groups(jobs))

    def _write(self, parsed: Parsed, old: FileState | None, collection: str, report: IngestReport,
               vectors: ChunkVectors | None) -> None:
        doc_id = document_id(collection, parsed.path)
        if parsed.unchanged:
            self.store.documents.touch(doc_id, parsed.size, parsed.mtime_ns)
            report.unchanged.append(parsed.path)
            return
        if parsed.error is not None:
            self._fail(parsed, doc_id, collection, report)
            return
        record = DocumentRecord(
            document_id=doc_id, path=parsed.path, collection=collection, type=parsed.type, title=parsed.title,
            keywords=parsed.keywords, summary=parsed.summary, size=parsed.size, content_hash=parsed.content_hash,
            chunks=len(parsed.chunks), status="ok", error=None, indexed_at=now("seconds"), mtime_ns=parsed.mtime_ns,
            language=parsed.language,
        )
        self.store.documents.replace_document(record, parsed.text, parsed.chunks, parsed.metadata, vectors)
        (report.updated if old else report.added).append(parsed.path)
        report.chunks += len(parsed.chunks)
        report.bytes_parsed += parsed.size
        report.by_type[parsed.type] += 1

    def _fail(self, parsed: Parsed, doc_id: str, collection: str, report: IngestReport) -> None:
        err = parsed.error
        if isinstance(err, EmptyDocumentError) and parsed.size == 0:
            report.skipped.append((parsed.path, "empty file"))
            return
        report.failed.append((parsed.path, err.kind, err.reason))
        record = DocumentRecord(
            document_id=doc_id, path=parsed.path, collection=collection, type=_type_guess(parsed.path), title="",
            keywords=[], summary="", size=parsed.size, content_hash=parsed.content_hash, chunks=0, status="error",
            error=f"{err.kind}: {err.reason}", indexed_at=now("seconds"), mtime_ns=parsed.mtime_ns,
        )
        self.store.documents.record_failure(record)

    @staticmethod
    def _vanished(roots: list[Path], found: set[str], states: dict[str, FileState]) -> list[str]:
        """Indexed paths under the added folders whose files are gone."""
        return [p for p in states if p not in found and any(p.startswith(str(r) + os.sep) for r in roots) and not os.path.exists(p)]

    def _moves(self, jobs: list[tuple], vanished: list[str], states: dict, collection: str, report: IngestReport) -> list[tuple]:
        """A new file with the content of a vanished one is that file renamed: move it, don't parse it."""
        by_hash = {states[p].content_hash: p for p in vanished
                   if states[p].status == "ok" and states[p].title != Path(p).name}  # a file-name title must change
        if not by_hash:
            return jobs
        remaining = []
        for job in jobs:
            path, size, mtime_ns, old_hash = job
            old = by_hash.pop(_hash_file(path), None) if old_hash is None and size <= self.opts.max_bytes else None
            if old is None:
                remaining.append(job)
                continue
            self.store.documents.move_document(document_id(collection, old), document_id(collection, path), path, size, mtime_ns)
            del states[old]
            report.moved.append((old, path))
        return remaining

    def _remove_vanished(self, roots: list[Path], found: set[str], states: dict, collection: str, report: IngestReport) -> None:
        gone = self._vanished(roots, found, states)
        if gone:
            self.store.documents.delete_documents(document_id(collection, p) for p in gone)
            report.removed.extend(gone)


def _hash_bytes(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _hash_file(path: str) -> str | None:
    try:
        return _hash_bytes(Path(path).read_bytes())
    except OSError:
        return None


def _warm_up() -> None:
    """Load parsers, tokenizer and dictionaries once, before forking, so workers inherit them."""
    import docqa.ingest.chunkers  # noqa: F401
    import docqa.ingest.readers  # noqa: F401
    from docqa.ingest.enrich import enrich
    from docqa.text import count_tokens, segment_for_index
    from docqa.types import Document

    count_tokens("warm up")
    segment_for_index("预热")
    enrich(Document(path="warm-up.txt", type="text", text="warm up 预热"))


def _type_guess(path: str) -> str:
    return Path(path).suffix.lower().lstrip(".") or "unknown"


