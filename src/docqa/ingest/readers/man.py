"""ManReader: roff man pages (`ls.1`, `tar.1.gz`, `foo.3pm`, `bar.man`) as text with sections.

A file is a man page by its name AND its content: a manual-section suffix (`.1`-`.9`, optionally
followed by letters, or `.man`) and a `.TH` (man) or `.Dt` (mdoc) line before any text.  A `notes.1`
that is not roff stays plain text.  Compressed pages reach this reader through CompressedReader
under their inner name.  The text is the converted page (roff.py): `.SH`/`.SS` are HEADING blocks
(levels 1 and 2), so chunks and citations carry § NAME, § OPTIONS; line numbers are lines of
that text.  `.TH` gives the title, `name(section)`.
"""

from __future__ import annotations

import re
from pathlib import Path

from docqa.ingest.readers import roff
from docqa.ingest.readers.base import Reader, TextBuilder
from docqa.ingest.readers.text import decode_source
from docqa.types import Document

_MAN_NAME = re.compile(r"\.(?:[1-9][a-z0-9]{0,8}|[ln]|man)$", re.IGNORECASE)


def is_man_name(path: Path) -> bool:
    """True for a manual-page file name: `ls.1`, `SSL_new.3ssl`, `perl.1p`, `tool.man`."""
    return bool(path.stem) and _MAN_NAME.search(path.name) is not None


class ManReader(Reader):
    """A roff man page (man or mdoc macros) converted to text, one HEADING per section."""

    type = "man"
    priority = 1  # a weak, text-based sniff: decides only for names no other reader claims

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        if not is_man_name(path):
            return False
        return roff.is_roff(head.decode("utf-8", errors="replace").replace("\r\n", "\n"))

    def read(self, path: Path, data: bytes) -> Document:
        source, encoding = decode_source(path, data)
        page = roff.convert(source)
        builder = TextBuilder()
        for kind, level, text in page.parts:
            if level:
                builder.add(text, kind, level=level)
            else:
                builder.add(text, kind)
        metadata = {"encoding": encoding}
        if page.section:
            metadata["man_section"] = page.section
        return builder.document(path, self.type, title=page.title, metadata=metadata)
