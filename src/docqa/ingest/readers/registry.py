"""The registry: which Reader handles a file, chosen by content sniffing, then extension.

A reader whose `sniff` recognises a binary signature (priority >= SIGNATURE) wins over the
extension: a `.xlsx` that is really an encrypted OLE container goes to the OLE reader.  A weak
sniff (HTML markup, e-mail headers, a shebang) decides only when the extension is unknown.
Unknown extensions whose bytes decode as text are read as plain text, and so are text bytes
under a binary format's extension whose signature is absent (a Graphviz `.dot` is not a Word
template).  A text format is refused when binary bytes show up anywhere in the file, not only
in its first 8 KB.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from docqa.errors import CorruptFileError, EmptyDocumentError, IngestError, UnsupportedFormatError
from docqa.ingest.readers import _encoding
from docqa.ingest.readers.archive import ArchiveReader
from docqa.ingest.readers.base import Reader
from docqa.ingest.readers.code import CodeReader
from docqa.ingest.readers.compressed import CompressedReader
from docqa.ingest.readers.docx import DocxReader
from docqa.ingest.readers.ebook import EpubReader, OdtReader, RtfReader
from docqa.ingest.readers.eml import EmlReader
from docqa.ingest.readers.html import HtmlReader
from docqa.ingest.readers.image import ImageReader
from docqa.ingest.readers.man import ManReader
from docqa.ingest.readers.ole import OleReader
from docqa.ingest.readers.pdf import PdfReader
from docqa.ingest.readers.pptx import PptxReader
from docqa.ingest.readers.table import CsvReader, XlsxReader
from docqa.ingest.readers.text import JsonReader, MarkdownReader, RstReader, TextReader, YamlReader
from docqa.types import Document

SIGNATURE = 10  # priority of readers whose sniff checks magic bytes
HEAD_BYTES = 8192

READERS: list[type[Reader]] = [
    PdfReader, OleReader, ImageReader, CompressedReader, ArchiveReader, DocxReader, PptxReader, XlsxReader, EpubReader,
    OdtReader, RtfReader, HtmlReader, EmlReader, MarkdownReader, RstReader, ManReader, CodeReader,
    JsonReader, YamlReader, CsvReader, TextReader,
]
_BY_EXTENSION: dict[str, type[Reader]] = {
    ext: reader for reader in reversed(READERS) for ext in reader.extensions
}
_BY_FILENAME: dict[str, type[Reader]] = {
    name: reader for reader in READERS for name in getattr(reader, "filenames", ())
}
_INSTANCES: dict[type[Reader], Reader] = {}


def is_supported_extension(path: Path) -> bool:
    """Cheap check for folder scans: a known extension or well-known file name."""
    return path.suffix.lower() in _BY_EXTENSION or path.name.lower() in _BY_FILENAME


def reader_for(path: Path, head: bytes) -> type[Reader] | None:
    """The reader for a file: a signature sniff, else the extension, else a weak sniff."""
    sniffed = max((r for r in READERS if r.sniff(head, path)), key=lambda r: r.priority, default=None)
    if sniffed is not None and sniffed.priority >= SIGNATURE:
        return sniffed
    by_name = _BY_EXTENSION.get(path.suffix.lower()) or _BY_FILENAME.get(path.name.lower())
    return by_name or sniffed


def readers_fingerprint(options: str = "") -> str:
    """Changes when the set of readers, docqa's version or the ingest `options` do: files skipped or
    failed under other readers or limits are read again rather than taken as "still skipped"."""
    from importlib.metadata import PackageNotFoundError, version  # ingest sits below docqa.version

    try:
        release = version("docqa")
    except PackageNotFoundError:
        release = "0+unknown"
    parts = [release, options, *(f"{r.__name__}:{r.type}:{','.join(r.extensions)}" for r in READERS)]
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=8).hexdigest()


def sniff_type(path: Path, head: bytes) -> str | None:
    """The format family `read_file` would read a file as, from its name and first bytes; None when no
    reader takes it: binary bytes of no known format, a text format's name on binary bytes, or a
    binary format's name (.pdf, .docx) on plain text (an upload check before anything is stored)."""
    reader = reader_for(path, head)
    binary = _encoding.looks_binary(head) or not _decodes_as_text(head)
    if reader is None:
        return None if binary else TextReader.type
    if reader.priority >= SIGNATURE:
        return reader.type if reader.sniff(head, path) or binary else None
    return None if binary and not reader.sniff(head, path) else reader.type


def read_file(path: Path, data: bytes | None = None) -> Document:
    """Read one file (or its bytes, when given) into a Document; raise IngestError on failure."""
    path = Path(path)
    if data is None:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise IngestError(str(path), f"cannot read the file: {exc.strerror or exc}") from exc
    if not data:
        raise EmptyDocumentError(str(path), "empty file")
    reader = _reader_by_content(path, data)
    instance = _INSTANCES.get(reader) or _INSTANCES.setdefault(reader, reader(read_file))
    try:
        return instance.read(path, data)
    except IngestError:
        raise
    except (MemoryError, KeyboardInterrupt):
        raise
    except Exception as exc:  # a library bug on odd input must not escape raw
        raise CorruptFileError(str(path), f"could not parse {reader.type.upper()}: "
                                     f"{type(exc).__name__}: {str(exc)[:200]}") from exc


def _reader_by_content(path: Path, data: bytes) -> type[Reader]:
    """The reader for these bytes; UnsupportedFormatError for binary bytes no text reader should take."""
    head = data[:HEAD_BYTES]
    reader = reader_for(path, head)
    text = _encoding.bom_encoding(head) is not None or (not _encoding.looks_binary(head) and _decodes_as_text(head))
    if reader is None or reader.priority < SIGNATURE or not reader.sniff(head, path):
        binary = not text or _encoding.looks_binary_throughout(data)
        if reader is not None and reader.priority >= SIGNATURE:
            # a binary format's name without its signature: plain text is read as what it is
            return reader if binary else max((r for r in READERS if r.sniff(head, path)),
                                             key=lambda r: r.priority, default=TextReader)
        if binary:
            suffix = path.suffix or "no extension"
            raise UnsupportedFormatError(str(path), f"unsupported file type (binary): {path.name} ({suffix})")
    return reader or TextReader


def _decodes_as_text(head: bytes) -> bool:
    """True when the first bytes are UTF-8 or a plausible legacy text encoding."""
    try:
        head.decode("utf-8")
        return True
    except UnicodeDecodeError as exc:
        if exc.start >= len(head) - 4:
            return True  # a character cut at the end of the sample
    controls = sum(b < 9 or 13 < b < 32 for b in head)
    return controls <= len(head) // 100
