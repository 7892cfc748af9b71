"""The catalog: documents as llms.txt-style lines `- [dir / dir / title](doc-id): summary`.

Folders are shown relative to the common root of the collection's documents, so a model sees
`ops / backup / Nightly backups` rather than a home directory.  `list_docs` filters and pages the
lines for a model; `llms_txt` writes the whole catalog as an llms.txt file, one section per folder.
"""

from __future__ import annotations

import math
import time
from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate
from dataclasses import dataclass

from docqa.browse.grep import compile_pattern
from docqa.browse.paths import count, folders, link_text, one_line, relative, title_of
from docqa.errors import InputError
from docqa.store import DocumentStore
from docqa.store.catalog import common_folder
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


def list_docs(store: DocumentStore, grep: str | None = None, page: int = 1, page_size: int = 50,
              collection: str | None = None) -> DocPage:
    """The documents with status ok, ordered by path, filtered by `grep` (a case-insensitive regex,
    or plain text when it is not one) over path, title, keywords and summary, one page of them."""
    if page < 1 or page_size < 1:
        raise InputError(f"page and page_size start at 1 (got page={page}, page_size={page_size})")
    page_size = min(page_size, MAX_PAGE_SIZE)
    bounds = store.path_bounds(collection)
    root = common_folder(*bounds) if bounds else ""
    select = _selector(grep, len(root)) if grep else None
    found = store.catalog(collection, (page - 1) * page_size, page_size, select)
    pages = max(1, math.ceil(found.total / page_size))
    lines = [catalog_line(relative(r.path, root), r) for r in found.records]
    first = (page - 1) * page_size + 1
    note = _note(grep, page, pages, found.total, first, first + len(lines) - 1, found.failed)
    return DocPage(lines, page, pages, found.total, note)


def catalog_line(rel: str, record: DocumentRecord) -> str:
    """`- [dir / dir / title](doc-id): summary`."""
    label = " / ".join([*folders(rel), title_of(record)])
    summary = one_line(record.summary)
    return f"- [{link_text(label)}]({record.document_id})" + (f": {summary}" if summary else "")


def llms_txt(store: DocumentStore, collection: str | None = None) -> str:
    """The catalog as an llms.txt file: `# name`, `> N documents`, then a `## folder` section per
    folder with one `- [title](doc-id): summary (keywords: …)` line per document."""
    found = store.catalog(collection)
    root = common_folder(found.records[0].path, found.records[-1].path) if found.records else ""
    names = [collection] if collection is not None else store.collections()
    name = names[0] if len(names) == 1 else "all collections" + (f" ({', '.join(names)})" if names else "")
    head = f"> {count(found.total, 'document')}" + (f"; {found.failed:,} more failed to ingest" if found.failed else "")
    sections: dict[str, list[str]] = {}
    for record in found.records:
        line = f"- [{link_text(title_of(record))}]({record.document_id})"
        if summary := one_line(record.summary, 300):
            line += f": {summary}"
        if record.keywords:
            line += f" (keywords: {', '.join(record.keywords)})"
        sections.setdefault("/".join(folders(relative(record.path, root))), []).append(line)
    out = [f"# {name}", "", head]
    for folder in sorted(sections):
        out += ["", f"## {folder or '.'}", "", *sections[folder]]
    return "\n".join(out) + "\n"


def _selector(grep: str, skip: int) -> Callable[[list[str]], list[int]]:
    """Which catalog texts `grep` matches (each text's first `skip` characters, the root, left out).

    The texts are searched joined, in one scan: one regex call per match instead of one per
    document.  A match that runs from one text into the next is confirmed on its own text.
    """
    rx = compile_pattern(grep, ignore_case=True, literal_fallback=True)

    def select(texts: list[str]) -> list[int]:
        entries = [t[skip:] for t in texts]
        starts = list(accumulate((len(e) + 1 for e in entries), initial=0))  # entry i ends at starts[i + 1] - 1
        joined, kept, pos = "\n".join(entries), [], 0
        deadline = time.monotonic() + GREP_SECONDS
        try:
            while (m := rx.search(joined, pos, timeout=max(deadline - time.monotonic(), 0.001))) is not None:
                i = bisect_right(starts, m.start()) - 1
                end = starts[i + 1] - 1
                if m.end() <= end or rx.search(joined, starts[i], end, timeout=max(deadline - time.monotonic(), 0.001)):
                    kept.append(i)
                pos = end + 1
        except TimeoutError:
            raise InputError(f"grep {grep!r} is too slow to run over the catalog: use a simpler pattern "
                             "(plain words work; avoid nested repeats such as (a+)+)") from None
        return kept

    return select


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
