"""`VectorStore`: dense vectors of the chunks, content-addressed by the hash of the embedded text.

Equal texts share one vector, so an edited document re-embeds only its changed chunks.  The
store records which embedder made its vectors (a fingerprint) and keeps the vectors of one model
only.  A document's new vectors are written with it (`ChunkVectors`, passed to
`DocumentStore.replace_document`); `put_vectors` adds vectors for chunks already stored (reindex).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from docqa.store.base import ChunkFilter


@dataclass(slots=True)
class ChunkVectors:
    """Dense vectors written with a document: `hashes[i]` is chunk i's embedded-text hash."""

    model: str | None  # the embedder fingerprint key; None when no embedder is configured
    hashes: list[str]
    new: dict[str, np.ndarray] = field(default_factory=dict)  # hash -> vector not yet stored


@dataclass(slots=True)
class EmbedInput:
    """A stored chunk text that has no vector for some model yet (for `docqa reindex`)."""

    text_hash: str
    title: str
    section: list[str]
    context: str
    text: str
    symbol: str | None


class VectorStore(ABC):
    """Vectors by model and text hash, the recorded embedder, and cosine search."""

    @abstractmethod
    def search_vector(self, vector: np.ndarray, model: str, top_k: int, where: ChunkFilter | None = None) -> list[tuple[str, float]]:
        """(chunk_id, cosine similarity) best first, over the vectors of one model (StoreError when
        the query's dimensions differ from the stored vectors')."""

    def prepare(self, model: str) -> None:
        """Load what `search_vector` over `model` needs, so a first search can do it while the query
        is embedded (a store that keeps nothing in memory has nothing to do)."""

    def close(self) -> None:
        """Release what the store holds beside its database connection (nothing, for most)."""

    @abstractmethod
    def known_vectors(self, model: str, hashes: Iterable[str]) -> set[str]:
        """Which of these text hashes already have a vector of `model` (they need no embedding)."""

    @abstractmethod
    def set_vectors_pending(self, pending: bool) -> None:
        """Remember, in the running write's transaction, that chunks were written before their vectors
        (True: an add writes its texts first), or that none lacks one any more (False)."""

    @abstractmethod
    def vectors_pending(self) -> bool:
        """Whether chunks may lack their vectors (an add stopped between its two phases): only then
        does the next add look for them (`unembedded` reads every chunk: 0.75 s at 300k)."""

    @abstractmethod
    def missing_vectors(self, model: str, chunk_ids: list[str]) -> set[str]:
        """Which of these chunks have no vector of `model` yet (written by an add still embedding, or
        one that stopped before it could): full-text search finds them, dense search does not."""

    @abstractmethod
    def put_vectors(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        """Store vectors of `model` by text hash (one transaction); those of texts no chunk uses are not
        stored (the chunks were removed while their texts were embedded)."""

    @abstractmethod
    def embedder(self) -> str | None:
        """The recorded embedder fingerprint (JSON), or None when nothing was embedded yet."""

    @abstractmethod
    def set_embedder(self, fingerprint: str | None, model: str | None) -> None:
        """Record the embedder and drop every vector of any other model (None: no embedder, no vectors)."""

    @abstractmethod
    def unembedded(self, model: str, limit: int) -> list[EmbedInput]:
        """Up to `limit` distinct chunk texts lacking a vector of `model`."""

    @abstractmethod
    def fill_hashes(self, hasher: Callable[[EmbedInput], str]) -> int:
        """Give chunks indexed before vectors existed their text hash; returns how many."""

    @abstractmethod
    def vector_count(self, model: str | None = None) -> tuple[int, int]:
        """(chunks with a vector of `model`, all chunks); (0, all chunks) when `model` is None."""
