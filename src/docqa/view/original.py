"""The original file of an indexed document: a file on disk (a source or an upload) or a member of
an archive (`/d/a.zip!/x/y.pdf`), whose bytes are read from the archive within the ingest limits.

Only the indexed file is served: its bytes are read once, through a descriptor opened without
following a symlink at the last step, from a real path under the folder it was added from, and
their content hash must be the indexed one.  Anything else at that path (an edit of the same size,
a symlink to a file outside the folders) is refused with the reason (UnreadableFileError: HTTP 422)."""

from __future__ import annotations

import hashlib
import mimetypes
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from docqa.errors import FileTooLargeError, UnreadableFileError
from docqa.ingest.readers import bounds
from docqa.ingest.readers.archive import SEPARATOR, Archive, archive_of
from docqa.ingest.scan import real_paths


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


def original_of(path: str, max_bytes: int, size: int | None = None, content_hash: str | None = None,
                root: str | None = None) -> Original:
    """The original of the document indexed at `path`, as bytes read now.  UnreadableFileError when
    it is gone from disk, is not the indexed file any more (its size or its content hash differs from
    `size` / `content_hash`: what is served must be what the citations point into), is a symlink, or
    lies (after resolving links) outside `root`, the folder it was added from; FileTooLargeError
    when it (or the archive holding it) is over `max_bytes`."""
    archive = archive_of(path)
    if archive is None:
        original = _on_disk(path, max_bytes, root)
    else:
        original = _member(archive, path, max_bytes, root)
    changed = "the file changed since it was indexed: add it again to update the index"
    if size is not None and original.size != size:
        raise UnreadableFileError(path, changed)
    if content_hash and _hash(original.read()) != content_hash:
        raise UnreadableFileError(path, f"{changed} (same size, other content)")
    return original


def _on_disk(path: str, max_bytes: int, root: str | None) -> Original:
    name, data = Path(path).name, read_indexed(path, max_bytes, root)
    return Original(name, _media_type(name), len(data), data=data)


def read_indexed(path: str, max_bytes: int, root: str | None = None) -> bytes:
    """The bytes of the regular file at the stored `path`, opened without following a symlink at its
    last step and, when `root` is given, only when its real path lies under `root`'s real path."""
    disk = real_paths(path)[-1]
    if root is not None and not _under(os.path.realpath(disk), os.path.realpath(root)):
        raise UnreadableFileError(path, "the file now resolves (through a symlinked folder) to a place outside the "
                                        "folder it was added from: it is not served")
    try:
        fd = os.open(disk, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if os.path.islink(disk):
            raise UnreadableFileError(path, "the file is now a symlink: only the indexed regular file is served "
                                            "(add it again to index what the link points to)") from None
        raise _unreadable(path, exc) from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise UnreadableFileError(path, "the path no longer holds a regular file: it is not served")
        if st.st_size > max_bytes:
            raise FileTooLargeError(path, f"larger than ingest.max_file_mb ({max_bytes / 1024 / 1024:g} MB)")
        try:
            return f.read(max_bytes + 1)
        except OSError as exc:
            raise _unreadable(path, exc) from None


def _under(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def _member(archive: str, path: str, max_bytes: int, root: str | None) -> Original:
    data = read_indexed(archive, max_bytes, root)
    with bounds.limit(max_bytes):
        for member in Archive(archive, data).members():
            if member.path == path and member.data is not None:
                name = path.rsplit(SEPARATOR, 1)[-1].rsplit("/", 1)[-1]
                return Original(name, _media_type(name), len(member.data), data=member.data)
    raise UnreadableFileError(path, f"{archive} no longer holds this file: add the archive again to update the index")


def _hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()  # as ingest hashes a file (docqa.ingest.pipeline)


def _media_type(name: str) -> str:
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


def _unreadable(path: str, exc: OSError) -> UnreadableFileError:
    if isinstance(exc, FileNotFoundError):
        return UnreadableFileError(path, "the file is no longer on disk (moved or deleted since it was indexed): "
                                         "add it again, or remove it from the index")
    return UnreadableFileError(path, f"cannot read the file: {exc.strerror or exc}")
