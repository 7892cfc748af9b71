"""What a knowledge base holds, for someone who has not asked anything yet (the page's empty Ask view):
counts, collections, the documents' languages, and three example questions drawn from the documents'
own headings — made by rules, in each document's language, so the same documents give the same
questions and each names a section that is there to be found."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from docqa.store import DocumentStore
from docqa.text.language import language_of
from docqa.types import DocumentRecord

EXAMPLES = 3
CANDIDATES = 40  # documents whose headings are read (the first chunks of each)
CHUNKS_READ = 24
_ASIDE = re.compile(r"(^|/)(change ?log|changes|news|history|copyright|licen[cs]e|authors|thanks|todo)[^/]*$", re.I)
_PROSE = ("markdown", "html", "rst", "docx", "odt", "pdf", "epub", "pptx", "eml", "text", "man")  # by preference
# headings that name no subject a question could be about
_GENERIC = re.compile(r"^(introduction|overview|contents?|table of contents|index|summary|abstract|preface|foreword|"
                      r"notes?|license|licen[cs]ing|copyright|changelog|changes|history|references|appendix( [a-z0-9]+)?|"
                      r"see also|acknowledge?ments?|authors?|credits|todo|misc(ellaneous)?|general|description|commits?|"
                      r"(notable |other |breaking )?changes|release notes|what'?s new|new features|bug ?fix(es)?|fixes|"
                      r"semver-(major|minor|patch)( commits)?|version [0-9.]+|v?[0-9][0-9.]*|"
                      r"概述|简介|目录|前言|附录|参考(文献|资料)?|许可|版权|更新日志|说明)$", re.I)


@dataclass(slots=True)
class Example:
    """An example question and the section it was drawn from."""

    question: str
    language: str
    collection: str
    document_id: str
    path: str
    section: str

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question, "language": self.language, "collection": self.collection,
                "document_id": self.document_id, "path": self.path, "section": self.section}


@dataclass(slots=True)
class Overview:
    """The knowledge base as a caller sees it (its collections only)."""

    documents: int
    chunks: int
    failed: int
    skipped: int
    collections: list[dict[str, Any]]
    languages: dict[str, int]  # language -> documents
    examples: list[Example] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"documents": self.documents, "chunks": self.chunks, "failed": self.failed, "skipped": self.skipped,
                "collections": self.collections, "languages": self.languages,
                "examples": [e.to_dict() for e in self.examples]}


def overview(store: DocumentStore, collections: list[str] | None, collection: str | None = None) -> Overview:
    """Counts over `collections` (None: every one), or over `collection` alone; the example questions from there."""
    sizes = store.collection_sizes()
    seen = [c for c in sizes if collections is None or c in collections]
    if collection is not None:
        seen = [c for c in seen if c == collection]
    records = [r for c in seen for r in store.list_documents(c)]
    ok = [r for r in records if r.status == "ok"]
    status = Counter(r.status for r in records)
    languages = Counter(language_of(f"{r.title} {r.summary}") for r in ok)
    return Overview(documents=len(ok), chunks=sum(r.chunks for r in ok), failed=status["error"], skipped=status["skipped"],
                    collections=[{"name": c, "documents": sizes[c]} for c in seen],
                    languages=dict(languages.most_common()), examples=examples(store, ok))


def examples(store: DocumentStore, records: list[DocumentRecord], n: int = EXAMPLES) -> list[Example]:
    """Up to `n` questions, each from another document (and collection, while there are several), drawn from a
    section heading; a document without a usable one gives its title."""
    found: list[Example] = []
    used: set[str] = set()
    folders: set[str] = set()  # one example per folder: three corners of the knowledge base, not one
    for record in _candidates(records):
        if len(found) >= n:
            break
        folder = record.path.rsplit("/", 1)[0] + " " + language_of(record.title)  # a translation is another corner
        if folder in folders:
            continue
        example = _from_headings(store, record, used) or _from_title(record, used)
        if example is not None:
            found.append(example)
            used.add(example.section.casefold())
            folders.add(folder)
    return found


def _candidates(records: list[DocumentRecord]) -> list[DocumentRecord]:
    """Prose documents first (by format preference, then the longer first), taken from each collection in turn."""
    rank = {kind: i for i, kind in enumerate(_PROSE)}
    prose = sorted((r for r in records if r.type in rank and not _ASIDE.search(r.path)), key=lambda r: (rank[r.type], -r.chunks, r.path))
    by_collection: dict[str, list[DocumentRecord]] = {}
    for r in prose:
        by_collection.setdefault(r.collection, []).append(r)
    turns = list(by_collection.values())
    ordered = [group[i] for i in range(max(map(len, turns), default=0)) for group in turns if i < len(group)]
    return ordered[:CANDIDATES]


def _from_headings(store: DocumentStore, record: DocumentRecord, used: set[str]) -> Example | None:
    hits = store.get_hits(store.chunk_ids(record.document_id)[:CHUNKS_READ])
    paths = list(dict.fromkeys(h.section for h in hits if h.section))
    # a question heading (an FAQ) first, then a sub-section's heading, then a top one
    ranked = sorted(paths, key=lambda p: (not _leaf(p).endswith(("?", "？")), " > " not in p))
    for section in ranked:
        leaf = _leaf(section)
        if _usable(leaf) and leaf.casefold() not in used:
            title = record.title if record.title and " > " in section else ""
            return _example(record, leaf, title)
    return None


def _from_title(record: DocumentRecord, used: set[str]) -> Example | None:
    title = (record.title or "").strip()
    if not _usable(title) or "." in title[-6:] or title.casefold() in used:  # a file name is not a subject
        return None
    return _example(record, title, "")


def _example(record: DocumentRecord, leaf: str, title: str) -> Example:
    language = language_of(leaf + " " + title)
    return Example(_question(leaf, title, language), language, record.collection, record.document_id, record.path, leaf)


def _leaf(section: str) -> str:
    return section.rsplit(" > ", 1)[-1].strip()


def _usable(heading: str) -> bool:
    """A heading that names a subject: some letters, not too long, not a generic one or a number."""
    text = heading.strip().strip("#*:：").strip()
    letters = sum(ch.isalpha() for ch in text)
    return 2 <= len(text) <= 70 and letters >= max(2, len(text) // 2) and not _GENERIC.match(text)


def _question(leaf: str, title: str, language: str) -> str:
    """The example question for a heading (`title`: the document it is a section of; none: the heading is the
    document's title)."""
    leaf = leaf.strip().strip("#*:：").strip()
    if leaf.endswith(("?", "？")):
        return leaf
    if language == "zh":
        return f"{title}中关于“{leaf}”是怎么说的？" if title else f"“{leaf}”讲了什么？"
    subject = leaf[0].lower() + leaf[1:] if leaf[1:] == leaf[1:].lower() else leaf  # "Backups", not "API keys"
    return f"What does “{title}” say about {subject}?" if title else f"What is “{leaf}” about?"
