"""Documents: the knowledge base's files and collections for one caller (`kb.documents`).

Add, remove, list and re-embed, each checked against the caller's `Principal` (docqa.access) here,
in the core, so every front end gets the same answer.  Readers, the pipeline and the watcher are
imported where they are used: a command that only lists documents does not load them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from docqa.access import LOCAL, Principal, ingest_paths, require, scope, visible_collection
from docqa.errors import InputError, NotFoundError
from docqa.names import check_collection, is_valid
from docqa.settings import Settings
from docqa.store import Stores
from docqa.types import DocumentRecord, Hit

if TYPE_CHECKING:
    from docqa.crawl import AddressGuard, CrawlLimits
    from docqa.ingest.pipeline import Gate, IngestOptions, IngestReport, Progress
    from docqa.ingest.web import CrawlProgress
    from docqa.ingest.reindex import ReindexReport
    from docqa.ingest.scan import Scanner
    from docqa.ingest.watch import Watcher
    from docqa.models import Models
    from docqa.store import DocumentStore


def corrections_folder(settings: Settings) -> Path:
    """Where correction notes are kept (docqa.session.correction writes them): `corrections/` beside a
    knowledge base file, or in docqa's data folder for a database server."""
    from docqa.settings.model import default_kb_path

    location = settings.kb[len("sqlite:///"):] if settings.kb.startswith("sqlite:///") else settings.kb
    if "://" in location or location == ":memory:":
        return default_kb_path().parent / "corrections"
    return Path(location).expanduser().resolve().parent / "corrections"


def stored_path(path: str | Path) -> str:
    """A path as the index stores it: absolute, or a crawled page's URL as it is."""
    text = str(path)
    return text if text.startswith(("http://", "https://")) else os.path.abspath(text)


def readable(docs: DocumentStore, document_id: str, principal: Principal) -> DocumentRecord:
    """A document the principal may read; the same NotFoundError for another collection's as for none."""
    require(principal, "read")
    missing = f"no document {document_id!r}: 'docqa list' (GET /api/v1/documents) shows the documents and their ids"
    try:
        record = docs.document_record(document_id)
    except NotFoundError:
        raise NotFoundError(missing) from None
    visible_collection(principal, record.collection, missing)
    return record


