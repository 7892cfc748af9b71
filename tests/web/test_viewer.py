"""The source viewer in a real browser (Debian's chromium under Playwright) against the real app on
loopback: a PDF citation opens the cited page as an image with a box over the quoted text, a deck's
citation its slide, a workbook's citation its row; the link downloads the original file."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.conftest import LiveServer  # tests/ is on sys.path (rootdir conftest)
from llm.scripted_server import ScriptedServer
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from web.viewer_docs import PDF_PAGES, PDF_QUOTE, SLIDES, STAFF, make_pdf, make_pptx, make_xlsx, quote_rect

expect = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e .[test])").expect


@pytest.fixture
def web_settings(tmp_path: Path) -> Settings:
    """Overrides the conftest's: collection A holds a three-page PDF, a deck and a workbook."""
    settings = Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"},
                        answer={"mode": "pipeline"}, api={"upload_dir": str(tmp_path / "uploads")})
    folder = tmp_path / "A"
    folder.mkdir()
    make_pdf(folder / "handbook.pdf", PDF_PAGES)
    make_pptx(folder / "review.pptx", SLIDES)
    make_xlsx(folder / "staff.xlsx", STAFF)
    with KnowledgeBase(settings) as kb:
        kb.add([folder], "A")
    return settings


def _cite(page, server, question: str) -> None:
    page.goto(server.url + "/")
    page.wait_for_selector("#collection option[value='A']", state="attached")
    box = page.locator("#question")
    box.fill(question)
    box.press("Enter")
    page.wait_for_selector(".turn:not(.running)")
    page.locator(".turn .answer .chip").first.click()


def _fractions(page) -> list[dict]:
    """Each highlight box as fractions of the page image it lies over."""
    return page.evaluate("""() => {
        const img = document.querySelector('#viewer-body img.pdf-page').getBoundingClientRect();
        return [...document.querySelectorAll('#viewer-body .hl-box')].map((b) => {
            const r = b.getBoundingClientRect();
            return {left: (r.left - img.left) / img.width, top: (r.top - img.top) / img.height,
                    right: (r.right - img.left) / img.width, bottom: (r.bottom - img.top) / img.height};
        });
    }""")


def test_a_pdf_citation_shows_its_page_with_the_quote_boxed(page, web_app, web_settings, screenshot):
    pdf = Path(web_settings.kb).parent / "A" / "handbook.pdf"
    with LiveServer(web_app) as server:
        _cite(page, server, "How often are the reactor coolant pumps inspected?")
        body = page.locator("#viewer-body")
        page.locator("#viewer-body .hl-box").first.wait_for()
        assert body.get_attribute("data-kind") == "page" and body.get_attribute("data-page") == "2"
        assert page.locator("#viewer-body .pager-label").inner_text() == "Page 2 of 3"
        image = page.locator("#viewer-body img.pdf-page")
        assert image.evaluate("i => i.complete && i.naturalWidth") == round(595.28 * 1.5)
        assert PDF_QUOTE in page.locator("#viewer-body .pdf-quote").inner_text()

        left, top, right, bottom = quote_rect(pdf, 2, PDF_QUOTE)  # where pdfium finds the words on page 2
        boxes = _fractions(page)
        first = boxes[0]
        assert first["top"] < bottom and first["bottom"] > top  # the box overlaps the quoted line...
        assert first["left"] < right and first["right"] > left
        assert abs(first["top"] - top) < 0.015 and abs(first["bottom"] - bottom) < 0.015  # ...and sits on it
        assert page.locator("#viewer-body .hl-box").first.evaluate(
            "b => { const r = b.getBoundingClientRect(), v = document.getElementById('viewer-body').getBoundingClientRect();"
            " return r.top >= v.top && r.bottom <= v.bottom; }")  # scrolled into view
        meta = page.locator("#viewer-meta").inner_text()
        assert "handbook.pdf" in meta and "Page" in meta and "L4" in meta
        screenshot(page, "viewer-pdf")

        page.locator("#viewer-body .pager .next").click()
        expect(page.locator("#viewer-body .pager-label")).to_have_text("Page 3 of 3")
        page.locator("#viewer-body img.pdf-page").wait_for()
        assert page.locator("#viewer-body .hl-box").count() == 0 and page.locator("#viewer-body .next").is_disabled()
        page.locator("#viewer-body .pager .prev").click()
        page.locator("#viewer-body .hl-box").first.wait_for()  # back on the cited page, boxed again

        with page.expect_download() as download:
            page.locator(".viewer-download a").click()
        assert download.value.suggested_filename == "handbook.pdf"
        assert Path(download.value.path()).read_bytes() == pdf.read_bytes()


