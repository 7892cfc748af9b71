"""HTML and XHTML through selectolax (lexbor): headings, paragraphs, lists and tables.

`add_html` is shared with the e-mail and EPUB readers: it walks the DOM once, collecting
inline text into paragraphs that block elements delimit, after dropping scripts, styles and
(when the page has a main/article) navigation, headers, footers and asides.

A list item keeps its marker as Markdown writes it: "- " for an `<ul>` item, "1. " (its number; "a) "
for `type="a"`) for an `<ol>` item, indented two spaces a level for a nested list, on the item's first
paragraph.  Without it an item reads as a paragraph of prose, and "the disk space needed depends on the
setup:" / "LTSP server: 40 GiB." is no list the answerer can quote whole (docqa.answer.rows, shape).
A definition list stays a label paragraph (`<dt>`) above its description's paragraphs (`<dd>`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from docqa.ingest.readers import _encoding
from docqa.ingest.readers.base import Reader, TextBuilder, collapse_spaces
from docqa.types import CODE, HEADING, PARAGRAPH, Document

if TYPE_CHECKING:  # selectolax is imported when a page is parsed
    from selectolax.lexbor import LexborHTMLParser, LexborNode

# text a browser never shows (a page can hide instructions for a model there): dropped like [hidden]
_HIDDEN_STYLE = ", ".join(f'[style*="{rule}" i]' for rule in ("display:none", "display: none", "visibility:hidden",
                                                               "visibility: hidden"))
_DROP = "script, style, noscript, template, svg, math, iframe, object, embed, canvas, select, a.headerlink, " \
        "[hidden], [aria-hidden=true], " + _HIDDEN_STYLE
_BOILERPLATE = ("nav", "header", "footer", "aside")
_BOILERPLATE_ROLES = "[role=navigation], [role=banner], [role=contentinfo], [role=complementary]"
# the navigation bars and tables of contents documentation generators write without a nav element or
# role (DocBook, Texinfo 7, classic Sphinx): dropped on every page (benchmarks/crawl_extract.py)
_GENERATOR_NAV = "table.nav, div.navheader, div.navfooter, div.nav-panel, div.toc, div.related, div.sphinxsidebar"
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCKS = {
    "html", "body", "div", "p", "section", "article", "main", "header", "footer", "aside", "nav",
    "blockquote", "ul", "ol", "li", "dl", "dt", "dd", "figure", "figcaption", "form", "fieldset",
    "legend", "address", "details", "summary", "center", "hr", "tr", "td", "th", "thead", "tbody",
    "tfoot", "caption", "option", "label", "menu", "hgroup", "frameset", "noframes", "dialog",
}
_LISTS = ("ul", "ol", "menu", "dir")
_SKIP = {"-comment", "head", "title", "meta", "link", "base", "img", "input", "button", "area"}
_BR = "\ue000"  # stands for <br> while whitespace is collapsed
_WHITESPACE = re.compile(r"[ \t\n\r\f\v\u00a0\u200b]+")
_XHTML_EMPTY = re.compile(
    r"<(?!(?:area|base|br|col|embed|hr|img|input|link|meta|param|source|track|wbr)\b)"
    r"([A-Za-z][\w:-]*)(\s[^<>]*?)?/>")


def inline_text(pieces: list[str]) -> str:
    """Collapse whitespace like a browser does, keeping <br> line breaks."""
    text = _WHITESPACE.sub(" ", "".join(pieces))
    return "\n".join(part.strip() for part in text.split(_BR)).strip()


class _Walker:
    """One pass over the DOM, emitting blocks into a TextBuilder."""

    def __init__(self, builder: TextBuilder):
        self.builder = builder
        self.pending: list[str] = []
        self.anchors: list[list] = []  # [offset of a heading in the text, its anchor id]
        self.lists: list[list] = []  # the open lists, innermost last: [ordered style ("" for <ul>), next number]
        self.marker = ""  # the open list item's marker, until its first paragraph takes it

    def flush(self) -> None:
        if self.pending:
            text, indent = inline_text(self.pending), ""
            if text and self.marker:
                marker = self.marker.lstrip(" ")
                text, indent, self.marker = marker + text, self.marker[: len(self.marker) - len(marker)], ""
            self.builder.add(text, PARAGRAPH, indent=indent)
            self.pending = []

    def visit(self, node: LexborNode, depth: int = 0) -> None:
        for child in node.iter(include_text=True):
            tag = child.tag
            if tag == "-text":
                self.pending.append(child.text_content or "")
            elif tag in _SKIP:
                continue
            elif tag == "br":
                self.pending.append(_BR)
            elif tag in _HEADINGS:
                self.flush()
                block = self.builder.add(collapse_spaces(_WHITESPACE.sub(" ", child.text(deep=True))),
                                         HEADING, level=_HEADINGS[tag])
                anchor = heading_anchor(child)
                if block is not None and anchor:
                    self.anchors.append([block.start, anchor])
            elif tag in ("pre", "listing", "xmp"):
                self.flush()
                self.marker = ""  # an item that opens with code: the marker would land on a later paragraph
                self.builder.add(child.text(deep=True), CODE)
            elif tag == "table" and depth < 200:
                self.flush()
                self.marker = ""
                self.table(child, depth)
            elif depth >= 200:  # pathological nesting: take the text as it is
                self.pending.append(" " + (child.text(deep=True) or "") + " ")
            elif tag in _LISTS or tag == "li":
                self.flush()
                self.list_block(child, depth)
                self.flush()
            elif tag in _BLOCKS:
                self.flush()
                self.visit(child, depth + 1)
                self.flush()
            else:
                self.visit(child, depth + 1)

    def list_block(self, node: LexborNode, depth: int) -> None:
        """A list (its items numbered from its `start`) or one of its items (its marker on its first paragraph)."""
        if node.tag != "li":
            style = (node.attributes.get("type") or "1") if node.tag == "ol" else ""
            self.lists.append([style, _start(node)])
            self.visit(node, depth + 1)
            self.lists.pop()
            return
        style, number = self.lists[-1] if self.lists else ("", 1)
        if self.lists:
            self.lists[-1][1] += 1
        self.marker = "  " * max(len(self.lists) - 1, 0) + _marker(style, number)
        self.visit(node, depth + 1)
        self.flush()
        self.marker = ""

    def table(self, table: LexborNode, depth: int) -> None:
        """A data table becomes one TABLE block (a row per line); a layout table, its cells' blocks."""
        if is_layout_table(table):
            self.visit(table, depth + 1)
            return
        rows, heads = list[str](), 0
        for row in table.css("tr"):
            cells = [c for c in row.iter() if c.tag in ("td", "th")]
            texts = [collapse_spaces(_WHITESPACE.sub(" ", c.text(deep=True, separator=" "))) for c in cells]
            while texts and not texts[-1]:
                texts.pop()
            if texts:
                if heads == len(rows) and _is_header_row(row, cells):
                    heads += 1
                rows.append(" | ".join(texts))
        caption = table.css_first("caption")
        if caption is not None:
            self.builder.add(collapse_spaces(caption.text(deep=True)), PARAGRAPH)
        self.builder.add_table(rows, header_rows=min(max(heads, 1), 3))


