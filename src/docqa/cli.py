"""The `docqa` command line: parse input, call KnowledgeBase, render the result (typer + rich)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from docqa.errors import ConfigError, DocqaError
from docqa.kb import KnowledgeBase
from docqa.settings import load_settings
from docqa.types import Hit

app = typer.Typer(
    help="docqa: ask questions of your own documents, answered only from them, with exact citations.\n\n"
    "Start with 'docqa add FOLDER', then 'docqa search QUERY'.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)
_state: dict = {}

KbOption = Annotated[Optional[str], typer.Option("--kb", envvar="DOCQA_KB", help="Knowledge base file (default: in your user data folder).")]
CollectionOption = Annotated[Optional[str], typer.Option("--collection", "-c", help="Collection name (default: 'default').")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON (stable shape, see README).")]


@app.callback()
def _main(kb: KbOption = None) -> None:
    _state["kb"] = kb


def _open() -> KnowledgeBase:
    settings = load_settings(kb=_state.get("kb"))
    return KnowledgeBase(settings)


def _print_json(data) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


@app.command()
def add(
    paths: Annotated[list[Path], typer.Argument(help="Files and folders to add (folders are walked recursively).")],
    collection: CollectionOption = None,
    include: Annotated[Optional[list[str]], typer.Option("--include", "-i", help="Only files matching this glob (repeatable), e.g. '*.md'.")] = None,
    exclude: Annotated[Optional[list[str]], typer.Option("--exclude", "-x", help="Skip files matching this glob (repeatable), e.g. 'drafts/**'.")] = None,
    workers: Annotated[Optional[int], typer.Option("--workers", "-w", help="Parser processes (default: one per CPU core).")] = None,
    as_json: JsonOption = False,
) -> None:
    """Add or update files; unchanged files are skipped, changed ones replaced, vanished ones removed.

    Respects .gitignore, skips hidden files, never follows symlinks out of a folder. Exits 1
    when some files failed (each is listed with its reason); the rest are still indexed.
    """
    with _open() as kb:
        if workers is not None:
            kb.settings.ingest.workers = workers
        with _progress(disabled=as_json) as bar:
            task = bar.add_task("parsing", total=None)

            def tick(done: int, total: int, path: str) -> None:
                bar.update(task, completed=done, total=total, description=escape(Path(path).name[:40]))

            report = kb.add(paths, collection, progress=tick, include=include, exclude=exclude)
    if as_json:
        _print_json(report.to_dict())
    else:
        _render_report(report)
    if report.failed:
        raise typer.Exit(1)


def _progress(disabled: bool) -> Progress:
    return Progress(
        TextColumn("{task.description:<40}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=err, transient=True, disable=disabled or not err.is_terminal,
    )


def _render_report(report) -> None:
    types = ", ".join(f"{t} {n}" for t, n in sorted(report.by_type.items())) or "-"
    out.print(
        f"added {len(report.added)}, updated {len(report.updated)}, unchanged {len(report.unchanged)}, "
        f"removed {len(report.removed)}, moved {len(report.moved)}, skipped {len(report.skipped)}, failed {len(report.failed)} · "
        f"{report.chunks} chunks · {types} · {report.elapsed:.2f}s"
    )
    for path, reason in report.skipped:
        out.print(f"  [yellow]skipped[/] {escape(path)}: {escape(reason)}")
    for path, kind, reason in report.failed:
        out.print(f"  [red]failed[/]  {escape(path)}: {escape(reason)}")


@app.command()
def remove(
    paths: Annotated[list[Path], typer.Argument(help="Files to remove, or folders to remove everything under.")],
    collection: CollectionOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remove documents from the knowledge base (the files themselves are not touched)."""
    with _open() as kb:
        removed = kb.remove(paths, collection)
    if as_json:
        _print_json([r.to_dict() for r in removed])
        return
    for record in removed:
        out.print(f"removed {escape(record.path)}")
    out.print(f"{len(removed)} document(s) removed")


