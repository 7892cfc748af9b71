"""What a folder holds, found within stated limits: `docqa init` and `docqa estimate --ingest` must
answer in seconds on a folder of any size, so nothing here parses everything.

    listing    the ingest scan (globs, .gitignore, hidden files, symlinks) up to 200,000 files
    sniffing   the first 8 KB of up to 20,000 files name their format (then: the extension)
    checking   up to 200 PDFs (first 8 pages: a text layer?) and OLE containers (a password?);
               the headers of up to 2,000 pictures (their pixels, when OCR will read them);
               each .gz file's last 4 bytes (its inflated size)
    weighing   the heaviest files (each at least 1 % of the folder's expected text, a .gz by its
               recorded inflated size; up to 12 of them, 12 MB) read whole first, their first
               megabyte of text chunked and scaled: one outsized file (a compressed test log)
               can make half the chunks, and no sample of small files shows it
    sampling   up to 60 files, 24 MB in all (the heavy ones included), spread over the formats
               found, read and chunked as `docqa add` would (OCR off), in bounded worker
               processes: 20 s per file, no new one after 30 s; each file's text is also
               compressed on 32,000 characters spread over it (repeated lines cost less to
               index), its chunk texts hashed as they are embedded (equal ones embed once) and
               its chunk rows packed onto pages as SQLite stores them (long rows waste pages);
               the bundled model's own tokens counted on 20,000 characters of each file's chunk
               texts as the model reads them (its tokenizer alone, in this process: ~0.4 s to
               load once; characters instead when the model is not installed)
(`Limits` holds these; the report carries them.)
"""

from __future__ import annotations

import os
import random
import time
from collections import Counter, defaultdict
from collections.abc import Collection
from dataclasses import asdict, dataclass, field
from pathlib import Path

from docqa.ingest.scan import ScanResult, Scanner, safe_path
from docqa.plan.probe import Probe

SAMPLE_FILE_BYTES = 8 * 2**20  # larger files are sampled only when a format has no smaller one
PROBE_MEMORY = 1024 * 2**20  # a probe's worker may grow by this much (docqa.ingest.pool)
LARGEST = 10
_SEED = 17


@dataclass(frozen=True, slots=True)
class Limits:
    """How much a survey may look at (see the module docstring)."""

    scan_files: int = 200_000
    head_files: int = 20_000
    check_files: int = 200
    sample_files: int = 60
    sample_bytes: int = 24 * 2**20
    heavy_files: int = 12
    heavy_bytes: int = 12 * 2**20
    heavy_share: float = 0.01
    probe_seconds: float = 20.0
    sample_seconds: float = 30.0


@dataclass(slots=True)
class Entry:
    """One file found: its path, size, format (None: not read by docqa), code language, top folder."""

    path: str
    size: int
    type: str | None
    language: str | None = None
    folder: str = ""
    inflated: int = 0  # a .gz file's recorded uncompressed size (0: not a .gz, or none recorded)

    @property
    def content(self) -> int:
        """Bytes of content: the inflated size of a .gz file, else the size."""
        return max(self.inflated, self.size)


