"""Heading hierarchy (Markdown, reStructuredText, HTML, docx, odt, epub, e-mail).

Each heading opens a section that runs to the next heading of any level; its path is the
titles of the enclosing headings.  A section that fits is one chunk (heading line included);
a longer one is split like prose, every piece keeping the path.  A section holding only its
heading joins the next section, so "# Install" directly followed by "## Database" becomes one
section ("Install", "Database").  Overlap never crosses a heading.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from docqa.ingest.chunkers.base import Piece, SpanChunker
from docqa.ingest.chunkers.table import long_tables, pieces_with_tables
from docqa.ingest.chunkers.units import block_spans
from docqa.types import HEADING, Document

_MARKUP_LINE = re.compile(r"^[\s=\-`:'\"~^_*+#<>.]*$")
_NON_SPACE = re.compile(r"\S")


def heading_title(text: str) -> str:
    """A heading's title: its span without '#' marks and rst over/underlines."""
    lines = [ln for ln in text.splitlines() if not _MARKUP_LINE.match(ln)]
    title = " ".join(ln.strip() for ln in lines) if lines else text.strip()
    return title.strip("#").strip() or title.strip()


def sections(document: Document) -> list[tuple[int, int, tuple[str, ...]]]:
    """`(start, end, path)` per section in document order; text before the first heading has
    the empty path."""
    heads = sorted((b for b in document.blocks if b.kind == HEADING and b.level >= 1),
                   key=lambda b: b.start)
    text = document.text
    out: list[tuple[int, int, tuple[str, ...]]] = []
    if heads and heads[0].start > 0:
        out.append((0, heads[0].start, ()))
    stack: list[tuple[int, str]] = []
    for i, head in enumerate(heads):
        end = heads[i + 1].start if i + 1 < len(heads) else len(text)
        while stack and stack[-1][0] >= head.level:
            stack.pop()
        stack.append((head.level, heading_title(text[head.start : head.end])))
        out.append((head.start, end, tuple(title for _, title in stack)))
    return _merge_bare_headings(text, out, heads)


def _merge_bare_headings(text, spans, heads) -> list[tuple[int, int, tuple[str, ...]]]:
    """Join each section that holds only its heading to the section after it."""
    head_end = {h.start: h.end for h in heads}
    out: list[tuple[int, int, tuple[str, ...]]] = []
    carry: int | None = None
    for i, (start, end, path) in enumerate(spans):
        start = start if carry is None else carry
        body_from = max(head_end.get(spans[i][0], spans[i][0]), spans[i][0])
        bare = spans[i][0] in head_end and not _NON_SPACE.search(text, body_from, end)
        if bare and i + 1 < len(spans):
            carry = start
            continue
        carry = None
        out.append((start, end, path))
    return out


class SectionChunker(SpanChunker):
    """Chunks by heading sections; prose inside each section."""

    def pieces(self, document: Document) -> Iterable[Piece]:
        atomic = block_spans(document)
        # Bare headings merge into the next section: overlap must not reach back over them.
        heads = sorted(b.start for b in document.blocks if b.kind == HEADING)
        tables = long_tables(document, self.max_tokens)
        for start, end, path in sections(document):
            yield from pieces_with_tables(
                document, start, end, self.max_tokens, self.overlap, tables, atomic=atomic, section=path,
                barriers=heads,
            )
