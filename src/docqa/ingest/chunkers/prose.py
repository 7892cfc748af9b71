"""Prose by paragraph: merge short paragraphs, split long ones at sentence ends, then lines,
then token boundaries; consecutive chunks of one run overlap by about `overlap` tokens.

The building blocks (`paragraph_units`, `pack`, `pieces_for_run`) live in units.py, shared by
the section, page, row and code chunkers.
"""

from __future__ import annotations

from collections.abc import Iterable

from docqa.ingest.chunkers.base import Piece, SpanChunker
from docqa.ingest.chunkers.units import block_spans, pieces_for_run
from docqa.types import Document


class ProseChunker(SpanChunker):
    """Plain text, RTF and anything without usable structure: paragraphs merged and split."""

    sentences = True

    def pieces(self, document: Document) -> Iterable[Piece]:
        atomic = block_spans(document)
        return pieces_for_run(
            document, 0, len(document.text), self.max_tokens, self.overlap,
            atomic=atomic, sentences=self.sentences,
        )


class LineChunker(ProseChunker):
    """JSON, YAML and unknown code: blank-line blocks, falling back to groups of lines."""

    sentences = False