@app.command("list")
def list_(collection: CollectionOption = None, as_json: JsonOption = False) -> None:
    """List indexed documents: path, type, chunks, size, indexed at, status or error."""
    with _open() as kb:
        records = kb.documents(collection)
    if as_json:
        _print_json([r.to_dict() for r in records])
        return
    table = Table("path", "type", "chunks", "size", "indexed at", "status", box=None)
    for r in records:
        status = "ok" if r.status == "ok" else f"[red]{escape(r.error or r.status)}[/]"
        table.add_row(escape(_rel(r.path)), r.type, str(r.chunks), _size(r.size), r.indexed_at, status)
    out.print(table)
    out.print(f"{len(records)} document(s)")


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for (any language; Chinese is segmented).")],
    top_k: Annotated[Optional[int], typer.Option("--top-k", "-k", help="Number of hits.")] = None,
    collection: CollectionOption = None,
    mode: Annotated[Optional[str], typer.Option("--mode", "-m", help="hybrid (default), bm25 or dense.")] = None,
    path: Annotated[Optional[str], typer.Option("--path", "-p", help="Only files whose path matches this glob, e.g. 'docs/**/*.md'.")] = None,
    types: Annotated[Optional[list[str]], typer.Option("--type", "-t", help="Only this file type or extension (repeatable), e.g. pdf, md.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Search: BM25 and multilingual dense vectors fused (hybrid), or either alone.

    Scores are a calibrated 0..1 relevance; when even the best hit is under
    search.relevance_threshold the result is flagged low relevance.
    """
    with _open() as kb:
        hits = kb.search(query, top_k, collection, mode=mode, path_glob=path, types=types or ())
    if as_json:
        _print_json([{**h.to_dict(), "low_relevance": hits.low_relevance} for h in hits])
        return
    if not hits:
        out.print("no matches")
    elif hits.low_relevance:
        err.print(f"[yellow]low relevance:[/] the best hit scores {_two(hits[0].score)}, under {hits.threshold:.2f}: the documents may not answer this")
    for i, hit in enumerate(hits, start=1):
        out.print(f"[bold]{i}.[/] {_two(hit.score)}  [cyan]{escape(_rel(hit.path))}[/]  {escape(location(hit))}  [dim]{hit.chunk_id}[/]")
        if hit.title:
            out.print(f"   [bold]{escape(hit.title)}[/]")
        out.print("   " + _marked(hit.snippet))


@app.command()
def show(
    target: Annotated[str, typer.Argument(help="A chunk id (from 'docqa search') or an indexed file path.")],
    collection: CollectionOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show a chunk's text with its location, or a document's chunks."""
    with _open() as kb:
        if os.path.exists(target) or os.sep in target:
            record = kb.document(target, collection)
            chunks = kb.document_chunks(record.document_id)
            if as_json:
                _print_json({**record.to_dict(), "chunk_list": [c.to_dict() for c in chunks]})
                return
            out.print(f"[bold]{escape(record.title)}[/]  {escape(record.path)}  ({record.type}, {record.chunks} chunks)")
            out.print(f"keywords: {escape(', '.join(record.keywords))}\nsummary: {escape(record.summary)}")
            for c in chunks:
                out.print(f"  [dim]{c.chunk_id}[/]  {escape(location(c))}")
            return
        hit = kb.chunk(target)
    if as_json:
        _print_json(hit.to_dict())
        return
    out.print(f"[cyan]{escape(hit.path)}[/]  {escape(location(hit))}")
    for number, line in enumerate(hit.text.split("\n"), start=hit.line_start):
        out.print(f"[dim]{number:>6}[/]  {escape(line)}")


@app.command()
def reindex(as_json: JsonOption = False) -> None:
    """Embed every chunk with the configured embedding model (after changing embed.provider or model).

    Only texts without a vector of that model are embedded, batch by batch: an interrupted
    reindex resumes where it stopped.
    """
    with _open() as kb:
        with _progress(disabled=as_json) as bar:
            task = bar.add_task("embedding", total=None)
            report = kb.reindex(progress=lambda done, total: bar.update(task, completed=done, total=total))
    if as_json:
        _print_json(report.to_dict())
        return
    if report.embedder is None:
        out.print(f"embed.provider is 'none': dropped all vectors; search is BM25 only ({report.chunks} chunks)")
    else:
        out.print(f"{report.embedder}: embedded {report.embedded} text(s), {report.reused} chunk(s) already had vectors,"
                  f" {report.chunks} chunks · {report.elapsed:.2f}s")


@app.command()
def stats(as_json: JsonOption = False) -> None:
    """Counts and sizes of the knowledge base."""
    with _open() as kb:
        data = kb.stats()
    if as_json:
        _print_json(data)
        return
    for key, value in data.items():
        out.print(f"{key:>15}: {value}")


def location(hit: Hit) -> str:
    """A readable location label: section, page(s), lines."""
    parts = []
    if hit.section:
        parts.append("§ " + hit.section)
    if hit.symbol:
        parts.append(hit.symbol)
    if hit.page is not None:
        parts.append(f"p. {hit.page}" if hit.page_end in (None, hit.page) else f"pp. {hit.page}–{hit.page_end}")
    parts.append(f"L{hit.line_start}" if hit.line_start == hit.line_end else f"L{hit.line_start}–{hit.line_end}")
    return ", ".join(parts)


def _two(score: float) -> str:
    """Two decimals, rounded down: 0.4996 must not read as 0.50 when the threshold is 0.5."""
    return f"{int(score * 100) / 100:.2f}"


def _marked(snippet: str) -> str:
    pieces = escape(snippet).split("**")
    return "".join(f"[bold yellow]{p}[/]" if i % 2 else p for i, p in enumerate(pieces))


def _rel(path: str) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return path


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def main() -> None:
    """Entry point: map docqa errors to a clean message and exit code."""
    try:
        app()
    except ConfigError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        sys.exit(2)
    except DocqaError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        sys.exit(1)
