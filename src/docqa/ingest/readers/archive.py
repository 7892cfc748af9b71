"""Archives: `.zip` and `.tar` (plain, or `.tar.gz`/`.tgz`, `.tar.bz2`, `.tar.xz`, `.tar.zst`).

The pipeline makes each member a document of its own, at the path `<archive>!/<member name>`
(`/docs/manuals.zip!/install/guide.md`); the archive's own document is the listing of its
members (`ArchiveReader`), so an unchanged archive is skipped by size, mtime and hash like any
file.  Member names are labels, never paths to follow: `..`, `.`, a leading `/` or drive letter
are dropped and nothing is ever written to disk.  An archive inside an archive is opened (its
members are `outer.zip!/inner.tar!/x.md`); one nested deeper is not.  Member count and bytes are
bounded before and while reading (bounds.py).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from docqa.errors import CorruptFileError, EncryptedFileError, FileTooLargeError, IngestError
from docqa.ingest.readers import bounds
from docqa.ingest.readers.base import Reader, TextBuilder
from docqa.ingest.readers.compressed import compression_of, decompress
from docqa.types import Document

if TYPE_CHECKING:  # zipfile and tarfile are imported when an archive is opened
    import tarfile

SEPARATOR = "!/"
MAX_DEPTH = 1  # archives inside archives: opened one level deep
_TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz", ".tbz2", ".tar.xz", ".txz", ".tar.zst", ".tzst")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DRIVE = re.compile(r"[A-Za-z]:")


def is_archive_name(path: str) -> bool:
    """True for a name the pipeline opens as an archive of documents (by its suffix)."""
    name = path.lower()
    return name.endswith(".zip") or name.endswith(_TAR_SUFFIXES)


def archive_of(path: str) -> str | None:
    """The archive file a member's path lies in (`/d/a.zip!/x/y.md` -> `/d/a.zip`); None for a file's path."""
    at = path.find(SEPARATOR)
    while at != -1:
        if is_archive_name(path[:at]):
            return path[:at]
        at = path.find(SEPARATOR, at + 1)
    return None


def safe_name(raw: str) -> str:
    """A member's name as a relative label: no `..`, `.` or empty parts, no leading `/` or drive,
    control characters and undecodable bytes replaced."""
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        raw = raw.encode("utf-8", "surrogateescape" if _escapes_only(raw) else "replace").decode("utf-8", "replace")
    parts = [p for p in _CONTROL.sub("?", raw).replace("\\", "/").split("/") if p not in ("", ".", "..")]
    if parts and _DRIVE.fullmatch(parts[0]):
        parts = parts[1:]
    return "/".join(parts) or "(unnamed)"


def _escapes_only(text: str) -> bool:
    return all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in text)


@dataclass(slots=True)
class Member:
    """One file in an archive: its bytes, or why it was not read."""

    path: str  # <archive>!/<name>
    size: int
    data: bytes | None = None
    skipped: str = ""  # not a document: a link, a duplicate name, an archive nested too deep
    error: IngestError | None = None  # should have been read and could not be (encrypted, damaged)


class Archive:
    """The members of one archive, read one at a time within a budget shared with nested archives."""

    def __init__(self, path: str, data: bytes, depth: int = 0, budget: bounds.Budget | None = None):
        self.path, self.data, self.depth = path, data, depth
        self.budget = budget or bounds.Budget(path, bounds.max_bytes())
        self.seen: list[Member] = []  # every member, bytes dropped: the listing
        self._names: set[str] = set()

    def members(self) -> Iterator[Member]:
        """Every file member, nested archives' members in their place; IngestError when the archive
        itself cannot be read or is over a limit."""
        for member in self._zip() if self.path.lower().endswith(".zip") else self._tar():
            if member.path in self._names:
                member = Member(member.path, member.size, skipped="a second member with the same name")
            self._names.add(member.path)
            if member.data is not None and is_archive_name(member.path):
                yield from self._nested(member)
                continue
            self.seen.append(Member(member.path, member.size, None, member.skipped, member.error))
            yield member

    def _nested(self, member: Member) -> Iterator[Member]:
        if self.depth >= MAX_DEPTH:
            member = Member(member.path, member.size, skipped="an archive inside an archive inside an archive: "
                                                              "only one level of nesting is opened")
            self.seen.append(member)
            yield member
            return
        inner = Archive(member.path, member.data, self.depth + 1, self.budget)
        try:
            yield from inner.members()
        except FileTooLargeError:
            raise  # the whole archive is over its budget
        except IngestError as exc:
            failed = Member(member.path, member.size, error=exc)
            inner.seen.append(failed)
            yield failed
        self.seen.extend(inner.seen)

    def _zip(self) -> Iterator[Member]:
        import zipfile

        try:
            archive = zipfile.ZipFile(io.BytesIO(self.data))
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise CorruptFileError(self.path, f"not a readable zip archive: {exc}") from exc
        infos = [i for i in archive.infolist() if not i.is_dir()]
        bounds.check_declared(self.path, [(i.file_size, i.compress_size) for i in infos])
        for info in infos:
            path = f"{self.path}{SEPARATOR}{safe_name(info.filename)}"
            if info.flag_bits & 0x1:
                yield Member(path, info.file_size, error=EncryptedFileError(path, "encrypted in the archive"))
                continue
            self.budget.take(info.file_size)
            try:
                with archive.open(info) as stream:
                    data = bounds.read_bounded(stream.read, path, info.compress_size, cap=info.file_size)
                yield Member(path, info.file_size, data)
            except FileTooLargeError:
                raise
            except Exception as exc:  # damaged member, unknown compression method: this member only
                yield Member(path, info.file_size, error=CorruptFileError(path, f"damaged in the archive: {exc}"))

    def _tar(self) -> Iterator[Member]:
        import tarfile

        plain = self.data
        if compression_of(plain[:16]):
            plain = decompress(Path(self.path), plain, cap=self.budget.bytes_left)
        try:
            archive = tarfile.open(fileobj=io.BytesIO(plain), mode="r:")
            infos = self._tar_files(archive, self.path)
        except tarfile.TarError as exc:
            raise CorruptFileError(self.path, f"not a readable tar archive: {exc}") from exc
        bounds.check_declared(self.path, [(i.size, i.size) for i in infos if i.isreg()])
        for info in infos:
            path = f"{self.path}{SEPARATOR}{safe_name(info.name)}"
            if not info.isreg():
                yield Member(path, 0, skipped=f"a link to {safe_name(info.linkname)}: not followed")
                continue
            self.budget.take(info.size)
            stream = archive.extractfile(info)
            yield Member(path, info.size, stream.read(info.size) if stream else b"")

    @staticmethod
    def _tar_files(archive: tarfile.TarFile, path: str) -> list[tarfile.TarInfo]:
        """Regular files and links (reported, never followed); headers only, counted as they come."""
        infos = []
        for info in archive:
            if info.isreg() or info.issym() or info.islnk():
                infos.append(info)
                if len(infos) > bounds.MAX_MEMBERS:
                    raise FileTooLargeError(path, f"over {bounds.MAX_MEMBERS:,} files in the archive")
        return infos

    def document(self) -> Document:
        """The archive's own document: the list of its members (after `members()` ran)."""
        name = Path(self.path).name
        files = [m for m in self.seen if not m.skipped]
        builder = TextBuilder()
        builder.add(f"{name}: an archive of {len(files):,} file{'' if len(files) == 1 else 's'}")
        prefix = self.path + SEPARATOR
        lines = [f"{m.path.removeprefix(prefix)} ({m.size:,} bytes)" for m in files]
        if lines:  # an emptied archive still has its document: its old members are removed with it
            builder.add("\n".join(lines))
        return builder.document(Path(self.path), "archive", title=name,
                                metadata={"archive_members": len(files)})


class ArchiveReader(Reader):
    """An archive read as one document, the list of its members (the pipeline indexes each member too)."""

    type = "archive"
    extensions = (".zip", ".tar", ".tgz", ".tbz", ".tbz2", ".txz", ".tzst")
    priority = 10

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        return head[257:262] == b"ustar"

    def read(self, path: Path, data: bytes) -> Document:
        archive = Archive(str(path), data)
        for _ in archive.members():
            pass
        return archive.document()
