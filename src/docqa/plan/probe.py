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
LIGHT_CHARS = 1_000_000  # a heavy file with more text: the chunks of this much of it, scaled
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
        result.chunks = len(chunk_document(doc, max_tokens, overlap))
    else:  # the chunks of its first LIGHT_CHARS, scaled to the whole text
        head_doc, cut = _prefix(doc, LIGHT_CHARS)
        result.chunks = max(1, round(len(chunk_document(head_doc, max_tokens, overlap)) * len(text) / max(cut, 1)))
    result.scripts = text_scripts(text)


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
