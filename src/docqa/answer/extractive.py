"""The extractive answerer: with no chat model, answer with the best supporting sentences.

Candidate sentences come from the top hits.  Each is scored by how much of the question's
IDF-weighted terms it holds, its embedding similarity to the question, and its chunk's
retrieval score; the best few are chosen with maximal marginal relevance, so a repeated
sentence does not crowd out a second fact.  Under the abstain threshold it says the documents
do not hold the answer instead of quoting something unrelated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from docqa.answer.sources import SourceSet
from docqa.answer.support import content_tokens, jaccard
from docqa.retrieve.snippet import coverage
from docqa.text.segment import has_cjk, query_terms
from docqa.text.sentences import sentence_spans

# Weights of the evidence score (fitted on the SQuAD 2.0 subset, benchmarks/answer_eval.py).
W_TERMS, W_DENSE, W_RETRIEVAL = 0.45, 0.35, 0.20
MMR_LAMBDA = 0.7
_HITS = 5  # hits whose sentences are candidates
_MIN_CHARS = 12


@dataclass(slots=True)
class Sentence:
    n: int  # source number
    start: int  # span in the chunk text
    end: int
    text: str
    terms: float = 0.0
    dense: float = 0.0
    score: float = 0.0


@dataclass(slots=True)
class Extract:
    chosen: list[Sentence]
    evidence: float  # the best sentence's score: what the abstain threshold is compared with
    abstained: bool


def extract(question: str, sources: SourceSet, weights: dict[str, float],
            embed: Callable[[list[str], str], np.ndarray] | None, count: int = 3, threshold: float = 0.5) -> Extract:
    """The best `count` sentences for `question`, or an abstention under `threshold`."""
    candidates = _candidates(sources)
    if not candidates:
        return Extract([], 0.0, True)
    terms = query_terms(question)
    for s in candidates:
        s.terms = coverage(s.text, terms, weights)
    if embed is not None:
        query = _unit(embed([question], "query"))[0]
        sims = _unit(embed([s.text for s in candidates], "passage")) @ query
        for s, sim in zip(candidates, sims):
            s.dense = float(max(sim, 0.0))
    retrieval = {source.n: source.hit.score for source in sources.sources}
    for s in candidates:
        dense_w = W_DENSE if embed is not None else 0.0
        s.score = (W_TERMS * s.terms + dense_w * s.dense + W_RETRIEVAL * retrieval[s.n]) / (W_TERMS + dense_w + W_RETRIEVAL)
    chosen = _mmr(candidates, count)
    evidence = chosen[0].score if chosen else 0.0
    if evidence < threshold:
        return Extract([], evidence, True)
    floor = max(threshold, evidence * 0.6)  # later picks must still be real evidence
    return Extract([s for i, s in enumerate(chosen) if i == 0 or s.score >= floor], evidence, False)


def render(chosen: list[Sentence]) -> str:
    """The sentences in reading order per source, each followed by its marker."""
    ordered = sorted(chosen, key=lambda s: (s.n, s.start))
    parts = [f"{' '.join(s.text.split())} [{s.n}]" for s in ordered]
    return ("" if any(has_cjk(p) for p in parts) else " ").join(parts) if parts else ""


def _candidates(sources: SourceSet) -> list[Sentence]:
    out = []
    for source in sources.sources[:_HITS]:
        text = source.hit.text
        for s, e in sentence_spans(text):
            sentence = text[s:e]
            if len(sentence.strip("#*-| \n")) < _MIN_CHARS and not has_cjk(sentence):
                continue
            if len(sentence) > 600:  # a table or a run-on block: too long to quote as a sentence
                continue
            out.append(Sentence(source.n, s, e, sentence))
    return out


def _mmr(candidates: list[Sentence], count: int) -> list[Sentence]:
    tokens = {id(s): content_tokens(s.text) for s in candidates}
    pool = sorted(candidates, key=lambda s: -s.score)
    chosen: list[Sentence] = []
    while pool and len(chosen) < count:
        def gain(s: Sentence) -> float:
            overlap = max((jaccard(tokens[id(s)], tokens[id(c)]) for c in chosen), default=0.0)
            return MMR_LAMBDA * s.score - (1 - MMR_LAMBDA) * overlap

        best = max(pool, key=gain)
        if chosen and max(jaccard(tokens[id(best)], tokens[id(c)]) for c in chosen) > 0.8:
            pool.remove(best)  # a near-repeat of what is already chosen
            continue
        chosen.append(best)
        pool.remove(best)
    return chosen


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
