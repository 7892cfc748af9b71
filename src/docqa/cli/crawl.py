"""`docqa add https://…` and `docqa watch https://… --every 1h`: documentation sites from the command line."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from contextlib import contextmanager

from rich.markup import escape

from docqa.cli.console import err, out

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)?\s*$", re.I)
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def seconds(duration: str) -> float:
    """'90s', '15m', '1h', '1d' (a bare number: seconds) as seconds; ValueError for anything else."""
    m = _DURATION.match(duration)
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"{duration!r} is not a duration: write 30s, 15m, 1h or 1d")
    return float(m.group(1)) * _UNIT[(m.group(2) or "s").lower()]


@contextmanager
def crawl_progress(show: bool):
    """A crawl's progress on stderr (pages found / fetched / unchanged / failed), when it is a terminal."""
    if not show or not err.is_terminal:
        yield lambda stats, url: None
        return
    with err.status("crawling") as status:
        yield lambda stats, url: status.update(
            f"found {stats.found} · fetched {stats.fetched} · unchanged {stats.unchanged} · failed {stats.failed}"
            f" · {escape(url[-60:])}")


def crawl_line(report) -> str:
    """One line of a crawl's figures: 'https://…/docs/: found 120, fetched 3, unchanged 117, failed 0'."""
    c = report.crawl or {}
    line = (f"{escape(c.get('prefix', ''))}: found {c.get('found', 0)}, fetched {c.get('fetched', 0)}, "
            f"unchanged {c.get('unchanged', 0)}, gone {c.get('gone', 0)}, failed {c.get('failed', 0)} · "
            f"{c.get('bytes', 0) / 1e6:.1f} MB")
    return line + (f" · [yellow]stopped[/]: {escape(c['stopped'])}" if c.get("stopped") else "")


def watch_sites(kb, urls: list[str], collection: str | None, every: float, stop: threading.Event,
                render: Callable) -> None:
    """Crawl the sites again every `every` seconds until `stop`; each crawl printed by `render`."""
    while not stop.is_set():
        for url in urls:
            if stop.is_set():
                return
            report = kb.add_site(url, collection)
            out.print(crawl_line(report))
            render(report)
        stop.wait(every)
