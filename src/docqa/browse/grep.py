"""grep_docs: a regular expression over the stored text of every document, shown as ripgrep shows it.

Each document's whole text is searched at once (one C-level scan; a document without a match
costs one call) and every hit is then confirmed on its own line, so a pattern matches within a
line as in ripgrep, never across lines.  The `regex` module runs the search because its calls
take a timeout: a catastrophic pattern such as `(x+x+)+y` gives up on a document instead of
hanging, and the whole search stops after a time budget, saying so in the note.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from docqa.browse.paths import count, folders, link_text, relative
from docqa.errors import InputError
from docqa.store import ChunkFilter, DocumentStore
from docqa.store.catalog import common_folder

if TYPE_CHECKING:  # regex is imported when a pattern is compiled
    import regex

MAX_LINE_CHARS = 10_000  # longer lines (minified code, data dumps) are not matched
SHOWN_LINE_CHARS = 300  # a shown line is cut to this many characters around its match
TIME_BUDGET = 2.0  # seconds for one whole search
DOCUMENT_TIMEOUT = 0.5  # seconds one document may take before it is skipped
MAX_CONTEXT = 10
MAX_MATCHES = 1_000


def compile_pattern(pattern: str, ignore_case: bool = True, literal_fallback: bool = False) -> regex.Pattern:
    """A pattern compiled line-wise (`^`/`$` at line ends); a bad one is an InputError, or with
    `literal_fallback` is matched as plain text."""
    import regex

    flags = regex.MULTILINE | (regex.IGNORECASE if ignore_case else 0)
    try:
        return regex.compile(pattern, flags)
    except regex.error as exc:
        if literal_fallback:
            return regex.compile(regex.escape(pattern), flags)
        raise InputError(f"bad regular expression {pattern!r}: {exc}. Put a backslash before a special character "
                         "( ( ) [ ] . * + ? | ) to match it literally") from None


@dataclass(slots=True)
class GrepLine:
    """A shown line: a match, or context around one."""

    line: int
    text: str
    match: bool

    def to_dict(self) -> dict:
        return {"line": self.line, "text": self.text, "match": self.match}


@dataclass(slots=True)
class GrepFile:
    """The shown matches of one document, with their context lines, in line order."""

    doc_id: str
    path: str  # relative to the documents' common folder
    title: str
    matches: int  # matching lines in the document, shown or not
    lines: list[GrepLine] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"doc_id": self.doc_id, "path": self.path, "title": self.title, "matches": self.matches,
                "lines": [ln.to_dict() for ln in self.lines]}

    def render(self) -> str:
        out = [f"[{link_text(self.title)}]({self.doc_id}) · {count(self.matches, 'matching line')}"]
        previous = None
        for ln in self.lines:
            if previous is not None and ln.line != previous + 1:
                out.append("--")
            mark = ":" if ln.match else "-"
            out.append(f"{self.path}{mark}{ln.line}{mark} {ln.text}".rstrip())
            previous = ln.line
        return "\n".join(out)


@dataclass(slots=True)
class GrepResult:
    """What `grep_docs` found: the first matches grouped by document, counts, and a note on the rest."""

    pattern: str
    files: list[GrepFile]
    total: int  # matching lines found (a lower bound when not complete)
    shown: int
    documents: int  # documents with a match
    searched: int
    complete: bool  # every admitted document was searched to its end
    note: str

    def to_dict(self) -> dict:
        return {"pattern": self.pattern, "files": [f.to_dict() for f in self.files], "total": self.total,
                "shown": self.shown, "documents": self.documents, "searched": self.searched,
                "complete": self.complete, "note": self.note}

    def render(self) -> str:
        return "\n\n".join([*(f.render() for f in self.files), self.note])


class _Scan:
    """Finds matching lines document by document, within one time budget."""

    def __init__(self, rx: regex.Pattern, budget: float):
        self.rx, self.budget = rx, budget
        # Plain text cannot backtrack: it skips the per-call timeout, which costs 2.4 µs a call
        # (a quarter of a whole-corpus scan at 10k documents).
        self.plain = not any(c in rx.pattern for c in ".^$*+?{}[]\\|()")
        self.deadline = time.monotonic() + budget
        self.out_of_time = False
        self.timeouts = 0  # documents given up on: the pattern took too long
        self.long_lines = 0

    def lines(self, text: str) -> list[tuple[int, int]]:
        """(line number, match column) of each line of `text` the pattern matches."""
        found: list[tuple[int, int]] = []
        pos, number, counted, n = 0, 1, 0, len(text)
        while pos <= n:
            left = self.deadline - time.monotonic()
            if left <= 0:
                self.out_of_time = True
                break
            timeout = None if self.plain else min(left, DOCUMENT_TIMEOUT)
            try:
                m = self.rx.search(text, pos, timeout=timeout)
                if m is None:
                    break
                start = text.rfind("\n", 0, m.start()) + 1
                end = text.find("\n", m.start())
                end = n if end < 0 else end
                if end - start > MAX_LINE_CHARS:
                    self.long_lines += 1
                elif m.end() > end:  # it ran across lines: does the line hold a match of its own?
                    m = self.rx.search(text, start, end, timeout=timeout)
            except TimeoutError:
                self.timeouts += 1
                break
            if m is not None and end - start <= MAX_LINE_CHARS:
                number += text.count("\n", counted, start)
                counted = start
                found.append((number, m.start() - start))
            pos = end + 1
        return found


def grep_docs(store: DocumentStore, pattern: str, path_glob: str | None = None, context: int = 1, max_matches: int = 50,
              collection: str | None = None, ignore_case: bool = True, budget: float = TIME_BUDGET) -> GrepResult:
    """Lines matching `pattern` in the documents' stored text, like `rg`: the first `max_matches`
    matching lines, grouped by document in path order, with `context` lines around each."""
    if not pattern:
        raise InputError("the pattern is empty: give a regular expression, e.g. 'backup|restore'")
    rx = compile_pattern(pattern, ignore_case)
    context, max_matches = max(0, min(context, MAX_CONTEXT)), max(1, min(max_matches, MAX_MATCHES))
    bounds = store.path_bounds(collection)
    root = common_folder(*bounds) if bounds else ""
    scan = _Scan(rx, budget)
    files: list[GrepFile] = []
    total = shown = documents = searched = 0
    texts = store.document_texts(ChunkFilter(collection, path_glob))
    try:
        for doc_id, path, title, text in texts:
            searched += 1
            hits = scan.lines(text)
            if hits:
                total, documents = total + len(hits), documents + 1
                if shown < max_matches:
                    take = hits[: max_matches - shown]
                    files.append(_group(doc_id, relative(path, root), title or path.rsplit("/", 1)[-1], text, take,
                                        context, len(hits)))
                    shown += len(take)
            if scan.out_of_time:
                break
    finally:
        texts.close()  # type: ignore[attr-defined]  # a generator
    complete = not scan.out_of_time and not scan.timeouts
    note = _note(pattern, path_glob, files, total, shown, documents, searched, complete, scan)
    return GrepResult(pattern, files, total, shown, documents, searched, complete, note)


def _group(doc_id: str, path: str, title: str, text: str, hits: list[tuple[int, int]], context: int,
           matches: int) -> GrepFile:
    lines = text.split("\n")
    wanted: dict[int, int | None] = {}  # line -> match column (None: a context line)
    for number, column in hits:
        for k in range(max(1, number - context), min(len(lines), number + context) + 1):
            wanted.setdefault(k, None)
        wanted[number] = column
    shown = [GrepLine(k, _clip(lines[k - 1].rstrip("\r"), column), column is not None)
             for k, column in sorted(wanted.items())]
    return GrepFile(doc_id, path, " ".join(title.split()), matches, shown)


def _clip(line: str, column: int | None) -> str:
    """A long line cut to SHOWN_LINE_CHARS, keeping the match in view."""
    if len(line) <= SHOWN_LINE_CHARS:
        return line
    start = 0 if not column else max(0, min(column - SHOWN_LINE_CHARS // 3, len(line) - SHOWN_LINE_CHARS))
    head = "…" if start else ""
    tail = "…" if start + SHOWN_LINE_CHARS < len(line) else ""
    return head + line[start:start + SHOWN_LINE_CHARS] + tail


def _note(pattern: str, path_glob: str | None, files: list[GrepFile], total: int, shown: int, documents: int,
          searched: int, complete: bool, scan: _Scan) -> str:
    where = f" matching path_glob {path_glob!r}" if path_glob else ""
    narrow = "narrow with path_glob" + (f" (e.g. '{folders(files[0].path)[0]}/**')" if files and folders(files[0].path) else "")
    if total:
        parts = [f"{count(total, 'matching line')} in {count(documents, 'document')} ({searched:,} searched{where})"]
    else:
        parts = [f"no line matches /{pattern}/ in {count(searched, 'document')}{where}; try a shorter or "
                 "looser pattern, or search_docs to search by meaning"]
    if shown < total:
        more = f"{total - shown:,} more" + ("" if complete else " at least")
        parts.append(f"showing the first {shown:,}, {more}: {narrow} or a more specific pattern")
    if scan.out_of_time:
        parts.append(f"stopped after {scan.budget:g} s before every document was searched: {narrow} or a more specific pattern")
    if scan.timeouts:
        parts.append(f"{count(scan.timeouts, 'document')} given up on (the pattern is too slow on them: "
                     "avoid nested repeats such as (a+)+)")
    if scan.long_lines:
        parts.append(f"{count(scan.long_lines, 'line')} longer than {MAX_LINE_CHARS:,} characters skipped")
    return "; ".join(parts)
