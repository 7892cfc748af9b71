"""The `Reader` interface and the registry that picks one by sniffing content and extension.

A reader turns the bytes of one file into a `Document`: the text to index plus its structure
as `Block` spans (headings, pages, rows, slides).  Readers raise `IngestError` subclasses that
name the file and the cause; they never return an empty document.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar

from docqa.types import Document


class Reader(ABC):
    """Reads one format family.

    Subclasses set `type` (the format family recorded on the document), `extensions` (lower
    case, with the dot) and, when the format has a signature, override `sniff`.
    """

    type: ClassVar[str]
    extensions: ClassVar[tuple[str, ...]] = ()
    # Higher wins when several readers sniff the same bytes positive.
    priority: ClassVar[int] = 0

    @abstractmethod
    def read(self, path: Path, data: bytes) -> Document:
        """Parse `data` (the whole file) into a Document; raise IngestError on failure."""

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        """True when the first bytes of the file identify this reader's format."""
        return False
