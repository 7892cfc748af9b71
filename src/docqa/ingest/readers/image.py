"""Images: recognised by their magic bytes and reported as needing OCR (not enabled)."""

from __future__ import annotations

from pathlib import Path

from docqa.errors import ImageWithoutOcrError
from docqa.ingest.readers.base import Reader
from docqa.types import Document

_MAGIC = (
    b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a", b"II*\x00", b"MM\x00*", b"BM",
)


class ImageReader(Reader):
    """JPEG, PNG, GIF, TIFF, BMP and WebP: no text layer without OCR."""

    type = "image"
    extensions = (".jpg", ".jpeg", ".png", ".gif", ".tif", ".tiff", ".bmp", ".webp", ".heic")
    priority = 10

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
            return True
        if head.startswith(b"BM"):  # two bytes are weak: require the extension too
            return path.suffix.lower() == ".bmp"
        return head.startswith(_MAGIC)

    def read(self, path: Path, data: bytes) -> Document:
        raise ImageWithoutOcrError(str(path), "image with no text layer: needs OCR (not enabled)")
