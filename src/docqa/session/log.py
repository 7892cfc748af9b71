"""The question-and-answer log: one row per run, for export and for the people who keep the documents.

`needs_attention` picks the questions the documents did not answer well: answers that say the
documents do not hold it, failed runs, low-confidence answers, answers rated down, runs that
escalated after every review round was rejected, with the diagnosis, and stale answers (a cited
span changed or went since: docqa.store.sources) with their latest recheck (the
`ATTENTION` kinds, listed in each row's `attention`).

CSV cells that a spreadsheet would run as a formula (starting with = + - @, a tab or a carriage
return) are written with a leading apostrophe: questions and answers are anyone's text.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Iterable
from typing import IO, Any

from docqa.types import FAILED, FALLBACK, SUCCESS, RunRecord

COLUMNS = ("run_id", "session_id", "created_at", "status", "question", "answer", "answerable", "confidence", "mode",
           "collection", "model", "feedback_up", "feedback_down", "comments", "sources", "error", "stale", "stale_at",
           "recheck")
ATTENTION_COLUMNS = (*COLUMNS, "reason")
TOP_SOURCES = 3
ATTENTION = ("not_found", "failed", "low_confidence", "rated_down", "escalated", "stale")  # why a run needs a maintainer's look
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def qa_log(runs: Iterable[RunRecord]) -> list[dict[str, Any]]:
    """One row per run, in the order given."""
    return [_row(run) for run in runs]


def needs_attention(runs: Iterable[RunRecord], kinds: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """The rows of runs that need a document maintainer's look, each with its `reason` and its
    `attention` kinds; with `kinds`, only the runs that need it for one of those (see ATTENTION)."""
    wanted = set(kinds) if kinds else set(ATTENTION)
    rows = []
    for run in runs:
        reasons = _reasons(run)
        if wanted & {kind for kind, _ in reasons}:
            rows.append({**_row(run), "reason": "; ".join(text for _, text in reasons),
                         "attention": [kind for kind, _ in reasons]})
    return rows


def matches(row: dict[str, Any], text: str) -> bool:
    """True when `text` occurs (ignoring case) in the row's question, answer, error, reason or sources."""
    needle = text.casefold()
    fields = (row.get("question"), row.get("answer"), row.get("error"), row.get("reason"), *row.get("sources", []))
    return any(needle in str(f).casefold() for f in fields if f)


def _reasons(run: RunRecord) -> list[tuple[str, str]]:
    reasons = []
    if run.status == FAILED:
        reasons.append(("failed", f"failed: {run.error}" if run.error else "failed"))
    elif run.status in (SUCCESS, FALLBACK):
        if run.answerable is False:
            reasons.append(("not_found", "not answered: the documents do not seem to hold it"))
        elif run.confidence == "low":
            reasons.append(("low_confidence", "low confidence"))
    escalation = ((run.result or {}).get("retrieval") or {}).get("escalation")
    if escalation:  # every review round was rejected (docqa.answer.escalate): the diagnosis and the action
        reasons.append(("escalated", f"escalated: {escalation.get('kind')} ({escalation.get('reason')}); "
                                     f"{escalation.get('action')}; {escalation.get('outcome')}"))
    for fb in run.feedback:
        if fb.rating == "down":
            reasons.append(("rated_down", f"rated down: {fb.comment}" if fb.comment else "rated down"))
    if run.stale_at:
        recheck = f"; recheck: {run.recheck['verdict']}" if run.recheck else "; 'docqa recheck' compares it"
        reasons.append(("stale", f"stale: a cited source changed on {run.stale_at[:10]}{recheck}"))
    return reasons


def _row(run: RunRecord) -> dict[str, Any]:
    answer = run.answer if run.answer is not None else (run.result or {}).get("answer")
    return {
        "run_id": run.id, "session_id": run.session_id, "created_at": run.created_at, "status": run.status,
        "question": run.question, "answer": answer, "answerable": run.answerable, "confidence": run.confidence,
        "mode": run.mode, "collection": run.collection, "model": run.model,
        "feedback_up": sum(fb.rating == "up" for fb in run.feedback),
        "feedback_down": sum(fb.rating == "down" for fb in run.feedback),
        "comments": [fb.comment for fb in run.feedback if fb.comment],
        "sources": cited_paths(run.result, TOP_SOURCES), "error": run.error,
        "stale": run.stale, "stale_at": run.stale_at, "recheck": (run.recheck or {}).get("verdict"),
    }