@dataclass(slots=True)
class Survey:
    """A folder's contents: counts and sizes by format, languages, scans, code, what is skipped."""

    root: str
    complete: bool = True  # False: the listing stopped at limits.scan_files
    files: int = 0
    bytes: int = 0
    by_type: dict[str, dict[str, int]] = field(default_factory=dict)  # type -> files, bytes (and inflated: .gz content)
    code_languages: dict[str, int] = field(default_factory=dict)
    folders: dict[str, dict[str, int]] = field(default_factory=dict)  # top-level folder -> files, bytes
    largest: list[dict] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> files
    skipped_examples: dict[str, list[str]] = field(default_factory=dict)
    encrypted: list[str] = field(default_factory=list)
    failing: list[dict] = field(default_factory=list)  # sampled files that will fail: path, kind, error
    scanned: list[dict] = field(default_factory=list)  # PDFs with pages without a text layer
    images: int = 0
    image_megapixels: float = 0.0  # the pictures' pixels as OCR's detection sees them (scaled to DETECT_SIDE), from their headers
    scripts: dict[str, int] = field(default_factory=dict)  # letters of the files probed, each file's scaled to its text: han, latin, other
    file_languages: dict[str, int] = field(default_factory=dict)  # sampled files: zh, en, other
    # type -> files, bytes, inflated, text_chars, han_chars, packed, tokens, chunks, pages (their rows fill), wide,
    # cut (JSON: characters in lines over a chunk, cut at token boundaries), seconds
    sample: dict[str, dict[str, float]] = field(default_factory=dict)
    heavy: list[dict] = field(default_factory=list)  # the heaviest files, each measured: path, type, size, inflated, text_chars, ...
    model_tokens: bool = False  # the bundled model's tokens were counted (its tokenizer alone); False: not installed
    duplicate_chunks: float = 0.0  # share of the sampled chunks whose embedded text another sampled chunk has (embedded once)
    checked: int = 0  # files probed (checked or sampled)
    pdfs_checked: int = 0  # PDFs whose first pages were checked for a text layer
    elapsed: float = 0.0
    limits: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def survey(root: Path, *, include: list[str] | None = None, exclude: list[str] | None = None, gitignore: bool = True,
           hidden: bool = False, max_tokens: int = 512, overlap: int = 50, max_file_mb: float = 200.0,
           ocr: bool = False, workers: int = 2, limits: Limits = Limits()) -> Survey:
    """Survey the folder `root` within `limits`; `ocr`: images and scans will be read."""
    started = time.perf_counter()
    root = Path(os.path.abspath(root))
    result = Survey(str(root), limits=asdict(limits))
    scan = ScanResult()
    entries = _list(Scanner(include or [], exclude or [], gitignore, hidden), root, scan, result, limits)
    max_bytes = int(max_file_mb * 2**20)
    kept = _triage(entries, result, max_bytes, ocr)
    result.image_megapixels = _megapixels([e for e in kept if e.type == "image"], limits.check_files * 10)
    read = {id(e) for e in kept}
    result.largest = [{"path": safe_path(e.path), "size": e.size, "type": e.type, "read": id(e) in read}
                      for e in sorted(entries, key=lambda e: -e.size)[:LARGEST]]
    _count(kept, result)
    for path, reason in scan.skipped + [(p, f"unreadable now: {r}") for p, r in scan.unreadable]:
        _skip(result, path, reason)
    heavy = _heavy(kept, limits)
    jobs = [(e.path, e.size, "light", e.type) for e in heavy]
    jobs += _checks(kept, limits) + _sample([e for e in kept if e not in heavy], limits, sum(e.size for e in heavy))
    probes = _probe_all(jobs, max_tokens, overlap, max_bytes, workers, limits)
    result.model_tokens = count_model_tokens(probes)
    _absorb(probes, result, ocr, {safe_path(e.path) for e in heavy}, {safe_path(e.path): e.content for e in kept})
    result.elapsed = round(time.perf_counter() - started, 3)
    return result


def _list(scanner: Scanner, root: Path, scan: ScanResult, result: Survey, limits: Limits) -> list[Entry]:
    """The files under `root` (at most scan_files), each sniffed (the first head_files) or named by extension."""
    from docqa.ingest.readers.code import code_language

    entries: list[Entry] = []
    for file in scanner.walk(root, scan):
        if len(entries) >= limits.scan_files:
            result.complete = False
            break
        try:
            size = os.stat(file).st_size
        except OSError as exc:
            scan.unreadable.append((safe_path(file), exc.strerror or str(exc)))
            continue
        head = _head(file) if len(entries) < limits.head_files else None
        kind = _kind(file, head)
        parts = file.relative_to(root).parts
        entries.append(Entry(str(file), size, kind, code_language(file, head or b"") if kind == "code" else None,
                             parts[0] if len(parts) > 1 else "", gz_inflated(file, size)))
    return entries


