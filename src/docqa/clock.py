"""The clock: the current time as stored and shown, ISO 8601 UTC (a leaf: imports nothing of ours).

Milliseconds by default, so runs, sessions, keys and jobs created in one second still sort in
order as text; `now("seconds")` where a coarser stamp reads better (a document's indexed_at).
"""

from __future__ import annotations

from datetime import datetime, UTC


def now(timespec: str = "milliseconds") -> str:
    """The current UTC time as ISO 8601 text, e.g. '2026-01-02T03:04:05.678+00:00'."""
    return datetime.now(UTC).isoformat(timespec=timespec)
