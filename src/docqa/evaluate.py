"""`docqa eval`: ask a question set of a knowledge base and score the answers.

A question file is JSON lines: `{"question", "answers": [...], "is_impossible": bool}` plus,
for citation accuracy, where the gold answer is: `"context"` (the gold passage's text) or
`"article"` (a file name) with `"paragraph"` (its 0-based paragraph after the title, the
SQuAD layout of ../shared/data/qa/squad2-dev-subset).

Scores: answer accuracy (a gold answer contained in the answer), abstention accuracy on
unanswerable questions, citation accuracy (a cited span inside the gold passage), latency per
stage.  For the extractive answerer the abstention threshold trades one against the other;
`tradeoff` reports both over a range of thresholds from the same run.
"""

from __future__ import annotations

import json
import os
import re
import statistics

import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docqa.errors import InputError
from docqa.kb import KnowledgeBase
from docqa.types import Answer


@dataclass(slots=True)
class Item:
    question: str
    answers: list[str]
    impossible: bool
    gold: str | None = None  # the gold passage text
    article: str | None = None


@dataclass(slots=True)
class Outcome:
    item: Item
    answered: bool
    correct: bool
    cited_gold: bool | None  # None: no gold passage known, or nothing cited
    evidence: float | None
    contains_gold: bool  # the answer text holds a gold answer (whether or not it abstained)
    timings: dict[str, float]
    status: str
    tokens: int = 0
    calls: int = 0


@dataclass(slots=True)
class Report:
    outcomes: list[Outcome] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        answerable = [o for o in self.outcomes if not o.item.impossible]
        impossible = [o for o in self.outcomes if o.item.impossible]
        answered = [o for o in answerable if o.answered]
        cited = [o for o in answered if o.cited_gold is not None]
        return {
            "questions": len(self.outcomes), "answerable": len(answerable), "unanswerable": len(impossible),
            "answer_accuracy": _share(o.correct for o in answerable),
            "answered_rate": _share(o.answered for o in answerable),
            "abstention_accuracy": _share(not o.answered for o in impossible),
            "citation_accuracy": _share(o.cited_gold for o in cited),
            "overall_accuracy": _share([o.correct for o in answerable] + [not o.answered for o in impossible]),
            "failed": sum(o.status == "FAILED" for o in self.outcomes),
            "latency": _latency(o.timings for o in self.outcomes),
            "tokens_per_question": round(statistics.mean(o.tokens for o in self.outcomes), 1) if self.outcomes else 0,
            "model_calls_per_question": round(statistics.mean(o.calls for o in self.outcomes), 2) if self.outcomes else 0,
        }

    def counts(self) -> dict[str, tuple[int, int]]:
        """Each share of `summary` as (right, out of): what it was measured on."""
        answerable = [o for o in self.outcomes if not o.item.impossible]
        impossible = [o for o in self.outcomes if o.item.impossible]
        cited = [o for o in answerable if o.answered and o.cited_gold is not None]
        return {"answer_accuracy": (sum(o.correct for o in answerable), len(answerable)),
                "answered_rate": (sum(o.answered for o in answerable), len(answerable)),
                "abstention_accuracy": (sum(not o.answered for o in impossible), len(impossible)),
                "citation_accuracy": (sum(bool(o.cited_gold) for o in cited), len(cited)),
                "overall_accuracy": (sum(o.correct for o in answerable) + sum(not o.answered for o in impossible),
                                     len(self.outcomes))}

    def tradeoff(self, thresholds: Iterable[float]) -> list[dict[str, float]]:
        """Answer accuracy and abstention over abstain thresholds (extractive runs at threshold 0).  A question that
        abstained at threshold 0 by a rule of the answerer's own (a release question no version answers, a "how many"
        question no quoted sentence states a quantity for) abstains at every threshold."""
        rows = []
        for t in thresholds:
            answerable = [o for o in self.outcomes if not o.item.impossible and o.evidence is not None]
            impossible = [o for o in self.outcomes if o.item.impossible and o.evidence is not None]
            rows.append({
                "threshold": round(t, 3),
                "answer_accuracy": _share(o.answered and o.evidence >= t and o.contains_gold for o in answerable),
                "abstention_accuracy": _share(not o.answered or o.evidence < t for o in impossible),
            })
        return rows


