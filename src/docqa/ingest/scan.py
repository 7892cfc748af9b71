"""File discovery for `docqa add`: folders walked with include/exclude globs and .gitignore,
hidden files skipped, symlinks never followed out of the folder being added."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pathspec is imported when a folder is walked
    import pathspec


@dataclass(slots=True)
class ScanResult:
    files: list[Path] = field(default_factory=list)
    roots: list[Path] = field(default_factory=list)  # folders walked (their vanished files get removed)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    missing: list[str] = field(default_factory=list)  # paths given that do not exist


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
            if path.is_dir() and not path.is_symlink():
                result.roots.append(path)
                for file in self._walk(path, result):
                    if file not in seen:
                        seen.add(file)
                        result.files.append(file)
            elif path.is_file():
                if path not in seen:  # an explicit file is always taken, whatever the globs say
                    seen.add(path)
                    result.files.append(path)
            else:
                result.missing.append(str(path))
        return result

    def _walk(self, root: Path, result: ScanResult) -> Iterator[Path]:
        import pathspec

        include = pathspec.GitIgnoreSpec.from_lines(self.include) if self.include else None
        exclude = pathspec.GitIgnoreSpec.from_lines(self.exclude)
        ignores: list[tuple[Path, pathspec.GitIgnoreSpec]] = []
        real_root = root.resolve()
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            here = Path(dirpath)
            ignores = [(d, s) for d, s in ignores if here == d or d in here.parents]
            if self.gitignore and (here / ".gitignore").is_file():
                lines = (here / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
                ignores.append((here, pathspec.GitIgnoreSpec.from_lines(lines)))
            dirnames[:] = sorted(d for d in dirnames if self._keep_dir(root, here / d, exclude, ignores))
            for name in sorted(filenames):
                file = here / name
                if self._keep_file(root, real_root, file, include, exclude, ignores, result):
                    yield file

    def _keep_dir(self, root: Path, path: Path, exclude, ignores) -> bool:
        if path.is_symlink() or (not self.hidden and path.name.startswith(".")):
            return False
        rel = path.relative_to(root).as_posix() + "/"
        return not exclude.match_file(rel) and not _ignored(path, True, ignores)

    def _keep_file(self, root, real_root, file: Path, include, exclude, ignores, result: ScanResult) -> bool:
        if not self.hidden and file.name.startswith("."):
            return False
        rel = file.relative_to(root).as_posix()
        if exclude.match_file(rel) or (include is not None and not include.match_file(rel)):
            return False
        if _ignored(file, False, ignores):
            return False
        if file.is_symlink():
            target = file.resolve()
            if real_root not in target.parents:
                result.skipped.append((str(file), f"symlink to {target}, outside the folder: not followed"))
                return False
        return file.is_file()


def _ignored(path: Path, is_dir: bool, ignores: list[tuple[Path, pathspec.GitIgnoreSpec]]) -> bool:
    for base, spec in ignores:
        rel = path.relative_to(base).as_posix() + ("/" if is_dir else "")
        if spec.match_file(rel):
            return True
    return False
