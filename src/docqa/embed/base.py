"""The `Embedder` interface and the text every embedder sees.

An embedder turns texts into unit-length float32 vectors.  Subclasses implement `_embed`
(one batch of short texts); the base class adds what every model needs: batching, splitting
long passages into windows the model reads well (their vectors are averaged), and the
fingerprint the index records so that vectors of two models are never mixed.
"""

from __future__ import annotations

import hashlib
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass

import numpy as np

from docqa.errors import EmbedError
from docqa.text.sentences import sentence_spans

# Bump when embed_text() changes: the fingerprint changes with it, so old vectors get re-embedded.
TEXT_RECIPE = 1
EmbedProgress = Callable[[int, int], None]  # (texts done, texts total)
# A run of four or more of one mark, spaced or not: dot leaders of a table of contents (". . . . 17"),
# rules under headings and between table rows ("-----", "=====", "~~~~~").  A sentence encoder reads each
# spaced dot as a token of its own (a PDF's contents pages: 13 % of the bundled model's tokens on
# benchmarks/debian_docs.py) and learns nothing from it.  Bump FILLER_RULES when the pattern changes.
_FILLER = re.compile(r"([^\w\s]|_)(?: ?\1){3,}")
FILLER_RULES = 1


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What the index records about the model that made its vectors."""

    name: str
    version: str
    dimensions: int
    recipe: int = TEXT_RECIPE

    @property
    def key(self) -> str:
        """Short stable id, stored with every vector."""
        return f"{self.name}@{self.version}/{self.dimensions}/r{self.recipe}"

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, raw: str) -> Fingerprint:
        return cls(**json.loads(raw))


def embed_text(title: str, section: Sequence[str], text: str, context: str = "", symbol: str | None = None) -> str:
    """The enriched text of a chunk: title and section path, then its content.

    The same fields feed BM25 (title/section/symbol as the weighted title column), so both
    retrievers see the same evidence.
    """
    head = " / ".join(p for p in (title, *section, symbol or "") if p)
    body = f"{context}\n{text}" if context else text
    return f"{head}\n{body}" if head else body


def text_hash(text: str) -> str:
    """Content address of an embedded text: equal texts share one stored vector."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


