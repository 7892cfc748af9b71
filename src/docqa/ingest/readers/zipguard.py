"""The zip guard: bounded work for every zip-based format (OOXML, OpenDocument, EPUB, archives).

A zip's central directory declares each member's unpacked size.  `check_zip` reads only that
directory and refuses a file whose members are too many, too big, too big together, or expand
too much for their packed size (a "zip bomb"), before a single member is inflated.

Declared sizes can lie, but the standard `zipfile` module (which python-docx, python-pptx,
openpyxl, odfpy and EbookLib all use) never inflates a member past its declared size: it stops
there and fails the CRC check.  So a member that lies is cut off at a size already checked here.
`read_member` is the bounded read for code that inflates members itself (the archive reader).

The limits are settings (`ingest.max_unpacked_mb`, ...): the pipeline applies them around each
parse (`with applied(limits):`), and the readers call `check_zip(data, path)`, which need not
know the settings (nested readers, an e-mail's attachment, get the same limits).
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from docqa.errors import CorruptFileError, ZipBombError

MB = 1024 * 1024
# Members smaller than this may expand as much as they like: a short run of spaces or a blank
# XML part packs 1000-fold, and all of them together are still bounded by the total.
_RATIO_FLOOR = 1 * MB
_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class ZipLimits:
    """How much a zip-based file may unpack to (the `ingest.*` settings named in each message)."""

    max_unpacked: int = 200 * MB  # all members together, declared
    max_member: int = 100 * MB  # one member, declared (and enforced while reading)
    max_members: int = 10_000
    max_ratio: float = 100.0  # unpacked / packed, for members over _RATIO_FLOOR


_limits = ZipLimits()


@contextmanager
def applied(limits: ZipLimits) -> Iterator[None]:
    """Apply `limits` to the zip checks made inside the block (the ingest pipeline's, per file)."""
    global _limits
    before, _limits = _limits, limits
    try:
        yield
    finally:
        _limits = before


def current_limits() -> ZipLimits:
    return _limits


def check_zip(source: bytes | str | os.PathLike, path: str | os.PathLike | None = None,
              limits: ZipLimits | None = None) -> None:
    """Refuse a zip whose central directory promises too much; reads nothing but the directory.

    `source` is the file's bytes or its path; `path` names it in the message (default: `source`).
    Raises ZipBombError (naming the file, the member, the limit and the setting to raise) or
    CorruptFileError when there is no readable central directory.
    """
    name = str(path if path is not None else source if not isinstance(source, bytes) else "<bytes>")
    try:
        with zipfile.ZipFile(io.BytesIO(source) if isinstance(source, bytes) else source) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise CorruptFileError(name, f"not a readable zip file: {exc}") from exc
    check_members(members, name, limits or _limits)


def check_members(members: list[zipfile.ZipInfo], name: str, limits: ZipLimits) -> None:
    """The checks of `check_zip` on an already-opened central directory."""
    if len(members) > limits.max_members:
        raise ZipBombError(name, f"{len(members):,} members, over the limit of {limits.max_members:,}"
                                 + _hint("ingest.max_members"))
    total = 0
    for info in members:
        _check_member(info, name, limits)
        total += info.file_size
        if total > limits.max_unpacked:
            raise ZipBombError(name, f"unpacks to over {_mb(limits.max_unpacked)} (stopped counting at member "
                                     f"{info.filename!r})" + _hint("ingest.max_unpacked_mb"))


def _check_member(info: zipfile.ZipInfo, name: str, limits: ZipLimits) -> None:
    if info.file_size > limits.max_member:
        raise ZipBombError(name, f"member {info.filename!r} unpacks to {_mb(info.file_size)}, over the "
                                 f"{_mb(limits.max_member)} limit" + _hint("ingest.max_member_mb"))
    ratio = info.file_size / max(info.compress_size, 1)
    if info.file_size > _RATIO_FLOOR and ratio > limits.max_ratio:
        raise ZipBombError(name, f"member {info.filename!r} expands {ratio:,.0f}-fold ({_mb(info.compress_size)} "
                                 f"to {_mb(info.file_size)}), over the limit of {limits.max_ratio:g}"
                                 + _hint("ingest.max_ratio"))


def read_member(archive: zipfile.ZipFile, member: str | zipfile.ZipInfo, path: str | os.PathLike,
                limits: ZipLimits | None = None) -> bytes:
    """A member's bytes, inflated chunk by chunk and stopped as soon as it passes the member limit."""
    limits = limits or _limits
    info = member if isinstance(member, zipfile.ZipInfo) else archive.getinfo(member)
    _check_member(info, str(path), limits)
    out = bytearray()
    with archive.open(info) as stream:
        while chunk := stream.read(_CHUNK):
            out += chunk
            if len(out) > limits.max_member:
                raise ZipBombError(str(path), f"member {info.filename!r} unpacks to over "
                                              f"{_mb(limits.max_member)}" + _hint("ingest.max_member_mb"))
    return bytes(out)


def _hint(setting: str) -> str:
    return f" ({setting}; raise it if the file is genuine)"


def _mb(size: int | float) -> str:
    return f"{size / MB:,.1f} MB" if size < 10 * MB else f"{size / MB:,.0f} MB"


__all__ = ["ZipLimits", "applied", "check_members", "check_zip", "current_limits", "read_member"]