def _head(file: Path) -> bytes:
    try:
        with open(file, "rb") as f:
            return f.read(8192)
    except OSError:
        return b""


def _kind(file: Path, head: bytes | None) -> str | None:
    """The format docqa would read the file as (None: binary it does not read)."""
    from docqa.ingest.readers._encoding import bom_encoding
    from docqa.ingest.readers.registry import reader_for, sniff_type

    if head is not None:
        if not head:
            return "empty"
        kind = sniff_type(file, head)
        if kind is None and bom_encoding(head) is not None:  # UTF-16/32 text: read by its byte-order mark
            reader = reader_for(file, head)
            kind = reader.type if reader is not None and reader.type != "ole" else "text"
        return kind
    reader = reader_for(file, b"")
    return reader.type if reader is not None else "unknown"


def _triage(entries: list[Entry], result: Survey, max_bytes: int, ocr: bool) -> list[Entry]:
    """The files `docqa add` would read; the others are counted in `skipped` with the reason."""
    kept = []
    for e in entries:
        reason = None
        if e.size == 0 or e.type == "empty":
            reason = "empty file"
        elif e.size > max_bytes:
            reason = f"over ingest.max_file_mb ({max_bytes // 2**20} MB)"
        elif e.type is None:
            reason = "unsupported file type (binary)"
        elif e.type == "image" and not ocr:
            reason = "a picture: needs OCR (pip install 'docqa[ocr]', ingest.ocr not off)"
        if reason:
            _skip(result, safe_path(e.path), reason)
        else:
            kept.append(e)
    return kept


def _skip(result: Survey, path: str, reason: str) -> None:
    result.skipped[reason] = result.skipped.get(reason, 0) + 1
    examples = result.skipped_examples.setdefault(reason, [])
    if len(examples) < 3:
        examples.append(path)


def _count(kept: list[Entry], result: Survey) -> None:
    by_type: dict[str, Counter] = defaultdict(Counter)
    folders: dict[str, Counter] = defaultdict(Counter)
    for e in kept:
        by_type[e.type or "unknown"].update(files=1, bytes=e.size)
        if e.path.endswith(".gz"):
            by_type[e.type or "unknown"].update(inflated=e.content - e.size)  # made the content below
        folders[e.folder].update(files=1, bytes=e.size)
        if e.language:
            result.code_languages[e.language] = result.code_languages.get(e.language, 0) + 1
    result.files, result.bytes = len(kept), sum(e.size for e in kept)
    for c in by_type.values():
        if "inflated" in c:
            c["inflated"] += c["bytes"]
    result.by_type = {t: dict(c) for t, c in sorted(by_type.items(), key=lambda kv: -kv[1]["bytes"])}
    result.folders = {f: dict(c) for f, c in sorted(folders.items(), key=lambda kv: -kv[1]["files"])}
    result.images = result.by_type.get("image", {}).get("files", 0)


def _checks(kept: list[Entry], limits: Limits) -> list[tuple]:
    """PDFs (pages without a text layer, a password) and OLE containers (a password, or a legacy format)."""
    picked = [e for e in kept if e.type in ("pdf", "ole")]
    return [(e.path, e.size, e.type == "ole", e.type) for e in picked[:limits.check_files]]


def _heavy(kept: list[Entry], limits: Limits) -> list[Entry]:
    """The heaviest files by the text they are expected to hold (size × text per byte of their format),
    each at least heavy_share of the folder's: measured whole, not scaled from a sample."""
    from docqa.plan.rates import TEXT_PER_BYTE

    weight = {id(e): _expected_text(e, TEXT_PER_BYTE) for e in kept if e.type not in ("image", "ole")}
    total = sum(weight.values())
    picked: list[Entry] = []
    size = 0
    for e in sorted((e for e in kept if id(e) in weight), key=lambda e: -weight[id(e)]):
        if len(picked) >= limits.heavy_files or weight[id(e)] < total * limits.heavy_share:
            break
        if size + e.size <= limits.heavy_bytes:
            picked.append(e)
            size += e.size
    return picked


