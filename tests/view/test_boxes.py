"""Where a span stands on a page, from pdfium's characters: the match survives the reader's re-joined
lines and hyphenation; character boxes merge into one box per line; OCR'd lines are used as they are;
rendered pages are cached within a size bound."""

from __future__ import annotations

import pytest

from docqa.view.boxes import match, merge_lines, normalise, ocr_boxes
from docqa.view.render import PageCache


@pytest.mark.parametrize("page, quote", [
    ("The coolant pumps are in-\r\nspected every 12 hours.", "The coolant pumps are inspected every 12 hours."),
    ("The  coolant\r\npumps are inspected", "the coolant pumps ARE inspected"),
    ("Name\tRole\r\nCarla\tRadiologist", "Carla | Radiologist"),
    ("ﬁre doors close at night", "fire doors close"),  # a ligature in the PDF, letters in the text
])
def test_the_quote_is_found_across_whitespace_hyphens_case_and_ligatures(page, quote):
    found = match(page, quote)
    assert found, (page, quote)
    kept, _ = normalise(quote)
    assert normalise("".join(page[i] for i in dict.fromkeys(found)))[0] == kept


def test_a_quote_not_found_whole_is_found_line_by_line_and_nothing_is_invented():
    page = "Header A | Header B\r\nrow one value\r\nunrelated\r\nrow two value"
    found = match(page, "row one value\nrow two value")
    assert "".join(page[i] for i in found) == "rowonevaluerowtwovalue"
    assert match(page, "a sentence that is not on the page") == []
    assert match(page, "   ") == []


def test_character_boxes_merge_into_one_box_per_line():
    line1 = [(10 + 6 * i, 700, 15 + 6 * i, 712) for i in range(5)]
    line2 = [(10 + 6 * i, 680, 15 + 6 * i, 692) for i in range(3)]
    empty = [(0, 0, 0, 0)]  # a generated space has no box
    assert merge_lines(line1 + empty + line2) == [(10, 700, 39, 712), (10, 680, 27, 692)]
    far = [(10, 700, 15, 712), (300, 700, 305, 712)]  # the same height, another column
    assert len(merge_lines(far)) == 2


def test_ocr_lines_of_the_page_that_overlap_the_span():
    lines = [[0, 20, 1, 0.1, 0.1, 0.9, 0.15, 0.99], [21, 40, 1, 0.1, 0.2, 0.8, 0.25, 0.98],
             [41, 60, 2, 0.1, 0.1, 0.9, 0.15, 0.97]]
    boxes = ocr_boxes(lines, 1, 15, 30)
    assert [(b.top, b.bottom) for b in boxes] == [(0.1, 0.15), (0.2, 0.25)]
    assert ocr_boxes(lines, 2, 15, 30) == [] and ocr_boxes(lines, 1, 40, 41) == []


def test_the_page_cache_keeps_the_recent_pages_within_its_size():
    cache = PageCache(max_bytes=10)
    cache.put(("d", "h", 1, 1.5), b"aaaa")
    cache.put(("d", "h", 2, 1.5), b"bbbb")
    assert cache.get(("d", "h", 1, 1.5)) == b"aaaa"  # now the most recent
    cache.put(("d", "h", 3, 1.5), b"cccc")  # over 10 bytes: the least recent (page 2) goes
    assert cache.get(("d", "h", 2, 1.5)) is None and cache.get(("d", "h", 1, 1.5)) == b"aaaa"
    cache.put(("d", "h", 4, 1.5), b"x" * 11)  # larger than the whole cache: not kept
    assert cache.get(("d", "h", 4, 1.5)) is None and cache.size <= 10
