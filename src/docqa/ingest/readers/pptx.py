"""PowerPoint (.pptx): one PAGE block per slide: title, other shapes, tables, then notes."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from pathlib import Path

from docqa.errors import CorruptFileError
from docqa.ingest.readers.base import Reader, TextBuilder, clean_extracted, collapse_spaces, sane_title
from docqa.ingest.readers.zipguard import check_zip
from docqa.types import HEADING, PAGE, Document


def shape_texts(shapes, skip: int | None = None) -> Iterator[str | list[str]]:
    """Text of shapes in z-order: text frames (str), tables (a list of " | " rows), groups recursively."""
    from pptx.enum.shapes import MSO_SHAPE_TYPE  # python-pptx is imported when a .pptx is read

    for shape in shapes:
        if skip is not None and shape.shape_id == skip:
            continue
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            yield from shape_texts(shape.shapes)
        elif getattr(shape, "has_table", False) and shape.has_table:
            rows = []
            for row in shape.table.rows:
                cells = [collapse_spaces(" ".join(c.text_frame.text.split())) if not c.is_spanned
                         else "" for c in row.cells]
                while cells and not cells[-1]:
                    cells.pop()
                if cells:
                    rows.append(" | ".join(cells))
            yield rows
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            yield shape.text_frame.text.replace("\x0b", "\n")


def slide_title(slide) -> tuple[str, int | None]:
    """The slide's title placeholder text and shape id (or "" and None)."""
    try:
        title = slide.shapes.title
    except (KeyError, AttributeError):
        return "", None
    if title is None or not title.has_text_frame:
        return "", None
    return " ".join(title.text_frame.text.split()), title.shape_id


class PptxReader(Reader):
    """PowerPoint .pptx: slides in order, a HEADING block per slide title, notes last."""

    type = "pptx"
    extensions = (".pptx", ".pptm", ".ppsx", ".potx")
    priority = 10

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        return head.startswith(b"PK\x03\x04") and b"ppt/" in head

    def read(self, path: Path, data: bytes) -> Document:
        import pptx
        from lxml import etree
        from pptx.exc import PackageNotFoundError

        try:
            check_zip(data, path)
            deck = pptx.Presentation(io.BytesIO(data))
            builder = TextBuilder()
            for number, slide in enumerate(deck.slides, 1):
                add_slide(builder, number, slide)
            props = deck.core_properties
            slides = len(deck.slides)
        except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError,
                etree.XMLSyntaxError) as exc:
            raise CorruptFileError(str(path), f"could not parse PPTX: {' '.join(str(exc).split())[:160]}") from exc
        doc = builder.document(path, self.type, metadata={"slides": slides})
        heads = [b for b in doc.blocks if b.kind == HEADING]
        doc.title = sane_title(props.title) or (doc.text[heads[0].start:heads[0].end] if heads else None)
        doc.metadata["slide_titles"] = {str(b.page): doc.text[b.start:b.end] for b in heads if b.page}
        if props.author:
            doc.metadata["author"] = props.author.strip()
        return doc


def add_slide(builder: TextBuilder, number: int, slide) -> None:
    """Append one slide as a PAGE block (an empty span when the slide has no text)."""
    title, title_id = slide_title(slide)
    parts = [p if isinstance(p, list) else clean_extracted(p) for p in shape_texts(slide.shapes, skip=title_id)]
    if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
        parts.append(clean_extracted(slide.notes_slide.notes_text_frame.text))
    start = len(builder) + (2 if len(builder) else 0)
    heading = builder.add(title, HEADING, level=1, page=number) if title else None
    for part in (p for p in parts if p):
        if isinstance(part, list):  # a table: its first row is repeated in every row group
            builder.add_table(part, page=number)
        else:
            builder.add(part, page=number)
    if len(builder) > start or heading:
        builder.mark(start, PAGE, page=number)
    else:
        builder.mark(len(builder), PAGE, page=number)
