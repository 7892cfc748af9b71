"""File discovery for `docqa add`: folders walked with include/exclude globs and .gitignore,
hidden files skipped, symlinks never followed out of the folder being added.

One odd entry never stops a scan: symlink loops, dangling links, FIFOs, sockets and devices are
skipped with a reason; a folder or file that cannot be read right now (EACCES, EIO, a stale
mount) is reported as unreadable, so the documents indexed from it are kept, not taken for
deleted.  File names that are not valid UTF-8 are reported and stored in a safe form
(`safe_path`); the real path is what gets opened.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pathspec is imported when a folder is walked
    import pathspec

GONE = (errno.ENOENT, errno.ENOTDIR)  # the only errors that prove a path is not there
_SPECIAL = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
            (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


@dataclass(slots=True)
class ScanResult:
    files: list[Path] = field(default_factory=list)  # real paths (safe_path gives the stored form)
    roots: list[Path] = field(default_factory=list)  # folders walked (their vanished files get removed)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (safe path, reason)
    missing: list[str] = field(default_factory=list)  # paths given that do not exist
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (safe path, reason): cannot be read now


def safe_path(path: str | os.PathLike) -> str:
    """A path as valid text: bytes that are not UTF-8 (surrogate-escaped by Python) become `\\xNN`."""
    text = os.fspath(path)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return os.fsencode(text).decode("utf-8", "backslashreplace")


def real_paths(safe: str) -> list[str]:
    """The paths a stored safe form may stand for: itself, and its `\\xNN` escapes as raw bytes."""
    if "\\x" not in safe:
        return [safe]
    raw = re.sub(r"\\x([0-9a-f]{2})", lambda m: chr(0xDC00 + int(m.group(1), 16)), safe)
    return [safe, raw]


def path_state(safe: str) -> tuple[str, str]:
    """("present" | "gone" | "unreadable", reason) of a stored path: only ENOENT/ENOTDIR mean gone."""
    for candidate in real_paths(safe):
        try:
            os.lstat(candidate)
            return "present", ""
        except OSError as exc:
            if exc.errno not in GONE:
                return "unreadable", exc.strerror or str(exc)
    return "gone", ""


@dataclass(slots=True)
class Scanner:
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    gitignore: bool = True
    hidden: bool = False

    def scan(self, paths: list[Path]) -> ScanResult:
        """Expand files and folders into the files to ingest, in a stable order."""
        result = ScanResult()
        seen: set[Path] = set()
        for raw in paths:
            path = Path(os.path.abspath(raw))
            kind = self._given(path, result)
            if kind == "dir":
                result.roots.append(path)
                for file in self._walk(path, result):
                    if file not in seen:
                        seen.add(file)
                        result.files.append(file)
            elif kind == "file" and path not in seen:  # an explicit file is always taken, whatever the globs say
                seen.add(path)
                result.files.append(path)
        return result

    def walk(self, root: Path, result: ScanResult) -> Iterator[Path]:
        """The files under one folder, lazily and in a stable order, so a caller may stop early
        (`docqa init` scans a bounded number); skipped and unreadable entries go to `result`."""
        return self._walk(Path(os.path.abspath(root)), result)

    def _given(self, path: Path, result: ScanResult) -> str:
        """A path named on the command line: "dir" to walk, "file" to take, or "" (recorded in `result`)."""
        try:
            st = os.lstat(path)
        except OSError as exc:
            if exc.errno in GONE:
                result.missing.append(safe_path(path))
            else:
                result.unreadable.append((safe_path(path), exc.strerror or str(exc)))
            return ""
        if stat.S_ISDIR(st.st_mode):
            return "dir"
        if stat.S_ISLNK(st.st_mode):
            reason, st = _follow(path)
            if reason is None and stat.S_ISDIR(st.st_mode):
                reason = "a symlink to a folder: not followed (add the folder itself)"
            if reason is not None:
                _skip_or_unreadable(result, path, reason)
                return ""
        if stat.S_ISREG(st.st_mode):
            return "file"
        result.skipped.append((safe_path(path), _special(st.st_mode)))
        return ""

    def _walk(self, root: Path, result: ScanResult) -> Iterator[Path]:
        import pathspec

        include = pathspec.GitIgnoreSpec.from_lines(self.include) if self.include else None
        exclude = pathspec.GitIgnoreSpec.from_lines(self.exclude)
        ignores: list[tuple[Path, pathspec.GitIgnoreSpec]] = []
        real_root = os.path.realpath(root)

        def unreadable(exc: OSError) -> None:
            result.unreadable.append((safe_path(exc.filename or root), exc.strerror or str(exc)))

        for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable, followlinks=False):
            here = Path(dirpath)
            ignores = [(d, s) for d, s in ignores if here == d or d in here.parents]
            if self.gitignore and (spec := _gitignore(here)) is not None:
                ignores.append((here, spec))
            dirnames[:] = sorted(d for d in dirnames if self._keep_dir(root, real_root, here / d, exclude, ignores, result))
            for name in sorted(filenames):
                file = here / name
                if self._keep_file(root, real_root, file, include, exclude, ignores, result):
                    yield file

    def _keep_dir(self, root: Path, real_root: str, path: Path, exclude, ignores, result: ScanResult) -> bool:
        if not self.hidden and path.name.startswith("."):
            return False
        rel = path.relative_to(root).as_posix() + "/"
        if exclude.match_file(rel) or _ignored(path, True, ignores):
            return False
        if path.is_symlink():
            reason, _ = _follow(path, real_root)
            _skip_or_unreadable(result, path, reason or "a symlink to a folder: not followed (its files are read from their real place)")
            return False
        return True

    def _keep_file(self, root, real_root, file: Path, include, exclude, ignores, result: ScanResult) -> bool:
        if not self.hidden and file.name.startswith("."):
            return False
        rel = file.relative_to(root).as_posix()
        if exclude.match_file(rel) or (include is not None and not include.match_file(rel)):
            return False
        if _ignored(file, False, ignores):
            return False
        try:
            st = os.lstat(file)
        except OSError as exc:
            if exc.errno not in GONE:  # gone between listing and now: simply not there
                result.unreadable.append((safe_path(file), exc.strerror or str(exc)))
            return False
        if stat.S_ISLNK(st.st_mode):
            reason, st = _follow(file, real_root)
            if reason is not None:
                _skip_or_unreadable(result, file, reason)
                return False
        if stat.S_ISREG(st.st_mode):
            return True
        result.skipped.append((safe_path(file), _special(st.st_mode)))
        return False


def _follow(link: Path, real_root: str | None = None) -> tuple[str | None, os.stat_result | None]:
    """(why a symlink is not followed, or None; the stat of its target).  The target's path is never
    put in a reason: it may lie outside the folders a client is allowed to see."""
    try:
        st = os.stat(link)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symlink loop: not followed", None
        if exc.errno in GONE:
            return "a dangling symlink (its target does not exist)", None
        return f"unreadable: {exc.strerror or exc}", None
    if real_root is not None:
        target = os.path.realpath(link)
        if os.path.commonpath([real_root, target]) != real_root:
            return "a symlink that points outside the folder: not followed", st
    return None, st


def _skip_or_unreadable(result: ScanResult, path: Path, reason: str) -> None:
    if reason.startswith("unreadable: "):
        result.unreadable.append((safe_path(path), reason.removeprefix("unreadable: ")))
    else:
        result.skipped.append((safe_path(path), reason))


def _special(mode: int) -> str:
    what = next((name for test, name in _SPECIAL if test(mode)), "not a regular file")
    return f"{what}, not a regular file"


def _gitignore(folder: Path) -> pathspec.GitIgnoreSpec | None:
    import pathspec

    try:
        lines = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:  # none, or unreadable: the folder's files are still taken
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(path: Path, is_dir: bool, ignores: list[tuple[Path, pathspec.GitIgnoreSpec]]) -> bool:
    for base, spec in ignores:
        rel = path.relative_to(base).as_posix() + ("/" if is_dir else "")
        if spec.match_file(rel):
            return True
    return False