def _start(ol: LexborNode) -> int:
    """The number of an ordered list's first item (its `start`, else 1)."""
    start = (ol.attributes.get("start") or "").strip() if ol.tag == "ol" else ""
    return int(start) if start.isdigit() and int(start) < 10_000 else 1


def _marker(style: str, number: int) -> str:
    """A list item's marker: "- " for an unordered list, "3. " (or "c) " / "C) " for type a / A: "c." would end a
    sentence) for an ordered one."""
    if not style:
        return "- "
    if style in ("a", "A") and number <= 26:
        return chr(ord(style) + number - 1) + ") "
    return f"{number}. "


def heading_anchor(heading: LexborNode) -> str:
    """The id a link to this heading's section ends with: the heading's own, an anchor inside it
    (`<a id>`, `<a name>`, Sphinx's `<a class=headerlink href=#…>`), or that of the section it opens."""
    own = heading.attributes.get("id")
    if own:
        return own
    for a in heading.css("a[id], a[name], a[href^='#']"):
        name = a.attributes.get("id") or a.attributes.get("name") or (a.attributes.get("href") or "")[1:]
        if name:
            return name
    parent = heading.parent
    if parent is not None and parent.tag in ("section", "div", "article") and parent.attributes.get("id"):
        first = next((c for c in parent.iter() if c.tag not in ("-text", "-comment")), None)
        if first is not None and first.mem_id == heading.mem_id:
            return parent.attributes.get("id") or ""
    return ""