class Documents:
    """The files of one knowledge base and their collections, as one principal may use them."""

    def __init__(self, store: Stores, settings: Settings, models: Models):
        self.store, self.settings, self.models = store, settings, models
        # Held around each write step of an add (pipeline.Gate): a server's writer turn (api/jobs.py), else none.
        self.gate: Gate | None = None

    # -- adding and removing -----------------------------------------------------------------
    def add(self, paths: Sequence[str | Path], collection: str | None = None, progress: Progress | None = None,
            include: list[str] | None = None, exclude: list[str] | None = None, *,
            principal: Principal = LOCAL, received: bool = False, missing_ok: bool = True) -> IngestReport:
        """Add files and folders (recursively, incrementally) to a collection.  A remote principal names
        only paths under `api.ingest_roots`, unless `received`: the paths are copies of files the caller
        sent (an upload), not paths it named on the server's disk.  `missing_ok`: a path that does not
        exist is a failed entry of the report (else NotFoundError before anything is read)."""
        collection, found = self.check_add(paths, collection, principal=principal, received=received,
                                           missing_ok=missing_ok)
        from docqa.ingest.ocr import check as check_ocr
        from docqa.ingest.pipeline import Ingestor

        opts = self._options()
        check_ocr(opts.ocr)  # ingest.ocr: on without the extra stops here, naming the install command
        with self.gate() if self.gate is not None else nullcontext():  # it may record the embedder
            self.models.check_embedder(writing=True)
        ingestor = Ingestor(self.store, self.scanner(include, exclude), opts, progress, self.models.embedder, self._engine(),
                            self.gate)
        return ingestor.run(found, collection)

    def add_site(self, url: str, collection: str | None = None, progress: CrawlProgress | None = None, *,
                 principal: Principal = LOCAL, served: bool = False, transport=None) -> IngestReport:
        """Crawl a documentation site within the URL's folder into a collection, each page a document
        whose path is its URL (docqa.ingest.web); again: only what changed.  `served`: the request came
        through a server, which may crawl only the hosts api.ingest_urls names (checked at every request)."""
        collection, guard = self.check_site(url, collection, principal=principal, served=served)
        from docqa.ingest.web import SiteIngestor

        self.models.check_embedder(writing=True)
        site = SiteIngestor(self.store, self._options(), self.models.embedder, self.crawl_limits(), guard, progress, transport)
        return site.run(url, collection)

    def check_site(self, url: str, collection: str | None = None, *, principal: Principal = LOCAL,
                   served: bool = False) -> tuple[str, AddressGuard | None]:
        """Validate an `add_site` without doing it: the collection, and the guard a served crawl goes through."""
        from docqa.crawl import AddressGuard, is_url

        if not is_url(url):
            raise InputError(f"{url}: not an http(s) URL (a site is crawled from a URL such as https://docs.example.org/guide/)")
        collection = scope(principal, collection) or self.settings.collection
        require(principal, "write", collection)
        self.check_new_collection(collection)
        if not served:
            return collection, None
        guard = AddressGuard(self.settings.api.ingest_urls)
        guard.check_url(url)
        return collection, guard

    @staticmethod
    def merged(reports: Sequence[IngestReport]) -> IngestReport:
        """Several adds' and crawls' reports as one (a job that crawled sites and read folders)."""
        from docqa.ingest.web import merged

        return merged(list(reports))

    def crawl_limits(self) -> CrawlLimits:
        """settings.crawl as the crawler takes it."""
        from docqa.crawl import CrawlLimits

        c, mb = self.settings.crawl, 1024 * 1024
        return CrawlLimits(max_pages=c.max_pages, max_depth=c.max_depth, max_page_bytes=int(c.max_page_mb * mb),
                           max_bytes=int(c.max_total_mb * mb), request_timeout=c.request_timeout,
                           crawl_timeout=c.max_minutes * 60, per_host=c.per_host, rate=c.rate)

    def check_add(self, paths: Sequence[str | Path], collection: str | None = None, *, principal: Principal = LOCAL,
                  received: bool = False, missing_ok: bool = True) -> tuple[str, list[Path]]:
        """Validate an `add` without doing it (a server checks before it queues the work): the collection
        it would fill and the paths it would read, or the error the add would raise."""
        collection = scope(principal, collection) or self.settings.collection
        require(principal, "write", collection)
        self.check_new_collection(collection)
        found = [Path(p) for p in paths] if received else ingest_paths(principal, paths, *self._ingest_roots(principal))
        if not missing_ok and (missing := [str(p) for p in found if not os.path.exists(p)]):
            raise NotFoundError(f"no such file or folder on the server: {', '.join(missing)} (give absolute paths)")
        return collection, found

    def check_new_collection(self, collection: str) -> None:
        """InputError for a name a new collection may not have (docqa.names); a collection that
        exists already keeps its name, whatever it is (so it stays reachable)."""
        if not is_valid(collection) and collection not in self.store.documents.collection_sizes():
            check_collection(collection)

    def _ingest_roots(self, principal: Principal) -> tuple[list[str], str]:
        """The folders `principal` may name server files under, and the setting that lists them: an MCP
        client over stdio mcp.ingest_roots (unset: the folders already added), anyone else api.ingest_roots."""
        if principal.stdio:
            roots = self.settings.mcp.ingest_roots
            return (self.added_folders() if roots is None else list(roots)), "mcp.ingest_roots"
        return list(self.settings.api.ingest_roots), "api.ingest_roots"

    def added_folders(self) -> list[str]:
        """The folders documents were added from: each collection's deepest common folder (correction
        notes, archive members and crawled pages aside), without one inside another."""
        from docqa.store.catalog import common_folder

        notes = str(corrections_folder(self.settings)) + os.sep
        by_collection: dict[str, list[str]] = {}
        for record in self.store.documents.list_documents(None):
            if not record.path.startswith((notes, "http://", "https://")):  # crawled pages have no folder
                by_collection.setdefault(record.collection, []).append(record.path.split("!/", 1)[0])
        folders = {common_folder(min(p), max(p)) or os.sep for p in by_collection.values()}
        return sorted(f for f in folders if not any(f != o and f.startswith(o) for o in folders))

    def remove(self, paths: Sequence[str | Path], collection: str | None = None, *,
               principal: Principal = LOCAL) -> list[DocumentRecord]:
        """Remove documents by file path, or everything under a folder path. Returns what was removed."""
        from docqa.ingest.readers.archive import is_archive_name

        collection = scope(principal, collection) or self.settings.collection
        require(principal, "write", collection)
        doomed: dict[str, DocumentRecord] = {}
        for raw in paths:
            path = stored_path(raw)
            for prefix in (path, path + "!") if is_archive_name(path) else (path,):  # an archive's members: a.zip!/…
                for record in self.store.documents.list_documents(collection, path_prefix=prefix):
                    doomed[record.document_id] = record
        self.store.documents.delete_documents(doomed)
        return list(doomed.values())

    def remove_one(self, document_id: str, *, principal: Principal = LOCAL) -> DocumentRecord:
        """Remove one document by id; returns what was removed (NotFoundError when there is no such
        document the principal can see)."""
        require(principal, "write")
        record = self.record(document_id, principal=principal)
        require(principal, "write", record.collection)
        self.store.documents.delete_documents([document_id])
        return record

    def reindex(self, progress: Callable[[int, int], None] | None = None, *, principal: Principal = LOCAL) -> ReindexReport:
        """Embed every chunk with the configured model (docqa.ingest.reindex)."""
        require(principal, "reindex")
        from docqa.ingest.reindex import reindex

        report = reindex(self.store.vectors, self.models.reindexer(), progress, self.gate)
        self.models.forget_retriever()
        return report

    def changes(self, document_ids: list[str], *, principal: Principal = LOCAL) -> list[dict]:
        """How the files of indexed documents differ on disk since they were indexed: one entry per
        document that changed or cannot be read now (a file that cannot be read is not deleted)."""
        from docqa.ingest.pipeline import disk_change

        out = []
        for doc_id in dict.fromkeys(document_ids):
            record = self.record(doc_id, principal=principal)
            change = disk_change(record)
            if change is not None:
                out.append({"document_id": doc_id, "path": record.path, "collection": record.collection,
                            "state": change[0], "why": change[1]})
        return out

    def refresh(self, document_ids: list[str], *, principal: Principal = LOCAL) -> dict[str, list]:
        """Re-ingest the files of indexed documents, each into its own collection: only files the
        knowledge base already indexes, and only for a principal that may write those collections."""
        records = [self.record(doc_id, principal=principal) for doc_id in dict.fromkeys(document_ids)]
        for record in records:
            require(principal, "write", record.collection)
        out: dict[str, list] = {"updated": [], "unchanged": [], "failed": [], "unreadable": []}
        for collection in dict.fromkeys(r.collection for r in records):
            paths = [r.path for r in records if r.collection == collection]
            # the index's own paths, not paths the caller named: no ingest-roots check (`received`)
            done = self.add(paths, collection, principal=principal, received=True).to_dict()
            for key in out:
                out[key] += done[key]
        return out

    # -- how folders are walked and watched --------------------------------------------------
    def scanner(self, include: list[str] | None = None, exclude: list[str] | None = None) -> Scanner:
        """The rules `add` walks folders with: settings.ingest, `include` instead of its globs, `exclude` added to its."""
        from docqa.ingest.scan import Scanner

        s = self.settings.ingest
        return Scanner(include=include if include is not None else s.include, exclude=[*s.exclude, *(exclude or [])],
                       gitignore=s.gitignore, hidden=s.hidden)

    def watcher(self, roots: Sequence[str | Path], collection: str | None = None, include: list[str] | None = None,
                exclude: list[str] | None = None, *, sync: Callable[[list[Path]], IngestReport] | None = None,
                quiet_ms: int | None = None) -> Watcher:
        """A Watcher keeping folders in step with this index (`run(stop, on_batch)`, one `Batch` each): every
        batch is one incremental `add` of what changed, with add's rules; `sync` replaces that add (the
        API server queues it on its one writer)."""
        from docqa.ingest.watch import QUIET_MS, Watcher

        self.check_new_collection(collection or self.settings.collection)  # refused now, not on the first batch
        sync = sync or _Sync(self, collection, include, exclude)
        return Watcher(sync, roots, self.scanner(include, exclude), QUIET_MS if quiet_ms is None else quiet_ms)

    def options(self, *, principal: Principal = LOCAL) -> dict:
        """What an editor may send: the server folders it may have indexed (api.ingest_roots; none: only
        uploads), the hosts it may have crawled (api.ingest_urls) and the largest upload request."""
        require(principal, "write")
        api = self.settings.api
        return {"ingest_roots": list(api.ingest_roots), "ingest_urls": list(api.ingest_urls), "max_upload_mb": api.max_upload_mb}

    @staticmethod
    def file_type(name: str, head: bytes) -> str | None:
        """The format family a file with this name and these first bytes would be read as; None when no
        reader takes it (binary content of no known format, or a binary format's name on other content)."""
        from docqa.ingest.readers import sniff_type

        return sniff_type(Path(name), head)

    # -- collections -------------------------------------------------------------------------
    def collections(self, *, principal: Principal = LOCAL) -> dict[str, int]:
        """Every collection the principal sees: its name and its number of documents."""
        require(principal, "read")
        return {name: n for name, n in self.store.documents.collection_sizes().items() if principal.can_see(name)}

    def create_collection(self, name: str, *, principal: Principal = LOCAL) -> bool:
        """Create an empty collection (False when it exists already)."""
        check_collection(name)
        require(principal, "write", scope(principal, name))
        return self.store.documents.create_collection(name)

    def delete_collection(self, name: str, *, principal: Principal = LOCAL) -> list[DocumentRecord]:
        """Delete a collection and its documents (the files themselves are not touched)."""
        require(principal, "write", scope(principal, name))
        return self.store.documents.delete_collection(name)

    # -- reading -----------------------------------------------------------------------------
    def is_empty(self) -> bool:
        """True when no document is indexed (nothing added yet, or every file failed or was skipped)."""
        return not any(self.store.documents.collection_sizes().values())

    def get(self, path: str | Path, collection: str | None = None, *, principal: Principal = LOCAL) -> DocumentRecord:
        """The document indexed for a file path."""
        require(principal, "read")
        collection = scope(principal, collection) or self.settings.collection
        from docqa.ingest.pipeline import document_id

        doc_id = document_id(collection, stored_path(path))
        for record in self.store.documents.list_documents(collection, path_prefix=stored_path(path)):
            if record.document_id == doc_id:
                return record
        raise NotFoundError(f"{path} is not indexed in collection {collection!r}: add it with 'docqa add'")

    def record(self, document_id: str, *, principal: Principal = LOCAL) -> DocumentRecord:
        """A document by id (NotFoundError for one the principal may not read, as for none)."""
        return readable(self.store.documents, document_id, principal)

    def namesakes(self, paths: list[str], collection: str | None = None, *, principal: Principal = LOCAL) -> list[str]:
        """Paths of the other documents the principal sees (in `collection`, when given) whose file name
        is that of one of `paths`: a label naming only `README.Debian.gz` would not say which one."""
        names = dict.fromkeys(p.replace("\\", "/").rsplit("/", 1)[-1] for p in paths)
        given = set(paths)
        return [r.path for name in names for r in self.store.documents.find_documents(name)
                if r.path not in given and principal.can_see(r.collection) and collection in (None, r.collection)]

    def chunk(self, chunk_id: str, *, principal: Principal = LOCAL) -> Hit:
        """One chunk with its location."""
        require(principal, "read")
        hits = [h for h in self.store.documents.get_hits([chunk_id]) if principal.can_see(h.collection)]
        if not hits:
            raise NotFoundError(f"no chunk {chunk_id!r}: chunk ids come from 'docqa search'")
        return hits[0]

    def chunks(self, document_id: str, *, principal: Principal = LOCAL) -> list[Hit]:
        """All chunks of a document, in order."""
        self.record(document_id, principal=principal)
        return self.store.documents.get_hits(self.store.documents.chunk_ids(document_id))

    def around(self, document_id: str, chunk_id: str, *, principal: Principal = LOCAL) -> list[Hit]:
        """The chunks just before and just after a chunk in its document, in order (none past its ends)."""
        self.record(document_id, principal=principal)
        ids = self.store.documents.chunk_ids(document_id)
        if chunk_id not in ids:
            return []
        i = ids.index(chunk_id)
        return self.store.documents.get_hits(ids[max(i - 1, 0):i] + ids[i + 1:i + 2])

    def text(self, document_id: str, *, principal: Principal = LOCAL) -> str:
        """A document's stored text (the text every chunk's span points into)."""
        self.record(document_id, principal=principal)
        return self.store.documents.document_text(document_id)

    # -- how the pipeline is set up ------------------------------------------------------------
    def _engine(self):
        """settings.ingest.engine as the pipeline takes it: None (local worker processes) or a RayEngine."""
        s = self.settings
        if s.ingest.engine == "local":
            return None
        from docqa.ingest.ray_engine import EmbedSpec, RayEngine

        e, embedder = s.embed, self.models.embedder
        spec = embedder and EmbedSpec(e.provider, e.model, e.base_url, e.api_key, e.timeout, e.window_chars,
                                      embedder.fingerprint.key)
        return RayEngine(s.ingest.ray_address, s.ingest.workers, spec)

    def _options(self) -> IngestOptions:
        """settings.chunk and settings.ingest as the ingest pipeline takes them."""
        from docqa.ingest.ocr import OcrOptions
        from docqa.ingest.pipeline import IngestOptions
        from docqa.ingest.readers.zipguard import ZipLimits

        s, mb = self.settings, 1024 * 1024
        return IngestOptions(
            max_tokens=s.chunk.max_tokens, overlap=s.chunk.overlap,
            max_bytes=int(s.ingest.max_file_mb * mb), workers=s.ingest.workers,
            ocr=OcrOptions(mode=s.ingest.ocr, dpi=s.ingest.ocr_dpi, max_pages=s.ingest.ocr_max_pages),
            parse_timeout=s.ingest.parse_timeout, worker_memory=s.ingest.worker_memory_mb * mb,
            commit_seconds=s.ingest.commit_seconds,
            zip_limits=ZipLimits(max_unpacked=int(s.ingest.max_unpacked_mb * mb), max_member=int(s.ingest.max_member_mb * mb),
                                 max_members=s.ingest.max_members, max_ratio=s.ingest.max_ratio),
        )

    # last in the class: the name `list` would shadow the builtin in the annotations below it
    def list(self, collection: str | None = None, *, principal: Principal = LOCAL, text: str | None = None,
             statuses: Sequence[str] | None = None) -> list[DocumentRecord]:
        """Documents of a collection (every collection the principal sees when None); `text`: only those
        whose path or title holds it (ignoring case); `statuses`: only ok, error or skipped ones."""
        require(principal, "read")
        if collection is not None:
            scope(principal, collection)
        needle = (text or "").casefold()
        return [r for r in self.store.documents.list_documents(collection) if principal.can_see(r.collection)
                and (not statuses or r.status in statuses)
                and (not needle or needle in r.path.casefold() or needle in (r.title or "").casefold())]


class _Sync:
    """A watcher's default batch: one incremental `add` of the changed paths, with the watch's rules."""

    def __init__(self, documents: Documents, collection: str | None, include: list[str] | None,
                 exclude: list[str] | None):
        self.documents, self.collection, self.include, self.exclude = documents, collection, include, exclude

    def __call__(self, targets: list[Path]) -> IngestReport:
        return self.documents.add(targets, self.collection, include=self.include, exclude=self.exclude)
