"""What a language front end produces for the code chunker: a tree of line-aligned `Node`s.

`code_py` (ast) and `code_ts` (tree-sitter) build them; code.py plans the pieces from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

FUNCTION, CONTAINER, STATEMENT = "function", "container", "statement"


@dataclass(slots=True)
class Node:
    """A line-aligned span of source: `start` includes attached comments, `core` does not."""

    start: int
    core: int
    end: int
    kind: str = STATEMENT
    symbol: str | None = None
    children: list[Node] = field(default_factory=list)  # members, or a function's statements


def line_spans(text: str) -> list[int]:
    """Offsets of every line start, plus `len(text) + 1` as a sentinel."""
    starts = [0]
    find = text.find
    i = find("\n")
    while i != -1:
        starts.append(i + 1)
        i = find("\n", i + 1)
    starts.append(len(text) + 1)
    return starts
