"""The page's safety and reach in a real browser (Debian's chromium under Playwright) against docqa under uvicorn on
loopback: writes from another origin plant nothing, markup from documents, file names, questions and the model
stays text, /docs and /redoc render with the network cut off, signing in and out, and the keyboard alone."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from api.conftest import LiveServer  # tests/ is on sys.path (rootdir conftest)
from llm.scripted_server import ScriptedServer
from docqa.kb import KnowledgeBase

expect = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e .[test])").expect

# Every element or attribute through which markup could run, anywhere in the page.
ACTIVE = ("img[src='x'], script:not([src]), iframe, object, embed, a[href^='javascript:' i], [onerror], [onclick], "
          "[onload]")
EVIL_PAGE = """<!doctype html><html><body>
<form id="f" method="POST" enctype="multipart/form-data" action="{target}/api/v1/documents">
<input type="file" name="files" id="file"><input name="collection" value="planted"></form>
<script>
async function plantByFetch() {{  // no-cors: multipart is a "simple" request, sent without a preflight
  const body = new FormData();
  body.append("files", new File(["# Planted\\n\\nplanted by fetch\\n"], "evil-fetch.md", {{type: "text/markdown"}}));
  try {{  // sent either way; Cross-Origin-Resource-Policy then has the browser refuse the answer itself
    await fetch("{target}/api/v1/documents", {{method: "POST", body, mode: "no-cors", credentials: "include"}});
  }} catch (blocked) {{}}
  return "sent";
}}
function plantByForm() {{
  const files = new DataTransfer();
  files.items.add(new File(["# Planted\\n\\nplanted by a form\\n"], "evil-form.md", {{type: "text/markdown"}}));
  document.getElementById("file").files = files.files;
  document.getElementById("f").submit();
}}
</script></body></html>"""


class EvilSite:
    """Another origin: a page served from a second loopback port (another port is another origin)."""

    def __init__(self, target: str):
        html = EVIL_PAGE.format(target=target).encode()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(html)))
                self.end_headers()
                self.wfile.write(html)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def __enter__(self) -> EvilSite:
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def _planted(settings) -> list[str]:
    """The attack's files docqa saved (an accepted upload is saved before its 202 answer)."""
    return [p.name for p in Path(settings.api.upload_dir).rglob("*evil*") if p.is_file()]


def _attack(page, evil: EvilSite, docqa: str) -> str:
    page.goto(evil.url)
    assert page.evaluate("plantByFetch()") == "sent"  # the browser sent it; the answer is opaque to the page
    with page.expect_navigation():
        page.evaluate("plantByForm()")
    assert urlsplit(page.url).port == urlsplit(docqa).port  # the form went to docqa ...
    return page.locator("body").inner_text()  # ... which answered


def test_pages_of_another_origin_plant_nothing(page, web_app, web_settings):
    with LiveServer(web_app) as server, EvilSite(server.url) as evil:
        answer = _attack(page, evil, server.url)  # keyless on loopback: the page would act as the local admin
        assert "cross_origin" in answer
        time.sleep(0.5)
        paths = [d["path"] for d in httpx.get(f"{server.url}/api/v1/documents?limit=1000").json()["documents"]]
        assert not [p for p in paths if "evil" in p] and _planted(web_settings) == []

        page.goto(server.url + "/")  # docqa's own page may write: the control that shows the attack was real
        status = page.evaluate("""async () => {
            const body = new FormData();
            body.append("files", new File(["# Own\\n\\nuploaded by the page\\n"], "own.md", {type: "text/markdown"}));
            return (await fetch("/api/v1/documents", {method: "POST", body})).status;
        }""")
        assert status == 202

        with KnowledgeBase(web_settings) as kb:  # with keys, signed in: the cookie goes along to docqa from the
            _, key = kb.keys.create("editor")     # other port (same site), and the Origin check refuses it
        page.goto(server.url + "/")
        page.locator("#key-input").fill(key)
        page.locator("#key-input").press("Enter")
        expect(page.locator("#signed-in .who")).to_have_text("Signed in: editor")
        assert "cross_origin" in _attack(page, evil, server.url)
        time.sleep(0.5)
        assert _planted(web_settings) == []