class Embedder(ABC):
    """Turns texts into unit-length vectors."""

    name: str = "embedder"
    version: str = "1"
    dimensions: int = 0
    batch_size: int = 64
    # Longest piece of text the model reads well, in characters (0: no limit).  Longer passages
    # are cut at sentence ends into windows whose vectors are averaged.
    window_chars: int = 0
    # Weight of this model's dense scores in convex fusion with BM25 (measured per bundled model;
    # an unmeasured remote model gets an even split).
    fusion_weight: float = 0.5
    # A model that pads each batch to its longest text gets batches of similar lengths (pieces
    # sorted by length): mixing a short window with full ones spends its time on padding.
    pads_batches: bool = False
    # The model computes on this machine's CPU (not a server's): ingest then runs one parser process
    # by default, the model being the bottleneck.
    runs_here: bool = False
    # How many batches run at once, each on its own thread (a model whose session computes one batch
    # on the calling thread and releases the GIL: each core then runs a batch of its own).
    callers: int = 1
    # The model reads texts without filler runs (`without_filler`); such an embedder names FILLER_RULES
    # in its version, so vectors of another input recipe are never mixed with its own.
    drops_filler: bool = False
    # Set by `adopt`: this embedder reads an earlier recipe for an index built with it.
    adopted: bool = False

    @property
    def fingerprint(self) -> Fingerprint:
        return Fingerprint(self.name, self.version, self.dimensions)

    def adopt(self, key: str) -> bool:
        """Take on the input recipe of an index embedded with an earlier recipe of this same model (its
        stored `key`), so that it keeps working without a reindex; False when this model cannot."""
        return False

    def restore(self) -> None:
        """Back to this model's current input recipe after `adopt`."""

    @abstractmethod
    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        """Vectors (n, dimensions) for one batch of texts; kind is 'passage' or 'query'."""

    def embed_batch(self, texts: Sequence[str], kind: str = "passage", progress: EmbedProgress | None = None) -> np.ndarray:
        """Unit-length float32 vectors, one row per text, in order."""
        if kind not in ("passage", "query"):
            raise ValueError(f"kind must be 'passage' or 'query', not {kind!r}")
        pieces, owners = self._pieces(texts, kind)
        order = sorted(range(len(pieces)), key=lambda k: len(pieces[k])) if self.pads_batches else range(len(pieces))
        batches = [order[start : start + self.batch_size] for start in range(0, len(order), self.batch_size)]
        out: np.ndarray | None = None
        done = 0
        for picked, vectors in self._run(batches, pieces, kind):
            if out is None:
                out = np.zeros((len(texts), vectors.shape[-1]), dtype=np.float32)
            if vectors.shape != (len(picked), out.shape[1]):
                raise EmbedError(f"{self.name} returned vectors of shape {vectors.shape}, expected ({len(picked)}, {out.shape[1]})")
            rows = [owners[k] for k in picked]  # a window shared by texts adds to each of them, as often as it occurs
            np.add.at(out, np.concatenate(rows), np.repeat(vectors, [len(r) for r in rows], axis=0))
            done += len(picked)
            if progress:
                progress(len(texts) * done // len(pieces), len(texts))
        if out is None:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return _normalise(out)

    def _pieces(self, texts: Sequence[str], kind: str) -> tuple[list[str], list[list[int]]]:
        """The distinct pieces the model reads (a passage's windows, a query whole) and, for each, the rows
        of the texts holding it: a window repeated across texts (a page footer, a licence paragraph) is
        embedded once."""
        index: dict[str, int] = {}
        owners: list[list[int]] = []
        for i, text in enumerate(texts):
            text = without_filler(text) if self.drops_filler else text
            for part in self.windows(text) if kind == "passage" else [text]:
                k = index.setdefault(part, len(index))
                if k == len(owners):
                    owners.append([])
                owners[k].append(i)
        return list(index), owners

    def _run(self, batches: Sequence[Sequence[int]], pieces: list[str], kind: str) -> Iterator[tuple[Sequence[int], np.ndarray]]:
        """Each batch with its vectors, in order; up to `callers` batches at once."""
        def one(picked: Sequence[int]) -> tuple[Sequence[int], np.ndarray]:
            return picked, np.asarray(self._embed([pieces[k] for k in picked], kind), dtype=np.float32)

        if self.callers <= 1 or len(batches) <= 1:
            yield from map(one, batches)
            return
        pool = ThreadPoolExecutor(min(self.callers, len(batches)), thread_name_prefix="docqa-embed")
        try:
            yield from pool.map(one, batches)
        finally:  # a failed batch (or a caller that stops early) cancels the batches not started
            pool.shutdown(wait=True, cancel_futures=True)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_batch([text], "query")[0]

    def windows(self, text: str) -> list[str]:
        """The text cut at sentence ends into pieces of at most `window_chars` (a longer sentence is cut hard)."""
        text = text.strip() or " "
        limit = self.window_chars
        if not limit or len(text) <= limit:
            return [text]
        out: list[str] = []
        start = end = 0
        for s, e in sentence_spans(text):
            if e - start > limit and end > start:
                out.append(text[start:end])
                start = s
            while e - start > limit:  # one sentence longer than a window
                out.append(text[start : start + limit])
                start += limit
            end = e
        if end > start:
            out.append(text[start:end])
        return [w for w in (p.strip() for p in out) if w] or [text[:limit]]

    def warm(self) -> None:
        """Load the model now (e.g. on a thread while the first files are parsed), if it loads lazily."""
        if self.runs_here:
            try:
                self._load()
            except Exception:  # noqa: BLE001 - the first real use raises it again, with its message, where it is handled
                pass

    def _load(self) -> object:
        """The loaded model (a model computed here loads lazily)."""
        return None

    def close(self) -> None:
        """Release resources (sessions, connections)."""


def without_filler(text: str) -> str:
    """The text as a model that drops filler reads it: each run of four or more of one mark (dot leaders,
    rules) becomes one space; the stored text keeps them."""
    return _FILLER.sub(" ", text)


def _normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32, copy=False)
