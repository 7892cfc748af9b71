"""Reranking: a second look at the best fused hits, between retrieval and answering.

`search.rerank` picks the reranker: `none` (the fused order), or `llm` (the chat model reads the
best `search.rerank_depth` hits and orders them).  A reranker only reorders hits the caller's
search already returned, so it can never show a caller more than the search did.

The base class holds the contract every reranker keeps: the work runs within a time budget, and
a reranker that runs out of time, fails, or answers something unusable leaves the fused order as
it was and says why in its `RerankReport` (which the search results, the run trace and the answer
carry).  Subclasses implement only `order`.

No cross-encoder is offered: none ships its weights inside a package that installs offline
(see benchmarks/RESULTS.md, issue 16 item 5, for the packages checked).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from docqa.retrieve.retriever import SearchResults
from docqa.settings.model import RERANKERS
from docqa.types import Hit

__all__ = ["RERANKERS", "LLMReranker", "RerankReport", "Reranker", "UnusableOrderError", "rerank_results"]

log = logging.getLogger(__name__)
# What the reranker reads of each hit, in characters of English: the title and the start of the
# text.  A 1.5B model on a CPU reads ~45 prompt tokens/s when the machine is idle: 10 passages of
# 240 characters are ~700 tokens, ~15 s.
PASSAGE_CHARS = 240

# The chat model behind the LLM reranker: (system, user, max_tokens, deadline) -> reply text.
# `deadline` is a time.monotonic() instant; the callable should stop reading the reply after it.
Complete = Callable[[str, str, int, float], str]


class UnusableOrderError(Exception):
    """The reranker's model answered, but not with an order that can be used."""


@dataclass(slots=True)
class RerankReport:
    """What the rerank stage did: `reranked`, `fallback` (fused order kept: `reason` says why) or `off`."""

    method: str
    status: str
    candidates: int = 0
    reason: str | None = None
    ms: float = 0.0

    def to_dict(self) -> dict:
        out = asdict(self)
        out["ms"] = round(self.ms, 1)
        return out


class Reranker(ABC):
    """Orders a query's best hits; the base class adds the time budget and the fallback."""

    name: str = "reranker"

    @abstractmethod
    def order(self, query: str, texts: Sequence[str], deadline: float) -> list[int]:
        """Indices into `texts`, best first (each once; missing ones keep their fused order after
        the named ones).  Raise UnusableOrderError when the model's answer cannot be used."""

    passage_chars: int = PASSAGE_CHARS

    def rerank(self, query: str, hits: Sequence[Hit], timeout: float) -> tuple[list[Hit], RerankReport]:
        """`hits` reordered, with the report; the fused order when the budget runs out or anything fails."""
        started = time.monotonic()
        report = RerankReport(self.name, "reranked", len(hits))
        if len(hits) < 2:
            report.status, report.reason = "off", "fewer than two hits"
            return list(hits), report
        texts = [passage(h, self.passage_chars) for h in hits]
        outcome = _within(lambda: self.order(query, texts, started + timeout), timeout)
        report.ms = (time.monotonic() - started) * 1000
        if isinstance(outcome, BaseException):
            report.status, report.reason = "fallback", _why(outcome, timeout)
            return list(hits), report
        return complete_order(outcome, len(hits), hits), report


def rerank_results(results: SearchResults, reranker: Reranker | None, depth: int, top_k: int, timeout: float,
                   missing: str = "no chat model is configured") -> SearchResults:
    """The best `depth` of `results` reordered by `reranker` (None: kept, because of `missing`),
    the rest after them, cut to `top_k`; `.rerank` holds the report."""
    head = list(results[:depth])
    if reranker is None:
        ordered, report = head, RerankReport("llm", "fallback", len(head), missing)
    else:
        ordered, report = reranker.rerank(results.query, head, timeout)
    if report.status == "fallback":
        log.info("rerank fell back to the fused order: %s", report.reason)
    out = SearchResults([*ordered, *results[depth:]][:top_k], results.query, results.mode,
                        low_relevance=results.low_relevance, threshold=results.threshold)
    out.rerank = report.to_dict()
    out.without_vectors = [h.chunk_id for h in out if h.chunk_id in set(results.without_vectors)]
    return out


def complete_order(named: Sequence[int], n: int, hits: Sequence[Hit]) -> list[Hit]:
    """The named indices first, then every other hit in its fused order."""
    seen = list(dict.fromkeys(i for i in named if 0 <= i < n))
    first = set(seen)
    return [hits[i] for i in seen] + [h for i, h in enumerate(hits) if i not in first]


