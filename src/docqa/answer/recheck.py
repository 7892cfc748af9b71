"""Recheck: a published answer's claims re-verified against the current text of what they cited.

Each citation (the run's sources: docqa.store.sources) is found again in its document's current
text and given a verdict:

- **supported**: the span is unchanged — at its place, or moved (the new location is given);
- **changed**: the span was edited (the passage most like it is shown as a word diff of old and
  new) and the claim still passes the pipeline's own checker against the new text (verify.py);
- **contradicted**: the span was edited and the claim, which passed against the old span, fails
  against the new one (the checker's reasons say what the new text says otherwise);
- **gone**: the document was removed, or nothing in it is like the span any more.

A claim takes the best verdict of its citations (one source that still holds it is enough); the
answer takes the worst verdict of its claims.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from docqa.answer.support import content_tokens
from docqa.answer.verify import verify
from docqa.errors import NotFoundError
from docqa.text.sentences import sentence_spans
from docqa.types import RunRecord

SUPPORTED, CHANGED, CONTRADICTED, GONE = "supported", "changed", "contradicted", "gone"
VERDICTS = (SUPPORTED, CHANGED, CONTRADICTED, GONE)
_BEST = {SUPPORTED: 0, CHANGED: 1, CONTRADICTED: 2, GONE: 3}  # a claim: the best of its citations
_WORST = {SUPPORTED: 0, CHANGED: 1, GONE: 2, CONTRADICTED: 3}  # an answer: the worst of its claims
LIKE = 0.6  # the share of the old span's words a passage must hold to count as its edited form
_CANDIDATES = 8


@dataclass(slots=True)
class Current:
    """A cited document as it is now: its hash and text (None: it is gone)."""

    content_hash: str
    text: str
    path: str


Lookup = Callable[[str], Current | None]


def recheck(run: RunRecord, current: Lookup, checked_at: str) -> dict[str, Any]:
    """The recheck of `run` against the documents as `current(document_id)` gives them now."""
    question = run.standalone or run.question
    result = run.result or {}
    paths = {c.get("n"): c.get("path") for c in result.get("citations") or [] if isinstance(c, dict)}
    cache: dict[str, Current | None] = {}
    by_n: dict[int, list[dict[str, Any]]] = {}
    for source in run.sources:
        doc_id = source["document_id"]
        if doc_id not in cache:
            cache[doc_id] = current(doc_id)
        by_n.setdefault(source["n"], []).append((source, cache[doc_id]))  # type: ignore[arg-type]
    claims = [c for c in result.get("claims") or [] if isinstance(c, dict) and c.get("sources")]
    if not claims and by_n:  # an answer without claims (catalog, extractive quotes): the answer is the claim
        claims = [{"text": result.get("answer") or run.answer or "", "sources": sorted(by_n)}]
    checked = [_claim(c, question, by_n, paths) for c in claims]
    verdict = max((c["verdict"] for c in checked), key=_WORST.__getitem__, default=SUPPORTED)
    counts = {v: sum(c["verdict"] == v for c in checked) for v in VERDICTS}
    return {"checked_at": checked_at, "verdict": verdict, "counts": counts, "claims": checked}


def _claim(claim: dict[str, Any], question: str, by_n: dict, paths: dict) -> dict[str, Any]:
    text = str(claim.get("text") or "")
    cited = _spans_of(text, [pair for n in claim.get("sources") or [] for pair in by_n.get(n, [])])
    sources = [_source(text, question, source, now, paths.get(source["n"])) for source, now in cited]
    verdict = min((s["verdict"] for s in sources), key=_BEST.__getitem__, default=GONE)
    return {"text": text, "verdict": verdict, "sources": sources}


def _source(claim: str, question: str, source: dict[str, Any], now: Current | None, path: str | None) -> dict[str, Any]:
    old, start, end = source["quote"], source["char_start"], source["char_end"]
    out: dict[str, Any] = {"n": source["n"], "document_id": source["document_id"], "path": path, "old": old}
    if now is None:
        return {**out, "verdict": GONE, "why": "the document was removed"}
    out["path"] = now.path
    if now.text[start:end] == old:
        return {**out, "verdict": SUPPORTED, "why": "unchanged", "location": _location(now.text, start, end)}
    moved = _nearest(now.text, old, start)
    if moved is not None:
        return {**out, "verdict": SUPPORTED, "why": "moved", "location": _location(now.text, moved, moved + len(old))}
    found = best_passage(now.text, old)
    if found is None:
        return {**out, "verdict": GONE, "why": "the cited passage was removed"}
    new_start, new_end = found
    new = now.text[new_start:new_end]
    out.update(new=new, diff=word_diff(old, new), location=_location(now.text, new_start, new_end))
    reasons = contradiction(claim, question, old, new)
    if reasons:
        return {**out, "verdict": CONTRADICTED, "why": "; ".join(reasons)}
    return {**out, "verdict": CHANGED, "why": "the cited passage was edited; the claim still passes the checks"}


def _spans_of(claim: str, cited: list[tuple[dict, Current | None]]) -> list[tuple[dict, Current | None]]:
    """The cited spans that hold this claim: one source number may stand for several spans (one per
    claim of an extractive answer), so only those sharing the most of the claim's words are its own."""
    words = content_tokens(claim)
    if len(cited) < 2 or not words:
        return cited
    shared = [len(words & content_tokens(source["quote"])) for source, _ in cited]
    return [pair for pair, n in zip(cited, shared) if n == max(shared)]


