"""Clickable file names in the terminal: OSC 8 hyperlinks to `file://` URIs.

rich writes the escape sequence only when its console is a terminal, so piped output and files
stay plain text.  Which line to open travels as the URI's fragment (`file:///a/b.md#12`) only in
terminals known to pass it to the opener (kitty's `open-actions` read it as FRAGMENT); elsewhere
a fragment would make the file fail to open, so the link names the file alone.
"""

from __future__ import annotations

import os
from pathlib import Path

from rich.style import Style
from rich.text import Text

LINE_AWARE_TERMINALS = {"xterm-kitty"}  # values of $TERM whose hyperlinks carry the line


def file_uri(path: str, line: int | None = None, environ: dict | os._Environ = os.environ) -> str:
    """`file:///abs/path`, with `#line` where the terminal opens files at a line; a crawled page's URL as it is."""
    if path.startswith(("http://", "https://")):
        return path
    uri = Path(path).absolute().as_uri()
    if line is not None and environ.get("TERM", "") in LINE_AWARE_TERMINALS:
        uri += f"#{line}"
    return uri


def linked(text: str, path: str, line: int | None = None, style: str = "", url: str = "") -> Text:
    """`text` as a rich Text that links to the file (and line) when printed to a terminal; `url`: a
    crawled page's URL with its section's anchor, linked instead."""
    return Text(text, style=Style.parse(style or "none") + Style(link=url or file_uri(path, line)))
