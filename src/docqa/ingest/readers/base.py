"""The `Reader` interface and the registry that picks one by sniffing content and extension.

A reader turns the bytes of one file into a `Document`: the text to index plus its structure
as `Block` spans (headings, pages, rows, slides).  Readers raise `IngestError` subclasses that
name the file and the cause; they never return an empty document.
"""

from __future__ import annotations

import re
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from docqa.errors import EmptyDocumentError, IngestError, NoTextLayerError
from docqa.types import HEADER_ROW, HEADING, PARAGRAPH, TABLE, Block, Document

# read_file's signature: a path (its name picks the reader) and the bytes -> a Document.
ReadFile = Callable[[Path, bytes], Document]


class Reader(ABC):
    """Reads one format family.

    Subclasses set `type` (the format family recorded on the document), `extensions` (lower
    case, with the dot) and, when the format has a signature, override `sniff`.

    `read_nested` reads a file embedded in this one (an e-mail attachment) as `read_file` would;
    the registry passes its own `read_file`, so no reader imports the registry.  None: embedded
    files are not read.
    """

    type: ClassVar[str]
    extensions: ClassVar[tuple[str, ...]] = ()
    # Higher wins when several readers sniff the same bytes positive; >= 10 marks a binary
    # signature that beats the extension (see registry.py), lower a weak, text-based sniff.
    priority: ClassVar[int] = 0

    def __init__(self, read_nested: ReadFile | None = None) -> None:
        self.read_nested = read_nested

    @abstractmethod
    def read(self, path: Path, data: bytes) -> Document:
        """Parse `data` (the whole file) into a Document; raise IngestError on failure."""

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        """True when the first bytes of the file identify this reader's format."""
        return False


# --- conveniences shared by the readers (the contract above is all a reader must implement) ---

_C0 = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_BLANK_RUNS = re.compile(r"\n[ \t]*(?:\n[ \t]*){2,}")
_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200b\u3000]+")


def clean_source(text: str) -> str:
    """LF line ends, no C0 control chars but tab/newline, NFC; keeps every line where it was."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if _C0.search(text):
        text = _C0.sub("", text)
    if not text.isascii() and not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text


def clean_extracted(text: str) -> str:
    """clean_source plus: no trailing blanks, at most one blank line in a row, stripped ends."""
    text = clean_source(text).replace("\u00ad", "")
    if "\n" in text:
        text = "\n".join(line.rstrip() for line in text.split("\n"))
        text = _BLANK_RUNS.sub("\n\n", text)
    return text.strip()


def collapse_spaces(text: str) -> str:
    """One space for any run of spaces/tabs (for text that had no meaningful layout)."""
    return _SPACES.sub(" ", text).strip()


class TextBuilder:
    """Accumulates extracted text piece by piece and records each piece as a Block span."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self.blocks: list[Block] = []

    def add(self, text: str, kind: str = PARAGRAPH, sep: str = "\n\n", indent: str = "", **fields: Any) -> Block | None:
        """Append cleaned `text` after `sep` (skipped at the start), its first line after `indent` (a nested list
        item's); return its Block, or None if blank."""
        text = clean_extracted(text)
        if not text:
            return None
        text = indent + text
        if self._length:
            self._parts.append(sep)
            self._length += len(sep)
        block = Block(self._length, self._length + len(text), kind, **fields)
        self._parts.append(text)
        self._length += len(text)
        self.blocks.append(block)
        return block

    def add_table(self, rows: list[str], header_rows: int = 1, sep: str = "\n\n", **fields: Any) -> Block | None:
        """Append a table, one row per line, as a TABLE block with its first `header_rows` lines
        marked HEADER_ROW (the table chunker repeats them in every row group)."""
        rows = [row for row in (clean_extracted(r) for r in rows) if row]
        table = self.add("\n".join(rows), TABLE, sep=sep, **fields)
        if table is not None and header_rows > 0 and len(rows) > 1:
            header = "\n".join(rows[:header_rows])
            self.blocks.append(Block(table.start, min(table.start + len(header), table.end), HEADER_ROW, **fields))
        return table

    def mark(self, start: int, kind: str, **fields: Any) -> Block:
        """Record a Block from `start` to the current end (e.g. a whole page or table)."""
        block = Block(start, self._length, kind, **fields)
        self.blocks.append(block)
        return block

    def __len__(self) -> int:
        return self._length

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def document(self, path: Path, doc_type: str,
                 empty: type[IngestError] = EmptyDocumentError, **fields: Any) -> Document:
        """Build the Document; raise `empty` ("no text extracted") when nothing was added."""
        if not self._length:
            reason = "no text layer: needs OCR" if empty is NoTextLayerError else "no text extracted"
            raise empty(str(path), reason)
        self.blocks.sort(key=lambda b: (b.start, -b.end))
        return Document(path=str(path), type=doc_type, text=self.text, blocks=self.blocks, **fields)


_GENERIC_TITLES = re.compile(
    r"^(untitled.*|document\d*|(microsoft )?(word|powerpoint|excel) (document|presentation)|"
    r"presentation\d*|slide \d+|title|no title|new document|book\d*|sheet\d*)$", re.I)
_TITLE_PREFIX = re.compile(r"^microsoft (word|powerpoint|excel) - ", re.I)


def sane_title(title: str | None) -> str | None:
    """A metadata title worth showing; None for blanks, placeholders and file names."""
    title = collapse_spaces(_TITLE_PREFIX.sub("", title or ""))
    if not title or len(title) > 300 or _GENERIC_TITLES.match(title) or not any(c.isalpha() for c in title):
        return None
    if re.search(r"\.(docx?|pdf|pptx?|xlsx?|odt|rtf|tex|dvi|html?)$", title, re.I):
        return None
    return title


def first_heading(doc_text: str, blocks: list[Block]) -> str | None:
    """The first level-1 heading's text, else the first heading's, else None."""
    headings = [b for b in blocks if b.kind == HEADING]
    for block in sorted(headings, key=lambda b: (b.level != 1, b.start)):
        title = collapse_spaces(doc_text[block.start:block.end].strip("#=-~*^ \n"))
        if title:
            return title[:300]
    return None
