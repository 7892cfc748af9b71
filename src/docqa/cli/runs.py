"""`docqa run steer | follow-up | cancel RUN_ID`: act on a live run by its id (`kb.runs`), as the API's
/runs/{id}/… and MCP's steer_run, follow_up and cancel_run do.  A run another process answers is
reached through a PostgreSQL knowledge base's cluster (a `docqa serve` replica); on SQLite only the
process answering it can (chat's typed lines, Ctrl-C)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from docqa.cli.console import out
from docqa.cli.help import Typer

if TYPE_CHECKING:
    from docqa.kb import KnowledgeBase

RunId = Annotated[str, typer.Argument(metavar="RUN_ID", help="The live run: its id is in 'docqa log' (status RUNNING) and in the API's metadata event.")]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON (stable shape, see README).")]


def runs_app(open_kb: Callable[[], KnowledgeBase]) -> typer.Typer:
    """The `run` command group; `open_kb`: opens the knowledge base in effect."""
    group = Typer(help="Act on a run still being answered (by a server): steer it, queue a follow-up, cancel it.",
                  no_args_is_help=True)

    def done(run_id: str, action: str, as_json: bool) -> None:
        if as_json:
            print(json.dumps({"run_id": run_id, "accepted": action}))
            return
        out.print(f"{action.replace('_', '-')} accepted by run {escape(run_id)}")

    @group.command("steer")
    def steer(run_id: RunId, text: Annotated[str, typer.Argument(metavar="TEXT", help="What to tell the agent.")],
              as_json: JsonFlag = False) -> None:
        """Tell a live agent run something: it joins after its current tool round."""
        with open_kb() as kb:
            kb.runs.steer(run_id, text)
        done(run_id, "steer", as_json)

    @group.command("follow-up")
    def follow_up(run_id: RunId, question: Annotated[str, typer.Argument(metavar="QUESTION", help="The next question.")],
                  as_json: JsonFlag = False) -> None:
        """Queue a question to answer after a live run, in its session and its stream."""
        with open_kb() as kb:
            kb.runs.follow_up(run_id, question)
        done(run_id, "follow_up", as_json)

    @group.command("cancel")
    def cancel(run_id: RunId, as_json: JsonFlag = False) -> None:
        """Stop a live run before its next model call (recorded CANCELLED)."""
        with open_kb() as kb:
            kb.runs.cancel(run_id)
        done(run_id, "cancel", as_json)

    return group
