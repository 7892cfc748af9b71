"""How the terminal names a file: one way everywhere, short, never cut at the end.

A path is shown relative to the folder the documents were added from (the deepest folder holding
every indexed document) when that folder says something, else relative to the home folder
(`~/…`), else in full.  Long names lose their middle (`docs/…/install/guide.md`), never their end:
the file name is the part a reader needs.  JSON output keeps absolute paths.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rich.cells import cell_len

ELLIPSIS = "…"


@dataclass(frozen=True, slots=True)
class PathNamer:
    """Names paths below `root` relative to it; other paths relative to `home` or in full."""

    root: str = ""  # with its trailing separator; "" when no folder holds every document usefully
    home: str = str(Path.home())

    @classmethod
    def for_root(cls, root: str, home: str | None = None) -> PathNamer:
        """A namer for the documents' common folder: a filesystem root or the home folder itself
        is no folder the user added (several folders were), so those fall back to `~/…`."""
        home = os.path.normpath(home or str(Path.home()))
        folder = os.path.normpath(root) if root else ""
        if not folder or folder == os.path.dirname(folder) or folder == home:
            return cls("", home)
        return cls(folder.rstrip(os.sep) + os.sep, home)

    def name(self, path: str) -> str:
        """`install/guide.md` below the root, `~/notes/a.md` below home, else the path itself."""
        if self.root and path.startswith(self.root) and len(path) > len(self.root):
            return path[len(self.root):]
        if self.home and path.startswith(self.home.rstrip(os.sep) + os.sep):
            return "~" + os.sep + path[len(self.home.rstrip(os.sep)) + 1:]
        return path

    def short(self, path: str, width: int) -> str:
        """`name(path)` in at most `width` characters, shortened in the middle."""
        return shorten(self.name(path), width)


def shorten(path: str, width: int) -> str:
    """`docs/…/install/guide.md`: the first folder and as many of the last parts as fit in `width`
    terminal cells, else `…/guide.md`; a file name too long alone keeps its start and its end
    (`very-lo…ame.md`)."""
    if cell_len(path) <= width:
        return path
    parts = path.split(os.sep)
    if len(parts) > 2:
        head, tail = parts[0], [parts[-1]]
        for part in reversed(parts[1:-1]):
            if cell_len(os.sep.join([head, ELLIPSIS, part, *tail])) > width:
                break
            tail.insert(0, part)
        candidate = os.sep.join([head, ELLIPSIS, *tail])
        if cell_len(candidate) <= width:
            return candidate
    if len(parts) > 1 and width >= 12:  # `…/` says a folder was left out
        return ELLIPSIS + os.sep + _middle(parts[-1], width - 2)
    return _middle(parts[-1], width)


def _middle(text: str, width: int) -> str:
    """`text` cut in the middle to `width` terminal cells (at least 3; a CJK character takes two)."""
    width = max(width, 3)
    if cell_len(text) <= width:
        return text
    front, back = "", ""
    for i in range(len(text)):  # take a character from each end in turn while they fit
        piece = text[i // 2] if i % 2 == 0 else text[len(text) - 1 - i // 2]
        if cell_len(front + back + piece) + 1 > width:
            break
        front, back = (front + piece, back) if i % 2 == 0 else (front, piece + back)
    return front + ELLIPSIS + back
