"""A question's life: mode choice, the run record, limits, cancel, steering, follow-ups.

`Run` (run/life.py) hands out one iterator of typed events plus a handle (steer, follow_up, cancel,
answer).  `control` and `context` sit below the answer pipeline and the agent (they import only
llm, types and errors); `Run` is imported on first use, so importing them pulls in nothing above.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Run"]


def __getattr__(name: str) -> Any:
    if name == "Run":
        from docqa.run.life import Run

        return Run
    raise AttributeError(f"module 'docqa.run' has no attribute {name!r}")
