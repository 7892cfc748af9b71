"""Another origin cannot embed what a signed-in user may see (issue 30): a page on another port of the
same host — the same site, so the SameSite=Strict sign-in cookie goes with its requests — puts a
rendered PDF page in an <img>; Cross-Origin-Resource-Policy makes the browser refuse it.  Real
chromium, two real servers on loopback."""

from __future__ import annotations

import http.server
import threading

import pytest

from api.conftest import LiveServer  # tests/ is on sys.path (rootdir conftest)
from ingest.fixtures import make_pdf
from docqa.kb import KnowledgeBase

pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e .[test])")
EMBED = '<!doctype html><img id="page" src="{src}" onload="document.title=\'loaded\'" onerror="document.title=\'blocked\'">'


class _OtherOrigin:
    """A page served from another port of 127.0.0.1: the same site as docqa, another origin."""

    def __init__(self, html: str):
        body = html.encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return self.url

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_page_of_another_port_cannot_embed_a_signed_in_users_page_image(page, web_app, web_settings, tmp_path):
    folder = tmp_path / "P"
    folder.mkdir()
    make_pdf(folder / "plan.pdf", ["The secret plan is on this page."])
    with KnowledgeBase(web_settings) as kb:
        kb.add([folder], "P")
        doc = next(d.document_id for d in kb.documents.list("P"))
        _, key = kb.keys.create("reader", ["P"], "reader of P")
    with LiveServer(web_app) as server:
        page.goto(server.url + "/")
        page.locator("#key-form").wait_for()
        page.locator("#key-input").fill(key)
        page.locator("#key-input").press("Enter")
        page.wait_for_selector("#collection option[value='P']", state="attached")  # signed in: the cookie is set
        image = f"{server.url}/api/v1/documents/{doc}/pages/1"
        assert page.evaluate("async (u) => (await fetch(u)).status", image) == 200  # its own page may show it
        with _OtherOrigin(EMBED.format(src=image)) as other:
            page.goto(other)
            page.wait_for_function("document.title !== ''")
            assert page.title() == "blocked"
            assert page.evaluate("document.getElementById('page').naturalWidth") == 0
