"""How a document's stored text divides into what its viewer shows one at a time: PDF pages,
slides, sheets.  Derived from what ingestion kept (the chunks' pages and sections, the reader's
metadata), so the page never parses a file again."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from docqa.types import Hit

PAGED = {"pdf": "page", "pptx": "slide"}
SHEETS = {"xlsx", "csv"}


def line_starts(text: str) -> list[int]:
    """The offset where each line of `text` starts (line 1 at index 0)."""
    starts = [0]
    at = text.find("\n")
    while at != -1:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    return starts


def layout(kind: str, text: str, page_lines: list[tuple[int, int]], metadata: dict, hits: list[Hit]) -> dict | None:
    """{"kind": "page"|"slide"|"sheet", "count": n, "units": [...]} for a paged or tabular type, else None.
    A unit spans [char_start, char_end) of the text and lines line_start..line_end; a sheet's `rows`
    gives the file's row numbers of its lines after its name, as [first, count] runs (None: unknown)."""
    starts = line_starts(text)
    if kind in PAGED:
        count = metadata.get("pages" if kind == "pdf" else "slides") or len(page_lines)
        titles = metadata.get("slide_titles", {})
        units = [{"n": page, "title": titles.get(str(page), "")} for page, _ in page_lines]
        bounds = [line for _, line in page_lines]
        return {"kind": PAGED[kind], "count": count, "units": _spans(units, bounds, starts, len(text))}
    if kind in SHEETS:
        sheets: dict[str, list[int]] = {}
        for hit in hits:
            first = sheets.setdefault(hit.section or "", [hit.line_start, hit.line_end])
            first[0], first[1] = min(first[0], hit.line_start), max(first[1], hit.line_end)
        ordered = sorted(sheets.items(), key=lambda item: item[1][0])
        numbers = metadata.get("row_numbers") or {}  # [first, count] runs; absent: indexed before they were kept
        units = [{"name": name, "rows": numbers.get(name)} for name, _ in ordered]
        spanned = _spans(units, [lines[0] for _, lines in ordered], starts, len(text))
        return {"kind": "sheet", "count": len(metadata.get("sheets") or ordered), "units": spanned}
    return None


def _spans(units: list[dict], first_lines: list[int], starts: list[int], length: int) -> list[dict]:
    """Each unit from its first line to the line before the next unit's (the last to the end)."""
    for i, unit in enumerate(units):
        first = first_lines[i]
        last = first_lines[i + 1] - 1 if i + 1 < len(units) else len(starts)
        unit.update(line_start=first, line_end=max(first, last), char_start=starts[min(first, len(starts)) - 1],
                    char_end=starts[last] - 1 if last < len(starts) else length)
    return units

