"""OLE/CFB containers: legacy Office 97-2003 files and password-protected Office documents.

An encrypted .docx/.xlsx/.pptx is not a zip but an OLE container holding an
"EncryptedPackage" stream; a legacy .doc/.xls/.ppt is an OLE container without it.
Neither can be read here, so this reader only says precisely why and what to do.
"""

from __future__ import annotations

import io
from pathlib import Path

from docqa.errors import CorruptFileError, EncryptedFileError, UnsupportedFormatError
from docqa.ingest.readers.base import Reader
from docqa.types import Document

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# stream name in the container -> (what it is, the modern format to save as)
_LEGACY = {
    "worddocument": ("Word 97-2003 .doc", ".docx"),
    "workbook": ("Excel 97-2003 .xls", ".xlsx"),
    "book": ("Excel 5.0 .xls", ".xlsx"),
    "powerpoint document": ("PowerPoint 97-2003 .ppt", ".pptx"),
    "__substg1.0_1000001f": ("Outlook .msg", ".eml"),
}
_BY_EXTENSION = {".doc": "worddocument", ".xls": "workbook", ".ppt": "powerpoint document",
                 ".msg": "__substg1.0_1000001f"}


class OleReader(Reader):
    """Recognises OLE containers and raises EncryptedFileError or UnsupportedFormatError."""

    type = "ole"
    extensions = (".doc", ".xls", ".ppt", ".msg", ".dot", ".xlt", ".pot")
    priority = 10

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        return head.startswith(OLE_MAGIC)

    def read(self, path: Path, data: bytes) -> Document:
        streams = ole_streams(path, data)
        if "encryptedpackage" in streams:
            raise EncryptedFileError(
                str(path), "encrypted workbook/document: remove the password and add it again")
        kind = next((k for k in _LEGACY if k in streams), _BY_EXTENSION.get(path.suffix.lower()))
        if kind is None:
            raise UnsupportedFormatError(
                str(path), "unsupported file type: an OLE container that is not a Word, Excel "
                "or PowerPoint file")
        what, modern = _LEGACY[kind]
        raise UnsupportedFormatError(
            str(path), f"legacy {what} is not supported: save it as {modern} (or PDF) and add it again")


def ole_streams(path: Path, data: bytes) -> set[str]:
    """Lower-case names of the top-level streams of an OLE container."""
    import olefile

    try:
        with olefile.OleFileIO(io.BytesIO(data)) as ole:
            return {"/".join(entry).lower() for entry in ole.listdir(streams=True, storages=False)}
    except (OSError, ValueError, IndexError) as exc:  # olefile raises OSError for bad headers
        raise CorruptFileError(str(path), f"could not parse the OLE container: {exc}") from exc
