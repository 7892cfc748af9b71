"""How a run looks in the terminal: while it works, a status line with the model's draft folded
dim beneath it (a transient area on a terminal, erased when the answer is published: a draft is not
the answer); then the published answer, its sources (each a link to its file), how it was checked and
the run's id; in `chat`, what the user types meanwhile.  Piped, only the published answer is printed."""

from __future__ import annotations

import queue
import sys
import threading
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.console import Group
from rich.markup import escape
from rich.text import Text

from docqa.cli.console import err, out
from docqa.cli.links import linked
from docqa.events import Content, Done, DraftDelta, DraftRejected, Event, Metadata, Status
from docqa.types import Answer, Citation

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
            if isinstance(event, Metadata) and asked:  # a follow-up's answer begins
                out.print(f"\n[dim]› {escape(asked.pop(0))}[/]")
            view.show(event)
            if isinstance(event, Done):
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


# what a phase is called on the status line (the rest by their own name)
PHASES = {"generating": "drafting", "citing": "checking", "checking": "checking", "accepting": "checking"}
DRAFT_LINES = 3  # the draft's last lines shown under the status line


def first_per_number(citations: list[Citation]) -> list[Citation]:
    """One citation per source number, its first: a Sources line per [n], not per quoted sentence."""
    first: dict[int, Citation] = {}
    for c in citations:
        first.setdefault(c.n, c)
    return list(first.values())


class AnswerView:
    """Renders an answer's events: the status and the draft in a transient area, then — when it is
    done — the published answer, its sources, verification and notes."""

    _shown_notes: set[str] = set()

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.text = ""  # the published answer (`content`)
        self.phase, self.draft = "", ""  # the draft being written, never printed as the answer
        self.draft_n: int | None = None
        self.status = err.status("", spinner="dots") if enabled and err.is_terminal else None

    def show(self, event: Event) -> None:
        if not self.enabled:
            return
        if isinstance(event, Status):
            self.phase = event.phase
            self._working()
        elif isinstance(event, DraftDelta):
            if event.n != self.draft_n:
                self.draft, self.draft_n = "", event.n
            self.draft += event.delta
            self._working()
        elif isinstance(event, DraftRejected) and self.status is not None:  # said in a dim line; its text goes
            reasons = event.reasons or ("no reason given",)
            more = f" (+{len(reasons) - 1} more)" if len(reasons) > 1 else ""
            head = f"draft {event.n} rejected by the fact-check: "
            room = max(20, err.width - cell_len(head) - cell_len(more) - 1)  # one line
            err.print(f"[dim]{escape(head + _line(reasons[0], room))}{more}[/]")
            self.draft = ""
        elif isinstance(event, Content):  # the published answer: printed when the answer is done
            self.text = ("" if event.replace else self.text) + event.delta
            self.draft = ""

    def _working(self) -> None:
        """The status line, and the draft's last lines dim beneath it (a terminal only)."""
        if self.status is None:
            return
        phase = PHASES.get(self.phase, self.phase)
        label = Text(f"{phase}…", style="dim")
        if self.draft and phase in ("drafting", "checking"):
            label.append(f"  draft {self.draft_n or ''}, not checked yet" if phase == "drafting" else
                         f"  draft {self.draft_n or ''}", style="dim")
            width = max(20, err.width - 4)  # beside the spinner
            tail = _tail(self.draft, width * (DRAFT_LINES - 1))
            self.status.update(Group(label, Text(tail, style="dim italic", overflow="fold")))
        else:
            self.status.update(label)
        self.status.start()

    def stop(self) -> None:
        if self.status is not None:
            self.status.stop()

    def finish(self, answer: Answer) -> None:
        self.stop()
        if not self.enabled:
            return
        if self.text:
            out.print(escape(self.text))
        for note in answer.notes:
            if note not in self._shown_notes:  # the model choice is said once per session
                self._shown_notes.add(note)
                err.print(f"[yellow]note:[/] {escape(note)}")
        if answer.status == "FAILED":
            err.print(f"[red]failed:[/] {escape(answer.error or 'unknown error')}")
            return
        if answer.citations:
            out.print("\n[bold]Sources[/]")
            for c in first_per_number(answer.citations):
                quote = " ".join(c.quote.split())
                quote = quote if len(quote) <= 160 else quote[:157] + "…"
                out.print(Text.assemble(f" [{c.n}] ", linked(c.label, c.path, c.line_start, "cyan", c.url), ("  “" + quote + "”", "dim")))
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
        skills = [s["name"] for s in answer.retrieval.skills or []]
        check += f" · skill {', '.join(skills)}" if skills else ""  # which procedure the agent followed
        sure = f" · confidence {answer.confidence}" if answer.confidence else ""  # none when not found
        sure += f" {answer.probability:.2f}" if answer.confidence and answer.probability is not None else ""
        if answer.confidence_reasons:
            sure += f" ({escape('; '.join(answer.confidence_reasons))})"
        err.print(f"[dim]{answer.mode} · {check}{sure} · {answer.timings.get('total', 0):.1f}s"
                  f" · run {answer.run_id} (rate it: docqa feedback {answer.run_id} up|down) · session {answer.session_id}[/]")


def _tail(text: str, cells: int) -> str:
    """The end of `text` on one folded line, at most `cells` wide ('…' where it was cut)."""
    flat = " ".join(text.split())
    if cell_len(flat) <= cells:
        return flat
    kept, used = [], 1
    for ch in reversed(flat):
        used += cell_len(ch)
        if used > cells:
            break
        kept.append(ch)
    return "…" + "".join(reversed(kept))


def _line(text: str, cells: int) -> str:
    flat = " ".join(str(text).split())
    return flat if cell_len(flat) <= cells else flat[: cells - 1] + "…"