def _expected_text(e: Entry, text_per_byte: dict[str, float]) -> float:
    """Bytes of text a file is expected to hold: a .gz file's own record of its uncompressed size (a test log
    can shrink 30 times), else its size times its format's text per byte."""
    if e.inflated:
        return float(e.inflated)
    return e.size * text_per_byte.get(e.type or "", 1.0)


def gz_inflated(file: Path, size: int) -> int:
    """A .gz file's own record of its uncompressed size (its last 4 bytes; modulo 4 GiB: a larger file is past
    every limit anyway); 0 when it is not a .gz file or the record is not plausible (smaller than the file)."""
    if not file.name.endswith(".gz") or size < 18:
        return 0
    try:
        with open(file, "rb") as f:
            f.seek(-4, os.SEEK_END)
            inflated = int.from_bytes(f.read(4), "little")
    except OSError:
        return 0
    return inflated if inflated >= size else 0


def _megapixels(pictures: list[Entry], most: int) -> float:
    """The pictures' megapixels as OCR's text detection sees them (each scaled so its long side is at most
    DETECT_SIDE; frames of a multi-frame picture up to the page cap), read from the first `most` pictures'
    headers (Pillow opens a picture without decoding it) and scaled to all of them."""
    from docqa.ingest.ocr import detected_megapixels

    measured = [detected_megapixels(Path(e.path)) for e in pictures[:most]]
    return round(sum(measured) * len(pictures) / max(len(measured), 1), 3)


def _sample(kept: list[Entry], limits: Limits, taken: int = 0) -> list[tuple]:
    """Up to sample_files files (sample_bytes in all, `taken` of it already), spread over the formats:
    one of each in turn."""
    rng = random.Random(_SEED)
    pools: dict[str, list[Entry]] = defaultdict(list)
    for e in kept:
        if e.type not in ("image", "ole"):
            pools[e.type or "unknown"].append(e)
    for pool in pools.values():
        rng.shuffle(pool)
        pool.sort(key=lambda e: e.size > SAMPLE_FILE_BYTES)  # small ones first, in random order
    picked, total = list[tuple[str, int, bool, str]](), taken
    while len(picked) < limits.sample_files and any(pools.values()):
        for pool in pools.values():
            if pool and len(picked) < limits.sample_files:
                e = pool.pop(0)
                if total + e.size <= limits.sample_bytes or not picked:
                    picked.append((e.path, e.size, True, e.type))
                    total += e.size
    return picked


def _probe_all(jobs: list[tuple], max_tokens: int, overlap: int, max_bytes: int, workers: int,
               limits: Limits) -> list[Probe]:
    """Each job probed in a bounded worker process; none started after sample_seconds."""
    import multiprocessing
    from functools import partial

    from docqa.ingest.pool import ParsePool
    from docqa.plan.probe import failed, probe

    if not jobs:
        return []
    deadline = time.monotonic() + limits.sample_seconds

    def groups():
        for job in jobs:
            if time.monotonic() > deadline:
                return
            yield [job]

    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    pool = ParsePool(partial(probe, max_tokens=max_tokens, overlap=overlap, max_bytes=max_bytes), failed,
                     workers=min(workers, len(jobs)), timeout=limits.probe_seconds, memory_bytes=PROBE_MEMORY,
                     context=context)
    return list(pool.run(groups()))


