"""Ruled tables in PDF pages from pdfium's own path objects, found by pdfplumber's table geometry.

pdfplumber (pdfminer.six) costs 0.07-0.2 s a page, nearly all of it parsing the page's content in
Python; its table finder only needs the page's ruling edges and, per cell, the text inside.  Both
come from pdfium here, in C: the path objects' segments (read through pypdfium2's raw API, page
space after each object's matrix, forms included) become the same edges pdfplumber derives from
pdfminer's lines, rects and curves (a path split into subpaths at each move, a closed four-sided
axis-parallel subpath a rect, two points a line, anything else a curve whose straight steps count),
and pdfplumber's own functions merge them, find the crossings, the cells and the tables.  A cell's
text is pdfium's text inside the cell (`FPDFText_GetBoundedText`).  A page without three
horizontal and three vertical edges cannot hold a table of two rows and two columns and costs only
the walk over its objects.  Booktabs tables (horizontal rules only) are not found (as with
pdfplumber's default finder); they stay prose.  A table whose cells hold many lines each (rules
missing between rows) is dropped: prose reads better.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from docqa.ingest.readers.base import clean_extracted
from docqa.types import HEADER_ROW, TABLE, Block

if TYPE_CHECKING:
    import pypdfium2 as pdfium

_TOLERANCE = 3  # pdfplumber's default snap, join and intersection tolerances (points)
_EDGE_MIN = 3  # pdfplumber's edge_min_length (after merging); edge_min_length_prefilter is 1
_MAX_SEGMENTS = 20_000  # path segments read per page: past this the page is a drawing, not a table
_FORM_DEPTH = 4  # forms inside forms looked into
_THIN = 2.0  # points: a line this far outside a table's box still belongs to it
_INSET_X, _INSET_Y = 2.0, 1.0  # see _cell_text
_MAX_LINES_PER_CELL = 1.5  # mean lines per non-empty cell above this: rows were merged
_Point = tuple[float, float]


@dataclass(slots=True)
class PdfTable:
    """One table: its box in PDF points (y grows upwards) and its rows as " | " lines."""

    left: float
    bottom: float
    right: float
    top: float
    rows: list[str]

    def holds(self, left: float, bottom: float, right: float, top: float) -> bool:
        """True when a text line lies inside the box: its middle height, and all its width (a line
        that runs on into the next column stays prose, so none of its text is lost)."""
        y = (bottom + top) / 2
        return (self.bottom <= y <= self.top and self.left - _THIN <= left
                and right <= self.right + _THIN)

    @property
    def text(self) -> str:
        return "\n".join(self.rows)


def page_tables(page: pdfium.PdfPage, textpage: pdfium.PdfTextPage) -> list[PdfTable]:
    """The ruled tables of one page that look like real tables (pdfplumber's default finder over
    pdfium's edges, each cell's text from pdfium)."""
    top = _page_top(page)
    edges = page_edges(page, top)
    if edges is None or sum(e["orientation"] == "h" for e in edges) < 3 or sum(
            e["orientation"] == "v" for e in edges) < 3:
        return []  # two rows of two columns need three rules each way
    from pdfplumber.table import Table, cells_to_tables, edges_to_intersections

    merged = _merge(edges)
    if not _has_grid(merged):
        return []
    cells = intersections_to_cells(edges_to_intersections(merged, _TOLERANCE, _TOLERANCE))
    out = []
    for group in cells_to_tables(cells):
        table = Table(None, group)  # type: ignore[arg-type]  # rows and bbox need no page
        rows = [[None if cell is None else _cell_text(textpage, cell, top) for cell in row.cells]
                for row in table.rows]
        if not _looks_tabular(rows):
            continue
        lines = [" | ".join(" ".join((c or "").split()) for c in row) for row in rows]
        lines = [line.rstrip(" |") for line in lines if line.replace("|", "").strip()]
        x0, y0, x1, y1 = table.bbox
        out.append(PdfTable(x0, top - y1, x1, top - y0, lines))
    return out


def _merge(edges: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """pdfplumber's TableFinder.get_edges from here on: snap, join, drop the short."""
    from pdfplumber.table import merge_edges
    from pdfplumber.utils import filter_edges

    merged = merge_edges(edges, _TOLERANCE, _TOLERANCE, _TOLERANCE, _TOLERANCE)
    return filter_edges(merged, min_length=_EDGE_MIN)


