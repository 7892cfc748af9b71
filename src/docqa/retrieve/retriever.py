"""The retriever: BM25 over the weighted full-text fields, dense vectors, or both fused.

Hybrid (the default) takes the best `candidates` of each list, fuses them (convex combination
of normalised scores by default, reciprocal rank fusion as the option; see fusion.py), and
reports for every hit its rank in each list.  A rare exact token of the query (a version, a
path, an option, an identifier: text/exact.py) decides first, in every mode: chunks holding it
lead the list, as they stand among themselves (`_keep_exact`).  The user-facing `score` is a calibrated 0..1
relevance; `low_relevance` says when even the best hit is under the threshold, i.e. when the
documents may not hold the answer.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from docqa.embed import Embedder
from docqa.errors import ConfigError
from docqa.store import ChunkFilter, Stores
from docqa.retrieve.fusion import Calibration, convex, monotone, rrf
from docqa.retrieve.query import parse_query
from docqa.retrieve.snippet import coverage, highlight
from docqa.retrieve.weights import idf, term_weights
from docqa.settings import SearchSettings
from docqa.text import exact_tokens, holds_exact, script
from docqa.types import Hit

MODES = ("hybrid", "bm25", "dense")
# Fitted by benchmarks/relevance.py on the SQuAD 2.0 subset (answerable vs unanswerable
# questions, top hit; see RESULTS.md).  BM25 is model-free; the dense constants belong to the
# bundled model, and other embedders (whose cosines live on other scales) fall back to them
# until calibrated.  Hybrid takes the stronger of the two: a strong keyword match or a strong
# semantic match each make a hit relevant.  (A joint fit of both features separates SQuAD a
# little better, 0.596 vs 0.578 AUC in two-fold tests, but BM25's scale moves with corpus size, which made it flag
# clearly relevant hits in small knowledge bases.)
CALIBRATIONS: dict[tuple[str, str | None], Calibration] = {
    ("bm25", None): Calibration(cos=0.0, bm25=0.623, bias=-1.697),
    ("dense", "use-multilingual-v3"): Calibration(cos=2.748, bm25=0.0, bias=-1.058),
    ("dense", "multilingual-e5-small"): Calibration(cos=15.831, bm25=0.0, bias=-13.727),  # e5 cosines sit in 0.7-0.95
}
CALIBRATIONS[("dense", None)] = CALIBRATIONS[("dense", "use-multilingual-v3")]
# An exact token of the query (text/exact.py) counts as rare, and so decides the order, when at
# most this share of the chunks (or this many, in a small knowledge base) hold it.
RARE_SHARE, RARE_CHUNKS = 0.05, 5
NAMED = 2.0  # a token naming a chunk (`chunk_name`) weighs this many times one in its text only


def chunk_name(hit: Hit, first_line: bool = False) -> str:
    """What names a chunk: its document's path and title, and its section (headings); with `first_line`, also
    its text's first line, a heading in formats without sections (a PDF page's running header).  Ranking
    leaves that line out: a chunk may start anywhere, and a NEWS entry's first sentence names things it is
    not about."""
    name = f"{hit.path}\n{hit.title}\n{hit.section}"
    if not first_line:
        return name
    line = hit.text.lstrip().partition("\n")[0]
    return f"{name}\n{line}"


class SearchResults(list):
    """Hits best first (a list), plus what a reader of them needs to know."""

    def __init__(self, hits: list[Hit], query: str, mode: str, *, low_relevance: bool, threshold: float):
        super().__init__(hits)
        self.query, self.mode, self.low_relevance, self.threshold = query, mode, low_relevance, threshold
        self.rerank: dict | None = None  # the rerank stage's report (retrieve/rerank.py), when one ran
        # Hits whose chunk has no vector yet (an add is still embedding it): full-text search found them, dense could not.
        self.without_vectors: list[str] = []

    @property
    def vectors_note(self) -> str | None:
        """What a reader should know when some hits had no vector yet (None when all had one)."""
        n = len(self.without_vectors)
        if not n:
            return None
        return (f"{n} of the {len(self)} hits have no vector yet (their documents are still being embedded): "
                "full-text search found them, meaning-based search could not")

    def to_dict(self) -> dict:
        out = {"query": self.query, "mode": self.mode, "low_relevance": self.low_relevance,
               "threshold": self.threshold, "hits": [h.to_dict() for h in self]}
        if self.rerank is not None:
            out["rerank"] = self.rerank
        if self.without_vectors:
            out["without_vectors"] = self.without_vectors
        return out


@dataclass(slots=True)
class _Lists:
    bm25: list[tuple[str, float]]
    dense: list[tuple[str, float]]


class Retriever:
    """Searches one store, with an embedder for dense and hybrid modes (None: BM25 only)."""

    def __init__(self, store: Stores, settings: SearchSettings | None = None, embedder: Embedder | None = None,
                 model_key: str | None = None):
        self.store = store
        self.settings = settings or SearchSettings()
        self.embedder = embedder
        self.model_key = model_key or (embedder.fingerprint.key if embedder else None)
        self._executor: ThreadPoolExecutor | None = None
        self._loading: ThreadPoolExecutor | None = None

    def search(self, query: str, top_k: int | None = None, where: ChunkFilter | None = None,
               mode: str | None = None) -> SearchResults:
        """Best `top_k` chunks for `query`, with calibrated scores, per-list ranks and snippets."""
        s = self.settings
        top_k = top_k or s.top_k
        mode = self._mode(mode or s.mode)
        parsed = parse_query(query, s.phrase_boost)
        exact = self._rare_exact(query)
        depth = max(s.candidates, top_k) if mode == "hybrid" or exact else top_k
        dense = self._pool().submit(self._dense, query, depth, where) if mode != "bm25" else None
        lists = _Lists(  # BM25 runs here while the query is embedded and matched in the other thread
            bm25=self.store.fulltext.search_text(parsed, depth, where) if mode != "dense" else [],
            dense=dense.result() if dense is not None else [],
        )
        fused = self._fuse(lists, mode, query, parsed.terms)
        held: dict[str, Hit] = {}
        if exact:
            fused, held = self._keep_exact(fused, exact)
        fused = fused[:top_k]
        hits = [held[cid] for cid, _ in fused if cid in held] if held else self.store.documents.get_hits([cid for cid, _ in fused])
        self._annotate(hits, lists, mode, parsed.terms)
        low = not hits or hits[0].score < s.relevance_threshold
        results = SearchResults(hits, query, mode, low_relevance=low, threshold=s.relevance_threshold)
        if mode != "bm25" and hits:  # BM25 alone for these: their add is still embedding them
            missing = self.store.vectors.missing_vectors(self.model_key, [h.chunk_id for h in hits])
            results.without_vectors = [h.chunk_id for h in hits if h.chunk_id in missing]
        return results

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="docqa-dense")
        return self._executor

    def _loader(self) -> ThreadPoolExecutor:
        if self._loading is None:
            self._loading = ThreadPoolExecutor(max_workers=1, thread_name_prefix="docqa-vectors")
        return self._loading

    def close(self) -> None:
        for pool in (self._executor, self._loading):
            if pool is not None:
                pool.shutdown(wait=True)
        self._executor = self._loading = None

    def _mode(self, mode: str) -> str:
        if mode not in MODES:
            raise ConfigError(f"unknown search mode {mode!r}: use one of {', '.join(MODES)}")
        if self.embedder is None:
            if mode == "dense":
                raise ConfigError("dense search needs an embedding model, but embed.provider is 'none': "
                                  "set it to local, ollama or openai, then run 'docqa reindex'")
            return "bm25"  # hybrid without vectors is BM25
        return mode

    def _dense(self, query: str, depth: int, where: ChunkFilter | None) -> list[tuple[str, float]]:
        # A first search loads the model and the stored vectors: both at once (~0.3 s each at 30k chunks,
        # seconds at 300k).  The load runs on a pool of its own, so no dense task ever waits on a task
        # queued behind it (one retriever may serve several threads).
        prepared = self._loader().submit(self.store.vectors.prepare, self.model_key)
        vector = self.embedder.embed_query(query)
        prepared.result()
        return self.store.vectors.search_vector(vector, self.model_key, depth, where)

    def _fuse(self, lists: _Lists, mode: str, query: str, terms: list[str]) -> list[tuple[str, float]]:
        if mode == "bm25":
            return lists.bm25
        if mode == "dense" or not lists.bm25:  # no word of the query matched: dense alone decides
            return lists.dense
        dense_only = self._other_language(lists, query)
        if self.settings.fusion == "rrf":
            return rrf([lists.bm25, lists.dense], self.settings.rrf_k, dense_only)
        impute = 1.0
        if dense_only:  # how much of the query's information did full-text search leave unmatched?
            top = lists.bm25[0][0]
            idf = term_weights(self.store.fulltext.term_counts, [t.lower() for t in terms])
            impute = 1.0 - coverage(self.store.documents.text_heads([top], chars=20_000).get(top, ""), terms, idf)
        return convex(lists.bm25, lists.dense, self.dense_weight, dense_only, impute)

    def _rare_exact(self, query: str) -> dict[str, float]:
        """The query's rare exact tokens (versions, paths, options, identifiers), each with its IDF.

        How many chunks hold a token is counted by full-text search, which reads it as a phrase of
        its pieces (`2.39.5` as `2 39 5`): a close upper bound of the chunks holding the token itself.
        """
        tokens = exact_tokens(query)
        if not tokens:
            return {}
        counts, total = self.store.fulltext.term_counts(tokens)
        limit = max(RARE_CHUNKS, RARE_SHARE * total)
        return {t: idf(n, total) for t, n in counts.items() if n <= limit}

    def _keep_exact(self, fused: list[tuple[str, float]], exact: dict[str, float]) -> tuple[list[tuple[str, float]], dict[str, Hit]]:
        """`fused` with the chunks holding the query's rare exact tokens moved ahead of those that do not.

        Each token a chunk's text holds adds its IDF, and so does each its `chunk_name` (path, title,
        section) holds: a chunk named and holding `2.39.5` is about it, not merely mentioning it as the
        notes of every later release that merged its fixes do; a chunk only named by it (a man page
        `logind.conf.5`'s colophon) weighs no more than another file's text that holds it.  Chunks go by that sum,
        ties in the fused order.  Neither list alone keeps an exact version ahead of its siblings:
        BM25 sees `2.39.5` as the pieces `2 39 5` that 2.39.4 shares, the dense vectors of the
        two files are nearly the same, and so the fused order of siblings is close to chance.
        Returns the hits read to check, by chunk id.
        """
        hits = {h.chunk_id: h for h in self.store.documents.get_hits([cid for cid, _ in fused])}

        def weight(cid: str) -> float:
            hit = hits.get(cid)
            if hit is None:
                return 0.0
            name = chunk_name(hit)
            return sum(w * ((NAMED - 1.0) * holds_exact(name, t) + holds_exact(hit.text, t)) for t, w in exact.items())

        held = [weight(cid) for cid, _ in fused]
        order = sorted(range(len(fused)), key=lambda i: -held[i])  # stable: ties keep the fused order
        return [fused[i] for i in order], hits

    @property
    def dense_weight(self) -> float:
        """The configured convex weight, else the embedder's measured best."""
        if self.settings.dense_weight is not None:
            return self.settings.dense_weight
        return self.embedder.fusion_weight if self.embedder is not None else 0.0

    def _other_language(self, lists: _Lists, query: str) -> set[str]:
        """The best dense hits in another script than the query: BM25 could not have matched their words, only
        a stray token both share (a command name, a number), so its score says little against them."""
        # Only the best dense hits can be lifted into the results; checking 30 keeps this cheap.
        best = [cid for cid, _ in lists.dense[:30]]
        want = script(query)
        return {cid for cid, head in self.store.documents.text_heads(best).items() if script(head) != want}

    def _annotate(self, hits: list[Hit], lists: _Lists, mode: str, terms: list[str]) -> None:
        bm25 = {cid: (rank, score) for rank, (cid, score) in enumerate(lists.bm25, start=1)}
        dense = {cid: (rank, score) for rank, (cid, score) in enumerate(lists.dense, start=1)}
        floor = lists.dense[-1][1] if lists.dense else None  # a chunk missing from the dense list scores at most this
        raw = []
        for hit in hits:
            hit.bm25_rank, hit.bm25_score = bm25.get(hit.chunk_id, (None, None))
            hit.dense_rank, hit.dense_score = dense.get(hit.chunk_id, (None, None))
            cos = hit.dense_score if hit.dense_score is not None else floor
            raw.append(self.relevance(mode, cos, hit.bm25_score))
            hit.snippet = highlight(hit.text, terms, self.settings.snippet_chars)
        for hit, score in zip(hits, monotone(raw)):
            hit.score = score

    def relevance(self, mode: str, cos: float | None, bm25: float | None) -> float:
        """A hit's 0..1 relevance from its cosine and BM25 score (calibrated per mode)."""
        lexical = CALIBRATIONS[("bm25", None)](None, bm25)
        if mode == "bm25":
            return lexical
        name = self.embedder.name if self.embedder else None
        semantic = (CALIBRATIONS.get(("dense", name)) or CALIBRATIONS[("dense", None)])(cos, None)
        return semantic if mode == "dense" else max(semantic, lexical)
