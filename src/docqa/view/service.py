"""Viewer: a document as its viewer shows it, for one caller (`kb.viewer`) — its text divided into
pages, slides or sheets, its original file, a PDF page as an image with a cited span's boxes on it,
and a range of its lines as a citable passage."""

from __future__ import annotations

from docqa.access import LOCAL, Principal
from docqa.errors import NotFoundError
from docqa.ingest.service import readable
from docqa.settings import Settings
from docqa.store import DocumentStore
from docqa.store.catalog import common_folder
from docqa.types import DocumentRecord, Hit
from docqa.view.boxes import Box, span_boxes
from docqa.view.layout import layout
from docqa.view.original import Original, original_of

MB = 1024 * 1024


class Viewer:
    """The documents a principal may read, as the viewer and the agent's citations show them."""

    def __init__(self, documents: DocumentStore, settings: Settings):
        self.documents, self.settings = documents, settings

    def passage(self, document_id: str, line_start: int, line_end: int, *, principal: Principal = LOCAL) -> Hit:
        """Lines `line_start`..`line_end` of a document as a citable passage (a Hit spanning them)."""
        record = readable(self.documents, document_id, principal)
        text = self.documents.document_text(document_id)
        starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        a = max(1, min(line_start, len(starts)))
        b = max(a, min(line_end, len(starts)))
        char_end = starts[b] - 1 if b < len(starts) else len(text)
        return Hit(chunk_id=f"{document_id}:L{a}-{b}", document_id=document_id, path=record.path,
                   collection=record.collection, title=record.title, section="", page=None, page_end=None,
                   line_start=a, line_end=b, char_start=starts[a - 1], char_end=char_end, score=0.0,
                   text=text[starts[a - 1]:char_end], type=record.type)

    def view(self, document_id: str, *, principal: Principal = LOCAL) -> dict:
        """A document's stored text and the pages, slides or sheets it divides into (`layout`, None for prose)."""
        record, docs = readable(self.documents, document_id, principal), self.documents
        text = docs.document_text(document_id)
        hits = docs.get_hits(docs.chunk_ids(document_id)) if record.type in ("xlsx", "csv") else []
        shape = layout(record.type, text, docs.page_lines(document_id), docs.document_metadata(document_id), hits)
        return {"document_id": document_id, "path": record.path, "type": record.type, "text": text, "layout": shape}

    def file(self, document_id: str, *, principal: Principal = LOCAL) -> Original:
        """A document's original file, read now within ingest.max_file_mb: only the indexed file
        (its content hash), not through a symlink, under the folder its collection was added from;
        UnreadableFileError (with the reason) otherwise, or when it is gone from disk."""
        record = readable(self.documents, document_id, principal)
        return original_of(record.path, int(self.settings.ingest.max_file_mb * MB), record.size,
                           record.content_hash, self._added_from(record.collection))

    def _added_from(self, collection: str) -> str | None:
        """The folder a collection's documents were added from (their deepest common folder)."""
        bounds = self.documents.path_bounds(collection)
        return (common_folder(*bounds) or None) if bounds else None

    def page_image(self, document_id: str, page: int, scale: float | None = None, *,
                   principal: Principal = LOCAL) -> bytes:
        """Page `page` of a PDF document as a PNG (NotFoundError for another type or past the last page)."""
        from docqa.view.render import DEFAULT_SCALE, page_png

        record = self._pdf(document_id, principal)
        original = self.file(document_id, principal=principal)
        bounds = self.settings.ingest  # a page is rendered within the limits a file is parsed in
        return page_png(original, (document_id, record.content_hash), page, scale or DEFAULT_SCALE,
                        bounds.parse_timeout, bounds.worker_memory_mb * MB)

    def page_boxes(self, document_id: str, page: int, char_start: int, char_end: int, *,
                   principal: Principal = LOCAL) -> list[Box]:
        """Where the text span [char_start, char_end) stands on page `page` of a PDF document."""
        self._pdf(document_id, principal)
        docs = self.documents
        text, metadata = docs.document_text(document_id), docs.document_metadata(document_id)
        units = layout("pdf", text, docs.page_lines(document_id), metadata, [])["units"]  # type: ignore[index]
        original = self.file(document_id, principal=principal)
        return span_boxes(original, text, units, metadata, page, char_start, char_end)

    def _pdf(self, document_id: str, principal: Principal) -> DocumentRecord:
        record = readable(self.documents, document_id, principal)
        if record.type != "pdf":
            raise NotFoundError(f"{record.path} is a {record.type} document: only PDF documents have page images")
        return record
