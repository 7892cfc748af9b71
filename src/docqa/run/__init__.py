"""A question's life: mode choice, the run record, limits, cancel, steering, follow-ups.

`Run` (run/life.py) hands out one iterator of typed events plus a handle (steer, follow_up, cancel,
answer).  Its low half, `Control` and `RunContext`, is `docqa.flow`, below the answer pipeline and
the agent; `Run` is imported on first use, so importing one of run's modules (the log, the owner)
does not load the answering.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Run"]


def __getattr__(name: str) -> Any:
    if name == "Run":
        from docqa.run.life import Run

        return Run
    raise AttributeError(f"module 'docqa.run' has no attribute {name!r}")
