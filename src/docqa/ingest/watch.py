"""Keep an index in step with folders while they change (watchfiles).

    start: arm the watcher, then one incremental sync of the roots (what changed while stopped)
    loop:  changes, debounced (a burst of saves is one batch) → a plan → one incremental sync

A plan is the cheapest sync that stays exact:

- regular files that were created or modified, and that a walk of their root would take
  (hidden names, include/exclude globs relative to the root, every .gitignore on the way):
  synced as files, nothing else is read;
- anything else — a path that is gone, a folder, a symlink, a changed .gitignore — syncs its
  whole root, so the pipeline sees both ends of a rename (a move, not a delete and an add) and
  decides what vanished by its own rules.

A path is gone only when `lstat` says it does not exist (ENOENT); one that cannot be read right
now (EACCES, EIO, a vanished mount) is reported and kept.  Who writes is the caller's `sync`
(the CLI calls `kb.add`; the server queues it on its one writer), so this module holds no
database and no front-end code.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from docqa.errors import DocqaError, InputError
from docqa.ingest.pipeline import IngestReport
from docqa.ingest.scan import Scanner

if TYPE_CHECKING:  # pathspec is imported when the first change is judged
    import pathspec

Sync = Callable[[list[Path]], IngestReport]  # one incremental ingest of these files and folders
QUIET_MS = 200  # a batch closes after this long without a new change
MAX_WAIT_MS = 2000  # ... or this long after its first change, however busy the folder
_IDLE_MS = 500  # how often the loop wakes with nothing to do (the first wake starts the resync)


@dataclass(slots=True)
class Batch:
    """What one batch did: `report` from the sync (None when it raised: then `error`)."""

    number: int  # 0 is the resync at start
    events: int  # changes seen (after the include/exclude/.gitignore/hidden rules)
    report: IngestReport | None = None
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (path, reason): reported "deleted", kept
    error: str | None = None
    latency: float = 0.0  # seconds from the last change (about one quiet period before the batch) to searchable
    roots: int = 0  # folders synced whole (a deletion, a folder, a rename...)
    files: int = 0  # files synced alone
    exception: Exception | None = None  # what `error` says, for a front end that words it for its clients

    def counts(self) -> dict[str, int]:
        r = self.report or IngestReport()
        return {"added": len(r.added), "updated": len(r.updated), "unchanged": len(r.unchanged),
                "removed": len(r.removed), "moved": len(r.moved), "skipped": len(r.skipped), "failed": len(r.failed),
                "unreadable": len(self.unreadable)}

    def to_dict(self) -> dict:
        r = self.report
        return {"batch": self.number, "events": self.events, **self.counts(), "error": self.error,
                "latency_s": round(self.latency, 3), "roots": self.roots, "files": self.files,
                "failed_files": [{"path": p, "kind": k, "reason": why} for p, k, why in (r.failed if r else [])],
                "unreadable_files": [{"path": p, "reason": why} for p, why in self.unreadable]}


@dataclass(slots=True)
class Plan:
    files: set[Path] = field(default_factory=set)
    roots: set[Path] = field(default_factory=set)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    events: int = 0

    def targets(self) -> list[Path]:
        """The roots to walk, then the files outside them (a root's walk finds its own files)."""
        alone = [f for f in sorted(self.files) if not any(r in f.parents for r in self.roots)]
        return [*sorted(self.roots), *alone]


class Watcher:
    """Watches folders and calls `sync` with what changed: `run(stop, on_batch)` until `stop` is set."""

    def __init__(self, sync: Sync, roots: Iterable[str | Path], rules: Scanner, quiet_ms: int = QUIET_MS,
                 max_wait_ms: int = MAX_WAIT_MS):
        self.sync, self.rules = sync, rules
        self.roots = sorted({Path(os.path.abspath(r)) for r in roots}, key=lambda p: len(p.parts), reverse=True)
        self.quiet_ms, self.max_wait_ms = quiet_ms, max_wait_ms
        missing = [str(r) for r in self.roots if not r.is_dir()]
        if missing:
            raise InputError(f"not a folder: {', '.join(missing)} (docqa watch keeps folders in step; "
                             "add single files with 'docqa add')")

    def run(self, stop: threading.Event, on_batch: Callable[[Batch], None]) -> int:
        """Resync, then one batch per burst of changes until `stop` is set; returns the batches run
        (the resync included).  An error in a batch is reported in it and the watch goes on; what that
        batch had to sync joins the next one."""
        import watchfiles

        batches, retry = 0, Plan()
        for changes in watchfiles.watch(*self.roots, watch_filter=None, debounce=self.max_wait_ms, step=self.quiet_ms,
                                        stop_event=stop, rust_timeout=_IDLE_MS, yield_on_timeout=True,
                                        raise_interrupt=False, ignore_permission_denied=True):
            seen = time.perf_counter()
            if batches == 0:  # armed now: what changes from here on is seen, so the resync misses nothing
                plan = Plan(roots=set(self.roots))
            else:
                plan = self.plan(path for _, path in changes)
                if not plan.files and not plan.roots and not plan.unreadable:
                    continue
                self._carry(plan, retry)
            batch = self._apply(plan, batches, seen)
            retry = plan if batch.error else Plan()
            on_batch(batch)
            batches += 1
            if stop.is_set():
                break
        return batches

    def _carry(self, plan: Plan, failed: Plan) -> None:
        """What a failed batch had to sync, judged again now (a file may have gone since)."""
        plan.roots |= failed.roots
        for path in failed.files:
            self._place(plan, self._root_of(path), path)

    def _root_of(self, path: Path) -> Path | None:
        """The watched folder holding `path` (the innermost, when folders are nested)."""
        return next((r for r in self.roots if path == r or r in path.parents), None)

    def plan(self, paths: Iterable[str]) -> Plan:
        """The sync that covers these changed paths (see the module's docstring)."""
        plan = Plan()
        judge = _Rules(self.rules)
        for raw in set(paths):
            path = Path(raw)
            root = self._root_of(path)
            if root is None:
                continue
            if path.name == ".gitignore" and self.rules.gitignore:
                plan.roots.add(root)  # the rules changed: the walk decides again what is in
                plan.events += 1
                continue
            if path != root and not judge.admits(root, path):
                continue
            plan.events += 1
            self._place(plan, root, path)
        return plan

    @staticmethod
    def _place(plan: Plan, root: Path, path: Path) -> None:
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            plan.roots.add(root)  # really gone: the root's walk removes it, or finds where it moved
            return
        except OSError as exc:  # EACCES, EIO, a mount gone stale: cannot tell, so it stays indexed
            plan.unreadable.append((str(path), f"cannot be read right now ({exc.strerror or exc}): kept in the index"))
            return
        if stat.S_ISREG(st.st_mode):
            plan.files.add(path)
        else:
            plan.roots.add(root)  # a folder (created, moved in), a symlink...: the walk applies every rule

    def _apply(self, plan: Plan, number: int, seen: float) -> Batch:
        batch = Batch(number, plan.events, unreadable=plan.unreadable, roots=len(plan.roots), files=len(plan.files))
        targets = plan.targets()
        if targets:
            try:
                batch.report = self.sync(targets)
            except Exception as exc:  # a batch that fails is reported; the next batch tries its paths again
                batch.exception = exc
                batch.error = str(exc) if isinstance(exc, DocqaError) else f"{type(exc).__name__}: {exc}"
        quiet = self.quiet_ms / 1000 if number else 0.0
        batch.latency = time.perf_counter() - seen + quiet
        return batch


class _Rules:
    """Would a walk of the root take this path?  The Scanner's rules, judged for one path."""

    def __init__(self, rules: Scanner):
        import pathspec

        self.rules = rules
        self.include = pathspec.GitIgnoreSpec.from_lines(rules.include) if rules.include else None
        self.exclude = pathspec.GitIgnoreSpec.from_lines(rules.exclude)
        self._ignores: dict[Path, pathspec.GitIgnoreSpec | None] = {}  # .gitignore files read in this batch

    def admits(self, root: Path, path: Path) -> bool:
        parts = path.relative_to(root).parts
        if not self.rules.hidden and any(p.startswith(".") for p in parts):
            return False
        for i in range(1, len(parts)):  # the folders on the way
            if self.exclude.match_file("/".join(parts[:i]) + "/") or (root.joinpath(*parts[:i])).is_symlink():
                return False
        rel = "/".join(parts)
        if self.exclude.match_file(rel):
            return False
        if self.include is not None and os.path.exists(path) and not self.include.match_file(rel):
            return False  # a path that is gone may have been a folder: include globs name files
        return not (self.rules.gitignore and self._git_ignored(root, parts))

    def _git_ignored(self, root: Path, parts: tuple[str, ...]) -> bool:
        specs: list[tuple[Path, pathspec.GitIgnoreSpec]] = []
        here = root
        for i, name in enumerate(parts):
            spec = self._spec(here)
            if spec is not None:
                specs.append((here, spec))
            target = here / name
            suffix = "/" if i < len(parts) - 1 else ""
            if any(s.match_file(target.relative_to(base).as_posix() + suffix) for base, s in specs):
                return True
            here = target
        return False

    def _spec(self, folder: Path) -> pathspec.GitIgnoreSpec | None:
        import pathspec

        if folder not in self._ignores:
            try:
                lines = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
                self._ignores[folder] = pathspec.GitIgnoreSpec.from_lines(lines)
            except OSError:
                self._ignores[folder] = None
        return self._ignores[folder]
