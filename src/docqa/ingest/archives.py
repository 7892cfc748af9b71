"""Archives in the pipeline: one file, many documents.

Each member of an archive is a document of its own at `<archive>!/<member>` (readers/archive.py
names and bounds them), parsed as a file would be; it shares the archive's mtime.  The archive's
own document, the list of its members, is written after them: the index keys files by path, so
the archive's size, mtime and hash decide whether it is read again, and a crash midway leaves its
old hash, so the next run reads it again.  Each document still changes in one transaction.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from docqa.errors import IngestError, UnsupportedFormatError
from docqa.ingest.readers import bounds
from docqa.ingest.readers.archive import Archive, Member, archive_of

if TYPE_CHECKING:
    from docqa.ingest.pipeline import IngestOptions, Parsed
    from docqa.store import FileState

LIST_SKIPPED = 10  # skipped members are listed one by one up to this many, then counted
_SKIPPED_KINDS = ("unsupported", "empty", "no-text")  # no reader takes it (an image without OCR): skipped

ParseBytes = Callable[..., None]  # pipeline._parse_bytes(result, data, opts, doc=None)


def parse_archive(result: Parsed, data: bytes, opts: IngestOptions, parse_bytes: ParseBytes) -> None:
    """Parse each member into `result.members`, then the archive's listing into `result` (in a worker)."""
    result.members = []
    with bounds.limit(opts.max_bytes):
        archive = Archive(result.path, data)
        for member in archive.members():
            result.members.append(_parse_member(type(result), member, result.mtime_ns, opts, parse_bytes))
        doc = archive.document()
    parse_bytes(result, b"", opts, doc)


def _parse_member(make: type[Parsed], member: Member, mtime_ns: int, opts: IngestOptions,
                  parse_bytes: ParseBytes) -> Parsed:
    parsed = make(path=member.path, size=member.size, mtime_ns=mtime_ns)
    try:
        if member.data is None:
            raise member.error or UnsupportedFormatError(member.path, member.skipped)
        parsed.content_hash = hashlib.blake2b(member.data, digest_size=16).hexdigest()  # as a file's
        parse_bytes(parsed, member.data, opts)
    except IngestError as exc:
        parsed.error = exc
    except Exception as exc:  # a reader bug must not kill the archive; report it with the member
        parsed.error = IngestError(member.path, f"unexpected {type(exc).__name__} while parsing: {exc}")
    return parsed


def sort_members(archive: str, members: list[Parsed], states: dict[str, FileState]
                 ) -> tuple[list[Parsed], list[Parsed], list[str]]:
    """(members to write, members skipped, indexed paths of the archive no longer in it).  A member
    whose content the index holds is marked unchanged (only touched); a skipped one counts as gone."""
    keep, skipped = [], []
    for member in members:
        if member.error is not None and member.error.kind in _SKIPPED_KINDS:
            skipped.append(member)
            continue
        old = states.get(member.path)
        if member.error is None and old and old.status == "ok" and old.content_hash == member.content_hash:
            member.unchanged, member.chunks = True, []
        keep.append(member)
    present = {m.path for m in keep}
    gone = [p for p in states if archive_of(p) == archive and p not in present]
    return keep, skipped, gone


def skipped_lines(archive: str, skipped: list[Parsed]) -> list[tuple[str, str]]:
    """Report lines for skipped members: one each when few, else one line that counts them."""
    if len(skipped) <= LIST_SKIPPED:
        return [(m.path, m.error.reason) for m in skipped]
    kinds = Counter(Path(m.path).suffix.lower() or "no extension" for m in skipped)
    top = ", ".join(f"{n:,} {ext}" for ext, n in kinds.most_common(5))
    return [(archive, f"{len(skipped):,} files in the archive skipped: no reader takes them ({top})")]