def _xss_collection(tmp_path: Path, settings) -> str:
    folder = tmp_path / "X"
    folder.mkdir()
    (folder / "<img src=x onerror=window.pwned=4>.md").write_text(
        "# Archive\n\n## <script>window.pwned=5</script> Retention\n\n"
        "Invoices are archived for ten years. [click](javascript:window.pwned=6) "
        '<a href="javascript:window.pwned=7">here</a> <iframe src="javascript:window.pwned=11"></iframe> '
        '<img src=x onerror="window.pwned=12">\n', encoding="utf-8")
    with KnowledgeBase(settings) as kb:
        kb.add([folder], "X")
    return "X"


def test_markup_everywhere_renders_inert(page, agent_app, web_settings, tmp_path, screenshot):
    collection = _xss_collection(tmp_path, web_settings)
    answer = ('<img src=x onerror="window.pwned=8">Invoices are archived for ten years [1]. '
              '<script>window.pwned=9</script><a href="javascript:window.pwned=10">more</a>')
    script = [{"tool_calls": [{"name": "search_docs", "arguments": {"query": "invoices archived"}}]},
              {"tool_calls": [{"name": "answer", "arguments": {"text": answer}}]}]
    with ScriptedServer(script) as model, LiveServer(agent_app(model)) as server:
        page.goto(server.url + "/")
        page.wait_for_selector(f"#collection option[value='{collection}']", state="attached")
        page.select_option("#collection", collection)
        page.select_option("#mode", "agent")
        box = page.locator("#question")
        box.fill('How long are invoices archived? <img src=x onerror="window.pwned=3"><script>window.pwned=13</script>')
        box.press("Enter")
        page.wait_for_selector(".turn:not(.running)")
        turn = page.locator(".turn").first
        assert "<img src=x onerror" in turn.locator(".question").inner_text()
        text = turn.locator(".answer").inner_text()
        # the published answer (the model's, or, when the checks turn it down, the quoted document) shows its
        # markup as text
        assert '<img src=x onerror="window.pwned=' in text and ("<script>" in text or "<iframe" in text), text
        turn.locator(".answer .chip").first.click()
        page.locator("#viewer-body mark.hl").first.wait_for()
        source = page.locator("#viewer-body").inner_text()
        assert "javascript:window.pwned=7" in source and "<iframe" in source
        meta = page.locator("#viewer-meta").inner_text() + page.locator("#viewer-title").inner_text()
        assert "<img src=x onerror=window.pwned=4>.md" in meta  # the file name, as text
        page.locator("details.steps > summary").first.click()  # the steps, open: the tool's arguments and result
        for step in page.locator(".turn .step summary").all():
            step.click()
        screenshot(page, "xss-inert")
        for view in ("documents", "log", "status", "ask"):  # every view that lists names or texts
            tab = page.locator(f"#nav [data-view='{view}']")
            if tab.is_visible():
                tab.click()
                page.wait_for_timeout(300)
            assert page.locator(ACTIVE).count() == 0, view
        assert page.evaluate("() => window.pwned") is None


def test_docs_and_redoc_render_with_the_network_cut_off(page, web_app):
    outside, violations = [], []

    def only_loopback(route):
        host = urlsplit(route.request.url).hostname
        if host in ("127.0.0.1", "localhost", "::1"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_loopback)
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    with LiveServer(web_app) as server:
        response = page.goto(server.url + "/docs")
        csp = response.headers["content-security-policy"]
        assert "script-src 'self';" in csp and "http" not in csp and "*" not in csp
        page.locator(".opblock").first.wait_for()  # Swagger UI rendered the operations list
        assert page.locator(".opblock-summary-path", has_text="/api/v1/ask").count() >= 1
        page.goto(server.url + "/redoc")
        page.get_by_role("heading", name="docqa").first.wait_for()  # ReDoc rendered the API's title
        expect(page.locator("[role=menuitem]").first).to_be_visible()  # and its menu of operations
        assert "/api/v1/ask" in page.locator("body").inner_text()
        for name in ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js"):
            asset = httpx.get(f"{server.url}/docs-assets/{name}")
            assert asset.status_code == 200 and asset.headers["content-security-policy"] == csp
        assert httpx.get(f"{server.url}/docs-assets/..%2fapidocs.py").status_code == 404
    assert outside == []  # nothing was even attempted from another host: the CSP stops ReDoc's one try, its
    assert all("logo-mini.svg" in v for v in violations), violations  # "powered by" logo; nothing else was refused