def passage(hit: Hit, budget: int = PASSAGE_CHARS) -> str:
    """What the reranker reads of a hit: its title and the start of its text, on one line, cut
    near `budget` characters of English (a Chinese character counts as three: about a token each)."""
    flat = " ".join(hit.text.split())
    if hit.title and hit.title not in flat[: len(hit.title) + 5]:
        flat = f"{hit.title}: {flat}"
    cost, end = 0, 0
    for end, ch in enumerate(flat[: budget], start=1):  # noqa: B007 - where it stopped is kept
        cost += 1 if ch.isascii() else 3
        if cost >= budget:
            break
    return flat[:end]


def _within(work: Callable[[], list[int]], timeout: float) -> list[int] | BaseException:
    """`work()`'s result, or the exception it raised, or TimeoutError after `timeout` seconds.

    A daemon thread: a model that never answers must not keep the process alive on exit."""
    box: list = []

    def run() -> None:
        try:
            box.append(work())
        except BaseException as exc:  # noqa: BLE001 - every failure becomes the fallback
            box.append(exc)

    worker = threading.Thread(target=run, name="docqa-rerank", daemon=True)
    worker.start()
    worker.join(timeout)
    return box[0] if box else TimeoutError(f"no order within {timeout:g} s")


def _why(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, TimeoutError):
        return f"the model gave no order within search.rerank_timeout ({timeout:g} s)"
    if isinstance(exc, UnusableOrderError):
        return f"the model's answer was not an order: {exc}"
    return f"the model failed: {exc}"


TOP_NAMED = 3  # passages the listwise reranker names; the rest keep the fused order
_NUMBER = re.compile(r"\d+")
_GRADE = re.compile(r"\[?(\d+)\]?\s*[:=\-–>]\s*\[?([0-3])\b")


class LLMReranker(Reranker):
    """A chat model orders the hits, all of them in one request (a small local model reads one
    long prompt faster than many short ones).  `style`: `listwise` (the reply names the best
    TOP_NAMED passages, best first; the others keep the fused order) or `graded` (the reply grades
    every passage 0-3; ties keep the fused order)."""

    name = "llm"

    def __init__(self, complete: Complete, style: str = "listwise", max_tokens: int | None = None):
        if style not in ("listwise", "graded"):
            raise ValueError(f"unknown LLM rerank style {style!r}: use listwise or graded")
        self.complete, self.style, self.max_tokens = complete, style, max_tokens

    def order(self, query: str, texts: Sequence[str], deadline: float) -> list[int]:
        numbered = "\n".join(f"[{i}] {t}" for i, t in enumerate(texts, start=1))
        system, user = (_listwise if self.style == "listwise" else _graded)(query, numbered, len(texts))
        limit = self.max_tokens or (24 if self.style == "listwise" else 6 * len(texts) + 8)
        reply = self.complete(system, user, limit, deadline)
        parse = parse_listwise if self.style == "listwise" else parse_graded
        return parse(reply, len(texts))


# One system prompt for both styles, the passages before the instruction: a server that caches
# prompt prefixes (llama.cpp) then reads the passages once when both styles are asked.
_SYSTEM = "You judge how well search results answer a question. Reply in exactly the form asked, with nothing else."


def _listwise(query: str, numbered: str, n: int) -> tuple[str, str]:
    # Only the best few: a small model writes ~1 token/s on a busy CPU, and nDCG@10 lives at the top.
    best = min(TOP_NAMED, n)
    example = " > ".join(str(i) for i in (2, 1, 3)[:best])
    return _SYSTEM, (f"Question: {query}\n\nPassages:\n{numbered}\n\n"
                     f"Which {best} passages answer the question best? Reply with their numbers, most relevant first, "
                     f"like: {example}")


def _graded(query: str, numbered: str, n: int) -> tuple[str, str]:
    return _SYSTEM, (f"Question: {query}\n\nPassages:\n{numbered}\n\n"
                     f"Grade each of the {n} passages: 3 answers the question, 2 closely related, 1 same topic, "
                     "0 unrelated. Reply with one line per passage, like: 1: 2")


def parse_listwise(reply: str, n: int) -> list[int]:
    """Passage numbers (1-based in the reply) as 0-based indices, best first; a reply with no
    passage number is unusable."""
    named = list(dict.fromkeys(int(m) - 1 for m in _NUMBER.findall(reply) if 1 <= int(m) <= n))
    if not named:
        raise UnusableOrderError(f"no passage number in {reply[:80]!r}")
    return named


def parse_graded(reply: str, n: int) -> list[int]:
    """Indices sorted by grade (highest first; ties and ungraded passages keep the fused order);
    unusable when fewer than half of the passages are graded."""
    grades: dict[int, int] = {}
    for number, grade in _GRADE.findall(reply):
        if 1 <= int(number) <= n:
            grades.setdefault(int(number) - 1, int(grade))
    if len(grades) * 2 < n:
        raise UnusableOrderError(f"{len(grades)} of {n} passages graded in {reply[:80]!r}")
    return sorted(range(n), key=lambda i: -grades.get(i, 0))
