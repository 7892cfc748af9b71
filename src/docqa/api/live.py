"""Runs being answered right now: run id → the live run's handle, so another request can steer,
follow up or cancel it (a question and its follow-ups share one handle)."""

from __future__ import annotations

import threading

from docqa.run.life import Run


class LiveRuns:
    """The registry: a worker adds each run id as its `metadata` passes, and removes the handle when
    the run has ended (follow-ups are the run's own: one it accepted is answered)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, Run] = {}

    def register(self, run_id: str, run: Run) -> None:
        with self._lock:
            self._runs[run_id] = run

    def get(self, run_id: str) -> Run | None:
        with self._lock:
            return self._runs.get(run_id)

    def act(self, run_id: str, action: str, text: str | None = None) -> bool | None:
        """Steer, follow up or cancel the run here: True done, False it is no longer live (or takes no
        more follow-ups), None it is not answered by this server."""
        run = self.get(run_id)
        if run is None:
            return None
        if not run.live:
            return False
        if action == "steer":
            run.steer(text or "")
        elif action == "follow_up":
            return run.follow_up(text or "")
        elif action == "cancel":
            run.cancel()
        else:
            raise ValueError(f"unknown action on a live run: {action!r}")
        return True

    def close(self, run: Run) -> None:
        """The run has ended: its ids can no longer be steered, followed up or cancelled."""
        with self._lock:
            for run_id in [r for r, one in self._runs.items() if one is run]:
                del self._runs[run_id]

    def __len__(self) -> int:
        return len(self._runs)

    def stop_all(self) -> None:
        with self._lock:
            runs = list(self._runs.values())
        for run in runs:
            run.cancel()