def test_the_key_form_in_chinese_and_a_revoked_key_ends_the_sign_in(browser, web_app, web_settings):
    with KnowledgeBase(web_settings) as kb:
        record, key = kb.keys.create("reader", [], "browser")
        kb.keys.create("admin")  # stays: revoking the last key would make the server keyless
    context = browser.new_context(locale="zh-CN")
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        with LiveServer(web_app) as server:
            page.goto(server.url + "/")
            page.locator("#key-form").wait_for()
            assert page.locator("#key-form label").inner_text() == "此服务器需要 API 密钥"
            assert page.locator("#key-form button").inner_text() == "登录"
            page.locator("#key-input").fill(key)
            page.locator("#key-input").press("Enter")
            expect(page.locator("#signed-in .who")).to_have_text("已登录：读者")
            assert page.locator("#sign-out").inner_text() == "退出登录"
            with KnowledgeBase(web_settings) as kb:
                kb.keys.revoke(record.id)
            page.locator("#new-conversation").click()
            page.locator("#question").fill("备份保留多久？")
            page.locator("#question").press("Enter")
            expect(page.locator("#key-form .hint")).to_contain_text("已失效")  # revoked: the cookie ends at once
    finally:
        context.close()


def test_keyboard_alone_with_visible_focus_labels_and_esc(page, agent_app):
    script = [{"tool_calls": [{"name": "search_docs", "arguments": {"query": "backups"}}]},
              {"tool_calls": [{"name": "answer", "arguments": {"text": "never [1]"}}], "delay": 3.0}]
    with ScriptedServer(script) as model, LiveServer(agent_app(model)) as server:
        page.goto(server.url + "/")
        page.wait_for_selector("#collection option[value='A']", state="attached")
        unnamed = page.evaluate("""() => [...document.querySelectorAll("button, select, textarea, input, [tabindex]")]
            .filter((e) => e.offsetParent !== null)
            .filter((e) => !(e.getAttribute("aria-label") || (e.labels && e.labels.length) || e.textContent.trim()
                              || e.title))
            .map((e) => e.outerHTML)""")
        assert unnamed == []  # every control has a name a screen reader reads
        assert page.locator("#key-form").is_hidden() and page.locator("#signed-in").is_hidden()  # keyless: no prompt
        assert page.locator("#thread[aria-live]").count() == 1 and page.locator("nav[aria-label]").count() == 1
        page.evaluate("() => document.activeElement.blur()")
        seen = []
        for _ in range(25):  # Tab through the page; each stop shows where focus is
            page.keyboard.press("Tab")
            focus = page.evaluate("""() => { const e = document.activeElement, s = getComputedStyle(e);
                return {id: e.id || e.tagName, outline: s.outlineStyle !== "none" && parseFloat(s.outlineWidth) >= 2,
                        visible: e.matches(":focus-visible")}; }""")
            assert focus["outline"] and focus["visible"], focus
            seen.append(focus["id"])
            if focus["id"] == "question":
                break
        assert {"collection", "mode", "new-conversation", "question"} <= set(seen), seen
        page.select_option("#mode", "agent")
        page.locator("#question").focus()
        page.keyboard.type("How long are backups kept?")
        page.keyboard.press("Enter")
        expect(page.locator(".turn .current-step")).to_contain_text("Thinking (step 2)")
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.activeElement.id") in ("ask", "stop")
        page.keyboard.press("Escape")  # Esc stops the run, wherever focus is
        page.wait_for_selector(".turn:not(.running)")
        assert "CANCELLED" in page.locator(".turn .outcome").inner_text()
        assert len(model.requests) == 2  # no further model call


def test_question_answer_and_source_side_by_side(page, web_app, screenshot):
    """At 1280×800 the cited source opens beside the answer (the README's picture, build/screenshots/ask.png)."""
    with LiveServer(web_app) as server:
        page.goto(server.url + "/")
        page.wait_for_selector("#collection option[value='A']", state="attached")
        page.locator("#question").fill("How long are backups kept?")
        page.locator("#question").press("Enter")
        page.wait_for_selector(".turn:not(.running)")
        page.locator(".turn .chip").first.click()
        page.locator("#viewer-body mark.hl").first.wait_for()
        answer, viewer = page.locator(".turn .answer").bounding_box(), page.locator("#viewer").bounding_box()
        assert viewer["x"] >= answer["x"] + answer["width"] and viewer["y"] < answer["y"] + answer["height"]
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 1280
        page.locator("#question").fill("How often are API keys rotated?")
        screenshot(page, "ask")
