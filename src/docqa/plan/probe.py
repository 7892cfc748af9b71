"""One sampled file looked at closely, in a bounded worker process (docqa.ingest.pool): read with
OCR off, chunked as `docqa add` would, its scripts counted; a PDF's first pages checked for a
text layer.  A file that hangs or eats memory costs only its own probe."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from docqa.errors import IngestError
from docqa.ingest.scan import safe_path

PDF_PAGES = 8  # pages of a PDF checked for a text layer
LANGUAGE_CHARS = 8000  # characters of a document whose scripts are counted: LANGUAGE_WINDOWS slices spread over it
LANGUAGE_WINDOWS = 16
TOKEN_CHARS = 20_000  # characters of a document whose tokens are counted (then scaled)
PACK_CHARS = 32_000  # characters of a document compressed (PACK_WINDOWS slices spread over it) to weigh its repetition
PACK_WINDOWS = 16
LIGHT_CHARS = 1_000_000  # a heavy file with more text: the chunks of this much of it, scaled
# SQLite's table pages (the store's page size): a chunk's row goes on the last page when it fits, else on a new one, so
# rows of 2-4 KB (full chunks of prose) leave up to half of each page empty (benchmarks/RESULTS.md, "the fixed cost of
# an add, chunk rows by pages")
PAGE_BYTES = 4096
_PAGE_HEADER = 8  # a table leaf page's header
_CELL_BYTES = 2  # a cell's pointer on its page
_ROW_BYTES = 110  # a chunk row without its texts: ids, hash, numbers, the record's header
_MAX_LOCAL = PAGE_BYTES - 35  # a row longer than this keeps only part of it on the page, the rest on overflow pages
_MIN_LOCAL = (PAGE_BYTES - 12) * 32 // 255 - 23
MODEL_SAMPLE_CHARS = 20_000  # characters of a file's chunk texts, chunks spread over it, whose model tokens are counted
SURELY_LONG = 16  # characters per token past which a line cannot fit a chunk (docqa.ingest.chunkers.units._SURELY_LONG)
_MIN_PAGE_CHARS = 5  # as the PDF reader: fewer non-blank characters is a page without text


@dataclass(slots=True)
class Probe:
    """What one file turned out to hold."""

    path: str
    size: int
    type: str = ""  # the format the survey found
    text_chars: int = 0
    tokens: int = 0
    chunks: int = 0
    scripts: dict[str, int] = field(default_factory=dict)  # han, latin, other: letters, scaled to the whole text
    packed: int = 0  # bytes the text compresses to (zlib, on PACK_CHARS spread over it, scaled): repetition makes it cheap
    wide: int = 0  # UTF-8 bytes of its text past one a character, Han characters left out (they have their own rate)
    cut: int = 0  # JSON: characters in lines over a chunk's tokens, cut at token boundaries (costly; a heavy file: its head's, scaled)
    pages: float = 0.0  # SQLite pages its chunk rows fill, appended one after another (a heavy file: its head's, scaled)
    hashes: list[str] = field(default_factory=list)  # each chunk's embedded text's hash (a heavy file: its head's): equal texts embed once
    embed_chars: int = 0  # characters of its enriched chunk texts (what the embedder is given; a heavy file: scaled)
    embed_sample: list[str] = field(default_factory=list)  # windows the model reads of chunks spread over it (MODEL_SAMPLE_CHARS)
    embed_sample_chars: int = 0  # characters of those chunks' enriched texts
    model_tokens: int = 0  # the bundled model's tokens in all of it, counted on embed_sample and scaled (set by the survey)
    model_windows: int = 0  # the windows the model reads of it (each a row of a batch: a cost of its own), scaled the same way
    pdf_pages: int = 0
    pdf_checked: int = 0  # first pages checked for a text layer
    pdf_blank: int = 0  # of those, pages without one (scanned or image-only)
    error_kind: str | None = None
    error: str | None = None
    seconds: float = 0.0


def probe(job: tuple, max_tokens: int = 512, overlap: int = 50, max_bytes: int = 200 * 2**20) -> Probe:
    """Look at one (path, size, deep, kind) job: `deep` reads and chunks it ("light": reads it and counts
    its text), else only a PDF's pages are checked; `kind` is the format the survey found (a .gz holds another: its own counts go to it)."""
    from docqa.ingest.ocr import OcrOptions, configure

    path, size, deep, kind = job
    configure(OcrOptions(mode="off"))  # the survey counts scans; it does not read them
    started = time.perf_counter()
    result = Probe(safe_path(path), size, kind)
    try:
        data = Path(path).read_bytes()
        if data[:1024].find(b"%PDF-") >= 0:
            _pdf_pages(result, Path(path), data)
        if deep:
            _read(result, Path(path), data, max_tokens, overlap, max_bytes, whole=deep != "light")
    except IngestError as exc:
        result.error_kind, result.error = exc.kind, str(exc)
    except OSError as exc:
        result.error_kind, result.error = "unreadable", f"cannot read the file now: {exc.strerror or exc}"
    except Exception as exc:  # a reader bug on odd input: reported with the file, the survey goes on
        result.error_kind, result.error = "error", f"{type(exc).__name__}: {str(exc)[:200]}"
    result.seconds = time.perf_counter() - started
    return result


