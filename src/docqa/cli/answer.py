"""How a run looks in the terminal: the answer as it streams, then its sources (each a link to
its file), how it was checked and the run's id; in `chat`, what the user types meanwhile."""

from __future__ import annotations

import queue
import sys
import threading
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.text import Text

from docqa.cli.console import err, out
from docqa.cli.links import linked
from docqa.types import Answer, Event

if TYPE_CHECKING:
    from docqa.run import Run


def stdin_lines() -> queue.Queue:
    """Lines from standard input, read by a thread so they can arrive while an answer is worked on."""
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for line in sys.stdin:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=read, name="docqa-stdin", daemon=True).start()
    return lines


def show_run(run: Run, *, stream: bool, lines: queue.Queue | None = None) -> bool:
    """Iterate a run in this thread, rendering its events (each answer's sources after its `done`);
    between events, what the user typed (`lines`, chat) steers it or queues a follow-up.  Ctrl-C
    cancels it (recorded CANCELLED): False then."""
    view, asked = AnswerView(stream), list[str]()
    try:
        for event in run:
            if event.type == "metadata" and asked:  # a follow-up's answer begins
                out.print(f"\n[dim]› {escape(asked.pop(0))}[/]")
            view.show(event)
            if event.type == "done":
                view.finish(run.answers[-1])
                view = AnswerView(stream)
            take_typing(lines, run, asked)
    except KeyboardInterrupt:
        run.close()
        view.stop()
        err.print("\n[yellow]cancelled[/]")
        return False
    view.stop()
    return True


def take_typing(lines: queue.Queue | None, run: Run, asked: list[str]) -> None:
    """Lines typed while an answer is worked on: '+question' is a follow-up, anything else steers."""
    while lines is not None and not lines.empty():
        line = lines.get_nowait()
        if line is None:
            lines.put(None)  # end of input: let the chat loop see it after this answer
            return
        text = line.strip()
        if text.startswith("+") and text[1:].strip():
            if run.follow_up(text[1:].strip()):
                asked.append(text[1:].strip())
                err.print(f"[dim]follow-up queued: {escape(text[1:].strip())}[/]")
        elif text:
            run.steer(text)
            err.print(f"[dim]steering: {escape(text)}[/]")


class AnswerView:
    """Renders an answer's events: the text as it streams, then sources, verification, notes."""

    _shown_notes: set[str] = set()

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.text = ""
        self.status = err.status("", spinner="dots") if enabled and err.is_terminal else None

    def show(self, event: Event) -> None:
        if not self.enabled:
            return
        if event.type == "status" and self.status is not None:
            self.status.update(f"[dim]{event.data.get('phase', '')}…[/]")
            self.status.start()
        elif event.type == "content":
            self.stop()
            if event.data.get("replace"):
                if self.text:
                    out.print("\n[dim]— revised after fact-checking —[/]")
                self.text = ""
            piece = event.data.get("delta", "")
            self.text += piece
            out.print(escape(piece), end="")

    def stop(self) -> None:
        if self.status is not None:
            self.status.stop()

    def finish(self, answer: Answer) -> None:
        self.stop()
        if not self.enabled:
            return
        if self.text:
            out.print()
        for note in answer.notes:
            if note not in self._shown_notes:  # the model choice is said once per session
                self._shown_notes.add(note)
                err.print(f"[yellow]note:[/] {escape(note)}")
        if answer.status == "FAILED":
            err.print(f"[red]failed:[/] {escape(answer.error or 'unknown error')}")
            return
        if answer.citations:
            out.print("\n[bold]Sources[/]")
            for c in answer.citations:
                quote = " ".join(c.quote.split())
                quote = quote if len(quote) <= 160 else quote[:157] + "…"
                out.print(Text.assemble(f" [{c.n}] ", linked(c.label, c.path, c.line_start, "cyan"), ("  “" + quote + "”", "dim")))
        v = answer.verification
        rejected = len(v.rejected_claims)
        check = {"VERIFIED": "[green]verified[/]", "PARTIAL": f"[yellow]partly verified[/] ({rejected} claim(s) unverified)",
                 "UNVERIFIED": "[yellow]not verified[/]"}.get(v.status, v.status)
        if not answer.answerable:
            check = "not found in the documents"
        elif answer.mode == "extractive":
            check = "quoted from the documents"
        elif answer.mode == "catalog":
            check = "from the document list"
        skills = [s["name"] for s in (answer.retrieval or {}).get("skills", [])]
        check += f" · skill {', '.join(skills)}" if skills else ""  # which procedure the agent followed
        sure = f" · confidence {answer.confidence}" if answer.confidence else ""  # none when not found
        if answer.confidence_reasons:
            sure += f" ({escape('; '.join(answer.confidence_reasons))})"
        err.print(f"[dim]{answer.mode} · {check}{sure} · {answer.timings.get('total', 0):.1f}s"
                  f" · run {answer.run_id} (rate it: docqa feedback {answer.run_id} up|down) · session {answer.session_id}[/]")
