"""What a knowledge base runs on and holds, for the people who keep it: the chat model and the embedder
in use and why, and the index's size and counts (over the collections a principal sees)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from docqa.access import LOCAL, Principal, require
from docqa.embed import Embedder, Fingerprint
from docqa.errors import PermissionDeniedError
from docqa.llm import Choice
from docqa.store import Stores

if TYPE_CHECKING:
    from docqa.models import Models


class Status:
    """What a knowledge base runs on and holds, as a principal may see it (`kb.status`)."""

    def __init__(self, store: Stores, models: Models):
        self.store, self.models = store, models

    def summary(self, *, principal: Principal = LOCAL, health: dict[str, Any] | None = None) -> dict:
        """The chat model and the embedder in use and why, and the index's counts (over the
        collections the principal sees; its size on disk for an unscoped one).  `health`: a server's
        parts (writer, workers, watch job), shown as the principal may see them."""
        require(principal, "status")
        models = self.models
        seen = list(principal.collections) if principal.collections else None
        report = {"chat": chat_status(models.chat),
                  "embedder": embedder_status(models.settings.embed.provider, models.embedder, self.store.vectors.embedder()),
                  "index": index_counts(self.store, seen)}
        if health is not None:
            watch = health.get("watch")
            if watch and not principal.can_see(watch["collection"]):
                health = {**health, "watch": {"ok": watch["ok"]}}  # another collection's job: only that it runs
            report["health"] = health
        return report

    def stats(self, *, principal: Principal = LOCAL) -> dict:
        """Counts and sizes of the whole knowledge base (every collection: an unscoped principal only)."""
        require(principal, "read")
        if principal.collections:
            raise PermissionDeniedError(f"the statistics cover every collection: this key is scoped to "
                                        f"{', '.join(principal.collections)}")
        return self.store.stats()

    def ping(self) -> float:
        """Seconds one round trip to the store takes (a health check)."""
        return self.store.ping()


def chat_status(choice: Choice) -> dict[str, Any]:
    """The model answers come from (None: extracted from the documents), where it came from and why."""
    model = choice.model
    return {"name": model.name if model else None, "source": choice.source, "reason": choice.reason,
            "answers": "generated" if model else "extractive",
            "supports_tools": bool(model and model.supports_tools)}


def embedder_status(provider: str, embedder: Embedder | None, stored: str | None) -> dict[str, Any]:
    """The embedder in use (None: BM25 only) and why, and the one the index's vectors were made with."""
    index = Fingerprint.from_json(stored).key if stored else None
    if embedder is None:
        return {"name": None, "provider": provider, "search": "bm25", "index_embedder": index,
                "reason": "embed.provider is 'none': search is BM25 (keywords) only, without vectors"}
    fp = embedder.fingerprint
    return {"name": fp.name, "key": fp.key, "dimensions": fp.dimensions, "provider": provider, "search": "hybrid",
            "index_embedder": index,
            "reason": f"embed.provider is {provider!r}: hybrid search, BM25 fused with {fp.name} vectors"}


def index_counts(store: Stores, collections: list[str] | None) -> dict[str, Any]:
    """Counts over `collections` (None: the whole index, with its size on disk)."""
    if collections is None:
        stats = store.stats()
        keys = ("documents", "chunks", "failed", "skipped", "vectors", "source_bytes", "index_bytes")
        return {**{k: stats.get(k) for k in keys}, "collections": len(store.documents.collection_sizes())}
    records = [r for c in collections for r in store.documents.list_documents(c)]
    status = Counter(r.status for r in records)
    return {"documents": status["ok"], "failed": status["error"], "skipped": status["skipped"],
            "chunks": sum(r.chunks for r in records), "source_bytes": sum(r.size for r in records),
            "index_bytes": None, "vectors": None,
            "collections": len(set(collections) & set(store.documents.collection_sizes()))}