def _absorb(probes: list[Probe], result: Survey, ocr: bool, heavy: Collection[str] = (),
            content: dict[str, int] | None = None) -> None:
    """Fold the probes into the survey: encrypted and scanned files, scripts, sampled rates per format
    (the `heavy` files apart: each is measured whole, in `result.heavy`); `content`: each file's bytes of
    content (a .gz file's inflated size)."""
    scripts: Counter = Counter()
    sample: dict[str, Counter] = defaultdict(Counter)
    seen: set[str] = set()
    hashes: set[str] = set()
    repeats = chunks = 0.0
    content = content or {}
    for p in probes:
        if p.error_kind == "encrypted":
            if p.path not in result.encrypted:
                result.encrypted.append(p.path)
        elif p.error_kind == "unsupported":
            _skip(result, p.path, (p.error or "unsupported").split(": ", 1)[-1])
        elif p.error_kind and p.error_kind != "no-text" and p.path not in seen:
            result.failing.append({"path": p.path, "kind": p.error_kind, "error": p.error})
        if p.pdf_blank and p.path not in seen:
            result.scanned.append({"path": p.path, "pages": p.pdf_pages, "checked": p.pdf_checked,
                                   "without_text": p.pdf_blank})
        seen.add(p.path)
        if p.text_chars and not p.error_kind:
            scripts.update(p.scripts)
            lang = _language(p.scripts)
            if lang:
                result.file_languages[lang] = result.file_languages.get(lang, 0) + 1
            inflated = max(content.get(p.path, p.size), p.size)
            if p.hashes:  # a heavy file's head stands for all of it
                repeats += repeated(p.hashes, hashes) * p.chunks / len(p.hashes)
                chunks += p.chunks
            if p.path in heavy:
                result.heavy.append({"path": p.path, "type": p.type, "size": p.size, "inflated": inflated,
                                     "text_chars": p.text_chars, "han_chars": p.scripts.get("han", 0), "packed": p.packed,
                                     "tokens": p.tokens, "chunks": p.chunks, "pages": round(p.pages, 2), "wide": p.wide,
                                     "cut": p.cut, "model_tokens": p.model_tokens,
                                     "model_windows": p.model_windows, "seconds": round(p.seconds, 3)})
                continue
            sample[p.type].update(files=1, bytes=p.size, inflated=inflated, text_chars=p.text_chars,  # type: ignore[call-overload]
                                  han_chars=p.scripts.get("han", 0), packed=p.packed, tokens=p.tokens, chunks=p.chunks,
                                  pages=p.pages, wide=p.wide, cut=p.cut, model_tokens=p.model_tokens,
                                  model_windows=p.model_windows, seconds=p.seconds)
    result.checked = len(seen)
    result.pdfs_checked = len({p.path for p in probes if p.type == "pdf"})
    result.scripts = dict(scripts)
    result.duplicate_chunks = round(repeats / chunks, 4) if chunks else 0.0
    result.sample = {t: {k: round(v, 3) for k, v in c.items()} for t, c in sample.items()}
    for path in result.encrypted:
        _skip(result, path, "encrypted: a password is required (it will fail; remove the password)")


def count_model_tokens(probes: list[Probe]) -> bool:
    """Each probe's tokens of the bundled model (its tokenizer run alone on the windows sampled) and the windows it
    runs, scaled by the characters of its chunk texts: what the model's time follows (benchmarks/RESULTS.md, "the
    embedding time by the model's own tokens", "the model's windows").  False, and nothing counted, when the model is
    not installed."""
    from docqa.plan.model_tokens import count, tokenizer

    sampled = [p for p in probes if p.embed_sample and not p.error_kind]
    session = tokenizer() if sampled else None
    if session is None:
        return False
    for p in sampled:
        scale = p.embed_chars / max(p.embed_sample_chars, 1)
        p.model_tokens = round(count(session, p.embed_sample) * scale)
        p.model_windows = round(len(p.embed_sample) * scale)
    return True


def repeated(hashes: list[str], seen: set[str]) -> int:
    """How many of a file's chunk `hashes` repeat one `seen` before (in other files, or earlier in it); adds
    them to `seen`."""
    count = 0
    for h in hashes:
        count += h in seen
        seen.add(h)
    return count


def _language(scripts: dict[str, int]) -> str | None:
    """zh, en or other, from the letters of a sample (None: no letters)."""
    han, latin, other = scripts.get("han", 0), scripts.get("latin", 0), scripts.get("other", 0)
    total = han + latin + other
    if not total:
        return None
    if han * 5 >= total:
        return "zh"
    return "en" if latin >= other else "other"
