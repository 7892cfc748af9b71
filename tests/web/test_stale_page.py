"""The page in a real browser (Debian's chromium under Playwright) against the real app under uvicorn on
loopback: an answer goes stale after its file is edited (a badge on the answer and on its chip: "source
changed on DATE"), and Recheck shows what changed as a word diff, recorded with the run."""

from __future__ import annotations

import httpx
import pytest

from api.conftest import LiveServer  # tests/ is on sys.path (rootdir conftest)
from docqa.kb import KnowledgeBase

expect = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e .[test])").expect


def test_an_answer_goes_stale_after_its_file_is_edited_and_recheck_shows_the_diff(page, web_app, web_settings, tmp_path):
    with LiveServer(web_app) as server:
        page.goto(server.url + "/")
        page.wait_for_selector("#collection option[value='A']", state="attached")
        box = page.locator("#question")
        box.fill("How long are backups kept?")
        box.press("Enter")
        page.wait_for_selector(".turn:not(.running) .answer .chip")
        assert page.locator(".stale-badge").count() == 0  # a fresh answer
        session = page.locator(".turn").first.get_attribute("data-session-id")

        doc = tmp_path / "A" / "a.md"
        doc.write_text(doc.read_text(encoding="utf-8").replace("35 days", "14 days"), encoding="utf-8")
        with KnowledgeBase(web_settings) as kb:
            kb.add([tmp_path / "A"], "A")
        run = httpx.get(f"{server.url}/api/v1/sessions/{session}").json()["runs"][0]
        assert run["stale"] is True

        page.reload()
        page.locator(f"#session-list .session[data-session-id='{session}']").click()
        badge = page.locator(".turn .stale-badge")
        badge.wait_for()
        day = run["stale_at"][:10]
        assert f"Source changed on {day}" in badge.inner_text()
        assert page.locator(".turn .chip.stale").count() == 1
        assert page.locator(".turn .chip-stale").first.inner_text() == f"source changed on {day}"

        page.locator(".turn .recheck-button").click()
        expect(page.locator(".turn .recheck")).to_have_attribute("data-verdict", "contradicted")
        assert page.locator(".recheck-claim").first.get_attribute("data-verdict") == "contradicted"
        assert page.locator(".recheck .diff del").first.inner_text().strip() == "35"
        assert page.locator(".recheck .diff ins").first.inner_text().strip() == "14"
        recorded = httpx.get(f"{server.url}/api/v1/runs/{run['id']}").json()["recheck"]
        assert recorded["verdict"] == "contradicted"

        page.reload()  # the recorded recheck shows when the conversation is opened again
        page.locator(f"#session-list .session[data-session-id='{session}']").click()
        expect(page.locator(".turn .recheck")).to_have_attribute("data-verdict", "contradicted")