def intersections_to_cells(intersections: dict[_Point, dict[str, list[dict[str, Any]]]]) -> list[tuple[float, float, float, float]]:
    """pdfplumber's `intersections_to_cells`, the same cells in the same order: each crossing's
    smallest cell whose four sides are edges; its edge sets built once per crossing, and the
    crossings below and to the right looked up, not scanned for."""
    v_sets = {p: {_bbox(e) for e in found["v"]} for p, found in intersections.items()}
    h_sets = {p: {_bbox(e) for e in found["h"]} for p, found in intersections.items()}

    def connects(p1: _Point, p2: _Point) -> bool:
        return (p1[0] == p2[0] and not v_sets[p1].isdisjoint(v_sets[p2])) or (
            p1[1] == p2[1] and not h_sets[p1].isdisjoint(h_sets[p2]))

    points = sorted(intersections)
    by_top: dict[float, list[_Point]] = {}
    for p in points:
        by_top.setdefault(p[1], []).append(p)
    cells = []
    for i, pt in enumerate(points[:-1]):
        below = []
        for q in points[i + 1:]:
            if q[0] != pt[0]:
                break
            below.append(q)
        right = [q for q in by_top[pt[1]] if q[0] > pt[0]]
        cell = _smallest_cell(pt, below, right, intersections, connects)
        if cell is not None:
            cells.append(cell)
    return cells


def _smallest_cell(pt: _Point, below: list[_Point], right: list[_Point], intersections: dict[_Point, Any],
                   connects: Any) -> tuple[float, float, float, float] | None:
    for below_pt in below:
        if not connects(pt, below_pt):
            continue
        for right_pt in right:
            if not connects(pt, right_pt):
                continue
            corner = (right_pt[0], below_pt[1])
            if corner in intersections and connects(corner, right_pt) and connects(corner, below_pt):
                return (pt[0], pt[1], corner[0], corner[1])
    return None


def _bbox(edge: dict[str, Any]) -> tuple[float, float, float, float]:
    return (edge["x0"], edge["top"], edge["x1"], edge["bottom"])


def _has_grid(edges: list[dict[str, Any]]) -> bool:
    """True when some vertical edge meets three horizontal ones (as pdfplumber's crossings count
    them): two rows of cells need it, one box does not have it."""
    across = [(e["top"], e["x0"], e["x1"]) for e in edges if e["orientation"] == "h"]
    if len(across) < 3:
        return False
    t = _TOLERANCE
    for e in edges:
        if e["orientation"] == "v":
            x, top, bottom = e["x0"], e["top"], e["bottom"]
            if sum(top <= y + t and bottom >= y - t and x0 - t <= x <= x1 + t for y, x0, x1 in across) >= 3:
                return True
    return False


def _page_top(page: pdfium.PdfPage) -> float:
    """The top of the media box: pdfplumber's `top` is measured down from it."""
    return float(page.get_mediabox()[3])


def _cell_text(textpage: pdfium.PdfTextPage, cell: tuple[float, float, float, float], top: float) -> str:
    """pdfium's text inside a cell (pdfplumber's coordinates: y down from the media box top)."""
    x0, y0, x1, y1 = cell
    dx, dy = min(_INSET_X, (x1 - x0) / 4), min(_INSET_Y, (y1 - y0) / 4)
    text = textpage.get_text_bounded(x0 + dx, top - y1 + dy, x1 - dx, top - y0 - dy)
    return text.replace("\ufffe", "").replace("\r\n", "\n").replace("\r", "\n")


