"""Control: steer, follow up or cancel a live run from another thread (chat's reader, the API, MCP)."""

from __future__ import annotations

import queue
import threading


class Control:
    """The thread-safe side of a run: what other threads may tell it while it is worked on."""

    def __init__(self) -> None:
        self._cancelled = threading.Event()
        self._steering: queue.Queue[str] = queue.Queue()
        self._follow_ups: list[str] = []
        self._lock = threading.Lock()
        self._closed = False  # no more follow-ups are taken (the run has ended or is ending)

    def steer(self, text: str) -> None:
        """Join the conversation after the current tool round; affects the next model call."""
        self._steering.put(text)

    def follow_up(self, text: str) -> bool:
        """A question to answer after the current one (same session, same events); False when the run
        has ended and will take no more."""
        with self._lock:
            if self._closed or self._cancelled.is_set():
                return False
            self._follow_ups.append(text)
            return True

    def cancel(self) -> None:
        """Stop before the next model call (recorded as CANCELLED)."""
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    @property
    def live(self) -> bool:
        """It can still be steered, followed up or cancelled."""
        return not self._closed and not self._cancelled.is_set()

    def take_steering(self) -> list[str]:
        out = []
        while not self._steering.empty():
            out.append(self._steering.get_nowait())
        return out

    def next_follow_up(self) -> str | None:
        """The next queued follow-up; None closes the run to follow-ups (atomically: one accepted
        meanwhile is never lost)."""
        with self._lock:
            if self._follow_ups and not self._cancelled.is_set():
                return self._follow_ups.pop(0)
            self._closed = True
            return None

    def close(self) -> None:
        """The run has ended: it takes no more follow-ups."""
        with self._lock:
            self._closed = True
