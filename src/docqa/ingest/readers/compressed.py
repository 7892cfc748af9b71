"""CompressedReader: `.gz`, `.bz2`, `.xz` and `.zst` files read as the file they hold.

`notes.txt.gz` is indexed as the text of `notes.txt`: the inner name (the outer one without its
compression suffix) and the inner bytes pick the reader; the document keeps the real file's path.
Decompression is bounded (bounds.py).  zstd needs the `zstandard` package.
"""

from __future__ import annotations

import io
from pathlib import Path

from docqa.errors import CorruptFileError, IngestError, UnsupportedFormatError
from docqa.ingest.readers import bounds
from docqa.ingest.readers.base import Reader
from docqa.types import Document

ZSTD_INSTALL = "pip install 'zstandard==0.25.0'"
# format: (magic, suffixes)
FORMATS: dict[str, tuple[bytes, tuple[str, ...]]] = {
    "gzip": (b"\x1f\x8b\x08", (".gz",)),
    "bzip2": (b"BZh", (".bz2",)),
    "xz": (b"\xfd7zXZ\x00", (".xz",)),
    "zstd": (b"\x28\xb5\x2f\xfd", (".zst",)),
}
# tar.gz and friends: the inner name of `x.tgz` is `x.tar`
_SHORT_TAR = {".tgz": ".tar", ".tbz": ".tar", ".tbz2": ".tar", ".txz": ".tar", ".tzst": ".tar"}


def compression_of(head: bytes) -> str | None:
    """The compression format whose magic bytes `head` starts with."""
    for name, (magic, _) in FORMATS.items():
        if head.startswith(magic) and (name != "bzip2" or head[3:4] in b"123456789" and head[4:10] == b"1AY&SY"):
            return name
    return None


def inner_path(path: Path) -> Path:
    """The name of the file a compressed file holds: `notes.txt.gz` -> `notes.txt`, `x.tgz` -> `x.tar`."""
    suffix = path.suffix.lower()
    if suffix in _SHORT_TAR:
        return path.with_suffix(_SHORT_TAR[suffix])
    if any(suffix in suffixes for _, suffixes in FORMATS.values()) and path.stem:
        return path.with_suffix("")
    return path


def decompress(path: Path, data: bytes, cap: int | None = None) -> bytes:
    """The bytes a compressed file holds, bounded (FileTooLargeError past the allowance); CorruptFileError
    when the stream is damaged, UnsupportedFormatError for zstd without `zstandard`."""
    kind = compression_of(data[:16])
    if kind is None:
        raise CorruptFileError(str(path), "not a gzip, bzip2, xz or zstd stream")
    try:
        with _stream(path, kind, data) as stream:
            return bounds.read_bounded(stream.read, str(path), len(data), cap)
    except (IngestError, MemoryError):
        raise
    except Exception as exc:  # OSError, EOFError, LZMAError, zlib.error, ZstdError: all a damaged stream
        raise CorruptFileError(str(path), f"damaged {kind} stream: {str(exc)[:200] or type(exc).__name__}") from exc


def _stream(path: Path, kind: str, data: bytes):
    raw = io.BytesIO(data)
    if kind == "gzip":
        import gzip
        return gzip.GzipFile(fileobj=raw)
    if kind == "bzip2":
        import bz2
        return bz2.BZ2File(raw)
    if kind == "xz":
        import lzma
        return lzma.LZMAFile(raw)
    try:
        import zstandard
    except ImportError:
        raise UnsupportedFormatError(str(path), f"zstd-compressed: needs the zstandard package ({ZSTD_INSTALL})") from None
    return zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)


class CompressedReader(Reader):
    """One compressed file: decompressed, then read by the reader of what it holds."""

    type = "compressed"
    extensions = (".gz", ".bz2", ".xz", ".zst")
    priority = 10

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        return compression_of(head) is not None

    def read(self, path: Path, data: bytes) -> Document:
        kind = compression_of(data[:16])
        inner = inner_path(path)
        if self.read_nested is None:
            raise UnsupportedFormatError(str(path), f"{kind}-compressed file: nothing reads what it holds")
        plain = decompress(path, data)
        try:
            doc = self.read_nested(inner, plain)
        except IngestError as exc:  # the error names the real file, not the inner name
            raise type(exc)(str(path), exc.reason) from exc
        doc.path = str(path)
        doc.metadata["compression"] = kind
        return doc