def failed(job: tuple, error: IngestError) -> Probe:
    """The probe of a file whose worker was stopped (time limit, memory cap)."""
    return Probe(safe_path(job[0]), job[1], job[3], error_kind=error.kind, error=str(error))


def _read(result: Probe, path: Path, data: bytes, max_tokens: int, overlap: int, max_bytes: int,
          whole: bool = True) -> None:
    """Read and chunk the file; not `whole` (a heavy file, "light") and over LIGHT_CHARS of text: read it
    whole, chunk its first LIGHT_CHARS and scale (chunking takes seconds per megabyte)."""
    from docqa.embed.base import text_hash
    from docqa.ingest.chunkers import chunk_document
    from docqa.ingest.readers import bounds, read_file
    from docqa.ingest.readers.zipguard import ZipLimits, applied
    from docqa.text import count_tokens

    with applied(ZipLimits()), bounds.limit(max_bytes):
        doc = read_file(path, data)
    text = doc.text
    result.text_chars = len(text)
    head = text[:TOKEN_CHARS]
    result.tokens = round(count_tokens(head) * len(text) / max(len(head), 1))
    if whole or len(text) <= LIGHT_CHARS:
        chunks = chunk_document(doc, max_tokens, overlap)
        result.chunks = len(chunks)
        result.pages = row_pages(chunk_row_bytes(doc, chunks))
        result.cut = long_line_chars(text, max_tokens) if doc.type == "json" else 0
    else:  # the chunks of its first LIGHT_CHARS, scaled to the whole text
        head_doc, cut = _prefix(doc, LIGHT_CHARS)
        chunks = chunk_document(head_doc, max_tokens, overlap)
        result.chunks = max(1, round(len(chunks) * len(text) / max(cut, 1)))
        result.pages = row_pages(chunk_row_bytes(head_doc, chunks)) * len(text) / max(cut, 1)
        result.cut = round(long_line_chars(head_doc.text, max_tokens) * len(text) / max(cut, 1)) if doc.type == "json" else 0
    texts = embed_texts(doc, chunks)  # of all its chunks, or of its head's
    result.hashes = [text_hash(t) for t in texts]
    scale = 1.0 if whole or len(text) <= LIGHT_CHARS else len(text) / max(cut, 1)
    _embed_sample(result, texts, scale)
    result.scripts = text_scripts(text)
    result.packed = packed_size(text)
    result.wide = 0 if text.isascii() else max(len(text.encode()) - len(text) - 2 * result.scripts.get("han", 0), 0)


