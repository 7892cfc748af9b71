"""KnowledgeBase: the one core every front end (CLI, API, MCP, web) calls."""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import date, datetime, UTC
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from docqa.access import (LOCAL, Principal, check_grant, ingest_paths, manageable, require, scope, visible_collection,
                          visible_run, visible_runs, visible_sessions)
from docqa.clock import now
from docqa.embed import Embedder, Fingerprint, embed_text, make_embedder, text_hash
from docqa.errors import AuthError, ConfigError, EmbedderMismatchError, InputError, NotFoundError, PermissionDeniedError
from docqa.store import ChunkFilter, EmbedInput, Stores, open_store
from docqa.llm import ChatModel, Choice, capability, choose_chat_model
from docqa.names import check_collection, check_nul, is_valid
from docqa.llm.deadline import reply_within
from docqa.llm.factory import OLLAMA_URL, escalation_model
from docqa.retrieve import Retriever, SearchResults
from docqa.retrieve.rerank import RERANKERS, LLMReranker, rerank_results
from docqa.settings import Settings
# Ingest, browsing, answering and the log are imported where they are used: a command that only
# searches should not pay for the readers, the agent or the exporters at start-up (tests/test_startup.py).
if TYPE_CHECKING:
    from docqa.answer import recall
    from docqa.answer.library import Library
    from docqa.browse import DocPage, DocText, GrepResult
    from docqa.ingest.pipeline import IngestReport, Progress
    from docqa.ingest.scan import Scanner
    from docqa.ingest.watch import Batch, Watcher  # noqa: F401  (Batch: what a watcher reports, for the front ends)
    from docqa.run.control import Control
    from docqa.run.life import Run
    from docqa.skills import Skill, SkillSet
    from docqa.view import Box, Original
from docqa.types import RATINGS, ROLES, Answer, ApiKeyRecord, DocumentRecord, Event, FeedbackRecord, Hit, RunRecord, SessionRecord, SessionSummary

log = logging.getLogger(__name__)
_REINDEX_BATCH = 256
_ESTIMATE_RUNS = 1000  # recent runs an estimate looks through (the plan averages the last of each mode)
API_KEY_PREFIX = "dq_"  # every API key starts with it (secret scanners can match it)


@dataclass(slots=True)
class ReindexReport:
    """What one `reindex` did."""

    embedder: str | None  # fingerprint key, None when vectors were dropped
    embedded: int  # distinct texts embedded now
    reused: int  # chunks whose vector already existed (an interrupted run, or equal texts)
    chunks: int
    elapsed: float = 0.0

    def to_dict(self) -> dict:
        return {"embedder": self.embedder, "embedded": self.embedded, "reused": self.reused,
                "chunks": self.chunks, "elapsed_s": round(self.elapsed, 3)}


