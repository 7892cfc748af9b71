"""The original file of an indexed document: a file on disk (a source or an upload) or a member of
an archive (`/d/a.zip!/x/y.pdf`), whose bytes are read from the archive within the ingest limits."""

from __future__ import annotations

import mimetypes
import os
from dataclasses import dataclass
from pathlib import Path

from docqa.errors import FileTooLargeError, UnreadableFileError
from docqa.ingest.readers import bounds
from docqa.ingest.readers.archive import SEPARATOR, Archive, archive_of


@dataclass(slots=True)
class Original:
    """Where a document's bytes are: `path` for a file on disk, else `data` (an archive member)."""

    name: str  # the file name a download gets
    media_type: str
    size: int
    path: Path | None = None
    data: bytes | None = None

    def read(self) -> bytes:
        """The bytes (read from disk for a file)."""
        if self.data is not None:
            return self.data
        assert self.path is not None
        try:
            return self.path.read_bytes()
        except OSError as exc:
            raise _unreadable(str(self.path), exc) from None


def original_of(path: str, max_bytes: int, size: int | None = None) -> Original:
    """The original of the document indexed at `path`; UnreadableFileError when it is gone from disk
    or its size is no longer the indexed `size` (what is served must be what the citations point
    into), FileTooLargeError when it (or the archive holding it) is over `max_bytes`."""
    archive = archive_of(path)
    original = _on_disk(path) if archive is None else _member(archive, path, max_bytes)
    if size is not None and original.size != size:
        raise UnreadableFileError(path, "the file changed since it was indexed: add it again to update the index")
    return original


def _on_disk(path: str) -> Original:
    try:
        size = os.stat(path).st_size
    except OSError as exc:
        raise _unreadable(path, exc) from None
    name = Path(path).name
    return Original(name, _media_type(name), size, path=Path(path))


def _member(archive: str, path: str, max_bytes: int) -> Original:
    holder = _on_disk(archive)
    if holder.size > max_bytes:
        raise FileTooLargeError(archive, f"larger than ingest.max_file_mb ({max_bytes / 1024 / 1024:g} MB)")
    data = holder.read()
    with bounds.limit(max_bytes):
        for member in Archive(archive, data).members():
            if member.path == path and member.data is not None:
                name = path.rsplit(SEPARATOR, 1)[-1].rsplit("/", 1)[-1]
                return Original(name, _media_type(name), len(member.data), data=member.data)
    raise UnreadableFileError(path, f"{archive} no longer holds this file: add the archive again to update the index")


def _media_type(name: str) -> str:
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


def _unreadable(path: str, exc: OSError) -> UnreadableFileError:
    if isinstance(exc, FileNotFoundError):
        return UnreadableFileError(path, "the file is no longer on disk (moved or deleted since it was indexed): "
                                         "add it again, or remove it from the index")
    return UnreadableFileError(path, f"cannot read the file: {exc.strerror or exc}")