def page_edges(page: pdfium.PdfPage, top: float) -> list[dict[str, Any]] | None:
    """pdfplumber's edges of one page (`Page.edges`, orientation "h" or "v", at least 1 pt long),
    from pdfium's path objects; None for a drawing of more than _MAX_SEGMENTS segments."""
    import pypdfium2.raw as pdfium_c

    subpaths: list[tuple[str, list[_Point]]] = []
    raw = page.raw
    objects = [pdfium_c.FPDFPage_GetObject(raw, i) for i in range(pdfium_c.FPDFPage_CountObjects(raw))]
    if _collect(objects, None, subpaths, [_MAX_SEGMENTS], 0) < 0:
        return None
    edges = [e for subpath in subpaths for e in _edges(subpath, top)]
    return [e for e in edges if e["orientation"] and e["height" if e["orientation"] == "v" else "width"] >= 1]


def _collect(objects: list[Any], outer: tuple[float, ...] | None, out: list[tuple[str, list[_Point]]],
             budget: list[int], depth: int) -> int:
    """Append the painted subpaths of `objects` (forms looked into) to `out`; the segments left in
    the budget (below 0: too many)."""
    import pypdfium2.raw as pdfium_c

    get_type, path, form = pdfium_c.FPDFPageObj_GetType, pdfium_c.FPDF_PAGEOBJ_PATH, pdfium_c.FPDF_PAGEOBJ_FORM
    count_segments = pdfium_c.FPDFPath_CountSegments
    m = pdfium_c.FS_MATRIX()
    for obj in objects:
        kind = get_type(obj)
        if kind != path and kind != form:
            continue
        if not pdfium_c.FPDFPageObj_GetMatrix(obj, ctypes.byref(m)):
            continue
        matrix: tuple[float, ...] = (m.a, m.b, m.c, m.d, m.e, m.f)
        if outer is not None:
            matrix = _compose(matrix, outer)
        if kind == form:
            if depth < _FORM_DEPTH:
                inner = [pdfium_c.FPDFFormObj_GetObject(obj, i) for i in range(pdfium_c.FPDFFormObj_CountObjects(obj))]
                if _collect(inner, matrix, out, budget, depth + 1) < 0:
                    return budget[0]
            continue
        count = count_segments(obj)
        budget[0] -= count
        if budget[0] < 0:
            return budget[0]
        if count > 1:
            _split(obj, count, matrix, out)
    return budget[0]


def _split(obj: Any, count: int, matrix: tuple[float, ...], out: list[tuple[str, list[_Point]]]) -> None:
    """A path object's segments cut into subpaths at each move (pdfminer paints each on its own):
    operators ("m", "l", "c", "h") and their end points in page space."""
    import pypdfium2.raw as pdfium_c

    get_segment, get_type = pdfium_c.FPDFPath_GetPathSegment, pdfium_c.FPDFPathSegment_GetType
    get_point, get_close = pdfium_c.FPDFPathSegment_GetPoint, pdfium_c.FPDFPathSegment_GetClose
    move, bezier_to = pdfium_c.FPDF_SEGMENT_MOVETO, pdfium_c.FPDF_SEGMENT_BEZIERTO
    a, b, c, d, e, f = matrix
    x, y = ctypes.c_float(), ctypes.c_float()
    px, py = ctypes.byref(x), ctypes.byref(y)
    ops: list[str] = []
    pts: list[_Point] = []
    bezier = 0
    for i in range(count):
        seg = get_segment(obj, i)
        kind = get_type(seg)
        if kind == bezier_to:
            bezier += 1
            if bezier % 3:  # control points: pdfminer keeps each curve's end point only
                continue
            op = "c"
        elif kind == move:
            if ops:
                out.append(("".join(ops), pts))
            ops, pts, bezier, op = [], [], 0, "m"
        else:
            op = "l"
        get_point(seg, px, py)
        ops.append(op)
        pts.append((a * x.value + c * y.value + e, b * x.value + d * y.value + f))
        if get_close(seg):
            ops.append("h")
            pts.append(pts[0])
    if ops:
        out.append(("".join(ops), pts))