def load(path: Path) -> list[Item]:
    """Read a question file (JSON lines); every error names the file, the line and what is wrong."""
    try:
        with open(path, encoding="utf-8") as fp:
            lines = fp.read().splitlines()
    except FileNotFoundError:
        raise InputError(f"no question file at {path}: give a JSON lines file, such as eval/samples.jsonl") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot be read as UTF-8 text ({exc})") from None
    items = [_item(line, f"{path}:{number}") for number, line in enumerate(lines, start=1) if line.strip()]
    if not items:
        raise InputError(f"{path}: no questions in it (one JSON object a line, with \"question\")")
    return items


_SHAPE = 'expected {"question": "...", "answers": ["..."], "is_impossible": false}'


def _item(line: str, where: str) -> Item:
    """One question line as an Item; InputError saying what is wrong with it."""
    try:
        row = json.loads(line)
    except ValueError as exc:
        raise InputError(f"{where}: not valid JSON ({getattr(exc, 'msg', exc)}, column {getattr(exc, 'colno', '?')}); {_SHAPE}") from None
    if not isinstance(row, dict):
        raise InputError(f"{where}: a JSON {type(row).__name__}, not an object; {_SHAPE}")
    question, answers = row.get("question"), row.get("answers") or []
    if not isinstance(question, str) or not question.strip():
        raise InputError(f"{where}: \"question\" is missing or not a text; {_SHAPE}")
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise InputError(f"{where}: \"answers\" must be a list of texts; {_SHAPE}")
    item = Item(question, list(answers), bool(row.get("is_impossible", False)), row.get("context"), row.get("article"))
    if "paragraph" in row:
        item.gold = f"\x00{row['paragraph']}"  # resolved against the indexed article
    return item


def run(kb: KnowledgeBase, items: list[Item], collection: str | None = None, check: bool = True,
        progress: Callable[[int, int], None] | None = None, mode: str | None = None) -> Report:
    """Ask every question (not recorded in the knowledge base's log) and score the answers."""
    golds = _GoldPassages(kb, collection)
    report = Report()
    for i, item in enumerate(items, start=1):
        answer = kb.ask(item.question, collection=collection, check=check, record=False, mode=mode)
        report.outcomes.append(_score(item, answer, golds.text(item)))
        if progress:
            progress(i, len(items))
    return report


def _score(item: Item, answer: Answer, gold: str | None) -> Outcome:
    text = _norm(answer.answer)
    contains = any(_norm(a) in text for a in item.answers if a.strip())
    if answer.mode == "extractive" and not answer.answerable:  # what it would have said, for the trade-off
        contains = any(_norm(a) in _norm(" ".join(c.quote for c in answer.citations)) for a in item.answers)
    cited = None
    if gold is not None and answer.citations:
        g = _norm(gold)
        cited = any(_norm(c.quote) in g for c in answer.citations if c.quote.strip())
    return Outcome(item, answer.answerable, answer.answerable and contains, cited,
                   answer.retrieval.evidence, contains, dict(answer.timings),
                   answer.status, answer.usage.get("total_tokens", 0), answer.usage.get("model_calls", 0))


