"""Readers for source-like text: plain text, Markdown, reStructuredText, code, JSON and YAML.

Their `Document.text` is the file itself (decoded, LF line ends), so a line number in the
document is the line number in the file.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from docqa.errors import CorruptFileError, EmptyDocumentError, UnsupportedFormatError
from docqa.ingest.readers import _encoding
from docqa.ingest.readers.base import Reader, clean_source, collapse_spaces
from docqa.types import HEADING, Block, Document

if TYPE_CHECKING:  # markdown-it and PyYAML are imported when a file of theirs is read
    from markdown_it import MarkdownIt


def decode_source(path: Path, data: bytes) -> tuple[str, str]:
    """Decode a text file to clean LF text; raise for binary junk or whitespace-only content."""
    if _encoding.looks_binary(data):
        raise UnsupportedFormatError(str(path), f"unsupported file type (binary): {path.name}")
    text, encoding = _encoding.decode(data)
    text = clean_source(text)
    if not text.strip():
        raise EmptyDocumentError(str(path), "no text extracted (the file holds only whitespace)")
    return text, encoding


class LineOffsets:
    """Character offset of each 0-based line, computed with C-speed list operations."""

    def __init__(self, text: str):
        lines = text.split("\n")
        self._cum = list(accumulate(map(len, lines), initial=0))
        self._size = len(text)

    def start(self, line: int) -> int:
        line = min(line, len(self._cum) - 1)
        return min(self._cum[line] + line, self._size)

    def end(self, line: int) -> int:
        """End offset (exclusive, before the newline) of the 0-based `line`."""
        if line + 1 >= len(self._cum):
            return self._size
        return min(self._cum[line + 1] + line, self._size)


class TextReader(Reader):
    """Plain text (.txt, .log, and any unknown extension whose content decodes as text)."""

    type = "text"
    extensions = (".txt", ".text", ".log", ".me", ".1st", ".nfo", ".ini", ".cfg", ".conf",
                  ".toml", ".properties", ".env", ".xml", ".srt", ".vtt", ".tex", ".bib", ".adoc")

    def read(self, path: Path, data: bytes) -> Document:
        text, encoding = decode_source(path, data)
        return Document(path=str(path), type=self.type, text=text,
                        metadata={"encoding": encoding, "lines": text.count("\n") + 1})


_MD_HEADING_HINT = re.compile(r"^ {0,3}(?:#{1,6}(?:[ \t]|$)|=+[ \t]*$|-+[ \t]*$)", re.M)
# markdown-it-py parses ~3 MB/s (its block state walks every character in Python); a linear regex
# scan finds the same ATX/setext headings, outside fenced code, at >100 MB/s.  The scan does not
# follow container blocks: a heading on a list item's or a quote's first line ("- # Title",
# "> # Title"), or a setext underline inside one, is the one case where the two differ (measured
# on 390 Markdown files: the test fixtures, ../shared/data, /usr/share/doc, site-packages; the only
# other difference is YAML front matter, which the scan rightly skips).  Files that hold such a
# line, up to MD_PARSER_MAX, are parsed with markdown-it; everything else is scanned.
MD_PARSER_MAX = 16 * 1024
_MD_NESTED = re.compile(r"^ {0,3}(?:>[ \t]*|(?:[-+*]|\d{1,9}[.)])[ \t]+)+(?:#{1,6}(?:[ \t]|$)|(?:=+|-+)[ \t]*$)"
                        r"|^[ \t]+(?:=+|-+)[ \t]*$", re.M)
# Starts with a literal "\n" so the regex engine can jump between line starts (2x faster than ^).
_MD_LINES = re.compile(
    r"\n(?: {0,3}(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)"
    r"| {0,3}(?P<atx>#{1,6})(?:[ \t][^\n]*)?"
    r"| {0,3}(?P<setext>=+|-+)[ \t]*)(?=\n|\Z)")
_MD_NOT_PARAGRAPH = re.compile(r" {0,3}(?:[-+*][ \t]|\d{1,9}[.)][ \t]|>|#{1,6}(?:[ \t]|$)|`{3}|~{3})| {4}|\t")


class MarkdownReader(Reader):
    """Markdown: the source as text, HEADING blocks from a regex scan (markdown-it's block parse
    for small files with headings inside lists or quotes)."""

    type = "markdown"
    extensions = (".md", ".markdown", ".mdown", ".mkd", ".mdx")
    _parser: ClassVar[MarkdownIt | None] = None

    @classmethod
    def parser(cls) -> MarkdownIt:
        if cls._parser is None:
            from markdown_it import MarkdownIt

            rules = ["heading", "lheading", "fence", "code", "list", "blockquote", "html_block", "hr"]
            md = MarkdownIt("zero").enable(rules)
            md.core.ruler.disable(["inline"])  # headings need only the block structure: 2x faster
            cls._parser = md
        return cls._parser

    def read(self, path: Path, data: bytes) -> Document:
        text, encoding = decode_source(path, data)
        if len(text) <= MD_PARSER_MAX and _MD_NESTED.search(text):
            blocks = self.headings(text)
        else:
            blocks = scan_headings(text) if _MD_HEADING_HINT.search(text) else []
        return Document(path=str(path), type=self.type, text=text, blocks=blocks,
                        title=heading_title(text, blocks),
                        metadata={"encoding": encoding, "lines": text.count("\n") + 1})

    def headings(self, text: str) -> list[Block]:
        """One HEADING block per ATX or setext heading; the span covers its line(s)."""
        offsets = LineOffsets(text)
        blocks = []
        for token in self.parser().parse(text):
            if token.type == "heading_open" and token.map:
                first, last = token.map
                blocks.append(Block(offsets.start(first), offsets.end(last - 1), HEADING,
                                    level=int(token.tag[1])))
        return blocks


def scan_headings(text: str) -> list[Block]:
    """ATX and setext headings outside fenced code, in one regex pass (CommonMark's common cases)."""
    offsets = LineOffsets(text)
    blocks: list[Block] = []
    fence, line, seen = "", 0, 0
    source = "\n" + text  # every line, the first included, now follows a newline
    for match in _MD_LINES.finditer(source, _front_matter_end(text)):
        line += source.count("\n", seen, match.start())
        seen = match.start()
        start, end = match.start(), match.end() - 1  # offsets into `text`
        if fence:  # inside fenced code only a long-enough bare closing fence counts
            if match["fence"] and match["fence"][0] == fence[0] and len(match["fence"]) >= len(fence) \
                    and not match["info"].strip():
                fence = ""
        elif match["fence"]:
            if not (match["fence"][0] == "`" and "`" in match["info"]):
                fence = match["fence"]
        elif match["atx"]:
            blocks.append(Block(start, end, HEADING, level=len(match["atx"])))
        elif (first := _paragraph_start(text, offsets, line, blocks)) is not None:
            level = 1 if match["setext"][0] == "=" else 2
            blocks.append(Block(offsets.start(first), end, HEADING, level=level))
    return blocks


def _paragraph_start(text: str, offsets: LineOffsets, line: int, blocks: list[Block]) -> int | None:
    """First line of the paragraph a setext underline at `line` closes, or None if there is none."""
    first = line
    while first > 0:
        above = text[offsets.start(first - 1):offsets.end(first - 1)]
        if not above.strip() or (blocks and blocks[-1].end >= offsets.start(first - 1)):
            break
        if _MD_NOT_PARAGRAPH.match(above):
            if first == line or above.startswith(("    ", "\t")):
                return None if first == line else first
            break
        first -= 1
    return first if first < line else None


def _front_matter_end(text: str) -> int:
    """Offset just after a leading YAML front matter block ("---" ... "---"), or 0."""
    if not text.startswith("---\n"):
        return 0
    match = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.M).search(text, 4)
    return match.end() if match else 0