class KnowledgeBase:
    """A knowledge base: add and remove files, list documents, search chunks."""

    def __init__(self, settings: Settings | None = None, store: Stores | None = None, embedder: Embedder | None | bool = True,
                 chat_model: ChatModel | Choice | None = None, *, create: bool = True):
        """`create`: False refuses a knowledge base file that does not exist (NoKnowledgeBaseError)
        instead of creating it.  `embedder`: True builds the configured one (lazily, on first use); an instance or None overrides it.
        `chat_model`: the model that writes answers (default: chosen from settings.llm); a `Choice` is
        used as made (see `sibling`)."""
        self.settings = settings or Settings()
        self.store = store or open_store(self.settings.kb, create=create)
        self._embedder = embedder
        self._owns_embedder = embedder is True
        self._retriever: Retriever | None = None
        self._chat_model = chat_model
        self._escalation: ChatModel | None = None
        self._chat: Choice | None = chat_model if isinstance(chat_model, Choice) else None
        self._question_vectors: dict = {}  # earlier questions' embeddings, for recall (docqa.answer.recall)
        self._recent_runs: recall.RecentRuns | None = None  # answered runs recall looks through, topped up each look
        if store is None:
            self._reap_runs()

    def _reap_runs(self) -> None:
        """Runs left RUNNING by a process that died (killed, crashed) are marked FAILED, with the reason."""
        from docqa.run.owner import reap

        try:
            reaped = reap(self.store.runlog)
        except Exception as exc:  # housekeeping never stops an open (e.g. a read-only file): said, and left as is
            log.warning("could not mark the runs of dead processes as failed: %s", exc)
            return
        if reaped:
            log.info("%d run(s) left running by a process that ended are now marked FAILED", len(reaped))

    def sibling(self) -> KnowledgeBase:
        """Another KnowledgeBase on the same index, with its own connection, sharing this one's embedder
        and chat model (one per server thread; the models load once and this one closes them)."""
        return KnowledgeBase(self.settings, embedder=self.embedder, chat_model=self.chat)

    @property
    def embedder(self) -> Embedder | None:
        """The configured embedder (None: BM25 only); built on first use."""
        if self._embedder is True:
            e = self.settings.embed
            self._embedder = make_embedder(e.provider, e.model, e.base_url, e.api_key, e.timeout, e.window_chars)
        return self._embedder  # type: ignore[return-value]

    @property
    def retriever(self) -> Retriever:
        if self._retriever is None:
            self._retriever = Retriever(self.store, self.settings.search, self.embedder)
        return self._retriever

    def _check_embedder(self, writing: bool) -> None:
        """Refuse to mix vectors of two models: the index records which one made its vectors."""
        configured = self.embedder.fingerprint if self.embedder else None
        raw = self.store.vectors.embedder()
        stored = Fingerprint.from_json(raw) if raw else None
        if stored == configured:
            return
        if self.store.vectors.vector_count()[1] == 0:  # an empty index adopts the configured embedder
            self.store.vectors.set_embedder(configured.to_json() if configured else None, configured.key if configured else None)
            return
        if stored is None and configured is not None:
            problem = f"its chunks have no vectors of {configured.name} yet"
        elif configured is None:
            if not writing:
                return  # BM25 still works; new chunks would lack vectors, so writing is refused
            problem = f"it holds vectors of {stored.name}, but embed.provider is 'none'"
        else:
            problem = f"it was embedded with {stored.key}, but the configured embedder is {configured.key}"
        raise EmbedderMismatchError(
            f"{self.settings.kb}: {problem}. Run 'docqa reindex' to embed it with the configured model "
            "(incremental and resumable), or configure the embedder it was built with."
        )

    # -- ingest ----------------------------------------------------------------------------
    def add(self, paths: Sequence[str | Path], collection: str | None = None, progress: Progress | None = None,
            include: list[str] | None = None, exclude: list[str] | None = None, *,
            principal: Principal = LOCAL, received: bool = False) -> IngestReport:
        """Add files and folders (recursively, incrementally) to a collection.  A remote principal names
        only paths under `api.ingest_roots`, unless `received`: the paths are copies of files the caller
        sent (an upload), not paths it named on the server's disk."""
        s = self.settings
        collection = scope(principal, collection) or s.collection
        require(principal, "write", collection)
        self.check_new_collection(collection)
        found = [Path(p) for p in paths] if received else ingest_paths(principal, paths, *self._ingest_roots(principal))
        from docqa.ingest.ocr import check as check_ocr
        from docqa.ingest.pipeline import Ingestor

        opts = self._ingest_options()
        check_ocr(opts.ocr)  # ingest.ocr: on without the extra stops here, naming the install command
        self._check_embedder(writing=True)
        ingestor = Ingestor(self.store, self.scanner(include, exclude), opts, progress, self.embedder, self._engine())
        return ingestor.run(found, collection)

    def _ingest_roots(self, principal: Principal) -> tuple[list[str], str]:
        """The folders `principal` may name server files under, and the setting that lists them: an MCP
        client over stdio mcp.ingest_roots (unset: the folders already added), anyone else api.ingest_roots."""
        if principal.stdio:
            roots = self.settings.mcp.ingest_roots
            return (self.added_folders() if roots is None else list(roots)), "mcp.ingest_roots"
        return list(self.settings.api.ingest_roots), "api.ingest_roots"

    def added_folders(self) -> list[str]:
        """The folders documents were added from: each collection's deepest common folder (correction
        notes and archive members aside), without one inside another."""
        from docqa.browse.paths import common_folder

        notes = str(self._corrections_folder()) + os.sep
        by_collection: dict[str, list[str]] = {}
        for record in self.store.documents.list_documents(None):
            if not record.path.startswith(notes):
                by_collection.setdefault(record.collection, []).append(record.path.split("!/", 1)[0])
        folders = {common_folder(min(p), max(p)) or os.sep for p in by_collection.values()}
        return sorted(f for f in folders if not any(f != o and f.startswith(o) for o in folders))

    def _engine(self):
        """settings.ingest.engine as the pipeline takes it: None (local worker processes) or a RayEngine."""
        s = self.settings
        if s.ingest.engine == "local":
            return None
        from docqa.ingest.ray_engine import EmbedSpec, RayEngine

        e, embedder = s.embed, self.embedder
        spec = embedder and EmbedSpec(e.provider, e.model, e.base_url, e.api_key, e.timeout, e.window_chars,
                                      embedder.fingerprint.key)
        return RayEngine(s.ingest.ray_address, s.ingest.workers, spec)

    def _ingest_options(self):
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
        sync = sync or (lambda targets: self.add(targets, collection, include=include, exclude=exclude))
        return Watcher(sync, roots, self.scanner(include, exclude), QUIET_MS if quiet_ms is None else quiet_ms)

    def reindex(self, progress: Callable[[int, int], None] | None = None, *, principal: Principal = LOCAL) -> ReindexReport:
        """Embed every chunk with the configured model: only texts without its vector are embedded,
        committed batch by batch, so an interrupted run resumes where it stopped."""
        require(principal, "reindex")
        started = time.perf_counter()
        embedder = self.embedder
        if embedder is None:
            self.store.vectors.set_embedder(None, None)
            return ReindexReport(None, 0, 0, self.store.vectors.vector_count()[1], time.perf_counter() - started)
        key = embedder.fingerprint.key
        self.store.vectors.fill_hashes(_hash_input)
        before, total = self.store.vectors.vector_count(key)
        embedded = 0
        while batch := self.store.vectors.unembedded(key, _REINDEX_BATCH):
            texts = [embed_text(b.title, b.section, b.text, b.context, b.symbol) for b in batch]
            vectors = embedder.embed_batch(texts, "passage")
            self.store.vectors.put_vectors(key, {b.text_hash: v for b, v in zip(batch, vectors)})
            embedded += len(batch)
            if progress:
                progress(self.store.vectors.vector_count(key)[0], total)
        self.store.vectors.set_embedder(embedder.fingerprint.to_json(), key)
        if self._retriever is not None:
            self._retriever.close()
            self._retriever = None
        return ReindexReport(key, embedded, before, total, time.perf_counter() - started)

    def remove(self, paths: Sequence[str | Path], collection: str | None = None, *,
               principal: Principal = LOCAL) -> list[DocumentRecord]:
        """Remove documents by file path, or everything under a folder path. Returns what was removed."""
        from docqa.ingest.readers.archive import is_archive_name

        collection = scope(principal, collection) or self.settings.collection
        require(principal, "write", collection)
        doomed: dict[str, DocumentRecord] = {}
        for raw in paths:
            path = os.path.abspath(raw)
            for prefix in (path, path + "!") if is_archive_name(path) else (path,):  # an archive's members: a.zip!/…
                for record in self.store.documents.list_documents(collection, path_prefix=prefix):
                    doomed[record.document_id] = record
        self.store.documents.delete_documents(doomed)
        return list(doomed.values())

    def remove_document(self, document_id: str, *, principal: Principal = LOCAL) -> DocumentRecord:
        """Remove one document by id; returns what was removed (NotFoundError when there is no such
        document the principal can see)."""
        require(principal, "write")
        record = self._record_of(document_id, principal)
        require(principal, "write", record.collection)
        self.store.documents.delete_documents([document_id])
        return record

    # -- collections -----------------------------------------------------------------------
    def collections(self, *, principal: Principal = LOCAL) -> dict[str, int]:
        """Every collection the principal sees: its name and its number of documents."""
        require(principal, "read")
        return {name: n for name, n in self.store.documents.collection_sizes().items() if principal.can_see(name)}

    def create_collection(self, name: str, *, principal: Principal = LOCAL) -> bool:
        """Create an empty collection (False when it exists already)."""
        check_collection(name)
        require(principal, "write", scope(principal, name))
        return self.store.documents.create_collection(name)

    def check_new_collection(self, collection: str) -> None:
        """InputError for a name a new collection may not have (docqa.names); a collection that
        exists already keeps its name, whatever it is (so it stays reachable)."""
        if not is_valid(collection) and collection not in self.store.documents.collection_sizes():
            check_collection(collection)

    def delete_collection(self, name: str, *, principal: Principal = LOCAL) -> list[DocumentRecord]:
        """Delete a collection and its documents (the files themselves are not touched)."""
        require(principal, "write", scope(principal, name))
        return self.store.documents.delete_collection(name)

    @staticmethod
    def file_type(name: str, head: bytes) -> str | None:
        """The format family a file with this name and these first bytes would be read as; None when no
        reader takes it (binary content of no known format, or a binary format's name on other content)."""
        from docqa.ingest.readers import sniff_type

        return sniff_type(Path(name), head)

    # -- read ------------------------------------------------------------------------------
    def documents(self, collection: str | None = None, *, principal: Principal = LOCAL, text: str | None = None,
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

    def root(self, *, principal: Principal = LOCAL) -> str:
        """The deepest folder holding every indexed document, with its trailing separator ('' when
        there are none): the folder they were added from, when one was."""
        require(principal, "read")
        from docqa.browse.paths import common_folder

        bounds = self.store.documents.path_bounds(None)
        return common_folder(*bounds) if bounds else ""

    def is_empty(self) -> bool:
        """True when no document is indexed (nothing added yet, or every file failed or was skipped)."""
        return not any(self.store.documents.collection_sizes().values())

    def warm(self) -> None:
        """Load now what a first search loads (the embedding model, the stored vectors), e.g. on a
        server's start; nothing when there is no embedder or its vectors are not the index's."""
        embedder = self.embedder
        if embedder is None:
            return
        embedder.warm()
        stored = self.store.vectors.embedder()
        if stored and Fingerprint.from_json(stored) == embedder.fingerprint:
            self.store.vectors.prepare(self.retriever.model_key)

    def search(self, query: str, top_k: int | None = None, collection: str | None = None, *, mode: str | None = None,
               path_glob: str | None = None, types: list[str] | tuple[str, ...] = (), rerank: str | None = None,
               principal: Principal = LOCAL) -> SearchResults:
        """Best chunks for a query (hybrid by default), across every collection the principal sees
        unless one is given.

        The result is a list of hits, best first, with `.low_relevance` set when even the best
        hit scores under `search.relevance_threshold`.  `rerank` (default `search.rerank`): `llm`
        has the chat model reorder the best hits (`.rerank` reports what it did).
        """
        require(principal, "read")
        check_nul(query, "query")  # no database stores a NUL
        collection = scope(principal, collection)
        s = self.settings.search
        mode = mode or s.mode
        if mode != "bm25" and self.embedder is not None:
            self._check_embedder(writing=False)
        where = ChunkFilter(collection, path_glob, tuple(types))
        method = (rerank or s.rerank).lower()
        if method == "none":
            return self.retriever.search(query, top_k, where, mode)
        if method not in RERANKERS:
            raise ConfigError(f"unknown reranker {rerank!r}: use one of {', '.join(RERANKERS)}")
        top_k = top_k or s.top_k
        # the reranker sees only what this principal's search returned: it reorders, never widens
        results = self.retriever.search(query, max(top_k, s.rerank_depth), where, mode)
        return rerank_results(results, self._llm_reranker(), s.rerank_depth, top_k, s.rerank_timeout,
                              missing=f"no chat model ({self.chat.reason})")

    def _llm_reranker(self) -> LLMReranker | None:
        """The chat model as a reranker (None: there is no chat model)."""
        model = self.chat.model
        if model is None:
            return None
        return LLMReranker(lambda system, user, max_tokens, deadline: reply_within(model, system, user, max_tokens, deadline))

    # -- answer ----------------------------------------------------------------------------
    @property
    def chat(self) -> Choice:
        """The chat model answers come from (None: extractive) and why; chosen once, on first use."""
        if self._chat is None:
            s = self.settings.llm
            if self._chat_model is not None and not isinstance(self._chat_model, Choice):  # a Choice is _chat already
                self._chat = Choice(self._chat_model, f"{self._chat_model.name} (given)", source="given")
            else:
                from docqa.llm.local import default_models_dir
                from docqa.llm.server import LocalServing

                local = LocalServing(Path(s.models_dir).expanduser() if s.models_dir else default_models_dir(),
                                     ctx=max(4096, s.context_window))
                self._chat = choose_chat_model(s.provider, s.base_url, s.model, s.api_key, s.temperature, s.max_tokens,
                                               s.timeout, s.max_retries, s.ollama_url or OLLAMA_URL,
                                               via=s.from_environment.get("base_url"), local=local)
            capability.declare(self._chat.model, s.tool_calling)  # small? calls tools reliably?
        return self._chat

    @property
    def escalation_model(self) -> ChatModel | None:
        """llm.escalation_model, asked once when every review round was rejected (docqa.answer.escalate)."""
        s = self.settings.llm
        if self._escalation is None and s.escalation_model:
            self._escalation = escalation_model(s.escalation_model, s.escalation_base_url, s.escalation_api_key,
                                                default_url=s.base_url, default_key=s.api_key, timeout=s.timeout,
                                                max_retries=s.max_retries, temperature=s.temperature, max_tokens=s.max_tokens)
        return self._escalation

    def start(self, question: str, *, principal: Principal = LOCAL, session_id: str | None = None,
              collection: str | None = None, check: bool | None = None, mode: str | None = None, record: bool = True,
              control: Control | None = None, timeout: float | None = None, fresh: bool = False) -> Run:
        """Start answering a question: a `Run`, an iterator of its events (metadata, status, content,
        citations, failure, done) and a handle to steer, follow up or cancel it (docqa.run.life).

        Nothing happens until it is iterated.  A follow-up in the same `session_id` is understood
        from the previous turn.  `record=False` keeps it out of the run log (evaluations).  `mode`:
        pipeline, agent (the model explores with tools) or auto (answer.mode; see `choose_mode`).
        `control`: a Control made before the run (to cancel it from a thread that does not hold it).
        `timeout`: seconds after which it stops before its next model call (recorded as CANCELLED).
        `fresh`: answer anew even when an earlier verified answer to the same question holds (answer.recall).
        """
        require(principal, "read")
        check_nul(question, "question"), check_nul(session_id, "session id")  # no database stores a NUL
        collection = scope(principal, collection)
        if session_id:  # may this principal continue it?  Refused now (NotFoundError), not mid-run
            self.session_runs(session_id, principal=principal)
        from docqa.run.life import Run, Setup

        recall = None if fresh or session_id or not record or not self.settings.answer.recall else self._recall(collection)
        setup = Setup(self.settings, self.library(principal, collection), self.chat.model, self.chat.note,
                      self.store.runlog.save_run,
                      lambda sid: self.session_runs(sid, principal=principal), self.skills(principal=principal),
                      recall, self.escalation_model)
        return Run(question, setup, session_id=session_id, mode=mode, check=check, record=record, control=control,
                   timeout=timeout)

    def ask(self, question: str, *, on_event: Callable[[Event], None] | None = None, **options) -> Answer:
        """Answer a question from the documents, with citations, checked; recorded as a run.
        `start(...).wait()`, its events handed to `on_event` as they happen (options: see `start`)."""
        run = self.start(question, **options)
        for event in run:
            if on_event is not None:
                on_event(event)
        return run.wait()

    def skills(self, *, principal: Principal = LOCAL) -> SkillSet:
        """The skills the agent may use: built in, from skills.paths and from the 'skills' folder beside
        the knowledge base file (read afresh each time; `problems` lists the SKILL.md files left out)."""
        require(principal, "read")
        from docqa.skills import load_skills, skill_roots

        return load_skills(skill_roots(self.settings))

    def skill(self, name: str, *, principal: Principal = LOCAL) -> Skill:
        """One skill by name (NotFoundError naming the skills there are)."""
        return self.skills(principal=principal).get(name)

    def choose_mode(self, question: str, mode: str | None = None) -> str:
        """pipeline or agent (see docqa.run.life.choose_mode)."""
        from docqa.run.life import choose_mode

        return choose_mode(question, mode or self.settings.answer.mode, self.chat.model)

    def _recall(self, collection: str | None):
        """The lookup of an earlier verified answer for a run over `collection` (docqa.answer.recall)."""
        import numpy as np

        from docqa.answer import recall

        s = self.settings.answer
        embedder = self.embedder
        vectors = self._question_vectors

        def embed(texts: list[str]):  # earlier questions are embedded once per process
            missing = [t for t in dict.fromkeys(texts) if t not in vectors]
            if missing:
                if len(vectors) > 5000:
                    vectors.clear()
                vectors.update(zip(missing, embedder.embed_batch(missing, "query")))
            return np.stack([vectors[t] for t in texts])

        if self._recent_runs is None:
            self._recent_runs = recall.RecentRuns(
                lambda since: self.store.runlog.list_runs(since=since, limit=None if since else s.recall_runs), s.recall_runs)
        recent = self._recent_runs

        def lookup(question: str):
            retired: list[dict] = []
            runs = recent.current()
            earlier = recall.find(question, collection, runs, embed if embedder is not None else None,
                                  self._citations_changed, s.recall_similarity, retired)
            return (recall.answer_from(earlier, question, collection) if earlier else None), retired

        return lookup

    def _citations_changed(self, run: RunRecord) -> str | None:
        """Why a run's cited passages no longer hold (a document gone, re-indexed since, or its quoted
        text moved); None when every one is unchanged."""
        if any(fb.rating == "down" for fb in self.store.runlog.get_run(run.id).feedback):  # rated down since it was read
            return "rated down"
        docs, texts = self.store.documents, {}
        citations = (run.result or {}).get("citations", [])
        chunk_ids = {c.get("chunk_id") for c in citations if ":L" not in str(c.get("chunk_id"))}  # not agent passages
        live = {h.chunk_id for h in docs.get_hits(sorted(chunk_ids))} if chunk_ids else set()
        if chunk_ids - live:  # a chunk's id holds its document's content hash: the document changed
            gone = next(c for c in citations if c.get("chunk_id") in chunk_ids - live)
            return f"{gone.get('path')} changed or was removed since the answer"
        for c in citations:
            doc_id = c.get("document_id")
            try:
                record = docs.document_record(doc_id)
                if doc_id not in texts:
                    texts[doc_id] = docs.document_text(doc_id)
            except NotFoundError:
                return f"{c.get('path')} is no longer indexed"
            if c.get("chunk_id") not in chunk_ids and _after(record.indexed_at, run.created_at):  # a passage the agent read: its document re-indexed since
                return f"{record.path} changed (re-indexed {record.indexed_at}) since the answer"
            if texts[doc_id][c.get("char_start", 0):c.get("char_end", 0)] != c.get("quote"):
                return f"the quoted text of {record.path} is no longer where it was cited"
        return None

    def correct(self, run_id: str, text: str, *, principal: Principal = LOCAL) -> DocumentRecord:
        """A maintainer's correction to a logged run: the right answer or a missing fact, saved as a
        Markdown note (who, when, which run) and indexed at once into the run's collection, so later
        answers there find and cite it as a correction of that collection, seen by exactly those who
        see the collection (a run over every collection: the `corrections` collection).  Editors
        (access.py: correct) of the run's collection."""
        from docqa.session import correction

        run = self.run(run_id, principal=principal)
        require(principal, "correct", run.collection)
        author = f"API key {principal.key_id}" if principal.key_id else "the local owner"
        path = correction.write(self._corrections_folder(), run, correction.note(run, text, author, now()))
        home = correction.home(run)
        self.add([path], collection=home)  # the core files its own note (not a path the caller named)
        return self.document(path, home)

    def _corrections_folder(self) -> Path:
        """Where correction notes are kept (docqa.session.correction.folder)."""
        from docqa.session import correction
        from docqa.settings.model import default_kb_path

        return correction.folder(self.settings.kb, default_kb_path().parent)

    def library(self, principal: Principal = LOCAL, collection: str | None = None) -> Library:
        """What answering needs from this knowledge base: the principal's collections only (the run's
        collection when one was named).  A call naming a collection outside the principal's scope is
        refused by the same checks as every other door (for the agent's tools, an error result)."""
        embedder = self.embedder
        embed = (lambda texts, kind: embedder.embed_batch(texts, kind)) if embedder is not None else None
        from docqa.answer.library import Library

        def within(c: str | None) -> str | None:  # a run named its collection: a tool call cannot widen it
            if collection is not None and c not in (None, collection) and principal.can_see(c):
                raise PermissionDeniedError(f"this question is limited to collection {collection!r}: "
                                            f"{c!r} is outside it; search without naming a collection")
            return c or collection

        return Library(
            search=lambda q, k, c: self.search(q, k, within(c), principal=principal),
            documents=lambda c: self.documents(within(c), principal=principal),
            list_docs=lambda grep, page, size: self.list_docs(grep, page, size, collection, principal=principal),
            fetch_doc=lambda doc_id, offset, limit: self.fetch_doc(doc_id, offset, limit, collection, principal=principal),
            grep_docs=lambda pattern, glob, context: self.grep_docs(pattern, glob, context, collection=collection,
                                                                    principal=principal),
            passage=lambda doc_id, a, b: self.passage(doc_id, a, b, principal=principal),
            term_counts=self.store.fulltext.term_counts,
            embed=embed,
            collection=collection,
            keyword=lambda q, k: self.search(q, k, collection, mode="bm25", rerank="none", principal=principal),
            changes=lambda ids: self.file_changes(ids, principal=principal),
            refresh=lambda ids: self.refresh(ids, principal=principal),
            namesakes=lambda paths: self.namesakes(paths, collection, principal=principal),
        )

    def namesakes(self, paths: list[str], collection: str | None = None, *, principal: Principal = LOCAL) -> list[str]:
        """Paths of the other documents the principal sees (in `collection`, when given) whose file name
        is that of one of `paths`: a label naming only `README.Debian.gz` would not say which one."""
        names = dict.fromkeys(p.replace("\\", "/").rsplit("/", 1)[-1] for p in paths)
        given = set(paths)
        return [r.path for name in names for r in self.store.documents.find_documents(name)
                if r.path not in given and principal.can_see(r.collection) and collection in (None, r.collection)]

    def file_changes(self, document_ids: list[str], *, principal: Principal = LOCAL) -> list[dict]:
        """How the files of indexed documents differ on disk since they were indexed: one entry per
        document that changed or cannot be read now (a file that cannot be read is not deleted)."""
        from docqa.ingest.pipeline import disk_change

        out = []
        for doc_id in dict.fromkeys(document_ids):
            record = self._record_of(doc_id, principal)
            change = disk_change(record)
            if change is not None:
                out.append({"document_id": doc_id, "path": record.path, "collection": record.collection,
                            "state": change[0], "why": change[1]})
        return out

    def refresh(self, document_ids: list[str], *, principal: Principal = LOCAL) -> dict[str, list]:
        """Re-ingest the files of indexed documents, each into its own collection: only files the
        knowledge base already indexes, and only for a principal that may write those collections."""
        records = [self._record_of(doc_id, principal) for doc_id in dict.fromkeys(document_ids)]
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

    def passage(self, document_id: str, line_start: int, line_end: int, *, principal: Principal = LOCAL) -> Hit:
        """Lines `line_start`..`line_end` of a document as a citable passage (a Hit spanning them)."""
        record = self._record_of(document_id, principal)
        text = self.store.documents.document_text(document_id)
        starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        a = max(1, min(line_start, len(starts)))
        b = max(a, min(line_end, len(starts)))
        char_end = starts[b] - 1 if b < len(starts) else len(text)
        return Hit(chunk_id=f"{document_id}:L{a}-{b}", document_id=document_id, path=record.path,
                   collection=record.collection, title=record.title, section="", page=None, page_end=None,
                   line_start=a, line_end=b, char_start=starts[a - 1], char_end=char_end, score=0.0,
                   text=text[starts[a - 1]:char_end], type=record.type)

    def chunk(self, chunk_id: str, *, principal: Principal = LOCAL) -> Hit:
        """One chunk with its location."""
        require(principal, "read")
        hits = [h for h in self.store.documents.get_hits([chunk_id]) if principal.can_see(h.collection)]
        if not hits:
            raise NotFoundError(f"no chunk {chunk_id!r}: chunk ids come from 'docqa search'")
        return hits[0]

    def document(self, path: str | Path, collection: str | None = None, *, principal: Principal = LOCAL) -> DocumentRecord:
        """The document indexed for a file path."""
        require(principal, "read")
        collection = scope(principal, collection)
        from docqa.ingest.pipeline import document_id

        doc_id = document_id(collection or self.settings.collection, os.path.abspath(path))
        for record in self.store.documents.list_documents(collection or self.settings.collection, path_prefix=os.path.abspath(path)):
            if record.document_id == doc_id:
                return record
        raise NotFoundError(f"{path} is not indexed in collection {collection or self.settings.collection!r}: add it with 'docqa add'")

    def document_chunks(self, document_id: str, *, principal: Principal = LOCAL) -> list[Hit]:
        """All chunks of a document, in order."""
        self._record_of(document_id, principal)
        return self.store.documents.get_hits(self.store.documents.chunk_ids(document_id))

    def document_text(self, document_id: str, *, principal: Principal = LOCAL) -> str:
        """A document's stored text (the text every chunk's span points into)."""
        self._record_of(document_id, principal)
        return self.store.documents.document_text(document_id)

    # -- the viewer: a document's original file, its pages, where a cited span stands on a page --
    def document_view(self, document_id: str, *, principal: Principal = LOCAL) -> dict:
        """A document's stored text and the pages, slides or sheets it divides into (`layout`, None for prose)."""
        from docqa.view import layout

        record, docs = self._record_of(document_id, principal), self.store.documents
        text = docs.document_text(document_id)
        hits = docs.get_hits(docs.chunk_ids(document_id)) if record.type in ("xlsx", "csv") else []
        shape = layout(record.type, text, docs.page_lines(document_id), docs.document_metadata(document_id), hits)
        return {"document_id": document_id, "path": record.path, "type": record.type, "text": text, "layout": shape}

    def document_file(self, document_id: str, *, principal: Principal = LOCAL) -> Original:
        """A document's original file, read now within ingest.max_file_mb: only the indexed file
        (its content hash), not through a symlink, under the folder its collection was added from;
        UnreadableFileError (with the reason) otherwise, or when it is gone from disk."""
        from docqa.view import original_of

        record = self._record_of(document_id, principal)
        return original_of(record.path, int(self.settings.ingest.max_file_mb * 1024 * 1024), record.size,
                           record.content_hash, self._added_from(record.collection))

    def _added_from(self, collection: str) -> str | None:
        """The folder a collection's documents were added from (their deepest common folder)."""
        from docqa.browse.paths import common_folder

        bounds = self.store.documents.path_bounds(collection)
        return (common_folder(*bounds) or None) if bounds else None

    def page_image(self, document_id: str, page: int, scale: float | None = None, *,
                   principal: Principal = LOCAL) -> bytes:
        """Page `page` of a PDF document as a PNG (NotFoundError for another type or past the last page)."""
        from docqa.view import DEFAULT_SCALE, page_png

        record = self._pdf_of(document_id, principal)
        original = self.document_file(document_id, principal=principal)
        bounds = self.settings.ingest  # a page is rendered within the limits a file is parsed in
        return page_png(original, (document_id, record.content_hash), page, scale or DEFAULT_SCALE,
                        bounds.parse_timeout, bounds.worker_memory_mb * 1024 * 1024)

    def page_boxes(self, document_id: str, page: int, char_start: int, char_end: int, *,
                   principal: Principal = LOCAL) -> list[Box]:
        """Where the text span [char_start, char_end) stands on page `page` of a PDF document."""
        from docqa.view import layout, span_boxes

        self._pdf_of(document_id, principal)
        docs = self.store.documents
        text, metadata = docs.document_text(document_id), docs.document_metadata(document_id)
        units = layout("pdf", text, docs.page_lines(document_id), metadata, [])["units"]  # type: ignore[index]
        original = self.document_file(document_id, principal=principal)
        return span_boxes(original, text, units, metadata, page, char_start, char_end)

    def _pdf_of(self, document_id: str, principal: Principal) -> DocumentRecord:
        record = self._record_of(document_id, principal)
        if record.type != "pdf":
            raise NotFoundError(f"{record.path} is a {record.type} document: only PDF documents have page images")
        return record

    def _record_of(self, document_id: str, principal: Principal) -> DocumentRecord:
        """A document the principal may read; the same NotFoundError for another collection's as for none."""
        require(principal, "read")
        missing = f"no document {document_id!r}: 'docqa list' (GET /api/v1/documents) shows the documents and their ids"
        try:
            record = self.store.documents.document_record(document_id)
        except NotFoundError:
            raise NotFoundError(missing) from None
        visible_collection(principal, record.collection, missing)
        return record

    # -- browse: documents as text, for a model exploring with tools -------------------------
    def list_docs(self, grep: str | None = None, page: int = 1, page_size: int = 50,
                  collection: str | None = None, *, principal: Principal = LOCAL) -> DocPage:
        """The catalog, one `- [dir / title](doc-id): summary` line per document, filtered by `grep`
        (over path, title, keywords, summary) and paged; every collection the principal sees unless one is given."""
        require(principal, "read")
        from docqa.browse import list_docs

        return list_docs(self.store.documents, grep, page, page_size, scope(principal, collection))

    def fetch_doc(self, doc_id: str, offset: int = 1, limit: int = 200, collection: str | None = None, *,
                  principal: Principal = LOCAL) -> DocText:
        """A document's text in numbered lines from line `offset`, at most `limit` lines and ~12,000
        characters, page breaks marked; `doc_id` may also be a path or the end of one.  Documents
        the principal cannot see do not exist for it (the same error as none)."""
        require(principal, "read")
        if collection is not None:
            seen: tuple[str, ...] | None = (scope(principal, collection),)  # type: ignore[assignment]
        else:
            seen = principal.collections or None
        from docqa.browse import fetch_doc

        return fetch_doc(self.store.documents, doc_id, offset, limit, collections=seen)

    def grep_docs(self, pattern: str, path_glob: str | None = None, context: int = 1, max_matches: int = 50,
                  collection: str | None = None, ignore_case: bool = True, *, principal: Principal = LOCAL) -> GrepResult:
        """Lines matching a regular expression in every document's text, like ripgrep, with context."""
        require(principal, "read")
        from docqa.browse import grep_docs

        return grep_docs(self.store.documents, pattern, path_glob, context, max_matches, scope(principal, collection), ignore_case)

    def llms_txt(self, collection: str | None = None, *, principal: Principal = LOCAL) -> str:
        """The catalog as an llms.txt file, one section per folder (every collection the principal sees unless one is given)."""
        require(principal, "read")
        from docqa.browse import llms_txt

        return llms_txt(self.store.documents, scope(principal, collection))

    # -- sessions, runs, feedback ---------------------------------------------------------
    def session(self, session_id: str, *, principal: Principal = LOCAL) -> SessionRecord:
        """A conversation by id (NotFoundError when the principal may not see every run of it)."""
        record = self.store.runlog.get_session(session_id)
        self.session_runs(session_id, principal=principal)
        return record

    def sessions(self, limit: int | None = None, *, principal: Principal = LOCAL) -> list[SessionSummary]:
        """The conversations the principal may open and continue, most recently active first."""
        require(principal, "read")
        found = self.store.runlog.list_sessions(None if principal.collections else limit)
        return visible_sessions(principal, found)[:limit]

    def session_runs(self, session_id: str, *, principal: Principal = LOCAL) -> list[RunRecord]:
        """A conversation's runs, oldest first.  The one rule for continuing a conversation: a scoped
        principal continues only one whose every run it may see (else NotFoundError, as for none)."""
        require(principal, "read")
        return visible_runs(principal, session_id, self.store.runlog.session_runs(session_id))

    def run(self, run_id: str, *, principal: Principal = LOCAL) -> RunRecord:
        """One run's audit record: question, trace, published result, timings, feedback."""
        require(principal, "read")
        try:
            record = self.store.runlog.get_run(run_id)
        except NotFoundError:
            raise NotFoundError(f"no run {run_id!r}: 'docqa log' lists the runs with their ids") from None
        return visible_run(principal, record)

    def runs(self, since: str | None = None, until: str | None = None, statuses: list[str] | None = None,
             limit: int | None = None, *, principal: Principal = LOCAL) -> list[RunRecord]:
        """Runs newest first; `since` (inclusive) and `until` (exclusive) are dates or ISO times.
        Only the runs asked over collections the principal sees (a limit counts those)."""
        require(principal, "read")
        runs = self.store.runlog.list_runs(since=_utc_bound(since, "since"), until=_utc_bound(until, "until"),
                                    statuses=statuses, limit=None if principal.collections else limit)
        return [r for r in runs if principal.can_see(r.collection)][:limit]

    def feedback(self, run_id: str, rating: str, comment: str | None = None, *,
                 principal: Principal = LOCAL) -> FeedbackRecord:
        """Rate a run 'up' or 'down', with an optional comment.  Rating down an answer repeated from an
        earlier one (answer.recall) rates that one down too: it is retired and shows in the attention list."""
        run = self.run(run_id, principal=principal)
        rating = rating.strip().lower()
        if rating not in RATINGS:
            raise InputError(f"a rating is 'up' or 'down', not {rating!r}")
        earlier = ((run.result or {}).get("retrieval") or {}).get("recalled_from")
        if rating == "down" and earlier:
            note = f"(rated down on run {run_id}, which repeated this answer) {(comment or '').strip()}".strip()
            self.store.runlog.add_feedback(earlier, "down", note)
        return self.store.runlog.add_feedback(run_id, rating, (comment or "").strip() or None)

    def qa_log(self, since: str | None = None, attention: bool = False, *, principal: Principal = LOCAL,
               until: str | None = None, collection: str | None = None, statuses: list[str] | None = None,
               text: str | None = None, kinds: list[str] | None = None) -> list[dict]:
        """The question-and-answer log, newest first; `attention`: only the runs that need a
        maintainer's look (not answered, failed, low confidence, rated down), each with its reason,
        `kinds` narrowing it to some of those (docqa.session.ATTENTION).  Filters: runs since/until
        (dates or ISO times), of one `collection`, with one of `statuses`, mentioning `text`.
        Only the runs asked over collections the principal sees."""
        require(principal, "log")
        from docqa.session import ATTENTION, matches, needs_attention, qa_log

        unknown = sorted(set(kinds or ()) - set(ATTENTION))
        if unknown:
            raise InputError(f"unknown attention kind {unknown[0]!r}: use {', '.join(ATTENTION)}")
        if collection is not None:
            visible_collection(principal, collection, f"no collection {collection!r}")
        runs = [r for r in self.runs(since=since, until=until, statuses=statuses, principal=principal)
                if collection is None or r.collection == collection]
        rows = needs_attention(runs, kinds) if attention or kinds else qa_log(runs)
        from docqa.session.correction import corrected_runs

        notes = self.store.documents.list_documents(None, path_prefix=str(self._corrections_folder()) + os.sep)
        corrected = corrected_runs([r.path for r in notes])
        for row in rows:
            row["corrected"] = row["run_id"] in corrected
        return [row for row in rows if matches(row, text)] if text else rows

    def export_log(self, fp: IO[str], fmt: str = "jsonl", since: str | None = None, attention: bool = False,
                   limit: int | None = None, *, principal: Principal = LOCAL, **filters) -> int:
        """Write the Q&A log to `fp` as jsonl, csv or md (Markdown); returns how many questions.
        `filters`: those of `qa_log` (until, collection, statuses, text, kinds)."""
        from docqa.session import EXPORT_FORMATS, export

        if fmt not in EXPORT_FORMATS:
            raise InputError(f"unknown log format {fmt!r}: use one of {', '.join(EXPORT_FORMATS)}")
        rows = self.qa_log(since, attention, principal=principal, **filters)[:limit]
        export(rows, fmt, fp, "Questions that need attention" if attention or filters.get("kinds") else "Questions and answers")
        return len(rows)

    # -- API keys (for the HTTP API and MCP over HTTP; only their hashes are stored) -----------
    def create_key(self, role: str, collections: list[str] | tuple[str, ...] = (), name: str | None = None, *,
                   principal: Principal = LOCAL) -> tuple[ApiKeyRecord, str]:
        """A new API key: its record and the key itself, which exists only in this return value."""
        if role not in ROLES:
            raise InputError(f"unknown role {role!r}: use reader (search, ask), editor (also add and remove "
                             "documents) or admin (also manage keys)")
        names = sorted({c.strip() for c in collections if c and c.strip()})
        check_grant(principal, names)
        key = API_KEY_PREFIX + secrets.token_urlsafe(32)  # 256 random bits
        record = ApiKeyRecord(_new_id(), key[:len(API_KEY_PREFIX) + 8], role, names, (name or "").strip(), now())
        return self.store.keys.add_key(record, _key_hash(key)), key

    def list_keys(self, include_revoked: bool = False, *, principal: Principal = LOCAL) -> list[ApiKeyRecord]:
        """API keys the principal may manage, oldest first (never the keys themselves)."""
        return manageable(principal, self.store.keys.list_keys(include_revoked))

    def revoke_key(self, key_id: str, *, principal: Principal = LOCAL) -> ApiKeyRecord:
        """Revoke an API key by id: it stops working at once (NotFoundError for a key the principal
        may not manage, as for none)."""
        if not any(k.id == key_id for k in self.list_keys(include_revoked=True, principal=principal)):
            raise NotFoundError(f"no API key {key_id!r}: 'docqa keys list' shows the keys and their ids")
        return self.store.keys.revoke_key(key_id)

    def has_keys(self) -> bool:
        """True when any API key is active (the API then requires one)."""
        return self.store.keys.active_keys() > 0

    def authenticate_key(self, key: str) -> ApiKeyRecord:
        """The active key record for a key (its use recorded); AuthError when unknown or revoked."""
        key = (key or "").strip()
        record = self.store.keys.key_by_hash(_key_hash(key)) if key else None
        if record is None:
            raise AuthError("unknown API key: check it, or ask an admin for one ('docqa keys create --role reader')")
        if record.revoked_at:
            raise AuthError(f"API key {record.prefix}… was revoked on {record.revoked_at[:10]}: ask an admin for a new one")
        self.store.keys.touch_key(record)
        return record

    def stats(self, *, principal: Principal = LOCAL) -> dict:
        """Counts and sizes of the whole knowledge base (every collection: an unscoped principal only)."""
        require(principal, "read")
        if principal.collections:
            raise PermissionDeniedError(f"the statistics cover every collection: this key is scoped to "
                                        f"{', '.join(principal.collections)}")
        return self.store.stats()

    def status(self, *, principal: Principal = LOCAL) -> dict:
        """The chat model and the embedder in use and why, and the index's counts (over the
        collections the principal sees; its size on disk for an unscoped one)."""
        require(principal, "status")
        from docqa.status import chat_status, embedder_status, index_counts

        seen = list(principal.collections) if principal.collections else None
        return {"chat": chat_status(self.chat),
                "embedder": embedder_status(self.settings.embed.provider, self.embedder, self.store.vectors.embedder()),
                "index": index_counts(self.store, seen)}

    def ingest_options(self, *, principal: Principal = LOCAL) -> dict:
        """What an editor may send: the server folders it may have indexed (api.ingest_roots; none: only
        uploads) and the largest upload request."""
        require(principal, "write")
        api = self.settings.api
        return {"ingest_roots": list(api.ingest_roots), "max_upload_mb": api.max_upload_mb}

    # -- estimates (docqa.plan) ----------------------------------------------------------------
    def estimate(self, question: str | None = None, mode: str | None = None, *, principal: Principal = LOCAL) -> dict:
        """Expected tokens, model calls, time and money of one question, from the averages of the recent
        runs the principal sees (it reads the run log: the log permission), else from stated defaults."""
        require(principal, "log")
        from docqa.plan import estimate_question

        found = self._chat_found()
        chosen = self._estimate_mode(question, mode or self.settings.answer.mode, found.name is not None)
        s = self.settings
        est = estimate_question(self.runs(limit=_ESTIMATE_RUNS, principal=principal), chosen, found.name,
                                local=found.is_local, prices=(s.llm.prompt_price, s.llm.completion_price),
                                top_k=s.answer.top_k, max_tokens=s.chunk.max_tokens,
                                check=s.answer.check and s.answer.llm_check)
        return {"question": question, "chat": found.to_dict(), **est.to_dict()}

    def estimate_ingest(self, folder: str | Path, *, principal: Principal = LOCAL) -> dict:
        """What a first `add` of a folder would take (files, chunks, embedding tokens and price, time,
        index size): for those who may add documents, and over the network only under api.ingest_roots."""
        require(principal, "write")
        from docqa.plan import ingest_estimate

        path = ingest_paths(principal, [folder], self.settings.api.ingest_roots)[0]
        return ingest_estimate(path, self.settings).to_dict()

    def _chat_found(self):
        """The chat model an estimate is for: the one chosen already, else found without starting one."""
        from docqa.plan.chat import detect_chat, from_choice

        if self._chat is not None or self._chat_model is not None:
            return from_choice(self.chat, self.settings.llm.base_url)
        return detect_chat(self.settings.llm)

    @staticmethod
    def _estimate_mode(question: str | None, mode: str, has_model: bool) -> str:
        """The mode a question would be answered in (auto: as `choose_mode` routes it)."""
        from docqa.answer.route import is_catalog_question, wants_exploration

        if mode not in ("pipeline", "agent", "extractive", "auto"):
            raise InputError(f"unknown mode {mode!r}: use pipeline, agent, extractive or auto")
        if not has_model:
            return "extractive"
        if mode != "auto":
            return mode
        if question and is_catalog_question(question):
            return "catalog"
        return "agent" if question and wants_exploration(question) else "pipeline"

    def close(self) -> None:
        if self._chat is not None and self._chat.model is not None and self._chat_model is None:
            self._chat.model.close()
        if self._retriever is not None:
            self._retriever.close()
        if self._owns_embedder and isinstance(self._embedder, Embedder):
            self._embedder.close()
        self.store.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _utc_bound(value: str | None, name: str) -> str | None:
    """A date or ISO time as the stored times compare (UTC text); a date stays a date."""
    if not value:
        return None
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise InputError(f"{name} must be a date like 2026-01-31 or an ISO time, not {value!r}") from None
    moment = moment.replace(tzinfo=moment.tzinfo or UTC)  # a time without a zone is UTC
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


def _after(a: str | None, b: str | None) -> bool:
    """ISO time `a` is later than `b` (either missing: False)."""
    if not a or not b:
        return False
    moments = [datetime.fromisoformat(x.replace("Z", "+00:00")) for x in (a, b)]
    moments = [m.replace(tzinfo=m.tzinfo or UTC) for m in moments]
    return moments[0] > moments[1]


def _hash_input(item: EmbedInput) -> str:
    return text_hash(embed_text(item.title, item.section, item.text, item.context, item.symbol))


def _key_hash(key: str) -> str:
    """SHA-256 of an API key.  A key is 256 random bits, so a fast unsalted hash is safe (there is no
    dictionary to try) and lets every request find its key by an index lookup."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _new_id() -> str:
    return uuid.uuid4().hex[:16]