def long_line_chars(text: str, limit: int) -> int:
    """Characters of `text` in lines of more than `limit` cl100k tokens.  JSON is chunked by lines (LineChunker); a
    longer line is cut at token boundaries, its whole text encoded and decoded token by token: SQuAD's JSON on one
    line takes 0.250 CPU-us a character in `docqa add`, the same JSON a value a line 0.216 (benchmarks/RESULTS.md,
    "JSON on one line").  A line over SURELY_LONG characters a token is long without counting (as the chunker decides)."""
    from docqa.text import count_tokens

    long = 0
    for line in text.split("\n"):
        if len(line) > limit and (len(line) > limit * SURELY_LONG or count_tokens(line) > limit):
            long += len(line)
    return long


def embed_texts(doc, chunks) -> list[str]:
    """Each chunk's text as the embedder is given it (title, section, text): `docqa add` embeds each distinct one
    once."""
    from docqa.embed.base import embed_text
    from docqa.ingest.enrich import title_of

    title = title_of(doc)
    return [embed_text(title, c.section, doc.text[c.char_start:c.char_end], c.context, c.symbol) for c in chunks]


def _embed_sample(result: Probe, texts: list[str], scale: float = 1.0) -> None:
    """The characters of `texts` (scaled: a heavy file's head; equal texts counted each time, as the survey's share
    of repeated chunks discounts them), and the windows the bundled model reads (filler dropped, cut at sentence
    ends) of distinct texts spread over them, MODEL_SAMPLE_CHARS in all: the survey counts the model's tokens in
    those and scales them by characters."""
    from docqa.embed.base import without_filler
    from docqa.embed.local import LocalEmbedder

    result.embed_chars = round(sum(map(len, texts)) * scale)
    distinct = list(dict.fromkeys(texts))
    picked = _spread_items(distinct, MODEL_SAMPLE_CHARS) if sum(map(len, distinct)) > MODEL_SAMPLE_CHARS else distinct
    reader = LocalEmbedder()  # not loaded: its windows only
    result.embed_sample = [w for t in picked for w in reader.windows(without_filler(t))]
    result.embed_sample_chars = sum(map(len, picked))


def _spread_items(texts: list[str], chars: int) -> list[str]:
    """Texts evenly spaced over `texts`, about `chars` characters of them."""
    mean = sum(map(len, texts)) / len(texts)
    wanted = max(1, min(len(texts), round(chars / max(mean, 1))))
    return [texts[round(i * (len(texts) - 1) / max(wanted - 1, 1))] for i in range(wanted)]


def chunk_row_bytes(doc, chunks) -> list[int]:
    """The bytes of each chunk's row as the store writes it (docqa.store.sqlite.documents._chunk_row): its text, its
    context, its section path twice (as JSON, and in the indexed title with the document's title), its full-text
    form when that differs from its text (a context, or Chinese: segmented, about one space more a Han character)."""
    from docqa.ingest.enrich import title_of
    from docqa.text.language import HAN_RUN

    title = len(title_of(doc).encode())
    sizes = []
    for c in chunks:
        text = doc.text[c.char_start:c.char_end]
        size = _ROW_BYTES + len(text.encode()) + len(c.context.encode()) + title
        size += 2 * sum(len(part.encode()) + 4 for part in c.section) + len((c.symbol or "").encode())
        han = sum(len(run) for run in HAN_RUN.findall(text)) if not text.isascii() else 0
        if c.context or han:
            size += len(text.encode()) + len(c.context.encode()) + han
        sizes.append(size)
    return sizes