class _GoldPassages:
    """Gold passage texts: given inline, or paragraph N of an indexed article."""

    def __init__(self, kb: KnowledgeBase, collection: str | None):
        self.kb, self.collection = kb, collection
        self._articles: dict[str, list[str]] = {}

    def text(self, item: Item) -> str | None:
        if item.gold is None or not item.gold.startswith("\x00"):
            return item.gold
        if item.article is None:
            return None
        paragraphs = self._paragraphs(item.article)
        index = int(item.gold[1:])
        return paragraphs[index] if 0 <= index < len(paragraphs) else None

    def _paragraphs(self, article: str) -> list[str]:
        if article not in self._articles:
            record = next((r for r in self.kb.documents.list(self.collection) if os.path.basename(r.path) == article), None)
            text = self.kb.documents.text(record.document_id) if record else ""
            blocks = [b.strip() for b in re.split(r"\n\s*\n", text) if b.strip()]
            self._articles[article] = blocks[1:] if blocks and blocks[0].startswith("#") else blocks
        return self._articles[article]


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"\[(\d+(?:,\s*\d+)*)\]", " ", text)
    return " ".join(re.sub(r"[^\w\s%.-]", " ", text).split())


def _share(values: Iterable[bool]) -> float | None:
    values = list(values)
    return round(sum(values) / len(values), 4) if values else None


def _latency(timings: Iterable[dict[str, float]]) -> dict[str, dict[str, float]]:
    by_stage: dict[str, list[float]] = {}
    for t in timings:
        for stage, seconds in t.items():
            by_stage.setdefault(stage, []).append(seconds)
    out = {}
    for stage, values in by_stage.items():
        values.sort()
        out[stage] = {"mean_ms": round(1000 * statistics.mean(values), 1),
                      "p50_ms": round(1000 * values[len(values) // 2], 1),
                      "p95_ms": round(1000 * values[min(len(values) - 1, int(len(values) * 0.95))], 1)}
    return out





# What each share measures ({right} of {total} ...), and the figure to compare it with: the extractive
# answerer's (no chat model) on 3,022 SQuAD 2.0 questions, benchmarks/RESULTS.md.
MEANINGS = {
    "answer_accuracy": ("answer accuracy", "{right} of {total} answerable questions got an answer holding a gold answer",
                        "good: 0.7 or more (the extractive answerer scores 0.69 on SQuAD 2.0)"),
    "answered_rate": ("answered", "{right} of {total} answerable questions were answered, not 'not found'",
                      "good: close to answer accuracy (an answer given is a right one)"),
    "abstention_accuracy": ("abstention accuracy", "{right} of {total} questions the documents do not answer were "
                            "rightly 'not found'", "good: 0.6 or more (extractive: 0.59)"),
    "citation_accuracy": ("citation accuracy", "{right} of {total} answers with a known gold passage cite a span inside it",
                          "good: 0.9 or more (extractive: 0.97)"),
    "overall_accuracy": ("overall", "{right} of {total} questions handled right (answered right, or rightly not found)",
                         "1.0 is every question"),
}


def explain(report: Report) -> list[str]:
    """The summary in words: what was measured, on how many questions, and what a good figure is."""
    summary, counts = report.summary(), report.counts()
    n = summary["questions"]
    lines = [f"{n} question(s) asked: {summary['answerable']} the documents answer, {summary['unanswerable']} they do "
             f"not (the right reply to those is 'not found'); {summary['failed']} failed."]
    for key, (label, what, good) in MEANINGS.items():
        right, total = counts[key]
        value = summary[key]
        figure = "-" if value is None else f"{value:.2f}"
        said = what.format(right=right, total=total) if total else "nothing to measure in this set"
        lines.append(f"{label:>20}: {figure:>4}  {said}; {good}")
    lines.append(f"{'cost':>20}: {summary['tokens_per_question']} tokens and {summary['model_calls_per_question']} model "
                 "call(s) per question (0: no chat model, answers are extracted sentences)")
    smallest = min((total for _, total in counts.values() if total), default=0)
    if 0 < n < 100:
        lines.append(f"With {n} questions one question moves a share by up to {1 / smallest:.2f}: judge a setting on "
                     "100 or more questions (benchmarks/answer_eval.py).")
    return lines
