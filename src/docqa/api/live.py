"""Runs being answered right now, by run id, so another request can steer, follow up or cancel them;
and the worker's side of answering a question (the follow-ups included)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from docqa.agent import Control
from docqa.kb import KnowledgeBase
from docqa.types import CANCELLED, Answer, Event


class LiveRuns:
    """run id → the Control of the `ask` answering it (a question and its follow-ups share one)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()  # close() runs with it held (in `answer`) and without
        self._runs: dict[str, Control] = {}

    def register(self, run_id: str, control: Control) -> None:
        with self.lock:
            self._runs[run_id] = control

    def get(self, run_id: str) -> Control | None:
        with self.lock:
            return self._runs.get(run_id)

    def close(self, control: Control) -> None:
        """The `ask` is over: its runs can no longer be steered, followed up or cancelled."""
        with self.lock:
            for run_id in [r for r, c in self._runs.items() if c is control]:
                del self._runs[run_id]

    def __len__(self) -> int:
        return len(self._runs)

    def stop_all(self) -> None:
        with self.lock:
            controls = list(self._runs.values())
        for control in controls:
            control.stop()


def answer(kb: KnowledgeBase, live: LiveRuns, question: str, control: Control, emit: Callable[[Event], None] | None,
           options: dict[str, Any], finished: Callable[[Answer], None] | None = None) -> Answer:
    """Answer a question on a worker: register each run as it starts (its `metadata` event), answer
    the follow-ups queued meanwhile, and close the registry entry so no follow-up is lost or accepted late."""

    def on_event(event: Event) -> None:
        if event.type == "metadata":
            live.register(event.data["run_id"], control)
        if emit is not None:
            emit(event)

    try:
        first = kb.ask(question, on_event=on_event, control=control, **options)
        answers = [first, *control.answers]
        while True:  # a follow-up that came after `ask` last looked, but before the runs were closed
            with live.lock:
                follow_up = None if _stopped(answers[-1], control) else control.take_follow_up()
                if follow_up is None:
                    live.close(control)
                    break
            options = {**options, "session_id": first.session_id}
            answers.append(kb.ask(follow_up, on_event=on_event, control=control, **options))
        control.answers[:] = answers[1:]
        if finished is not None:
            for one in answers:
                finished(one)
        return first
    finally:
        live.close(control)


def _stopped(last: Answer, control: Control) -> bool:
    return last.status == CANCELLED or control.cancel.is_set()