def row_pages(sizes: list[int]) -> float:
    """SQLite table pages that rows of these byte sizes fill when appended in order (rowids ascending, as `docqa add`
    writes chunks): each on the last page when it fits, else on a new page; a row over a page's limit keeps a part
    on its page and the rest on overflow pages.  The last page counts by its fill."""
    usable = PAGE_BYTES - _PAGE_HEADER
    pages, fill = 0, 0
    for size in sizes:
        if size > _MAX_LOCAL:  # SQLite's rule for how much of a long row stays on its page
            local = _MIN_LOCAL + (size - _MIN_LOCAL) % (PAGE_BYTES - 4)
            local = local if local <= _MAX_LOCAL else _MIN_LOCAL
            pages += -(-(size - local) // (PAGE_BYTES - 4))
            size = local + 4
        size += _CELL_BYTES
        if fill + size > usable:
            pages, fill = pages + 1, 0
        fill += size
    return pages + fill / usable


def packed_size(text: str) -> int:
    """Bytes the non-Han text of `text` compresses to with zlib, measured on PACK_CHARS of it (PACK_WINDOWS slices
    spread over it) and scaled: a test log of repeated lines packs several times tighter than prose, and is indexed for less
    per character (benchmarks/RESULTS.md, "repetition, pictures, equal chunks")."""
    import zlib

    from docqa.text.language import HAN_RUN

    sampled = spread(text, PACK_CHARS, PACK_WINDOWS)
    if not sampled:
        return 0
    data = HAN_RUN.sub("", sampled).encode("utf-8")  # Chinese has its own rate (rates.HAN_S)
    return round(len(zlib.compress(data, 6)) * len(text) / len(sampled)) if data else 0


def _prefix(doc, chars: int):
    """The document cut after the block that ends nearest past `chars` (at a line end when it has no
    blocks): (that document, the characters it keeps)."""
    from dataclasses import replace

    ends = [b.end for b in doc.blocks if b.end >= chars]
    cut = min(ends) if ends else (doc.text.find("\n", chars) + 1 or len(doc.text))
    return replace(doc, text=doc.text[:cut], blocks=[b for b in doc.blocks if b.end <= cut], _line_starts=None), cut


def _pdf_pages(result: Probe, path: Path, data: bytes) -> None:
    """Pages, and how many of the first PDF_PAGES have no text layer; EncryptedFileError when locked."""
    from docqa.ingest.readers.pdf import open_pdf, page_text, pdfium_lock

    with pdfium_lock:
        pdf = open_pdf(path, data)
        try:
            result.pdf_pages = len(pdf)
            for index in range(min(PDF_PAGES, len(pdf))):
                try:
                    text = page_text(pdf, index)
                except Exception:  # a damaged page counts as one without text
                    text = ""
                result.pdf_checked += 1
                result.pdf_blank += sum(not c.isspace() for c in text[:200]) < _MIN_PAGE_CHARS
        finally:
            pdf.close()


def text_scripts(text: str) -> dict[str, int]:
    """Letters of the whole `text` by script, counted on LANGUAGE_WINDOWS slices spread over it and scaled: the
    text the reader extracts, as it will be indexed (a JSON Lines file's head is keys and ids, its body Chinese;
    a JSON file whose Chinese is written as \\u escapes is indexed as those escapes, ASCII)."""
    sampled = spread(text)
    scale = len(text) / max(len(sampled), 1)
    return {k: round(v * scale) for k, v in script_counts(sampled).items()}


def spread(text: str, chars: int = LANGUAGE_CHARS, windows: int = LANGUAGE_WINDOWS) -> str:
    """`text` itself when it is short, else `windows` slices of it, `chars` in all, evenly spaced from its start
    to its end (joined by newlines)."""
    if len(text) <= chars:
        return text
    width = chars // windows
    step = (len(text) - width) / (windows - 1)
    return "\n".join(text[round(i * step):round(i * step) + width] for i in range(windows))


def script_counts(text: str) -> dict[str, int]:
    """Letters of `text` by script: han (Chinese), latin, other (kana, hangul, Cyrillic, ...)."""
    from docqa.text.language import HAN_RUN

    han = sum(len(run) for run in HAN_RUN.findall(text))
    latin = sum(ch.isascii() and ch.isalpha() for ch in text)
    letters = sum(ch.isalpha() for ch in text)
    return {"han": han, "latin": latin, "other": max(letters - han - latin, 0)}
