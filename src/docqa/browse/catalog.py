"""The catalog: documents as llms.txt-style lines `- [dir / dir / title](doc-id): summary`.

Folders are shown relative to the common root of the collection's documents, so a model sees
`ops / backup / Nightly backups` rather than a home directory.  `list_docs` filters and pages the
lines for a model; `llms_txt` writes the whole catalog as an llms.txt file, one section per folder.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from docqa.browse.grep import compile_pattern
from docqa.browse.paths import common_folder, count, folders, link_text, one_line, relative, title_of
from docqa.errors import InputError
from docqa.index import Store
from docqa.types import DocumentRecord

MAX_PAGE_SIZE = 500
GREP_SECONDS = 2.0  # a pattern that takes longer over the whole catalog is refused


@dataclass(slots=True)
class DocPage:
    """One page of the catalog, and a note on how to get the rest."""

    lines: list[str]
    page: int
    pages: int
    total: int  # documents that match (all documents without grep)
    note: str

    def to_dict(self) -> dict:
        return {"lines": self.lines, "page": self.page, "pages": self.pages, "total": self.total, "note": self.note}

    def render(self) -> str:
        return "\n".join([*self.lines, "", self.note]) if self.lines else self.note


def list_docs(store: Store, grep: str | None = None, page: int = 1, page_size: int = 50,
              collection: str | None = None) -> DocPage:
    """The documents with status ok, ordered by path, filtered by `grep` (a case-insensitive regex,
    or plain text when it is not one) over path, title, keywords and summary, one page of them."""
    if page < 1 or page_size < 1:
        raise InputError(f"page and page_size start at 1 (got page={page}, page_size={page_size})")
    page_size = min(page_size, MAX_PAGE_SIZE)
    entries, failed = _entries(store, collection)
    if grep:
        entries = _matching(entries, grep)
    total = len(entries)
    pages = max(1, math.ceil(total / page_size))
    chosen = entries[(page - 1) * page_size: page * page_size]
    lines = [catalog_line(rel, record) for rel, record in chosen]
    first = (page - 1) * page_size + 1
    note = _note(grep, page, pages, total, first, first + len(lines) - 1, failed)
    return DocPage(lines, page, pages, total, note)


def catalog_line(rel: str, record: DocumentRecord, summary_chars: int | None = None) -> str:
    """`- [dir / dir / title](doc-id): summary`."""
    label = " / ".join([*folders(rel), title_of(record)])
    summary = one_line(record.summary, summary_chars) if summary_chars else one_line(record.summary)
    return f"- [{link_text(label)}]({record.document_id})" + (f": {summary}" if summary else "")


def llms_txt(store: Store, collection: str | None = None) -> str:
    """The catalog as an llms.txt file: `# name`, `> N documents`, then a `## folder` section per
    folder with one `- [title](doc-id): summary (keywords: …)` line per document."""
    entries, failed = _entries(store, collection)
    names = [collection] if collection is not None else store.collections()
    name = names[0] if len(names) == 1 else "all collections" + (f" ({', '.join(names)})" if names else "")
    head = f"> {count(len(entries), 'document')}" + (f"; {failed:,} more failed to ingest" if failed else "")
    sections: dict[str, list[str]] = {}
    for rel, record in entries:
        line = f"- [{link_text(title_of(record))}]({record.document_id})"
        if summary := one_line(record.summary, 300):
            line += f": {summary}"
        if record.keywords:
            line += f" (keywords: {', '.join(record.keywords)})"
        sections.setdefault("/".join(folders(rel)), []).append(line)
    out = [f"# {name}", "", head]
    for folder in sorted(sections):
        out += ["", f"## {folder or '.'}", "", *sections[folder]]
    return "\n".join(out) + "\n"


def _entries(store: Store, collection: str | None) -> tuple[list[tuple[str, DocumentRecord]], int]:
    """(path relative to the common root, record) of the documents with status ok, by path; and
    how many documents failed."""
    records = store.list_documents(collection)
    ok = sorted((r for r in records if r.status == "ok"), key=lambda r: r.path)
    root = common_folder(ok[0].path, ok[-1].path) if ok else ""
    return [(relative(r.path, root), r) for r in ok], len(records) - len(ok)


def _matching(entries: list[tuple[str, DocumentRecord]], grep: str) -> list[tuple[str, DocumentRecord]]:
    rx = compile_pattern(grep, ignore_case=True, literal_fallback=True)
    deadline = time.monotonic() + GREP_SECONDS
    kept = []
    try:
        for rel, record in entries:
            haystack = "\n".join((rel, record.title, " ".join(record.keywords), record.summary))
            if rx.search(haystack, timeout=max(deadline - time.monotonic(), 0.001)):
                kept.append((rel, record))
    except TimeoutError:
        raise InputError(f"grep {grep!r} is too slow to run over the catalog: use a simpler pattern "
                         "(plain words work; avoid nested repeats such as (a+)+)") from None
    return kept


def _note(grep: str | None, page: int, pages: int, total: int, first: int, last: int, failed: int) -> str:
    what = count(total, "document") + (f" matching grep {grep!r}" if grep else "")
    same = " and the same grep" if grep else ""
    if not total:
        note = (f"no documents match grep {grep!r} (path, title, keywords, summary): try a shorter pattern, "
                "or grep_docs to search the documents' text") if grep else "no documents are indexed"
    elif page > pages:
        note = f"page {page} is past the end: {what} fill {count(pages, 'page')}; call list_docs with page={pages}{same}"
    elif pages == 1:
        note = f"showing all {what}"
    elif page < pages:
        note = f"showing {first:,}–{last:,} of {what}; call list_docs with page={page + 1}{same} for more"
    else:
        note = f"showing {first:,}–{last:,} of {what} (last page)"
    if failed:
        note += f"; {count(failed, 'document')} failed to ingest and {'is' if failed == 1 else 'are'} not listed"
    return note
