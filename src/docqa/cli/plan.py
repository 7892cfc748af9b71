"""`docqa init [FOLDER]` (survey a folder, propose and write docqa.yml) and the rendering of
`docqa estimate` (cli/app.py): the work is in docqa.plan and the kb."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from docqa.cli.console import err, out
from docqa.cli.tables import size_text
from docqa.settings import config_path, load_settings

_LANGUAGE = {"han": "Chinese", "latin": "Latin script (English …)", "other": "other scripts"}


def init(
    folder: Annotated[Path, typer.Argument(metavar="FOLDER", help="The folder to survey (walked recursively, as 'docqa add' would).")] = Path("."),
    output: Annotated[Path | None, typer.Option("--output", "-o", metavar="PATH", show_default="$DOCQA_CONFIG, else ./docqa.yml", help="Where to write the configuration.")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Overwrite an existing file without asking (for scripts).")] = False,
    refine: Annotated[bool | None, typer.Option("--refine/--no-refine", show_default="when a chat model answers now", help="Let the chat model refine the rules' proposal (--refine also starts the installed local model for it).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the survey, the proposal and the estimate as JSON (the file is still written; an existing one only with --yes).")] = False,
) -> None:
    """Survey a folder and write a commented docqa.yml that fits it.

    Reports file types and counts, sizes, languages, encrypted and scanned files, code languages,
    the largest files and what will be skipped and why; proposes chunk sizes, OCR, the embedder
    and the chat model (a chat model that answers may refine the proposal and say why), collections
    by top-level folder, and estimates the first 'docqa add' from measured rates. Bounded on any
    folder: a sample is read, not every file (the limits are in the report). Asks before
    overwriting an existing file.
    """
    from docqa.plan import plan_folder, render
    from docqa.version import __version__

    settings = load_settings()
    if not as_json:
        err.print(f"surveying {escape(str(folder))} …")
    plan = plan_folder(folder, settings, refine=refine)
    target = output or config_path(os.environ)
    text = render(plan.survey, plan.proposal, __version__)
    written = _write(target, text, yes, ask=not as_json)
    if as_json:
        sys.stdout.write(json.dumps({**plan.to_dict(), "config": str(target), "written": written},
                                    ensure_ascii=False, indent=2) + "\n")
        return
    _render_plan(plan)
    if written:
        out.print(f"\nwrote {escape(str(target))} — check it with 'docqa config lint', then 'docqa add {escape(str(folder))}'")
    else:
        out.print(f"\nkept {escape(str(target))} as it was (--yes overwrites it)")


def _write(target: Path, text: str, yes: bool, ask: bool) -> bool:
    """Write the file: at once when new or with --yes; else only when the user says so."""
    if target.exists() and not yes:
        if not ask:
            return False
        try:
            if not typer.confirm(f"{target} exists: overwrite it?", default=False, err=True):
                return False
        except typer.Abort:  # no answer (end of input): keep it
            return False
    target.write_text(text, encoding="utf-8")
    return True


def _render_plan(plan) -> None:
    s, p = plan.survey, plan.proposal
    listed = "" if s.complete else f" (the listing stopped at {s.limits['scan_files']:,.0f} files)"
    out.print(f"[bold]{escape(s.root)}[/]: {s.files:,} files, {size_text(s.bytes)}{listed} · surveyed in {s.elapsed:.1f}s")
    table = Table("type", "files", "size", "read as", box=None, pad_edge=False)
    for entry in p.formats:
        how = entry["how"] + (f" — {', '.join(f'{k} {n}' for k, n in entry['languages'].items())}" if entry.get("languages") else "")
        table.add_row(entry["type"], f"{entry['files']:,}", size_text(entry["bytes"]), escape(how))
    out.print(table)
    total = sum(s.scripts.values())
    if total:
        shares = ", ".join(f"{_LANGUAGE[k]} {v / total:.0%}" for k, v in sorted(s.scripts.items(), key=lambda kv: -kv[1]) if v)
        out.print(f"languages (letters of {sum(int(x['files']) for x in s.sample.values())} sampled files): {shares}")
    for title, paths in (("encrypted", s.encrypted), ("scanned (pages without text)", [x["path"] for x in s.scanned])):
        if paths:
            out.print(f"{title}: {len(paths)} — " + ", ".join(escape(_rel(x, s.root)) for x in paths[:5])
                      + (" …" if len(paths) > 5 else ""))
    if s.largest:
        out.print("largest: " + ", ".join(f"{escape(Path(x['path']).name)} {size_text(x['size'])}" for x in s.largest[:5]))
    for reason, n in s.skipped.items():
        out.print(f"[yellow]skipped[/] {n} × {escape(reason)}")
    for fail in s.failing:
        out.print(f"[red]will fail[/] {escape(_rel(fail['path'], s.root))}: {escape(fail['kind'])}")
    out.print("\n[bold]proposed[/]")
    for key, value in p.values.items():
        out.print(f"  {key}: {escape(json.dumps(value, ensure_ascii=False))}  [dim]# {escape(p.reasons.get(key, ''))}[/]")
    _render_refined(p.refined)
    for c in p.collections:
        out.print(f"  collection {escape(c['name'])}: {escape(c['folder'])}/ ({c['files']} files)")
    if p.estimate is not None:
        render_ingest(p.estimate)


def _rel(path: str, root: str) -> str:
    """A path under the surveyed folder, relative to it."""
    return path[len(root):].lstrip("/") if path.startswith(root.rstrip("/") + "/") else path


def _render_refined(refined: dict | None) -> None:
    if not refined:
        return
    if refined.get("error"):
        out.print(f"  [yellow]{escape(refined['model'])} could not refine it[/]: {escape(refined['error'])} (the rules decided)")
        return
    changed = ", ".join(f"{k}={json.dumps(v)}" for k, v in refined["changes"].items()) or "no change"
    out.print(f"  refined by {escape(refined['model'])}: {escape(changed)} — {escape(refined['why'])}")
    for key, why in refined["rejected"].items():
        out.print(f"  [yellow]not taken[/] {escape(key)}: {escape(why)}")


def render_ingest(e) -> None:
    embed = f"{e.embedder}: {e.embed_tokens:,} tokens embedded" if e.embedder else "no embedder (BM25 only)"
    cost = "" if e.embed_cost in (0, 0.0) else " (price unknown: set embed.price)" if e.embed_cost is None else f" (${e.embed_cost:.4f})"
    out.print(f"\n[bold]a first add[/]: about {_duration(e.seconds)} — parse {_duration(e.parse_seconds)}, "
              f"OCR {e.ocr_pages} page(s) {_duration(e.ocr_seconds)}, embed {_duration(e.embed_seconds)}; "
              f"{e.files:,} files, ~{e.chunks:,} chunks, index ~{size_text(e.index_bytes)}; {embed}{cost}")
    out.print(f"[dim]from {escape(e.basis)}[/]")
    for note in e.notes:
        if note.startswith("outsized: "):  # a file that alone makes much of the index: said plainly, not dimmed
            out.print(f"[yellow]warning:[/] {escape(note.removeprefix('outsized: '))}")
        else:
            out.print(f"[dim]note: {escape(note)}[/]")


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def render_question(d: dict) -> None:
    chat = d["chat"]
    who = f"{d['model']} ({chat['source']})" if d["model"] else "no chat model: extracted answers"
    cost = "unknown (set llm.prompt_price and llm.completion_price)" if d["cost"] is None else f"${d['cost']:.6f}"
    out.print(f"per question, {d['mode']} mode, {escape(who)}: ~{d['prompt_tokens']:,} prompt + "
              f"{d['completion_tokens']:,} completion tokens, {d['model_calls']:g} model call(s), "
              f"~{_duration(d['seconds'])}, {cost}")
    if d["basis"] == "runs":
        span = d.get("seconds_range")
        out.print(f"[dim]the average of {d['runs']} recent run(s)" + (f"; {span[0]:.1f}–{span[1]:.1f} s" if span else "") + "[/]")
    for note in d["notes"]:
        out.print(f"[dim]note: {escape(note)}[/]")
