"""KnowledgeBase: the one core every front end (CLI, API, MCP, web) calls.

A thin facade over one service per concern, each in the package of its concern and each checking
the caller's `Principal` (docqa.access) on every call:

    kb.documents   add, remove, list and re-embed files; collections (docqa.ingest.service)
    kb.browse      the catalog, a document's lines, grep (docqa.browse.service)
    kb.viewer      a document's pages, original file, page images and boxes (docqa.view.service)
    kb.answers     start a run, ask, verify any text, skills, recall (docqa.run.service)
    kb.log         runs, conversations, ratings, corrections, the Q&A log (docqa.run.log)
    kb.runs        steer, follow up or cancel a live run, here or on another server (docqa.run.runs)
    kb.keys        API keys (docqa.store.keys)
    kb.status      what it runs on and holds (docqa.status)
    kb.estimates   what a question or an ingest would take (docqa.plan.service)

`add`, `search`, `start`, `ask` and `verify` are also methods of the facade itself: the Python API of the README.
The models (embedder, retriever, chat model) are shared by the services (`kb.models`, docqa.models).
Services are built on first use: a command that only searches does not load the readers, the agent
or the exporters (tests/test_startup.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from docqa.access import LOCAL, Principal, require, visible_collection
from docqa.embed import Embedder
from docqa.llm import ChatModel, Choice
from docqa.models import Models
from docqa.retrieve import SearchResults
from docqa.settings import Settings
from docqa.store import Stores, open_store
from docqa.events import Event
from docqa.types import Answer

if TYPE_CHECKING:
    from docqa.browse.service import Browse
    from docqa.ingest.pipeline import IngestReport, Progress
    from docqa.ingest.service import Documents
    from docqa.ingest.watch import Batch  # noqa: F401  (Batch: what a watcher reports, for the front ends)
    from docqa.plan.service import Estimates
    from docqa.retrieve.service import Search
    from docqa.run.life import Run
    from docqa.run.log import Log
    from docqa.run.service import Answers, FactCheck  # FactCheck: docqa.answer.factcheck's, as kb.answers returns it
    from docqa.run.runs import LiveRuns, Runs
    from docqa.status import Status
    from docqa.store.cluster import Cluster
    from docqa.store.keys import Keys
    from docqa.view.service import Viewer

logger = logging.getLogger(__name__)


class KnowledgeBase:
    """A knowledge base: its services per concern over one store and one set of models."""

    def __init__(self, settings: Settings | None = None, store: Stores | None = None, embedder: Embedder | None | bool = True,
                 chat_model: ChatModel | Choice | None = None, *, create: bool = True):
        """`create`: False refuses a knowledge base file that does not exist (NoKnowledgeBaseError)
        instead of creating it.  `embedder`: True builds the configured one (lazily, on first use); an instance or None overrides it.
        `chat_model`: the model that writes answers (default: chosen from settings.llm); a `Choice` is
        used as made (see `sibling`)."""
        self.settings = settings or Settings()
        self.store = store or open_store(self.settings.kb, create=create)
        self.models = Models(self.settings, self.store, embedder, chat_model)
        self.live = _live_runs(self.settings)  # the runs answered in this process, shared by its siblings
        if store is None:
            self._reap_runs()

    def _reap_runs(self) -> None:
        """Runs left RUNNING by a process that died (killed, crashed) are marked FAILED, with the reason."""
        from docqa.run.owner import reap

        try:
            reaped = reap(self.store.runlog)
        except Exception as exc:  # housekeeping never stops an open (e.g. a read-only file): said, and left as is
            logger.warning("could not mark the runs of dead processes as failed: %s", exc)
            return
        if reaped:
            logger.info("%d run(s) left running by a process that ended are now marked FAILED", len(reaped))

    def sibling(self) -> KnowledgeBase:
        """Another KnowledgeBase on the same index, with its own connection, sharing this one's embedder
        and chat model (one per server thread; the models load once and this one closes them)."""
        return KnowledgeBase(self.settings, embedder=self.models.embedder, chat_model=self.models.chat)

    @property
    def cluster(self) -> Cluster | None:
        """The servers sharing this knowledge base's database (PostgreSQL), else None."""
        return self.store.cluster

    @staticmethod
    def authorize(principal: Principal, action: str) -> None:
        """Refuse (PermissionDeniedError) an action the policy (docqa.access) does not allow the principal at
        all, before a front end reads a request's body; every service checks again, per collection."""
        require(principal, action)

    @staticmethod
    def check_visible(principal: Principal, collection: str | None, what: str) -> None:
        """NotFoundError naming `what` (as for nothing at all) unless the principal may see `collection`:
        for what a front end keeps of one collection, e.g. a server's jobs (a reindex covers every collection)."""
        visible_collection(principal, collection, what)

    @staticmethod
    def file_type(name: str, head: bytes) -> str | None:
        """The format family a file with this name and these first bytes would be read as (None: no reader takes it)."""
        from docqa.ingest.service import Documents

        return Documents.file_type(name, head)

    # -- the services ------------------------------------------------------------------------
    @cached_property
    def documents(self) -> Documents:
        from docqa.ingest.service import Documents

        return Documents(self.store, self.settings, self.models)

    @cached_property
    def browse(self) -> Browse:
        from docqa.browse.service import Browse

        return Browse(self.store.documents)

    @cached_property
    def viewer(self) -> Viewer:
        from docqa.view.service import Viewer

        return Viewer(self.store.documents, self.settings)

    @cached_property
    def log(self) -> Log:
        from docqa.run.log import Log

        return Log(self.store, self.settings, self.documents)

    @cached_property
    def answers(self) -> Answers:
        from docqa.run.service import Answers

        return Answers(self.store, self.settings, self.models, search=self._search, documents=self.documents,
                       browse=self.browse, viewer=self.viewer, log=self.log, live=self.live)

    @cached_property
    def runs(self) -> Runs:
        from docqa.run.runs import Runs

        return Runs(self.log, self.live, self.store.cluster)

    @cached_property
    def keys(self) -> Keys:
        from docqa.store.keys import Keys

        return Keys(self.store.keys)

    @cached_property
    def status(self) -> Status:
        from docqa.status import Status

        return Status(self.store, self.models)

    @cached_property
    def estimates(self) -> Estimates:
        from docqa.plan.service import Estimates

        return Estimates(self.settings, self.models, self.log)

    @cached_property
    def _search(self) -> Search:
        from docqa.retrieve.service import Search

        return Search(self.settings, self.models)

    # -- the Python API of the README --------------------------------------------------------
    def add(self, paths: Sequence[str | Path], collection: str | None = None, progress: Progress | None = None,
            include: list[str] | None = None, exclude: list[str] | None = None, *,
            principal: Principal = LOCAL, received: bool = False) -> IngestReport:
        """Add files and folders (recursively, incrementally) to a collection (see `Documents.add`)."""
        return self.documents.add(paths, collection, progress, include, exclude, principal=principal, received=received)

    def add_site(self, url: str, collection: str | None = None, progress=None, *, principal: Principal = LOCAL,
                 served: bool = False) -> IngestReport:
        """Crawl a documentation site into a collection (see `Documents.add_site`)."""
        return self.documents.add_site(url, collection, progress, principal=principal, served=served)

    def search(self, query: str, top_k: int | None = None, collection: str | None = None, *, mode: str | None = None,
               path_glob: str | None = None, types: list[str] | tuple[str, ...] = (), rerank: str | None = None,
               principal: Principal = LOCAL) -> SearchResults:
        """Best chunks for a query, hybrid by default, across every collection the principal sees
        unless one is given (see `Search.search`)."""
        return self._search.search(query, top_k, collection, mode=mode, path_glob=path_glob, types=types,
                                   rerank=rerank, principal=principal)

    def start(self, question: str, **options) -> Run:
        """Start answering a question: a `Run`, an iterator of its events and a handle to steer, follow
        up or cancel it (options: see `Answers.start`)."""
        return self.answers.start(question, **options)

    def ask(self, question: str, *, on_event: Callable[[Event], None] | None = None, **options) -> Answer:
        """Answer a question from the documents, with citations, checked; recorded as a run
        (`start(...).wait()`, its events handed to `on_event`)."""
        return self.answers.ask(question, on_event=on_event, **options)

    def verify(self, text: str, *, question: str | None = None, collection: str | None = None, llm: bool | None = None,
               principal: Principal = LOCAL) -> FactCheck:
        """Fact-check any text against the documents: each claim supported (with the exact span),
        contradicted (with the span that says otherwise) or not found (see `Answers.verify`)."""
        return self.answers.verify(text, question=question, collection=collection, llm=llm, principal=principal)

    def close(self) -> None:
        self.models.close()
        self.store.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _live_runs(settings: Settings) -> LiveRuns:
    """The live runs of this knowledge base in this process (by its location: a server's threads share them)."""
    from docqa.run.runs import live_runs

    kb = settings.kb
    return live_runs(kb if "://" in kb and not kb.startswith("sqlite:") else str(settings.kb_path.resolve()))
