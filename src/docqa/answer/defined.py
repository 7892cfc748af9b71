"""The term a definition's sentences are about: an option's label line above its description.

Manuals and man pages define options as a definition list: the label on a line of its own (an HTML book's
`<dt>--leak-check=<no|summary|yes|full> [default: summary]</dt>`, a man page's `-k --keep`), then one or a few
paragraphs that describe it without naming it again ("When enabled, ...", "If set to summary, it says how many
leaks occurred.").  The label is the subject of every sentence of its block, as a heading is of a section's: the
sentence ranking and the answer-or-abstain decision read it beside the sentence (docqa.answer.extractive), so a
question that names the option ("--leak-check") finds the block's later sentences too, not only its first one.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

# An option's label on its own line above its description ("--vgdb-poll=<number> [default: 5000]", "-c --stdout").
OPTION_LABEL = re.compile(r"^[ \t]*-{1,2}[A-Za-z][\w-]*(?:[=,\s\[<][^\n]{0,80})?$")
SENTENCE_END = re.compile(r"[.。!！?？]\s*$")
BLOCK_PARAGRAPHS = 4  # a description longer than this many paragraphs has ended (the list is over)
BLOCK_CHARS = 2000
_BLANK = re.compile(r"\n[^\S\n]*\n")


@dataclass(frozen=True, slots=True)
class Block:
    """An option's block in a chunk's text: its label line at `start:label_end`, its description up to `end`."""

    start: int
    label_end: int
    end: int
    label: str


def is_label(line: str) -> bool:
    """A line that is an option's label: an option, its value and default, no sentence."""
    return bool(line.strip()) and OPTION_LABEL.match(line) is not None and SENTENCE_END.search(line) is None


def blocks(text: str) -> list[Block]:
    """The option blocks of `text`: each label line that opens a paragraph (the text's start or a blank line above
    it), with what follows it up to the next label line, at most BLOCK_PARAGRAPHS paragraphs and BLOCK_CHARS."""
    labels: list[tuple[int, int]] = []
    pos, blank_above = 0, True
    for line in text.split("\n"):
        start, pos = pos, pos + len(line) + 1
        if blank_above and is_label(line):
            lead = len(line) - len(line.lstrip())
            labels.append((start + lead, start + len(line.rstrip())))
        blank_above = not line.strip()
    out = []
    for i, (start, label_end) in enumerate(labels):
        end = labels[i + 1][0] if i + 1 < len(labels) else len(text)
        end = min(end, label_end + BLOCK_CHARS)
        breaks = [m.start() for m in _BLANK.finditer(text, label_end, end)]
        # the label's own blank line (a rendered <dt>) does not count: the paragraphs are the description's
        if breaks and not text[label_end:breaks[0]].strip():
            breaks = breaks[1:]
        if len(breaks) >= BLOCK_PARAGRAPHS:
            end = breaks[BLOCK_PARAGRAPHS - 1]
        out.append(Block(start, label_end, end, text[start:label_end]))
    return out


_OPTION = re.compile(r"(?<![\w-])-{1,2}[A-Za-z][\w-]*")


def named(question: str, found: list[Block]) -> list[Block]:
    """The blocks whose label names an option the question names ("--leak-check" in "pass --leak-check=yes")."""
    asked = {m.group() for m in _OPTION.finditer(question)}
    return [b for b in found if asked & {m.group() for m in _OPTION.finditer(b.label)}] if asked else []


def block_at(found: list[Block], start: int, end: int) -> Block | None:
    """The block whose description holds the span `start:end` (None when none does, or when the span holds the
    label itself: the first sentence is quoted with its label)."""
    i = bisect_right([b.start for b in found], start) - 1
    if i < 0:
        return None
    block = found[i]
    return block if block.label_end <= start and end <= block.end else None