def _compose(inner: tuple[float, ...], outer: tuple[float, ...]) -> tuple[float, ...]:
    """The matrix that applies `inner` then `outer` (PDF row-vector convention)."""
    a, b, c, d, e, f = inner
    A, B, C, D, E, F = outer  # noqa: N806 - the matrix's own letters
    return (a * A + b * C, a * B + b * D, c * A + d * C, c * B + d * D, e * A + f * C + E, e * B + f * D + F)


def _edges(subpath: tuple[str, list[_Point]], top: float) -> list[dict[str, Any]]:
    """pdfplumber's edges of one subpath, classified as pdfminer's paint_path does."""
    shape, pts = subpath
    if shape[:1] != "m":
        return []
    if len(shape) > 3 and shape[-2:] == "lh" and pts[-2] == pts[0]:
        shape, pts = shape[:-2] + "h", pts[:-2] + pts[-1:]  # a redundant "l" before the closing "h"
    if shape in ("mlh", "ml"):
        return [_line_edge(pts[0], pts[1], top)]
    if shape in ("mlllh", "mllll"):
        (x0, y0), (x1, y1), (x2, y2), (x3, y3), _ = pts
        if pts[0] == pts[4] and ((x0 == x1 and y1 == y2 and x2 == x3 and y3 == y0)
                                 or (y0 == y1 and x1 == x2 and y2 == y3 and x3 == x0)):
            return _rect_edges(pts[0], pts[2], top)
    return [_line_edge(p, q, top, curve=True) for p, q in zip(pts, pts[1:])]


def _line_edge(p: _Point, q: _Point, top: float, curve: bool = False) -> dict[str, Any]:
    """An edge between two points: a line's is "h" when level, else "v" (pdfplumber's
    line_to_edge); a curve step's is "h" or "v" only when level or plumb."""
    x0, x1 = min(p[0], q[0]), max(p[0], q[0])
    t0, t1 = top - max(p[1], q[1]), top - min(p[1], q[1])
    if curve:
        orientation = "v" if p[0] == q[0] else "h" if p[1] == q[1] else None
    else:
        orientation = "h" if t0 == t1 else "v"
    return _edge(x0, x1, t0, t1, orientation)


def _rect_edges(p: _Point, q: _Point, top: float) -> list[dict[str, Any]]:
    """A rect's four sides (pdfplumber's rect_to_edges)."""
    x0, x1 = min(p[0], q[0]), max(p[0], q[0])
    t0, t1 = top - max(p[1], q[1]), top - min(p[1], q[1])
    return [_edge(x0, x1, t0, t0, "h"), _edge(x0, x1, t1, t1, "h"),
            _edge(x0, x0, t0, t1, "v"), _edge(x1, x1, t0, t1, "v")]


def _edge(x0: float, x1: float, t0: float, t1: float, orientation: str | None) -> dict[str, Any]:
    return {"x0": x0, "x1": x1, "top": t0, "bottom": t1, "doctop": t0, "width": x1 - x0,
            "height": t1 - t0, "orientation": orientation}


def _looks_tabular(rows: list[list[str | None]]) -> bool:
    """Two rows and two columns at least, cells that are not whole paragraphs, and text pdfminer
    could map (a "(cid:NN)" glyph: pdfium's prose reads better)."""
    cells = [c for row in rows for c in row if c and c.strip()]
    if len(rows) < 2 or max((len(r) for r in rows), default=0) < 2 or not cells:
        return False
    if any("(cid:" in c for c in cells):
        return False
    return sum(c.strip().count("\n") + 1 for c in cells) / len(cells) <= _MAX_LINES_PER_CELL


def mark_tables(page_text: str, page: Block, tables: list[PdfTable], blocks: list[Block]) -> None:
    """Add TABLE and HEADER_ROW blocks for the tables written into a page (`page_text` as read,
    `page` its block in the document)."""
    if not tables:
        return
    text = clean_extracted(page_text)
    pos = 0
    for table in tables:
        body = table.text
        at = text.find(body, pos) if body else -1
        if at == -1:
            continue
        start = page.start + at
        blocks.append(Block(start, start + len(body), TABLE, page=page.page))
        blocks.append(Block(start, start + len(table.rows[0]), HEADER_ROW, page=page.page))
        pos = at + len(body)
