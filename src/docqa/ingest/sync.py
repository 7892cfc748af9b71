"""Which indexed paths under the folders being added are gone, now excluded, or unreadable right now.

Only ENOENT or ENOTDIR, checked path by path, prove that a file is gone.  A path under a folder
the scan could not read, or whose check fails otherwise (EACCES, EIO, ESTALE, ENOTCONN of a
dropped network drive...), keeps its documents; so does an added folder that is empty now while
the index holds its files (an unmounted drive leaves an empty mount point).  A path that exists
but was not found by the scan is now excluded (include/exclude globs, .gitignore, hidden): pruned.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from docqa.ingest.readers.archive import archive_of
from docqa.ingest.scan import ScanResult, path_state, safe_path
from docqa.store import FileState


def absent_paths(scan: ScanResult, found: set[str], states: dict[str, FileState]
                 ) -> tuple[list[str], list[str], list[tuple[str, str, int]]]:
    """(gone, now excluded, unreadable as (path, reason, documents kept)) among the indexed paths
    under the scanned folders that the scan did not find."""
    roots = [safe_path(r) + os.sep for r in scan.roots]
    blocked = [p for p, _ in scan.unreadable]
    kept: Counter = Counter()
    gone: list[str] = []
    pruned: list[str] = []
    unreadable: list[tuple[str, str, int]] = []
    for path in states:
        archive = archive_of(path)  # an archive's member is there while its archive is
        if path in found or archive in found or not any(path.startswith(r) for r in roots):
            continue
        if hit := next((b for b in blocked if path == b or path.startswith(b + os.sep)), None):
            kept[hit] += 1
            continue
        state, reason = path_state(archive or path)
        if state == "unreadable":
            unreadable.append((path, reason, 1))
        (gone if state == "gone" else pruned if state == "present" else []).append(path)
    unreadable.extend((p, r, kept[p]) for p, r in scan.unreadable)
    return _keep_emptied_roots(scan.roots, gone, unreadable), pruned, unreadable


def _keep_emptied_roots(roots: list[Path], gone: list[str], unreadable: list[tuple[str, str, int]]) -> list[str]:
    """An added folder that is empty now while the index holds its files is more likely an
    unmounted drive than a deliberate wipe: keep its documents and say so."""
    for root in roots:
        prefix = safe_path(root) + os.sep
        under = [p for p in gone if p.startswith(prefix)]
        if under and _is_empty(root):
            gone = [p for p in gone if not p.startswith(prefix)]
            unreadable.append((safe_path(root), "the folder is empty now (an unmounted drive?); "
                               "'docqa remove' it to drop its documents", len(under)))
    return gone


def _is_empty(folder: Path) -> bool:
    try:
        with os.scandir(folder) as entries:
            return next(entries, None) is None
    except OSError:
        return False
