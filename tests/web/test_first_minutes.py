"""The first ten minutes on the page (issue 33), in a real browser against the real app on loopback: the
empty Ask view says what the knowledge base holds and offers questions from its own documents (the upload
area when it holds none; a scoped key sees only its collections), conversations started on the command
line are grouped apart with titles that tell them apart, and on a phone the header is one row and a menu."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.conftest import LiveServer  # tests/ is on sys.path (rootdir conftest)
from docqa.api import create_app
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

expect = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e .[test])").expect

BACKUPS = "How long are backups kept?"


def test_the_empty_ask_view_shows_the_knowledge_base_and_asks_an_example(page, web_app, web_settings, screenshot):
    with KnowledgeBase(web_settings) as kb:
        seen = kb.browse.overview()
    with LiveServer(web_app) as server:
        page.goto(server.url + "/")
        welcome = page.locator("#welcome")
        expect(welcome).to_be_visible()
        expect(welcome.locator(".welcome-counts")).to_contain_text(f"{seen.documents} documents")
        expect(welcome.locator(".welcome-counts")).to_contain_text(f"{len(seen.collections)} collections")
        expect(welcome.locator(".welcome-languages")).to_contain_text("English")
        examples = welcome.locator(".example")
        expect(examples).to_have_count(len(seen.examples))
        assert len(seen.examples) == 3
        shown = examples.evaluate_all("bs => bs.map(b => b.firstChild.textContent)")  # the question, then where from
        assert shown == [e.question for e in seen.examples]
        screenshot(page, "ask-empty-view")
        first = seen.examples[0]
        examples.first.click()  # asks it
        turn = page.locator(".turn")
        expect(turn).to_have_count(1)
        assert turn.locator(".question").inner_text() == first.question
        expect(turn.locator(".answer")).not_to_be_empty()
        expect(welcome).to_have_count(0)  # the conversation takes the space
        page.locator("#new-conversation").click()
        expect(page.locator("#welcome .example")).to_have_count(3)  # an empty conversation shows it again

        page.locator("#collection").select_option("B")  # the view follows the collection picked
        expect(page.locator("#welcome .welcome-counts")).to_contain_text("1 document ")
        assert {e.get_attribute("data-collection") for e in page.locator("#welcome .example").all()} == {"B"}


def test_with_no_documents_the_empty_view_is_the_upload_area(page, tmp_path: Path, screenshot):
    settings = Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"},
                        api={"upload_dir": str(tmp_path / "uploads"), "allowed_hosts": ["testserver"]})
    KnowledgeBase(settings, create=True).close()
    app = create_app(settings, kb_factory=lambda: KnowledgeBase(settings))
    with LiveServer(app) as server:
        page.goto(server.url + "/")
        expect(page.locator("#welcome h2")).to_have_text("No documents yet")
        zone = page.locator("#welcome #drop-zone")
        expect(zone).to_be_visible()
        screenshot(page, "ask-empty-knowledge-base")
        notes = tmp_path / "handbook.md"
        notes.write_text("# Handbook\n\n## Backups\n\nBackups are kept for 35 days.\n", encoding="utf-8")
        page.locator("#welcome #upload-files").set_input_files(str(notes))
        expect(page.locator("#welcome .welcome-counts")).to_contain_text("1 document ", timeout=30_000)
        expect(page.locator("#welcome .example")).to_contain_text("Backups".lower())
        page.locator("#nav [data-view='documents']").click()
        page.locator("#view-documents #drop-zone").wait_for()
        assert page.locator("#drop-zone").count() == 1  # the Ask view's upload area left with it


def test_a_scoped_key_sees_only_its_collections_in_the_empty_view(page, web_app, web_settings):
    with KnowledgeBase(web_settings) as kb:
        _, reader = kb.keys.create("reader", ["B"], "reader of B")
    with LiveServer(web_app) as server:
        page.goto(server.url + "/")
        page.locator("#key-input").fill(reader)
        page.locator("#key-input").press("Enter")
        expect(page.locator("#welcome .welcome-counts")).to_contain_text("1 document · ")
        expect(page.locator("#welcome .welcome-counts")).to_contain_text("1 collection")
        assert {e.get_attribute("data-collection") for e in page.locator("#welcome .example").all()} == {"B"}
        assert "Operations" not in page.locator("#welcome").inner_text()


def test_conversations_from_the_command_line_are_grouped_and_told_apart(page, web_app, web_settings, screenshot):
    with KnowledgeBase(web_settings) as kb:
        for collection in ("A", "A", "A", "B"):  # as `docqa ask` records them
            kb.ask(BACKUPS, collection=collection, origin="cli")
    with LiveServer(web_app) as server:
        page.goto(server.url + "/")
        page.locator("#question").fill("How often are API keys rotated?")
        page.locator("#question").press("Enter")
        expect(page.locator(".turn:not(.running)")).to_have_count(1)
        expect(page.locator("#session-list .session")).to_have_count(1)  # asked here: the list itself
        group = page.locator("#sessions details.session-group[data-origin='cli']")
        expect(group.locator("summary")).to_have_text("From the command line (4)")
        assert group.get_attribute("open") is None  # collapsed
        group.locator("summary").click()
        titles = group.locator(".session").evaluate_all("bs => bs.map(b => b.title)")
        assert len(titles) == 4 and len(set(titles)) == 4, titles
        assert all(t.startswith(BACKUPS + " — ") for t in titles)
        assert f"{BACKUPS} — B" in titles  # the one in another collection: its collection
        assert {f"{BACKUPS} — #{n}" for n in (1, 2, 3)} <= set(titles)  # the same collection: numbered, oldest first
        apart = group.locator(".session-apart").all()
        assert len(apart) == 4 and all(a.is_visible() and a.bounding_box()["width"] > 10 for a in apart)  # not cut off
        screenshot(page, "sessions-grouped")
        group.locator(".session").last.click()  # the oldest (collection A), asked on the command line, reopens here
        expect(page.locator(".turn .answer")).to_contain_text("35 days")
        expect(group).to_have_attribute("open", "")  # its group stays open while it is the current one


def test_on_a_phone_the_header_is_one_row_and_a_menu(page, web_app, screenshot):
    page.set_viewport_size({"width": 390, "height": 844})
    with LiveServer(web_app) as server:
        page.goto(server.url + "/")
        page.locator("#welcome").wait_for()
        header = page.locator("header.bar").bounding_box()
        assert header["height"] <= 0.08 * 844, header  # one row (it was five: 28 % of the screen)
        row = [page.locator(f"#{i}").bounding_box() for i in ("sessions-toggle", "new-conversation", "menu-toggle")]
        assert all(b["x"] + b["width"] <= 390 and b["y"] + b["height"] <= header["height"] for b in row), row
        assert page.locator("#collection").is_hidden() and page.locator("#nav").is_hidden()
        fits = page.evaluate("""() => {  // the placeholder, typed in, needs no scrolling: it is not cut off
            const box = document.getElementById('question'), text = box.placeholder;
            box.value = text; const whole = box.scrollHeight <= box.clientHeight; box.value = '';
            return [text, whole]; }""")
        assert fits[1], fits
        screenshot(page, "phone-header")
        page.locator("#menu-toggle").click()
        expect(page.locator("#header-menu")).to_be_visible()
        assert page.locator("#menu-toggle").get_attribute("aria-expanded") == "true"
        assert page.locator("#collection").is_visible() and page.locator("#language").is_visible()
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        screenshot(page, "phone-menu")
        page.locator("#nav [data-view='documents']").click()  # picking a view closes the menu
        expect(page.locator("#view-documents")).to_be_visible()
        expect(page.locator("#header-menu")).to_be_hidden()
        page.locator("#menu-toggle").click()
        page.keyboard.press("Escape")
        expect(page.locator("#header-menu")).to_be_hidden()
