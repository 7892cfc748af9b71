"""Tables that fit the terminal: low-value columns dropped, paths shortened in the middle, one
line per row where a row's text is long; `--wide` keeps every column and every character."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from docqa.cli.links import linked
from docqa.cli.paths import PathNamer
from docqa.types import DocumentRecord

GAP = 2  # spaces between columns
MIN_PATH = 16  # a path column narrower than this says too little: the status column wraps instead
STATUS_COLOURS = {"error": "red", "skipped": "yellow"}
RUN_COLOURS = {"SUCCESS": "green", "FALLBACK": "yellow", "FAILED": "red", "CANCELLED": "dim", "RUNNING": "cyan"}


def _table(*columns: str) -> Table:
    return Table(*columns, box=None, padding=(0, GAP // 2), pad_edge=False)


def size_text(n: float) -> str:
    """`812 B`, `4.2 KB`, `1.3 GB`."""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def documents_table(records: list[DocumentRecord], namer: PathNamer, width: int, wide: bool = False) -> Table:
    """path, type, chunks, size, status (and `indexed at` when wide); the path column takes what
    the others leave, each path shortened in the middle to fit it."""
    rows = [[r.type, str(r.chunks), size_text(r.size), *([r.indexed_at] if wide else []), _status(r)] for r in records]
    columns = ["type", "chunks", "size", *(["indexed at"] if wide else []), "status"]
    widths = [max([len(c), *(len(row[i]) for row in rows)]) for i, c in enumerate(columns)]
    widths[-1] = min(widths[-1], 24)  # a long error wraps in its column rather than squeeze the paths
    room = width - sum(widths) - GAP * len(columns)
    path_width = None if wide else max(MIN_PATH, room)
    table = _table("path", *columns)
    table.columns[0].no_wrap = True  # shortened to fit already: rich must not cut the end off
    table.columns[-1].overflow = "fold"
    for r, row in zip(records, rows):
        name = namer.name(r.path) if wide else namer.short(r.path, path_width)
        colour = STATUS_COLOURS.get(r.status)
        status = f"[{colour}]{escape(row[-1])}[/]" if colour else escape(row[-1])
        table.add_row(linked(name, r.path), *row[:-1], status)
    return table


def _status(record: DocumentRecord) -> str:
    return "ok" if record.status == "ok" else (record.error or record.status)


def log_table(rows: list[dict], attention: bool, wide: bool = False) -> Table:
    """time, status, question, answer (with --attention: the reason), stale and run.  In the terminal
    each question takes two lines, the answer or reason under it, both cut with … to the width left;
    `wide` gives the answer (and the confidence) columns of their own, in full."""
    last = "reason" if attention else "answer"
    if wide:
        table = _table("time (UTC)", "status", "confidence", "question", last, "stale", "run")
    else:
        table = _table("time (UTC)", "status", f"question / {last}", "stale", "run")
        table.expand = True  # the text column takes what the others leave (rich honours ratios only so)
    for column in table.columns:
        text = column.header in ("question", last, f"question / {last}")
        column.no_wrap, column.overflow, column.ratio = not (wide and text), "ellipsis", 1 if text else None
    for r in rows:
        time, run = r["created_at"][:16].replace("T", " "), f"[dim]{r['run_id']}[/]"
        status = f"[{RUN_COLOURS.get(r['status'], 'white')}]{r['status']}[/]"
        question, answer = escape(one_line(r["question"])), escape(one_line(r[last]))
        if wide:
            table.add_row(time, status, r["confidence"] or "-", question, answer, stale_cell(r), run)
        else:
            table.add_row(time, status, question, stale_cell(r), run)
            table.add_row("", "", f"[dim]{answer or '-'}[/]", "", "")
    return table


def stale_cell(row: dict) -> str:
    """'stale <day>' (and the latest recheck's verdict) for an answer whose cited source changed; '' else."""
    if not row.get("stale"):
        return ""
    recheck = f" · {row['recheck']}" if row.get("recheck") else ""
    return f"[yellow]stale {str(row.get('stale_at') or '')[:10]}[/]{escape(recheck)}"


def one_line(text: str | None) -> str:
    return " ".join((text or "").split())
