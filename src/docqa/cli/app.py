"""The `docqa` command line: parse input, call KnowledgeBase, render the result (typer + rich)."""

from __future__ import annotations

import io
import json
import os
import sys
import threading
import time
from contextlib import contextmanager
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from docqa.cli.answer import show_run, stdin_lines
from docqa.cli.console import err, out
from docqa.cli.help import Typer
from docqa.cli.links import linked
from docqa.cli.paths import PathNamer
from docqa.cli.tables import documents_table, log_table
from docqa.cli.model import model_app
from docqa.cli import plan as plan_cli
from docqa.cli.recheck import recheck_command

from docqa.cli.runs import runs_app
from docqa.cli.skills import skills_app
from docqa.errors import ConfigError, DocqaError
from docqa.settings import (AnswerSettings, ApiSettings, SearchSettings, config_path, default_kb_path, lint_config,
                            load_settings, masked, setting_sources)
from docqa.types import Hit

if TYPE_CHECKING:  # the rest is imported where it is used: 'docqa --help' must not load numpy or the readers
    from pydantic import BaseModel

    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings

app = Typer(
    help="docqa: ask questions of your own documents, answered only from them, with exact citations.\n\n"
    "Start with 'docqa add FOLDER', then 'docqa search QUERY'.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
_state: dict = {}

def _default(section: type[BaseModel], name: str, key: str) -> str:
    """A settings-backed default as help shows it: `10 (search.top_k)`."""
    return f"{section.model_fields[name].default} ({key})"


KbOption = Annotated[str | None, typer.Option(
    "--kb", envvar="DOCQA_KB", metavar="PATH", show_default=PathNamer().name(str(default_kb_path())),
    help="The knowledge base file. Only 'add', 'watch' and 'keys create' create it; other commands need it to exist.")]
CollectionOption = Annotated[str | None, typer.Option(
    "--collection", "-c", metavar="NAME", show_default="default (collection)", help="The collection to work on.")]
ScopeOption = Annotated[str | None, typer.Option(
    "--collection", "-c", metavar="NAME", show_default="every collection", help="Only this collection.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON (stable shape, see README); paths are absolute.")]
IncludeOption = Annotated[list[str] | None, typer.Option(
    "--include", "-i", metavar="GLOB", show_default="every file", help="Only files matching this glob (repeatable), e.g. '*.md'.")]
ExcludeOption = Annotated[list[str] | None, typer.Option(
    "--exclude", "-x", metavar="GLOB", show_default="none", help="Skip files matching this glob (repeatable), e.g. 'drafts/**'.")]
WideOption = Annotated[bool, typer.Option("--wide", help="Every column, full paths: lines may be longer than the terminal.")]


def _version(value: bool) -> None:
    if value:
        from docqa.version import __version__

        out.print(f"docqa {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    kb: KbOption = None,
    _show_version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")] = False,
) -> None:
    _state.clear()  # one invocation's settings (several run in one process under tests)
    _state["kb"] = kb


def _settings() -> Settings:
    """The settings in effect, resolved once per command."""
    if "settings" not in _state:
        _state["settings"] = load_settings(kb=_state.get("kb"))
    return _state["settings"]


def _open(*, create: bool = False) -> KnowledgeBase:
    """The knowledge base; only commands that fill it create it (NoKnowledgeBaseError otherwise)."""
    from docqa.kb import KnowledgeBase

    return KnowledgeBase(_settings(), create=create)


def _open_or_create() -> tuple[KnowledgeBase, bool]:
    """The knowledge base, created when it does not exist yet; True when it was just created."""
    from docqa.errors import NoKnowledgeBaseError

    try:
        return _open(), False
    except NoKnowledgeBaseError:
        return _open(create=True), True


def _namer(kb: KnowledgeBase) -> PathNamer:
    return PathNamer.for_root(kb.browse.root())


def _hint_if_empty(kb: KnowledgeBase) -> None:
    """Say how to fill a knowledge base that holds no document."""
    if kb.documents.is_empty():
        path = kb.settings.kb
        err.print(f"[yellow]the knowledge base at {escape(path)} is empty[/] — fill it with "
                  f"'docqa add FOLDER --kb {escape(path)}'")


def _print_wide(renderable) -> None:
    """Print as wide as the content needs (--wide): the terminal wraps or scrolls, nothing is cut."""
    Console(file=out.file, width=10**4, highlight=False, force_terminal=out.is_terminal, no_color=out.no_color).print(renderable)


def _print_json(data) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


@app.command()
def add(
    paths: Annotated[list[str], typer.Argument(metavar="PATH|URL...", help="Files and folders to add (folders are walked recursively); an http(s) URL crawls the documentation site under it.")],
    collection: CollectionOption = None,
    include: IncludeOption = None,
    exclude: ExcludeOption = None,
    workers: Annotated[int | None, typer.Option("--workers", "-w", metavar="N", show_default="one per CPU core; one with the local embedding model (ingest.workers)", help="Parser processes (engine ray: CPUs of the local Ray cluster).")] = None,
    engine: Annotated[str | None, typer.Option("--engine", metavar="local|ray", show_default="ingest.engine: local", help="Parse, chunk and embed on this machine's worker processes, or on a Ray cluster (pip install 'docqa[ray]').")] = None,
    ray_address: Annotated[str | None, typer.Option("--ray-address", metavar="ADDR", show_default="a local Ray (ingest.ray_address)", help="The Ray cluster for --engine ray: auto, host:6379 or ray://host:10001.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Add or update files; unchanged files are skipped, changed ones replaced, vanished ones removed.

    Respects .gitignore, skips hidden files, never follows symlinks out of a folder. Files docqa
    does not read (binary, images without OCR, FIFOs...) are skipped with their reason; a path that
    cannot be read now keeps its documents. Exits 1 when a file failed in this run (each is listed
    with its reason; the rest is still indexed); files failing as before are counted, not listed.
    """
    _ingest_flags(_settings().ingest, workers, engine, ray_address)  # a bad flag stops before anything is created
    from docqa.crawl import is_url

    urls = [p for p in paths if is_url(p)]
    files = [Path(p) for p in paths if p not in urls]
    _check_paths(files)  # a mistyped path stops before a knowledge base is created
    kb, new = _open_or_create()
    with kb:
        if new:
            err.print(f"created a new knowledge base at {escape(kb.settings.kb)}")
        sites = _add_sites(kb, urls, collection, as_json)
        if not files:
            raise typer.Exit(1 if any(r.failed for r in sites) else 0)
        with _interrupted_add(kb, files, collection), _progress(disabled=as_json) as bar:
            task = bar.add_task("parsing", total=None)

            def tick(done: int, total: int, path: str) -> None:
                bar.update(task, completed=done, total=total, description=escape(Path(path).name[:40]))

            report = kb.add(files, collection, progress=tick, include=include, exclude=exclude)
        namer = _namer(kb)
    if as_json:
        _print_json(report.to_dict())
    else:
        _render_report(report, namer)
    if report.failed:
        raise typer.Exit(1)


def _check_paths(paths: list[Path]) -> None:
    """InputError naming the paths that do not exist: nothing is read and nothing is created."""
    from docqa.errors import InputError

    if missing := [str(p) for p in paths if not os.path.lexists(p)]:
        raise InputError(f"no such file or folder: {', '.join(missing)} — nothing was added and no knowledge base "
                         "was created or changed; check the path (folders are walked recursively)")


@contextmanager
def _interrupted_add(kb: KnowledgeBase, paths: list[Path], collection: str | None):
    """Ctrl-C during `add`: say what the knowledge base kept and how to go on, then exit 130."""
    before = _indexed(kb, collection)
    try:
        yield
    except KeyboardInterrupt:
        kept = _indexed(kb, collection) - before
        kb_flag = ["--kb", _quoted(_state["kb"])] if _state.get("kb") else []
        again = " ".join(["docqa", *kb_flag, "add", *(_quoted(str(p)) for p in paths)]
                         + (["--collection", _quoted(collection)] if collection else []))
        err.print(f"\n[yellow]interrupted:[/] {max(kept, 0):,} document(s) indexed before it were kept "
                  f"({_indexed(kb, collection):,} in the collection now). Every document is saved whole or not at all. "
                  f"Run the same command again to resume: files already indexed are skipped as unchanged.\n"
                  f"  {escape(again)}")
        raise typer.Exit(130) from None


def _indexed(kb: KnowledgeBase, collection: str | None) -> int:
    """Documents indexed (status ok) in the collection `add` fills."""
    name = collection or kb.settings.collection
    return kb.documents.collections().get(name, 0)


def _quoted(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _add_sites(kb: KnowledgeBase, urls: list[str], collection: str | None, as_json: bool) -> list:
    """Crawl each site URL (docqa.ingest.web), printing its report; the reports."""
    from docqa.cli.crawl import crawl_line, crawl_progress

    reports = []
    for url in urls:
        with crawl_progress(not as_json) as tick:
            report = kb.add_site(url, collection, progress=tick)
        reports.append(report)
        if as_json:
            _print_json(report.to_dict())
        else:
            out.print(crawl_line(report))
            _render_report(report, PathNamer())
    return reports


def _ingest_flags(ingest, workers: int | None, engine: str | None, ray_address: str | None) -> None:
    """`add`'s flags over settings.ingest (validated as the settings are: a bad value is a clean error)."""
    from pydantic import ValidationError

    try:
        for name, value in (("workers", workers), ("engine", engine), ("ray_address", ray_address)):
            if value is not None:
                setattr(ingest, name, value)
    except ValidationError as exc:
        raise typer.BadParameter(exc.errors()[0]["msg"], param_hint=f"--{name.replace('_', '-')}") from None


def _progress(disabled: bool) -> Progress:
    return Progress(
        TextColumn("{task.description:<40}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=err, transient=True, disable=disabled or not err.is_terminal,
    )


def _render_report(report, namer: PathNamer) -> None:
    if not (report.added or report.updated or report.removed or report.moved or report.skipped
            or report.failed or report.unreadable):
        out.print(f"unchanged: {len(report.unchanged)}{_still(report)} · {report.elapsed:.2f}s")
        if phases := report.phases():  # the vectors an earlier, stopped add left to embed
            out.print(phases)
        return
    types = ", ".join(f"{t} {n}" for t, n in sorted(report.by_type.items())) or "-"
    out.print(
        f"added {len(report.added)}, updated {len(report.updated)}, unchanged {len(report.unchanged)}, "
        f"removed {len(report.removed)}, moved {len(report.moved)}, skipped {len(report.skipped)}, failed {len(report.failed)} · "
        f"{report.chunks} chunks · {types} · {report.elapsed:.2f}s"
    )
    for path, reason in report.skipped:
        out.print(f"  [yellow]skipped[/] {escape(namer.name(path))}: {escape(reason)}")
    for path, _kind, reason in report.failed:
        out.print(f"  [red]failed[/]  {escape(namer.name(path))}: {escape(reason)}")
    for path, reason, kept in report.unreadable:
        out.print(f"  [yellow]unreadable now[/] {escape(namer.name(path))}: {escape(reason)}" + (f" — kept {kept} document(s)" if kept else ""))
    for path, pages, seconds in report.ocr:
        out.print(f"  OCR {escape(namer.name(path))}: {pages} page(s) in {seconds:.1f}s")
    if still := _still(report):
        out.print(still.removeprefix("; "))
    if phases := report.phases():
        out.print(phases)


def _still(report) -> str:
    """'; still skipped: N; still failing: M — docqa list --failed' (empty when there are none)."""
    parts = [f"still skipped: {len(report.still_skipped)}"] if report.still_skipped else []
    parts += [f"still failing: {len(report.still_failing)}"] if report.still_failing else []
    hint = " — docqa list --failed" if report.still_failing else " — docqa list --skipped" if parts else ""
    return "".join(f"; {p}" for p in parts) + hint


@app.command()
def watch(
    paths: Annotated[list[str], typer.Argument(metavar="FOLDER|URL...", help="Folders to keep in step with the index (watched recursively), or documentation sites' URLs (crawled again --every so often).")],
    collection: CollectionOption = None,
    include: IncludeOption = None,
    exclude: ExcludeOption = None,
    debounce: Annotated[int, typer.Option("--debounce", min=20, max=10_000, metavar="MS", help="Milliseconds without a change that end a batch.")] = 200,
    every: Annotated[str | None, typer.Option("--every", metavar="DURATION", show_default="none: needed for a URL", help="How often a site's URL is crawled again (30m, 1h, 1d): conditional requests, so unchanged pages cost a 304.")] = None,
) -> None:
    """Keep the index in step with folders until Ctrl-C: created, changed, deleted, renamed and moved files.

    Starts with one 'docqa add' of the folders (what changed while nothing watched), then syncs each
    burst of changes as one batch and prints one line for it. The same rules as 'add' (globs,
    .gitignore, hidden files); a file that cannot be read right now is kept, never taken for deleted.
    A site's URL is crawled --every DURATION instead (a page gone twice is removed; one that times out is kept).
    """
    from docqa.crawl import is_url

    urls = [p for p in paths if is_url(p)]
    if urls:
        return _watch_sites(urls, [p for p in paths if p not in urls], collection, every)
    with _open(create=True) as kb:
        watcher = kb.documents.watcher(paths, collection, include, exclude, quiet_ms=debounce)
        stop = threading.Event()
        roots = [str(r) for r in watcher.roots]
        out.print(f"watching {', '.join(escape(PathNamer().name(r)) for r in roots)} "
                  f"(collection {escape(collection or kb.settings.collection)}); Ctrl-C to stop")
        namer = PathNamer.for_root(roots[0] if len(roots) == 1 else "")
        with _stopped_by_signals(stop):
            watcher.run(stop, lambda batch: _render_batch(batch, namer))
    out.print("stopped")


def _watch_sites(urls: list[str], folders: list[str], collection: str | None, every: str | None) -> None:
    from docqa.cli.crawl import seconds, watch_sites

    if folders:
        raise typer.BadParameter("watch either folders or sites' URLs, not both in one command", param_hint="FOLDER|URL")
    if every is None:
        raise typer.BadParameter("a site is crawled again on a schedule: give --every (e.g. --every 1h)", param_hint="--every")
    try:
        interval = seconds(every)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--every") from None
    stop = threading.Event()
    with _open(create=True) as kb:
        out.print(f"watching {', '.join(escape(u) for u in urls)} every {escape(every)} "
                  f"(collection {escape(collection or kb.settings.collection)}); Ctrl-C to stop")
        with _stopped_by_signals(stop):
            watch_sites(kb, urls, collection, interval, stop, lambda report: _render_report(report, PathNamer()))
    out.print("stopped")


@contextmanager
def _stopped_by_signals(stop: threading.Event):
    """Ctrl-C or SIGTERM sets `stop` (the batch under way finishes first); a second one interrupts."""
    import signal

    pid = os.getpid()

    def handle(signum, frame) -> None:
        if os.getpid() != pid:  # a forked parser process: what the signal would do by default
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
        elif stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


_LISTED = 10  # failed files listed under a batch's line


def _render_batch(batch, namer: PathNamer) -> None:
    c = batch.counts()
    head = f"{time.strftime('%H:%M:%S')} " + ("resync" if batch.number == 0 else f"batch {batch.number}")
    if batch.error:
        out.print(f"{head}: [red]error[/] {escape(batch.error)} (still watching)")
        return
    line = f"{head}: added {c['added']}, updated {c['updated']}, removed {c['removed']}, moved {c['moved']}, failed {c['failed']}"
    line += "".join(f", {k} {c[k]}" for k in ("skipped", "unreadable") if c[k])
    line += f" · {c['unchanged']} unchanged · {batch.latency:.2f}s" if batch.number == 0 else \
        f" · searchable {batch.latency:.2f}s after the last change"
    out.print(line)
    failed = batch.report.failed if batch.report else []
    for path, _, reason in failed[:_LISTED]:
        out.print(f"  [red]failed[/]  {escape(namer.name(path))}: {escape(reason)}")
    if len(failed) > _LISTED:
        out.print(f"  … and {len(failed) - _LISTED} more failed: 'docqa list' shows each with its reason")
    for path, reason in batch.unreadable:
        out.print(f"  [yellow]kept[/]    {escape(namer.name(path))}: {escape(reason)}")


@app.command()
def remove(
    paths: Annotated[list[str], typer.Argument(metavar="PATH|URL...", help="Files to remove, or folders to remove everything under; a URL: the crawled pages under it.")],
    collection: CollectionOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remove documents from the knowledge base (the files themselves are not touched)."""
    with _open() as kb:
        namer = _namer(kb)
        removed = kb.documents.remove(paths, collection)
    if as_json:
        _print_json([r.to_dict() for r in removed])
        return
    for record in removed:
        out.print(f"removed {escape(namer.name(record.path))}")
    out.print(f"{len(removed)} document(s) removed")


@app.command("list")
def list_(
    collection: ScopeOption = None,
    failed: Annotated[bool, typer.Option("--failed", help="Only files that failed, with the error.")] = False,
    skipped: Annotated[bool, typer.Option("--skipped", help="Only files skipped (not read), with the reason.")] = False,
    wide: WideOption = False,
    as_json: JsonOption = False,
) -> None:
    """List documents: path, type, chunks, size, status or error (failed ones too; skipped ones with
    --skipped); --wide adds when each was indexed.

    Paths are relative to the folder the documents were added from (named above the table), else
    to your home folder; long ones lose their middle.
    """
    with _open() as kb:
        records = kb.documents.list(collection)
        namer = _namer(kb)
        if not records:
            _hint_if_empty(kb)
    wanted = ({"error"} if failed else set()) | ({"skipped"} if skipped else set()) or {"ok", "error"}
    shown = [r for r in records if r.status in wanted]
    if as_json:
        _print_json([r.to_dict() for r in shown])
        return
    if shown and namer.root:
        out.print(f"[dim]under {escape(PathNamer().name(namer.root))}[/]")
    if shown:
        table = documents_table(shown, namer, out.width, wide)
        _print_wide(table) if wide else out.print(table)
    counts = Counter(r.status for r in records)
    out.print(f"{counts['ok']} document(s) indexed · {counts['error']} failed"
              + (" (docqa list --failed)" if counts["error"] and not failed else "")
              + f" · {counts['skipped']} skipped" + (" (docqa list --skipped)" if counts["skipped"] and not skipped else ""))


@app.command()
def search(
    query: Annotated[str, typer.Argument(metavar="QUERY", help="What to look for (any language; Chinese is segmented).")],
    top_k: Annotated[int | None, typer.Option("--top-k", "-k", metavar="N", show_default=_default(SearchSettings, "top_k", "search.top_k"), help="Number of hits.")] = None,
    collection: ScopeOption = None,
    mode: Annotated[str | None, typer.Option("--mode", "-m", metavar="hybrid|bm25|dense", show_default=_default(SearchSettings, "mode", "search.mode"), help="BM25 and dense vectors fused, or either alone.")] = None,
    path: Annotated[str | None, typer.Option("--path", "-p", metavar="GLOB", show_default="every file", help="Only files whose path matches this glob, e.g. 'docs/**/*.md'.")] = None,
    types: Annotated[list[str] | None, typer.Option("--type", "-t", metavar="TYPE", show_default="every type", help="Only this file type or extension (repeatable), e.g. pdf, md.")] = None,
    rerank: Annotated[str | None, typer.Option("--rerank", "-r", metavar="none|llm", show_default=_default(SearchSettings, "rerank", "search.rerank"), help="llm: the chat model reorders the best hits (slower; see the README's 'Reranking').")] = None,
    as_json: JsonOption = False,
) -> None:
    """Search: BM25 and multilingual dense vectors fused (hybrid), or either alone.

    Scores are a calibrated 0..1 relevance; when even the best hit is under
    search.relevance_threshold the result is flagged low relevance.
    """
    with _open() as kb:
        hits = kb.search(query, top_k, collection, mode=mode, path_glob=path, types=types or (), rerank=rerank)
        namer = _namer(kb)
        if not hits and not as_json:
            _hint_if_empty(kb)
    if as_json:
        _print_json([{**h.to_dict(), "low_relevance": hits.low_relevance} for h in hits])
        return
    if hits.rerank and hits.rerank["status"] == "fallback":
        err.print(f"[yellow]not reranked:[/] {escape(hits.rerank['reason'])}; the hits are in the fused order")
    elif hits.rerank and hits.rerank["status"] == "reranked":
        err.print(f"[dim]reranked by the chat model in {hits.rerank['ms'] / 1000:.1f} s[/]")
    if hits.vectors_note:
        err.print(f"[yellow]not embedded yet:[/] {escape(hits.vectors_note)}")
    if not hits:
        out.print("no matches")
    elif hits.low_relevance:
        err.print(f"[yellow]low relevance:[/] the best hit scores {_two(hits[0].score)}, under {hits.threshold:.2f}: the documents may not answer this")
    for i, hit in enumerate(hits, start=1):
        out.print(_hit_line(i, hit, namer))
        title = f"[bold]{escape(hit.title)}[/] · " if hit.title and hit.title not in hit.section else ""
        out.print(f"   {title}{escape(location(hit))}")
        out.print("   " + _marked(hit.snippet))


def _hit_line(i: int, hit: Hit, namer: PathNamer) -> Text:
    """`1. 0.87  install/guide.md  chunk-id`: the path (a link) fitted to the terminal."""
    head = f"{i}. {_two(hit.score)}  "
    name = namer.short(hit.path, max(out.width - len(head) - len(hit.chunk_id) - 2, 20))
    return Text.assemble((head, "bold"), linked(name, hit.path, hit.line_start, "cyan", hit.url), "  ", (hit.chunk_id, "dim"))


ModeOption = Annotated[str | None, typer.Option(
    "--mode", metavar="pipeline|agent|auto", show_default=_default(AnswerSettings, "mode", "answer.mode"),
    help="pipeline (retrieve, generate, cite, check), agent (the model explores with tools) or auto "
    "(the agent when the model supports tools and the question asks to list, compare or summarise across files).")]


@app.command()
def ask(
    question: Annotated[str, typer.Argument(metavar="QUESTION", help="The question, in any language; the answer comes in the same language.")],
    collection: ScopeOption = None,
    session: Annotated[str | None, typer.Option("--session", "-s", metavar="ID", show_default="a new conversation", help="Continue a conversation (its id, from an earlier answer): follow-ups are understood.")] = None,
    mode: ModeOption = None,
    no_check: Annotated[bool, typer.Option("--no-check", help="Skip fact-checking (faster, no review rounds); without it, answer.check decides.")] = False,
    fresh: Annotated[bool, typer.Option("--fresh", help="Answer anew, even when an earlier verified answer to the same question still holds.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Answer a question from the documents only, with exact citations, fact-checked.

    On a terminal the model's draft shows dim while it is written and checked; then the checked
    answer is printed, with its sources (piped: only that). With no chat model configured or
    reachable, the best supporting sentences are extracted instead. Exits 1 when the run failed.
    """
    with _open() as kb:
        _hint_if_empty(kb)
        run = kb.start(question, collection=collection, session_id=session, check=False if no_check else None, mode=mode,
                       fresh=fresh, origin="cli")
        if not show_run(run, stream=not as_json):
            raise typer.Exit(130)
    answer = run.answer
    if as_json:
        _print_json(answer.to_dict())
    if answer.status == "FAILED":
        raise typer.Exit(1)


_VERDICTS = {"supported": "[green]supported[/]", "contradicted": "[red]contradicted[/]",
             "not_found": "[yellow]not in the documents[/]"}


@app.command()
def verify(
    text: Annotated[str, typer.Argument(metavar="TEXT", show_default="standard input",
                                        help="The text to check (any language), or '-' to read it from standard input.")] = "-",
    question: Annotated[str | None, typer.Option("--question", "-q", metavar="Q", show_default="none", help="The question the text answers: the checks then read it as an answer to it (e.g. a bare 'yes').")] = None,
    collection: ScopeOption = None,
    llm: Annotated[bool | None, typer.Option("--llm/--no-llm", show_default="as answer.llm_check decides", help="Also ask the configured chat model's verdict on each supported claim (--llm: whatever its size), or never (--no-llm).")] = None,
    as_json: JsonOption = False,
) -> None:
    """Fact-check any text against the documents: a draft e-mail, a ticket reply, another tool's answer.

    Each statement is checked against its best passages with the answer pipeline's own checks:
    supported (with the exact span), contradicted (with the span that says otherwise) or not in the
    documents. Exits 0 when every claim is supported, 1 otherwise.
    """
    if text == "-":
        text = sys.stdin.read()
    with _open() as kb:
        _hint_if_empty(kb)
        result = kb.verify(text, question=question, collection=collection, llm=llm)
    if as_json:
        _print_json(result.to_dict())
    else:
        _show_fact_check(result)
    if not result.supported:
        raise typer.Exit(1)


def _show_fact_check(result) -> None:
    """Each claim with its verdict and span; the overall verdict last (on stderr, as `ask`'s footer)."""
    for note in result.notes:
        err.print(f"[yellow]note:[/] {escape(note)}")
    for claim in result.claims:
        out.print(f"{_VERDICTS[claim.verdict]}  {escape(claim.text)}")
        if claim.citation is not None:
            c = claim.citation
            quote = " ".join(c.quote.split())
            quote = quote if len(quote) <= 160 else quote[:157] + "…"
            out.print(Text.assemble("   ", linked(c.label, c.path, c.line_start, "cyan"), ("  “" + quote + "”", "dim")))
        for reason in claim.reasons if claim.verdict != "supported" else []:
            out.print(f"   [dim]{escape(reason)}[/]")
    err.print(f"[dim]{_VERDICTS[result.verdict]} · {len(result.claims)} claim(s) · checked by {result.checker}[/]")


@app.command()
def chat(
    collection: ScopeOption = None,
    session: Annotated[str | None, typer.Option("--session", "-s", metavar="ID", show_default="a new conversation", help="Resume a conversation by its id.")] = None,
    mode: ModeOption = None,
    no_check: Annotated[bool, typer.Option("--no-check", help="Skip fact-checking; without it, answer.check decides.")] = False,
) -> None:
    """An interactive conversation with follow-ups.

    While an answer is being worked on, a line you type steers the agent (it joins after the
    current tool round); a line starting with '+' is a follow-up, asked after the answer.
    '/new' starts a new conversation, '/exit' or Ctrl-D ends, Ctrl-C stops the current answer.
    """
    lines = stdin_lines()
    typing = lines if sys.stdin.isatty() else None  # piped input is a list of questions, not steering
    with _open() as kb:
        _hint_if_empty(kb)
        session_id = session
        err.print("[dim]Ask a question. While it works: type to steer, '+question' to follow up. "
                  "'/new' starts over, '/exit' ends, Ctrl-C stops an answer.[/]")
        while True:
            out.print("\n› ", end="")
            question = lines.get()
            if typing is None:  # piped: the transcript shows what was asked (and ends on a new line)
                out.print(escape(question or ""))
            if question is None or question.strip() in ("/exit", "/quit"):
                break
            question = question.strip().lstrip("+").strip()
            if question == "/new":
                session_id = None
                continue
            if not question:
                continue
            run = kb.start(question, collection=collection, session_id=session_id, mode=mode,
                           check=False if no_check else None, origin="cli")
            show_run(run, stream=True, lines=typing)
            session_id = run.answers[-1].session_id if run.answers else session_id


@app.command("eval")
def eval_(
    questions: Annotated[Path, typer.Argument(metavar="FILE", help="JSON lines, one question each: question, answers, is_impossible (+ context, or article and paragraph); eval/samples.jsonl is one.")],
    collection: ScopeOption = None,
    no_check: Annotated[bool, typer.Option("--no-check", help="Skip fact-checking.")] = False,
    limit: Annotated[int | None, typer.Option("--limit", "-n", metavar="N", show_default="every question", help="Only the first N questions.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Ask a question set of the knowledge base and score the answers: answer accuracy, abstention,
    citation accuracy, latency per stage (runs are not added to the log)."""
    import docqa.evaluate as evaluate

    items = evaluate.load(questions)[: limit or None]
    with _open() as kb:
        with _progress(disabled=as_json) as bar:
            task = bar.add_task("asking", total=len(items))
            report = evaluate.run(kb, items, collection, check=not no_check,
                                  progress=lambda done, total: bar.update(task, completed=done))
    summary = report.summary()
    if as_json:
        _print_json(summary)
        return
    for line in evaluate.explain(report):
        out.print(escape(line))
    for stage, figures in summary["latency"].items():
        out.print(f"{'latency ' + stage:>20}: mean {figures['mean_ms']} ms, p50 {figures['p50_ms']} ms, p95 {figures['p95_ms']} ms")


@app.command()
def show(
    target: Annotated[str, typer.Argument(metavar="CHUNK_ID|PATH", help="A chunk id (from 'docqa search') or an indexed file path.")],
    collection: CollectionOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show a chunk's text with its location, or a document's chunks."""
    with _open() as kb:
        if os.path.exists(target) or os.sep in target:
            record = kb.documents.get(target, collection)
            chunks = kb.documents.chunks(record.document_id)
            if as_json:
                _print_json({**record.to_dict(), "chunk_list": [c.to_dict() for c in chunks]})
                return
            title = Text.assemble((record.title, "bold"), "  ", linked(_namer(kb).name(record.path), record.path),
                                  f"  ({record.type}, {record.chunks} chunks)")
            out.print(title)
            out.print(f"keywords: {escape(', '.join(record.keywords))}\nsummary: {escape(record.summary)}")
            for c in chunks:
                out.print(f"  [dim]{c.chunk_id}[/]  {escape(location(c))}")
            return
        hit = kb.documents.chunk(target)
        namer = _namer(kb)
    if as_json:
        _print_json(hit.to_dict())
        return
    out.print(Text.assemble(linked(namer.name(hit.path), hit.path, hit.line_start, "cyan", hit.url), "  ", location(hit)))
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
            report = kb.documents.reindex(progress=lambda done, total: bar.update(task, completed=done, total=total))
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
    """Counts and sizes of the knowledge base, and the docqa version."""
    from docqa.version import __version__

    with _open() as kb:
        data = {**kb.status.stats(), "docqa_version": __version__}
        if not data["documents"]:
            _hint_if_empty(kb)
    if as_json:
        _print_json(data)
        return
    for key, value in data.items():
        out.print(f"{key:>15}: {value}")


@app.command()
def feedback(
    run_id: Annotated[str, typer.Argument(metavar="RUN_ID", help="The run to rate: its id is in 'docqa log' and in 'docqa ask --json'.")],
    rating: Annotated[str, typer.Argument(help="up or down.", metavar="up|down")],
    comment: Annotated[str | None, typer.Option("--comment", "-m", metavar="TEXT", show_default="none", help="What was right or wrong with the answer.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Rate an answer up or down, with an optional comment (answers rated down show in 'docqa log --attention')."""
    with _open() as kb:
        record = kb.log.feedback(run_id, rating, comment)
    if as_json:
        _print_json(record.to_dict())
        return
    out.print(f"recorded '{record.rating}' for run {escape(run_id)}")


@app.command()
def correct(
    run_id: Annotated[str, typer.Argument(metavar="RUN_ID", help="The run to correct: its id is in 'docqa log --attention'.")],
    text: Annotated[str, typer.Argument(metavar="TEXT", help="The right answer, or the fact the documents miss, as a short note.")],
    as_json: JsonOption = False,
) -> None:
    """Correct an answer from the log: the note is saved as a Markdown document (who, when, which run) in
    the run's collection ('corrections' for a run over every collection), indexed at once, and cited by
    later answers there."""
    with _open() as kb:
        record = kb.log.correct(run_id, text)
    if as_json:
        _print_json(record.to_dict())
        return
    out.print(f"saved {escape(record.path)} in collection {escape(repr(record.collection))} (indexed: later answers there cite it)")


LOG_FORMATS = ("table", "jsonl", "csv", "md")


@app.command()
def log(
    since: Annotated[str | None, typer.Option("--since", metavar="DATE", show_default="all time", help="Only questions asked on or after this day (YYYY-MM-DD, UTC) or ISO time.")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", metavar="table|jsonl|csv|md", help="A table for the terminal, or an export: JSON lines, CSV or Markdown.")] = "table",
    wide: Annotated[bool, typer.Option("--wide", help="Also the confidence and the answer, texts in full (wrapped): lines may be longer than the terminal.")] = False,
    attention: Annotated[bool, typer.Option("--attention", "-a", help="Only the questions the documents answered badly: not answered, failed, low confidence, rated down — each with the reason.")] = False,
    output: Annotated[Path | None, typer.Option("--output", "-o", metavar="PATH", show_default="the terminal", help="Write to this file instead.")] = None,
    run_id: Annotated[str | None, typer.Option("--run", metavar="RUN_ID", show_default="none: the log", help="Print one run's full audit record as JSON instead: question, trace of stages and model calls, result, timings, feedback.")] = None,
    stale: Annotated[bool, typer.Option("--stale", help="Only the stale answers: a source they cite changed or went since ('docqa recheck' compares them with the new text).")] = False,
) -> None:
    """The question-and-answer log, newest first, for the people who maintain the documents.

    '--attention' lists the unanswered, low-confidence and stale questions; '--stale' only the answers
    whose cited source changed since; '--format csv|jsonl|md' exports it.
    """
    if fmt not in LOG_FORMATS:
        raise typer.BadParameter(f"unknown format {fmt!r}: use one of {', '.join(LOG_FORMATS)}", param_hint="--format")
    text, rows = io.StringIO(), None  # nothing is written before the knowledge base answered
    with _open() as kb:
        if run_id is not None:
            text.write(json.dumps(kb.log.run(run_id).to_dict(), ensure_ascii=False, indent=2) + "\n")
        elif fmt == "table":
            rows = kb.log.qa_log(since, attention, stale=stale or None)
        else:
            kb.log.export(text, fmt, since, attention, stale=stale or None)
    if rows is not None and not output:
        _log_table(rows, attention, out, wide)
        return
    if rows is not None:
        _log_table(rows, attention, Console(file=text, width=160), wide=True)
    if output:
        output.write_text(text.getvalue(), encoding="utf-8")
        err.print(f"wrote {escape(str(output))}")
    else:
        sys.stdout.write(text.getvalue())


def _log_table(rows: list[dict], attention: bool, console: Console, wide: bool) -> None:
    if not rows:
        console.print("nothing needs attention" if attention else "no questions asked yet")
        return
    table = log_table(rows, attention, wide)
    _print_wide(table) if wide and console is out else console.print(table)
    console.print(f"{len(rows)} question(s)" + (" need attention" if attention else "")
                  + ("" if wide else " · --wide: every column, texts in full"))


config_app = Typer(help="Settings: what is in effect and where it came from; check docqa.yml.", no_args_is_help=True)
app.add_typer(config_app, name="config")


@config_app.command("show")
def config_show(
    ctx: typer.Context,
    as_json: JsonOption = False,
    sources: Annotated[bool, typer.Option("--sources", help="Say where each setting came from: default, docqa.yml, env DOCQA_X__Y or flag.")] = False,
) -> None:
    """The settings in effect, api keys masked: defaults, then docqa.yml, DOCQA_* variables and flags on top."""
    flags = {"kb": _state.get("kb")} if _from_command_line(ctx, "kb") else {}
    data = masked(load_settings(**flags).model_dump(mode="json"))
    origins = setting_sources(flags, os.environ) if sources else {}
    if as_json:
        _print_json({"settings": data, "sources": origins} if sources else data)
    elif sources:
        for key, origin in origins.items():
            value = json.dumps(_dig(data, key), ensure_ascii=False)
            out.print(f"{key}: {escape(value)}  [dim]# {escape(origin)}[/]")
    else:
        import yaml

        sys.stdout.write(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


@config_app.command("lint")
def config_lint(
    file: Annotated[Path | None, typer.Argument(metavar="FILE", show_default="$DOCQA_CONFIG, else ./docqa.yml", help="The file to check.")] = None,
) -> None:
    """Check docqa.yml and the DOCQA_* variables: unknown keys (with the closest valid one), bad values, keys given twice.

    Prints 'FILE: key: message' per problem. Exits 1 on errors; 0 when clean or with warnings
    only (such as agent-mode budgets docqa does not use yet); 2 when the file does not exist.
    """
    path = file or config_path(os.environ)
    problems = lint_config(path, os.environ)
    for problem in problems:
        out.print(escape(str(problem)))
    errors = sum(p.level == "error" for p in problems)
    if problems:
        out.print(f"{escape(str(path))}: {errors} error(s), {len(problems) - errors} warning(s)")
    else:
        out.print(f"{escape(str(path))}: ok")
    if errors:
        raise typer.Exit(1)


def _from_command_line(ctx: typer.Context, name: str) -> bool:
    """True when the app-level option was typed, not filled in from its environment variable."""
    source = ctx.find_root().get_parameter_source(name)
    return getattr(source, "name", "") == "COMMANDLINE"


def _dig(data: dict, dotted: str):
    for part in dotted.split("."):
        data = data[part]
    return data


@app.command("llms-txt")
def llms_txt(
    collection: ScopeOption = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", metavar="PATH", show_default="standard output", help="Write to this file instead.")] = None,
) -> None:
    """Write the documents' index in llms.txt format: a section per folder, one line per document
    with its title, doc-id, summary and keywords (all collections unless one is given)."""
    with _open() as kb:
        text = kb.browse.llms_txt(collection)
    if output is None:
        sys.stdout.write(text)
        return
    output.write_text(text, encoding="utf-8")
    err.print(f"wrote {escape(str(output))} ({text.count(chr(10) + '- ['):,} documents)")


keys_app = Typer(help="API keys for 'docqa serve' and MCP over HTTP (only their hashes are stored).",
                       no_args_is_help=True)
app.add_typer(keys_app, name="keys")


@keys_app.command("create")
def keys_create(
    role: Annotated[str, typer.Option("--role", "-r", metavar="reader|editor|admin",
                                      help="reader: search and ask; editor: also add and remove documents; admin: also manage keys.")],
    collections: Annotated[list[str] | None, typer.Option("--collection", "-c", metavar="NAME", show_default="every collection", help="Only this collection (repeatable).")] = None,
    name: Annotated[str | None, typer.Option("--name", "-n", metavar="TEXT", show_default="none", help="Who or what the key is for.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Create an API key and print it once: only its hash is kept, so it cannot be shown again.

    The key alone goes to standard output (KEY=$(docqa keys create --role reader) works).
    """
    with _open(create=True) as kb:
        record, key = kb.keys.create(role, collections or [], name)
    if as_json:
        _print_json({**record.to_dict(), "key": key})
        return
    sys.stdout.write(key + "\n")
    scope = ", ".join(record.collections) or "every collection"
    err.print(f"created {record.role} key {record.id} ({scope}). Copy it now: it is not shown again. "
              "Send it as 'Authorization: Bearer <key>'.")


@keys_app.command("list")
def keys_list(
    show_all: Annotated[bool, typer.Option("--all", "-a", help="Also list revoked keys.")] = False,
    as_json: JsonOption = False,
) -> None:
    """The API keys: id, first characters, role, collections, name, created, last used (never the keys)."""
    with _open() as kb:
        keys = kb.keys.list(include_revoked=show_all)
    if as_json:
        _print_json([k.to_dict() for k in keys])
        return
    if not keys:
        out.print("no API keys: the API needs none on 127.0.0.1; create one with 'docqa keys create --role reader'")
        return
    table = Table("id", "key", "role", "collections", "name", "created (UTC)", "last used", box=None)
    for k in keys:
        role = f"[dim]{k.role} (revoked)[/]" if k.revoked_at else k.role
        table.add_row(k.id, escape(k.prefix) + "…", role, escape(", ".join(k.collections) or "all"), escape(k.name),
                      k.created_at[:16].replace("T", " "), (k.last_used_at or "never")[:16].replace("T", " "))
    out.print(table)


@keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(metavar="KEY_ID", help="The key's id, from 'docqa keys list'.")],
    as_json: JsonOption = False,
) -> None:
    """Revoke an API key: it stops working at once (the record stays, for audit)."""
    with _open() as kb:
        record = kb.keys.revoke(key_id)
    if as_json:
        _print_json(record.to_dict())
        return
    out.print(f"revoked {record.role} key {record.id} ({escape(record.prefix)}…)")


app.add_typer(model_app, name="model")  # docqa model install | serve | status (docqa.cli.model)
app.command("init")(plan_cli.init)  # docqa init [FOLDER]: survey, propose, write docqa.yml (docqa.cli.plan)
app.command("recheck")(recheck_command(_open))  # docqa recheck [RUN_ID | --stale] (docqa.cli.recheck)


@app.command()
def estimate(
    question: Annotated[str | None, typer.Argument(metavar="[QUESTION]", help="The question (auto mode routes it as 'docqa ask' would).")] = None,
    mode: Annotated[str | None, typer.Option("--mode", "-m", metavar="pipeline|agent|extractive|auto", show_default="auto (answer.mode)", help="The answering mode to estimate.")] = None,
    ingest: Annotated[Path | None, typer.Option("--ingest", metavar="FOLDER", show_default="none", help="Estimate a first 'docqa add' of this folder instead (no knowledge base needed).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Expected tokens, model calls, time and money per question (or for adding a folder).

    From the averages of the recent runs in the run log for the configured model and prices
    (llm.prompt_price, llm.completion_price; local models cost nothing), or from stated defaults
    when there are none. '--ingest FOLDER': files, chunks, embedding tokens (and their price with a
    paid embedder, embed.price), time and index size, from a bounded survey and measured rates.
    """
    if ingest is not None:
        from docqa.plan import ingest_estimate

        result = ingest_estimate(ingest, _settings())
        if as_json:
            _print_json(result.to_dict())
        else:
            plan_cli.render_ingest(result)
        return
    with _open() as kb:
        data = kb.estimates.question(question, mode)
    if as_json:
        _print_json(data)
        return
    plan_cli.render_question(data)

app.add_typer(skills_app(_settings), name="skills")  # docqa skills list | show | lint (docqa.cli.skills)
app.add_typer(runs_app(_open), name="run")  # docqa run steer | follow-up | cancel (docqa.cli.runs)


@app.command("mcp")
def mcp_() -> None:
    """Run the MCP server on standard input and output, for MCP clients (Claude Desktop, Cursor, ...).

    Tools: ingest_files, query_knowledge, list_knowledge, search_docs, fetch_doc, estimate_cost, list_skills.
    Register it in a
    client as the command 'docqa' with the arguments '--kb PATH mcp' (see README, MCP).
    """
    from docqa.mcp import serve_stdio

    _open().close()  # a knowledge base that does not exist stops here, before a client connects
    serve_stdio(_settings())


@app.command()
def serve(
    host: Annotated[str | None, typer.Option("--host", metavar="ADDRESS", show_default=_default(ApiSettings, "host", "api.host"), help="Address to listen on.")] = None,
    port: Annotated[int | None, typer.Option("--port", "-p", metavar="N", show_default=_default(ApiSettings, "port", "api.port"), help="Port to listen on.")] = None,
    insecure: Annotated[bool, typer.Option("--insecure", help="Allow an address other than loopback without API keys (only behind something that authenticates every request).")] = False,
    watch: Annotated[list[Path] | None, typer.Option("--watch", metavar="FOLDER", show_default="none", help="Keep this folder in step while serving, as 'docqa watch' does (repeatable); a job of kind watch shows it.")] = None,
    watch_collection: Annotated[str | None, typer.Option("--watch-collection", metavar="NAME", show_default="default (collection)", help="The collection --watch adds to.")] = None,
) -> None:
    """Run the HTTP API (REST + Server-Sent Events; OpenAPI docs at /docs) and the web page at / until stopped.

    Needs the optional 'api' extra. Listens on 127.0.0.1 unless told otherwise; another address is refused without API keys (or --insecure).
    """
    import docqa.api as api  # lazily: only this command needs the [api] extra

    kb, new = _open_or_create()  # a missing one is created: the page's uploads (or --watch) fill it
    kb.close()
    if new:
        err.print(f"created a new knowledge base at {escape(kb.settings.kb)}: add documents on the page "
                  "(Documents: drop files) or with 'docqa add FOLDER'")
    api.serve(_settings(), host, port, insecure, [str(p) for p in watch or []], watch_collection)


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


def main() -> None:
    """Entry point: map docqa errors to a clean message and exit code."""
    try:
        app(prog_name="docqa")
    except ConfigError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        sys.exit(2)
    except DocqaError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        sys.exit(1)
