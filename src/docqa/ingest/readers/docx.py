"""Word documents (.docx): the body in document order, paragraphs and tables interleaved.

The body XML is walked directly with lxml (python-docx opens the package and resolves styles):
going through python-docx's per-paragraph objects is several times slower on long documents.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from docqa.errors import CorruptFileError
from docqa.ingest.readers.base import Reader, TextBuilder, collapse_spaces, sane_title
from docqa.ingest.readers.zipguard import check_zip
from docqa.types import HEADING, PARAGRAPH, TABLE, Document

if TYPE_CHECKING:  # python-docx and lxml are imported when a .docx is read
    import docx
    from lxml import etree

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
W_P, W_R, W_T, W_TBL, W_TR, W_TC = (W + t for t in ("p", "r", "t", "tbl", "tr", "tc"))
W_VAL = W + "val"
_BREAKS = {W + "tab": "\t", W + "br": "\n", W + "cr": "\n", W + "noBreakHyphen": "-"}
_WRAPPERS = {W + "sdt", W + "sdtContent", W + "customXml", W + "ins", W + "smartTag"}
_HEADING_NAME = re.compile(r"^heading\s*(\d)$", re.I)


def run_text(paragraph: etree._Element) -> str:
    """The visible text of a w:p: its runs' w:t, tabs and breaks (deleted text excluded)."""
    parts = []
    for run in paragraph.iter(W_R):
        for child in run:
            if child.tag == W_T:
                parts.append(child.text or "")
            elif child.tag in _BREAKS:
                parts.append(_BREAKS[child.tag])
    return "".join(parts)


def children(element: etree._Element, tag: str):
    """Direct children with `tag`, looking through content-control and similar wrappers."""
    for child in element:
        if child.tag == tag:
            yield child
        elif child.tag in _WRAPPERS:
            yield from children(child, tag)


def table_lines(table: etree._Element) -> list[str]:
    """One line per row, cells joined by " | "; merged continuations empty; nested tables after their row."""
    lines = []
    for row in children(table, W_TR):
        cells, nested = [], []
        for cell in children(row, W_TC):
            merge = cell.find(f"{W}tcPr/{W}vMerge")
            hmerge = cell.find(f"{W}tcPr/{W}hMerge")
            if (merge is not None and merge.get(W_VAL, "continue") == "continue") or (
                    hmerge is not None and hmerge.get(W_VAL, "continue") == "continue"):
                cells.append("")
                continue
            texts = [collapse_spaces(" ".join(run_text(p).split())) for p in children(cell, W_P)]
            cells.append(" ".join(t for t in texts if t))
            for inner in children(cell, W_TBL):
                nested.extend(table_lines(inner))
        while cells and not cells[-1]:
            cells.pop()
        if cells:
            lines.append(" | ".join(cells))
        lines.extend(nested)
    return lines


class DocxReader(Reader):
    """Word .docx/.docm: HEADING blocks from heading styles and outline levels, TABLE blocks."""

    type = "docx"
    extensions = (".docx", ".docm", ".dotx", ".dotm")
    priority = 10

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        return head.startswith(b"PK\x03\x04") and b"word/" in head

    def read(self, path: Path, data: bytes) -> Document:
        import docx
        from docx.opc.exceptions import OpcError
        from lxml import etree

        try:
            check_zip(data, path)
            document = docx.Document(io.BytesIO(data))
            levels = style_levels(document.styles.element)
            builder = TextBuilder()
            walk(document.element.body, builder, levels)
            extras = header_footer_texts(document)
            props = document.core_properties
        except (OpcError, zipfile.BadZipFile, KeyError, ValueError, etree.XMLSyntaxError) as exc:
            raise CorruptFileError(str(path), f"could not parse DOCX: {_short(exc)}") from exc
        for text in extras:
            builder.add(text, PARAGRAPH)
        doc = builder.document(path, self.type)
        doc.title = sane_title(props.title) or _first_heading(doc)
        doc.metadata = {k: v for k, v in {
            "author": (props.author or "").strip(),
            "tables": sum(b.kind == TABLE for b in doc.blocks),
            "headings": sum(b.kind == HEADING for b in doc.blocks),
        }.items() if v}
        return doc


def walk(container: etree._Element, builder: TextBuilder, levels: dict[str, int]) -> None:
    """Add the container's paragraphs and tables in document order."""
    for child in container:
        if child.tag == W_P:
            level = paragraph_level(child, levels)
            builder.add(run_text(child), HEADING if level else PARAGRAPH, level=level)
        elif child.tag == W_TBL:
            builder.add_table(table_lines(child))
        elif child.tag in _WRAPPERS:
            walk(child, builder, levels)


def paragraph_level(paragraph: etree._Element, levels: dict[str, int]) -> int:
    """Heading level of a w:p from its style or a direct outline level; 0 for body text."""
    ppr = paragraph.find(W + "pPr")
    if ppr is None:
        return 0
    outline = ppr.find(W + "outlineLvl")
    if outline is not None and (value := outline.get(W_VAL, "9")).isdigit() and int(value) < 9:
        return int(value) + 1
    style = ppr.find(W + "pStyle")
    return levels.get(style.get(W_VAL, ""), 0) if style is not None else 0


def style_levels(styles: etree._Element) -> dict[str, int]:
    """styleId -> heading level for "Title", "Heading N" and outline-level styles (inherited)."""
    own: dict[str, int] = {}
    based: dict[str, str] = {}
    for style in styles.iterfind(W + "style"):
        sid = style.get(W + "styleId", "")
        name = style.find(W + "name")
        name = name.get(W_VAL, "") if name is not None else ""
        outline = style.find(f"{W}pPr/{W}outlineLvl")
        if match := _HEADING_NAME.match(name):
            own[sid] = int(match.group(1))
        elif name.lower() == "title":
            own[sid] = 1
        elif outline is not None and outline.get(W_VAL, "9").isdigit() and int(outline.get(W_VAL)) < 9:
            own[sid] = int(outline.get(W_VAL)) + 1
        if (parent := style.find(W + "basedOn")) is not None:
            based[sid] = parent.get(W_VAL, "")
    levels = {}
    for sid in set(own) | set(based):
        seen, current = set(), sid
        while current and current not in own and current not in seen:
            seen.add(current)
            current = based.get(current, "")
        if current in own:
            levels[sid] = own[current]
    return levels


def header_footer_texts(document: docx.document.Document) -> list[str]:
    """Distinct header and footer paragraphs of all sections, in order."""
    seen: dict[str, None] = {}
    for section in document.sections:
        for part in (section.header, section.first_page_header, section.footer,
                     section.first_page_footer):
            if part.is_linked_to_previous:
                continue
            for paragraph in part._element.iter(W_P):
                text = " ".join(run_text(paragraph).split())
                if text:
                    seen.setdefault(text, None)
    return list(seen)


def _first_heading(doc: Document) -> str | None:
    heads = sorted((b for b in doc.blocks if b.kind == HEADING), key=lambda b: (b.level != 1, b.start))
    return collapse_spaces(doc.text[heads[0].start:heads[0].end])[:300] if heads else None


def _short(exc: Exception) -> str:
    return " ".join(str(exc).split())[:160] or type(exc).__name__