def contradiction(claim: str, question: str, old: str, new: str) -> list[str]:
    """Why the new text says otherwise: the checker's reasons when the claim passed against the
    old span and fails against the new (empty: no contradiction found)."""
    if not claim.strip() or not verify(question, claim, old).verified:
        return []
    checked = verify(question, claim, new)
    return [] if checked.verified else (checked.reasons or ["the new text no longer supports the claim"])


def best_passage(text: str, old: str) -> tuple[int, int] | None:
    """The run of sentences of `text` that holds most of `old`'s words, ties to the most alike in
    wording (None: none holds at least LIKE of them)."""
    spans = sentence_spans(text)
    words = content_tokens(old)
    if not spans or not words:
        return None
    width = max(1, len(sentence_spans(old)))
    windows = {(spans[i][0], spans[min(i + w, len(spans)) - 1][1]) for w in {max(1, width - 1), width, width + 1}
               for i in range(len(spans))}
    scored = sorted(((len(words & content_tokens(text[s:e])) / len(words), s, e) for s, e in windows), reverse=True)
    top = [(difflib.SequenceMatcher(None, old, text[s:e], autojunk=False).ratio(), s, e)
           for share, s, e in scored[:_CANDIDATES] if share == scored[0][0]]
    if scored[0][0] < LIKE:
        return None
    _, s, e = max(top)
    return s, e


def word_diff(old: str, new: str) -> list[dict[str, str]]:
    """Old and new text as runs of equal, deleted and inserted words (whitespace kept with its word)."""
    a, b = re.findall(r"\s*\S+", old), re.findall(r"\s*\S+", new)
    runs: list[dict[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op in ("equal", "delete", "replace"):
            runs.append({"op": "equal" if op == "equal" else "delete", "text": "".join(a[i1:i2])})
        if op in ("insert", "replace"):
            runs.append({"op": "insert", "text": "".join(b[j1:j2])})
    return runs


def render_diff(runs: list[dict[str, str]]) -> str:
    """A word diff as plain text: [-deleted-]{+inserted+} (git diff --word-diff=plain)."""
    out = []
    for r in runs:
        text = r["text"]
        if r["op"] == "equal":
            out.append(text)
        else:
            mark = "[-{}-]" if r["op"] == "delete" else "{{+{}+}}"
            out.append(text[: len(text) - len(text.lstrip())] + mark.format(text.strip()))
    return "".join(out)


def _nearest(text: str, quote: str, start: int) -> int | None:
    """Where `quote` now occurs in `text`, nearest its old place (None: nowhere)."""
    places = [m.start() for m in re.finditer(re.escape(quote), text)] if quote else []
    return min(places, key=lambda p: abs(p - start)) if places else None


def _location(text: str, start: int, end: int) -> dict[str, int]:
    line = text.count("\n", 0, start) + 1
    return {"char_start": start, "char_end": end, "line_start": line, "line_end": line + text.count("\n", start, end)}


def lookup(documents) -> Lookup:
    """`current` over a DocumentStore: a document's hash, text and path now, or None when it is gone."""
    def current(document_id: str) -> Current | None:
        try:
            record = documents.document_record(document_id)
            return Current(record.content_hash, documents.document_text(document_id), record.path)
        except NotFoundError:
            return None
    return current