def cited_paths(result: dict[str, Any] | None, limit: int) -> list[str]:
    """The paths a published result cites most, most cited first (ties: first cited first)."""
    citations = (result or {}).get("citations") or []
    counts = Counter(c.get("path") for c in citations if isinstance(c, dict) and c.get("path"))
    return [path for path, _ in counts.most_common(limit)]


# -- output --------------------------------------------------------------------------------
EXPORT_FORMATS = ("jsonl", "csv", "md")


def export(rows: list[dict[str, Any]], fmt: str, fp: IO[str], title: str = "Questions and answers") -> None:
    """Write rows as jsonl, csv or md (Markdown); ValueError for another format."""
    if fmt == "jsonl":
        write_jsonl(rows, fp)
    elif fmt == "csv":
        write_csv(rows, fp)
    elif fmt == "md":
        fp.write(render_markdown(rows, title))
    else:
        raise ValueError(f"unknown log format {fmt!r}: one of {', '.join(EXPORT_FORMATS)}")


def write_jsonl(rows: Iterable[dict[str, Any]], fp: IO[str]) -> None:
    """One JSON object per line."""
    for row in rows:
        fp.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_csv(rows: list[dict[str, Any]], fp: IO[str]) -> None:
    """CSV (RFC 4180: CRLF line ends) with a header row; lists are joined with ' | ', booleans written as true/false."""
    columns = ATTENTION_COLUMNS if any("reason" in r for r in rows) else COLUMNS
    writer = csv.DictWriter(fp, fieldnames=columns, extrasaction="ignore", lineterminator="\r\n")  # RFC 4180: a lone CR is quoted too
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _cell(row.get(k)) for k in columns})


def _cell(value: Any) -> Any:
    if isinstance(value, list):
        return _inert(" | ".join(str(v) for v in value))
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else _inert(value) if isinstance(value, str) else value


def _inert(text: str) -> str:
    """A cell a spreadsheet shows as text, never runs as a formula (OWASP's CSV injection advice)."""
    return "'" + text if text.startswith(_FORMULA) else text


def render_markdown(rows: list[dict[str, Any]], title: str = "Questions and answers") -> str:
    """A Markdown document: one section per run with its question, answer, sources and feedback."""
    lines = [f"# {title}", "", f"{len(rows)} question(s).", ""]
    for row in rows:
        heading = " · ".join(str(p) for p in (row.get("created_at", "")[:16].replace("T", " "), row.get("status"),
                                               row.get("confidence")) if p)
        lines += [f"## {heading}", "", f"**Question:** {_inline(row.get('question'))}", ""]
        if row.get("reason"):
            lines += [f"**Needs attention:** {_inline(row['reason'])}", ""]
        if row.get("stale"):
            lines += [f"**Stale:** a cited source changed on {str(row.get('stale_at'))[:10]}"
                      + (f" (recheck: {row['recheck']})" if row.get("recheck") else ""), ""]
        if row.get("answer"):
            lines += ["**Answer:**", "", *(f"> {line}" for line in str(row["answer"]).splitlines()), ""]
        if row.get("sources"):
            lines += ["**Sources:** " + ", ".join(f"`{s}`" for s in row["sources"]), ""]
        if row.get("feedback_up") or row.get("feedback_down"):
            lines += [f"**Feedback:** {row['feedback_up']} up, {row['feedback_down']} down", ""]
            lines += [f"- {_inline(c)}" for c in row.get("comments", [])] + ([""] if row.get("comments") else [])
        lines += [f"<sub>run {row.get('run_id')} · session {row.get('session_id')}</sub>", ""]
    return "\n".join(lines)


def _inline(text: Any) -> str:
    return " ".join(str(text or "").split())