def _is_header_row(row: LexborNode, cells: list[LexborNode]) -> bool:
    """A row of <th> cells only, or a row inside <thead>."""
    parent = row.parent
    return all(c.tag == "th" for c in cells) or (parent is not None and parent.tag == "thead")


def is_layout_table(table: LexborNode) -> bool:
    """Tables used for page layout: nested tables, headings or several blocks inside a cell."""
    if table.attributes.get("role") == "presentation":
        return True
    if any(inner.mem_id != table.mem_id for inner in table.css("table")):  # css() matches self too
        return True
    for cell in table.css("td, th"):
        blocks = cell.css("p, div, h1, h2, h3, h4, h5, h6, ul, ol, blockquote, pre")
        if len(blocks) > 1 or any(b.tag in _HEADINGS for b in blocks):
            return True
    return False


def add_html(markup: str, builder: TextBuilder, xhtml: bool = False, anchors: list | None = None) -> str | None:
    """Append the readable text of an HTML page to `builder`; return its title (or None).  `anchors`
    receives [offset, id] of each heading that has an anchor to link to."""
    if xhtml:
        markup = _XHTML_EMPTY.sub(r"<\1\2></\1>", markup)  # <title/> would swallow the page
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(markup)
    title_node = tree.css_first("head title") or tree.css_first("title")
    title = collapse_spaces(_WHITESPACE.sub(" ", title_node.text())) if title_node else ""
    decompose_all(tree.css(_DROP))
    drop_boilerplate(tree)
    root = tree.body or tree.root
    if root is not None:
        walker = _Walker(builder)
        walker.visit(root)
        walker.flush()
        if anchors is not None:
            anchors.extend(walker.anchors)
    if not title:
        h1 = tree.css_first("h1")
        title = collapse_spaces(_WHITESPACE.sub(" ", h1.text(deep=True))) if h1 else ""
    return title[:300] or None


def drop_boilerplate(tree: LexborHTMLParser) -> None:
    """Drop documentation generators' navigation bars; with a main/article present, also navigation,
    headers, footers and asides outside it."""
    decompose_all(tree.css(_GENERATOR_NAV))
    if tree.css_first("main, article, [role=main]") is None:
        return
    nodes = tree.css(", ".join(_BOILERPLATE) + ", " + _BOILERPLATE_ROLES)
    decompose_all(n for n in nodes if n.tag == "nav" or not _inside_content(n))


def decompose_all(nodes) -> None:
    """Remove nodes, skipping those inside another removed node (already freed with it)."""
    nodes = list(nodes)
    ids = {node.mem_id for node in nodes}
    outermost = [node for node in nodes if not _has_ancestor_in(node, ids)]
    for node in outermost:
        node.decompose()


def _has_ancestor_in(node: LexborNode, ids: set[int]) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.mem_id in ids:
            return True
        parent = parent.parent
    return False


def _inside_content(node: LexborNode) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.tag in ("main", "article") or parent.attributes.get("role") == "main":
            return True
        parent = parent.parent
    return False


def decode_html(data: bytes) -> tuple[str, str]:
    """HTML bytes to str: BOM, then the declared charset, then UTF-8, then detection."""
    return _encoding.decode(data, declared=_encoding.declared_html_charset(data))


class HtmlReader(Reader):
    """HTML/XHTML pages: HEADING blocks for h1-h6, TABLE blocks for data tables."""

    type = "html"
    extensions = (".html", ".htm", ".xhtml", ".xht", ".shtml", ".mhtml")
    priority = 1  # a weak, markup-based sniff: decides only for unknown extensions

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        start = head[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
        return start.startswith((b"<!doctype html", b"<html")) or (
            start.startswith(b"<?xml") and b"<html" in head[:2048].lower())

    def read(self, path: Path, data: bytes) -> Document:
        text, encoding = decode_html(data)
        builder = TextBuilder()
        xhtml = path.suffix.lower() in (".xhtml", ".xht") or text.lstrip().startswith("<?xml")
        anchors: list[list] = []
        title = add_html(text, builder, xhtml=xhtml, anchors=anchors)
        metadata: dict = {"encoding": encoding, **({"anchors": anchors} if anchors else {})}
        return builder.document(path, self.type, title=title, metadata=metadata)
