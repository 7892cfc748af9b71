"""The `Chunker` interface: a Document in, a list of Chunks out.

Every chunk is an exact span of `document.text` (`chunk.text == text[char_start:char_end]`)
with its location: section path, page range, line range, code symbol.  Sizes are counted in
cl100k tokens (`docqa.text.count_tokens`); `max_tokens` and `overlap` come from settings.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable

from docqa.ingest.chunkers.assemble import assemble
from docqa.ingest.chunkers.units import Piece
from docqa.types import Chunk, Document


class Chunker(ABC):
    """Splits one kind of document."""

    def __init__(self, max_tokens: int = 512, overlap: int = 50):
        if max_tokens < 16:
            raise ValueError("max_tokens must be at least 16")
        if not 0 <= overlap < max_tokens // 2:
            raise ValueError("overlap must be >= 0 and below half of max_tokens")
        self.max_tokens = max_tokens
        self.overlap = overlap

    @abstractmethod
    def chunk(self, document: Document) -> list[Chunk]:
        """Chunks covering the document's text, in order, ordinals 0..n-1."""


class SpanChunker(Chunker):
    """A chunker that only finds spans; the base stamps them into Chunks.

    `chunk` drops whitespace-only pieces, covers any non-whitespace text the pieces missed
    with prose pieces, and stamps ordinal, lines, pages and language (see `assemble`).
    """

    @abstractmethod
    def pieces(self, document: Document) -> Iterable[Piece]:
        """Pieces in document order; gaps between them may only hold whitespace."""

    def chunk(self, document: Document) -> list[Chunk]:
        return assemble(document, list(self.pieces(document)), self.max_tokens, self.overlap)
