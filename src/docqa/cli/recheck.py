"""`docqa recheck [RUN_ID | --stale]`: a stale answer's claims re-verified against the new text of
its sources (the work is kb.answers.recheck; this module parses and renders)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from docqa.cli.console import out

if TYPE_CHECKING:
    from docqa.kb import KnowledgeBase

COLOURS = {"supported": "green", "changed": "yellow", "contradicted": "red", "gone": "magenta"}


def recheck_command(open_kb: Callable[[], KnowledgeBase]) -> Callable[..., None]:
    """The `recheck` command over the knowledge base `open_kb()` opens."""

    def recheck(
        run_id: Annotated[str | None, typer.Argument(metavar="[RUN_ID]", show_default="none: give --stale", help="The run to recheck: its id is in 'docqa log --stale'.")] = None,
        stale: Annotated[bool, typer.Option("--stale", help="Recheck every stale answer (a cited source changed or went since), newest first.")] = False,
        reanswer: Annotated[bool, typer.Option("--reanswer", help="Also ask the question again and show the new answer beside the old.")] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print the recheck as JSON (with --stale: a list).")] = False,
    ) -> None:
        """Recheck an answer against the current text of its sources: each claim is still supported
        (unchanged, or moved: its new place), changed (old and new text as a word diff), contradicted
        (the new text says otherwise) or gone (the source or the passage was removed).

        The result is recorded with the run ('docqa log' shows it). Exits 1 when a claim no longer holds
        as it was answered (changed, contradicted or gone), else 0.
        """
        if (run_id is None) == (not stale):
            raise typer.BadParameter("give a RUN_ID or --stale (not both)", param_hint="RUN_ID")
        with open_kb() as kb:
            if run_id is not None:
                found = [kb.answers.recheck(run_id, reanswer=reanswer)]
            else:
                found = kb.answers.recheck_stale(reanswer=reanswer)
        if as_json:
            sys.stdout.write(json.dumps(found[0] if run_id else found, ensure_ascii=False, indent=2) + "\n")
        else:
            render(found, bool(stale))
        if any(r["verdict"] != "supported" for r in found):
            raise typer.Exit(1)

    return recheck


def render(found: list[dict], listing: bool) -> None:
    """Each recheck: the answer's verdict, then each claim's with where its source is now or what changed."""
    if listing and not found:
        out.print("no stale answers")
    for r in found:
        out.print(f"run [dim]{r['run_id']}[/] · {_verdict(r['verdict'])}"
                  + (f" · stale since {str(r.get('stale_at'))[:10]}" if r.get("stale_at") else ""))
        for claim in r["claims"]:
            out.print(f"  {_verdict(claim['verdict'])}  {escape(claim['text'])}")
            for s in claim["sources"]:
                out.print(f"    [{s['n']}] {escape(_where(s))}: {escape(s.get('why') or '')}")
                if s.get("diff"):
                    out.print(f"        {_diff(s['diff'])}")
        if r.get("reanswer"):
            again = r["reanswer"]
            out.print(f"  old answer: {escape(again.get('old_answer') or '')}")
            out.print(f"  new answer: {escape(again.get('answer') or '')}  [dim](run {again.get('run_id')})[/]")


def _verdict(verdict: str) -> str:
    return f"[{COLOURS.get(verdict, 'white')}]{verdict}[/]"


def _where(source: dict) -> str:
    where = source.get("location") or {}
    return f"{source.get('path')}" + (f":{where['line_start']}" if where else "")


def _diff(runs: list[dict]) -> str:
    """A word diff in the terminal: deleted words red and struck through, inserted words green."""
    style = {"delete": "red strike", "insert": "green"}
    return "".join(escape(r["text"]) if r["op"] == "equal" else f"[{style[r['op']]}]{escape(r['text'])}[/]" for r in runs)
