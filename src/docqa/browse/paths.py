"""How a document is named in a listing: folders relative to the documents' common root, a title, a one-line summary."""

from __future__ import annotations

import os

from docqa.types import DocumentRecord

SUMMARY_CHARS = 160


def relative(path: str, root: str) -> str:
    """`path` below `root` (as the listing shows it); the path itself when it is elsewhere."""
    return path[len(root):] if root and path.startswith(root) else path


def folders(rel_path: str) -> list[str]:
    """The folder names of a relative path, outermost first."""
    return [p for p in rel_path.replace("\\", "/").split("/")[:-1] if p]


def title_of(record: DocumentRecord) -> str:
    """The document's title on one line, or its file name."""
    return " ".join(record.title.split()) or os.path.basename(record.path)


def link_text(text: str) -> str:
    """Text safe inside a Markdown link's brackets."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def one_line(text: str, limit: int = SUMMARY_CHARS) -> str:
    """`text` on one line, cut at a word boundary near `limit` characters (with …)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", limit // 2, limit)
    return text[: cut if cut > 0 else limit].rstrip(" ,;:") + "…"


def count(n: int, noun: str) -> str:
    """`1 document`, `1,234 documents`."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")
