"""Bounded decompression: the limits every compressed stream and archive is read within.

Nothing is extracted to disk and nothing is decompressed past its allowance: a stream yields at
most `ingest.max_file_mb` of bytes (`limit` sets it per file; a decompressed file is a file), and
never more than `MAX_RATIO` times its compressed size once past `RATIO_FLOOR` (a bomb is refused
after a few MB, not after gigabytes).  An archive is checked before any member is read: member
count, the sizes it declares, and each member's declared ratio; its members then share one
budget of decompressed bytes.  The zip guard of the bounded-work item may replace
`check_declared` and `read_bounded`; the archive and compressed readers call only these.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from docqa.errors import FileTooLargeError

MAX_RATIO = 100  # decompressed bytes per compressed byte; prose compresses 3-10:1
RATIO_FLOOR = 8 * 1024 * 1024  # outputs this small are never refused for their ratio
MAX_MEMBERS = 10_000  # files in one archive (nested ones included)
DEFAULT_MAX_BYTES = 200 * 1024 * 1024  # ingest.max_file_mb's default
_PIECE = 1024 * 1024

_max_bytes: ContextVar[int] = ContextVar("docqa_max_decompressed", default=DEFAULT_MAX_BYTES)


@contextmanager
def limit(max_bytes: int) -> Iterator[None]:
    """Within the block, no stream or archive yields more than `max_bytes` decompressed bytes."""
    token = _max_bytes.set(max_bytes)
    try:
        yield
    finally:
        _max_bytes.reset(token)


def max_bytes() -> int:
    """The decompressed-bytes limit in force (ingest.max_file_mb)."""
    return _max_bytes.get()


def allowance(compressed: int) -> int:
    """How many decompressed bytes a stream of `compressed` bytes may yield."""
    return min(max_bytes(), max(compressed * MAX_RATIO, RATIO_FLOOR))


def read_bounded(read: Callable[[int], bytes], path: str, compressed: int, cap: int | None = None) -> bytes:
    """Everything a decompressing `read(n)` yields, read piece by piece; FileTooLargeError as soon as
    it passes its allowance (or `cap`, when smaller)."""
    cap = allowance(compressed) if cap is None else min(cap, allowance(compressed))
    out = bytearray()
    while piece := read(min(_PIECE, cap + 1 - len(out))):
        out += piece
        if len(out) > cap:
            raise _too_large(path, cap, compressed)
    return bytes(out)


def check_declared(path: str, entries: list[tuple[int, int]]) -> None:
    """Refuse an archive before reading it: `entries` are its files' (declared size, compressed size)."""
    if len(entries) > MAX_MEMBERS:
        raise FileTooLargeError(path, f"{len(entries):,} files in the archive: over the limit of {MAX_MEMBERS:,}")
    total = sum(size for size, _ in entries)
    if total > max_bytes():
        raise FileTooLargeError(path, f"its files expand to {total / 1e6:,.1f} MB: over the "
                                      f"{max_bytes() / 1e6:,.0f} MB limit (ingest.max_file_mb)")
    for size, compressed in entries:
        if size > max(compressed * MAX_RATIO, RATIO_FLOOR):
            raise _too_large(path, size, compressed)


@dataclass(slots=True)
class Budget:
    """What the members of one archive (and of the archives inside it) may still use."""

    path: str
    bytes_left: int
    members_left: int = MAX_MEMBERS

    def take(self, size: int) -> None:
        """Account for one member of `size` decompressed bytes; FileTooLargeError past the budget."""
        self.members_left -= 1
        self.bytes_left -= size
        if self.members_left < 0:
            raise FileTooLargeError(self.path, f"over {MAX_MEMBERS:,} files in the archive (nested archives included)")
        if self.bytes_left < 0:
            raise FileTooLargeError(self.path, f"its files expand past the {max_bytes() / 1e6:,.0f} MB limit "
                                               "(ingest.max_file_mb)")


def _too_large(path: str, size: int, compressed: int) -> FileTooLargeError:
    if size >= max_bytes():
        return FileTooLargeError(path, f"holds more than {max_bytes() / 1e6:,.1f} MB once decompressed: over the limit "
                                       "(ingest.max_file_mb)")
    return FileTooLargeError(path, f"expands past {size / 1e6:,.1f} MB from {compressed / 1e3:,.1f} KB compressed: "
                                   f"refused as a possible decompression bomb (over {MAX_RATIO}:1)")
