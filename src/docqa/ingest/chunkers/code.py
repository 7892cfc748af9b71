"""Source code by definition: a function or class is never cut unless it alone is too long.

Language front ends (`code_py` with `ast`, `code_ts` with tree-sitter) turn a file into a tree
of `Node`s (code_nodes.py) that partition its lines; this module plans the pieces:

- a definition that fits is one chunk (symbol = its qualified name); leading comments are
  attached to it when they still fit;
- a container (class, impl, namespace) too long is split into its members ("Class.method"),
  with the header and the statements between members grouped under the container's name;
- a function too long is split at its body's statements, every piece keeping its symbol;
- statements between definitions are grouped up to the limit (symbol None at module level).

Unknown languages and parse failures fall back to blank-line blocks and then lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from docqa.ingest.chunkers.base import Piece, SpanChunker
from docqa.ingest.chunkers.code_nodes import FUNCTION, STATEMENT, Node
from docqa.ingest.chunkers.code_py import python_nodes
from docqa.ingest.chunkers.code_ts import supports, tree_sitter_nodes
from docqa.ingest.chunkers.measure import ntokens
from docqa.ingest.chunkers.prose import LineChunker
from docqa.ingest.chunkers.units import pack, paragraph_units
from docqa.types import Document

_NON_SPACE = re.compile(r"\S")


def trim_lines(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without leading blank lines (indentation of its first line kept) and without
    trailing whitespace."""
    m = _NON_SPACE.search(text, start, end)
    if m is None:
        return start, start
    first = max(text.rfind("\n", start, m.start()) + 1, start)
    while end > first and text[end - 1].isspace():
        end -= 1
    return first, end


class Planner:
    """Pieces for a tree of Nodes under one token limit."""

    def __init__(self, text: str, limit: int):
        self.text = text
        self.limit = limit

    def count(self, start: int, end: int) -> int:
        # Far more characters than a chunk can hold: do not spend a count to learn that.
        return ntokens(self.text[start:end]) if end - start <= self.limit * 16 else self.limit + 1

    def sequence(self, nodes: list[Node], symbol: str | None, head: tuple[int, int] | None = None) -> list[Piece]:
        """Pieces for sibling nodes: definitions alone, runs of statements merged."""
        out: list[Piece] = []
        run: list[tuple[int, int, int]] = self.units(*head) if head else []
        for node in nodes:
            if node.kind == STATEMENT:
                run.extend(self.units(node.start, node.end))
                continue
            out.extend(self.flush(run, symbol))
            run = []
            out.extend(self.definition(node, symbol))
        out.extend(self.flush(run, symbol))
        return out

    def units(self, start: int, end: int) -> list[tuple[int, int, int]]:
        """One counted unit for the span, or its blank-line blocks and lines when too long."""
        n = self.count(start, end)
        if n <= self.limit:
            return [(start, end, n)]
        return paragraph_units(self.text, start, end, self.limit, sentences=False)

    def piece(self, start: int, end: int, tokens: int, symbol: str | None) -> Piece:
        return Piece(*trim_lines(self.text, start, end), tokens, symbol=symbol)

    def flush(self, run: list[tuple[int, int, int]], symbol: str | None) -> list[Piece]:
        return [self.piece(s, e, n, symbol) for s, e, n in pack(self.text, run, self.limit, 0)]

    def definition(self, node: Node, outer: str | None) -> list[Piece]:
        """A definition whole, else without its leading comments, else split by its children."""
        n = self.count(node.start, node.end)
        if n <= self.limit:
            return [self.piece(node.start, node.end, n, node.symbol)]
        if node.core > node.start:
            core = self.count(node.core, node.end)
            if core <= self.limit:
                lead = self.flush(self.units(node.start, node.core), outer)
                return lead + [self.piece(node.core, node.end, core, node.symbol)]
        if not node.children:
            return self.flush(self.units(node.start, node.end), node.symbol)
        head = (node.start, node.children[0].start)
        if node.kind == FUNCTION:
            statements = [Node(c.start, c.start, c.end) for c in node.children]
            return self.sequence(statements, node.symbol, head)
        return self.sequence(node.children, node.symbol, head)


Extractor = Callable[[str, str], "list[Node] | None"]


def _extractor(language: str | None) -> Extractor | None:
    """The front end for a language, or None when there is none."""
    if language == "python":
        return lambda text, _: python_nodes(text)
    return tree_sitter_nodes if supports(language) else None


class CodeChunker(SpanChunker):
    """Code by function and class (Python via `ast`, others via tree-sitter)."""

    def pieces(self, document: Document) -> Iterable[Piece]:
        extract = _extractor((document.language or "").lower())
        nodes = extract(document.text, (document.language or "").lower()) if extract else None
        if nodes is None:
            return LineChunker(self.max_tokens, self.overlap).pieces(document)
        return Planner(document.text, self.max_tokens).sequence(nodes, None)
