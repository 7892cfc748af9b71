"""Search: the best chunks for a query, for one caller (`kb.search`): hybrid by default, within the
collections the caller sees, optionally reordered by the chat model."""

from __future__ import annotations

from functools import partial
from typing import Protocol

from docqa.access import LOCAL, Principal, require, scope
from docqa.embed import Embedder
from docqa.errors import ConfigError
from docqa.llm import Choice
from docqa.llm.deadline import reply_within
from docqa.names import check_nul
from docqa.retrieve.rerank import RERANKERS, LLMReranker, rerank_results
from docqa.retrieve.retriever import Retriever, SearchResults
from docqa.settings import Settings
from docqa.store import ChunkFilter


class Models(Protocol):
    """What a search needs of the knowledge base's models (docqa.models.Models)."""

    @property
    def embedder(self) -> Embedder | None: ...

    @property
    def retriever(self) -> Retriever: ...

    @property
    def chat(self) -> Choice: ...

    def check_embedder(self, writing: bool) -> None: ...


class Search:
    """Search over one knowledge base's chunks, as one principal may."""

    def __init__(self, settings: Settings, models: Models):
        self.settings, self.models = settings, models

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
        s, models = self.settings.search, self.models
        mode = mode or s.mode
        if mode != "bm25" and models.embedder is not None:
            models.check_embedder(writing=False)
        where = ChunkFilter(collection, path_glob, tuple(types))
        method = (rerank or s.rerank).lower()
        if method == "none":
            return models.retriever.search(query, top_k, where, mode)
        if method not in RERANKERS:
            raise ConfigError(f"unknown reranker {rerank!r}: use one of {', '.join(RERANKERS)}")
        top_k = top_k or s.top_k
        # the reranker sees only what this principal's search returned: it reorders, never widens
        results = models.retriever.search(query, max(top_k, s.rerank_depth), where, mode)
        return rerank_results(results, self._llm_reranker(), s.rerank_depth, top_k, s.rerank_timeout,
                              missing=f"no chat model ({models.chat.reason})")

    def _llm_reranker(self) -> LLMReranker | None:
        """The chat model as a reranker (None: there is no chat model)."""
        model = self.models.chat.model
        return None if model is None else LLMReranker(partial(reply_within, model))