def test_a_slide_citation_shows_the_slide(page, web_app, screenshot):
    with LiveServer(web_app) as server:
        _cite(page, server, "What is the marketing budget for 2024?")
        slide = page.locator("#viewer-body .slide")
        slide.wait_for()
        assert slide.get_attribute("data-slide") == "2"
        assert page.locator("#viewer-body .pager-label").inner_text() == "Slide 2 of 3"
        assert slide.locator(".slide-title").inner_text() == "Marketing budget"
        assert slide.locator("mark.hl").inner_text() == "The marketing budget for 2024 is 3 million euros"
        assert "Agenda" not in slide.inner_text()  # only the cited slide
        screenshot(page, "viewer-slide")
        page.locator("#viewer-body .pager .prev").click()
        expect(page.locator("#viewer-body .slide-title")).to_have_text("Welcome")
        assert "Slide" in page.locator("#viewer-meta").inner_text()
        page.locator("#viewer-body").focus()  # by keyboard: the arrow keys turn the slides
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        expect(page.locator("#viewer-body .pager-label")).to_have_text("Slide 3 of 3")
        page.keyboard.press("ArrowRight")  # past the last: stays
        expect(page.locator("#viewer-body .slide-title")).to_have_text("Closing")
        page.locator("#viewer-body .pager .prev").focus()
        page.keyboard.press("Enter")
        expect(page.locator("#viewer-body .pager-label")).to_have_text("Slide 2 of 3")
        assert page.evaluate("document.activeElement.classList.contains('prev')")  # the focus stays on the button


def _call(name: str, **arguments) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def test_a_sheet_citation_marks_its_row(page, agent_app, screenshot):
    script = [_call("search_docs", query="Carla Radiologist floor"),
              _call("answer", text="Carla works on floor 5 as a Radiologist [1].")]
    # accept_share 0: the model's answer is published as written, so its citation of the sheet row is the chip
    # (the acceptance rule is tested in tests/answer/test_accept.py; this test is about the viewer)
    with ScriptedServer(script) as model, LiveServer(agent_app(model, accept_share=0)) as server:
        page.goto(server.url + "/")
        page.select_option("#mode", "agent")
        page.wait_for_selector("#collection option[value='A']", state="attached")
        page.locator("#question").fill("Which floor does Carla work on?")
        page.locator("#question").press("Enter")
        page.wait_for_selector(".turn:not(.running)")
        page.locator(".turn .answer .chip").first.click()
        cited = page.locator("#viewer-body table.sheet tr.cited")
        cited.first.wait_for()
        assert cited.count() == 1 and cited.get_attribute("data-row") == "5"  # the workbook's row (row 4 is blank)
        assert cited.locator("th").inner_text() == "5"
        assert cited.locator("td").all_inner_texts() == ["Carla", "Radiologist", "5"]
        numbers = page.locator("#viewer-body table.sheet tr th").all_inner_texts()
        assert numbers == ["1", "2", "3", "5", "6"]
        assert "Sheet 1 of 1: Staff" in page.locator("#viewer-body caption").inner_text()
        assert "null" not in page.locator("#viewer-body").inner_text()
        screenshot(page, "viewer-sheet")


def test_the_pdf_page_fits_a_phone(page, web_app, screenshot):
    page.set_viewport_size({"width": 390, "height": 844})
    with LiveServer(web_app) as server:
        _cite(page, server, "How often are the reactor coolant pumps inspected?")
        page.locator("#viewer-body .hl-box").first.wait_for()
        fits = page.evaluate("""() => {
            const img = document.querySelector('#viewer-body img.pdf-page').getBoundingClientRect();
            const box = document.querySelector('#viewer-body .hl-box').getBoundingClientRect();
            return img.width <= window.innerWidth && img.width > 300 && box.right <= img.right + 1
                && document.documentElement.scrollWidth <= window.innerWidth;
        }""")
        assert fits
        screenshot(page, "viewer-pdf-phone")
