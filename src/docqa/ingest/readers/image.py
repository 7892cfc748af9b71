"""Images: recognised by their magic bytes and read with OCR (the `ocr` extra), page 1 each.

A multi-frame TIFF or GIF gives one page per frame, up to the OCR page cap.  Without the extra,
or with `ingest.ocr: off`, an image raises ImageWithoutOcrError (skipped) with the reason and the install
command.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from docqa.errors import CorruptFileError, FileTooLargeError, ImageWithoutOcrError, UnsupportedFormatError
from docqa.ingest.ocr import PageOcr
from docqa.ingest.readers.base import Reader, TextBuilder
from docqa.types import Document

if TYPE_CHECKING:  # Pillow is imported when an image is read
    from PIL.Image import Image

_MAGIC = (
    b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a", b"II*\x00", b"MM\x00*", b"BM",
)
MAX_PIXELS = 60_000_000  # larger pictures are refused before they are decoded (a 60 MP photo is ~180 MB)


class ImageReader(Reader):
    """JPEG, PNG, GIF, TIFF, BMP and WebP, read with OCR."""

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
        ocr = PageOcr()
        if ocr.reason:
            raise ImageWithoutOcrError(str(path), f"image with no text layer: {ocr.reason}")
        builder = TextBuilder()
        image = open_image(path, data)
        frames = getattr(image, "n_frames", 1)
        for number in range(1, frames + 1):
            if ocr.may_start(number):
                ocr.add_image(builder, frame(path, image, number - 1), number)
        if not len(builder):
            raise ImageWithoutOcrError(str(path), "image: OCR found no text")  # a picture, not a document: skipped
        return builder.document(path, self.type, metadata={"pages": frames, "ocr": ocr.metadata()})


def open_image(path: Path, data: bytes) -> Image:
    """The image, opened (not yet decoded) by Pillow; refuse huge, broken and unsupported ones."""
    from PIL import Image, UnidentifiedImageError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # our own limit follows
        try:
            image = Image.open(io.BytesIO(data))
        except UnidentifiedImageError as exc:
            if path.suffix.lower() == ".heic":
                raise UnsupportedFormatError(str(path), "HEIC images are not supported: convert to JPEG or PNG") from exc
            raise CorruptFileError(str(path), "could not decode the image (truncated or damaged?)") from exc
        except Image.DecompressionBombError as exc:
            raise FileTooLargeError(str(path), f"image too large to read: {exc}") from exc
    width, height = image.size
    if width * height > MAX_PIXELS:
        raise FileTooLargeError(str(path), f"image of {width}×{height} pixels is over the "
                                           f"{MAX_PIXELS // 1_000_000} megapixel limit for OCR")
    return image


def frame(path: Path, image: Image, index: int) -> Image:
    """Frame `index` decoded, turned upright as its EXIF orientation says."""
    from PIL import ImageOps

    try:
        image.seek(index)
        upright = ImageOps.exif_transpose(image)
        upright.load()
    except (OSError, ValueError, EOFError, SyntaxError) as exc:
        raise CorruptFileError(str(path), f"could not decode the image: {exc} (truncated or damaged?)") from exc
    return upright