_RST_UNDERLINE = re.compile(r"^([=\-`:'\"~^_*+#<>.])\1{2,}[ \t]*$", re.M)


class RstReader(Reader):
    """reStructuredText: the source as text, HEADING blocks from underline/overline titles."""

    type = "rst"
    extensions = (".rst", ".rest")

    def read(self, path: Path, data: bytes) -> Document:
        text, encoding = decode_source(path, data)
        blocks = rst_headings(text)
        return Document(path=str(path), type=self.type, text=text, blocks=blocks,
                        title=heading_title(text, blocks), metadata={"encoding": encoding})


def rst_headings(text: str) -> list[Block]:
    """Section titles: a text line underlined (optionally overlined) at least as long as it."""
    lines = text.split("\n")
    offsets = LineOffsets(text)
    styles: list[tuple[str, bool]] = []  # adornment styles in order of first use = levels
    blocks: list[Block] = []
    under, seen = 0, 0
    for match in _RST_UNDERLINE.finditer(text):
        under += text.count("\n", seen, match.start())  # running count keeps this linear
        seen = match.start()
        above = lines[under - 1] if under else ""
        title = above.strip()
        if not title or _RST_UNDERLINE.match(above) or len(title) > len(match.group(0).strip()) + 2:
            continue
        over = under >= 2 and lines[under - 2].strip() == match.group(0).strip()
        style = (match.group(1), over)
        if style not in styles:
            styles.append(style)
        first = under - 2 if over else under - 1
        if blocks and blocks[-1].end >= offsets.start(first):
            continue  # the overline of a title we already took
        blocks.append(Block(offsets.start(first), offsets.end(under), HEADING,
                            level=styles.index(style) + 1))
    return blocks


def heading_title(text: str, blocks: list[Block]) -> str | None:
    """The first level-1 heading (else the first heading) without its markup."""
    heads = [b for b in blocks if b.kind == HEADING]
    for block in sorted(heads, key=lambda b: (b.level != 1, b.start)):
        lines = [ln for ln in text[block.start:block.end].split("\n")
                 if ln.strip() and not _RST_UNDERLINE.match(ln)]
        title = collapse_spaces(" ".join(lines).strip().strip("#").strip())
        if title:
            return title[:300]
    return None


class JsonReader(Reader):
    """JSON and JSON Lines: the source as text, after checking that it parses."""

    type = "json"
    extensions = (".json", ".jsonl", ".ndjson", ".geojson", ".ipynb")

    def read(self, path: Path, data: bytes) -> Document:
        text, encoding = decode_source(path, data)
        try:
            if path.suffix.lower() in (".jsonl", ".ndjson"):
                for number, line in enumerate(text.split("\n"), 1):  # noqa: B007 - the error names the line
                    if line.strip():
                        json.loads(line)
            else:
                number = 0
                json.loads(text)
        except json.JSONDecodeError as exc:
            where = f"line {number}: " if number else ""
            raise CorruptFileError(str(path), f"invalid JSON: {where}{exc}") from exc
        return Document(path=str(path), type=self.type, text=text, metadata={"encoding": encoding})


class YamlReader(Reader):
    """YAML: the source as text, after checking that every document in it parses."""

    type = "yaml"
    extensions = (".yml", ".yaml")

    def read(self, path: Path, data: bytes) -> Document:
        import yaml

        text, encoding = decode_source(path, data)
        try:
            for _ in yaml.compose_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
                pass
        except yaml.YAMLError as exc:
            reason = " ".join(str(exc).split())
            raise CorruptFileError(str(path), f"invalid YAML: {reason}") from exc
        return Document(path=str(path), type=self.type, text=text, metadata={"encoding": encoding})
