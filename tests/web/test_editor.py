"""The pages for the people who keep the documents, in a real browser against the real app on loopback
(extractive answers, BM25 only): drop files and a folder, see each file's result and the list, delete one,
index a server folder with its progress; the log's attention filter, a run's trace and the CSV; the status
page; and a reader key sees none of it."""

from __future__ import annotations

import base64
import csv
import io
from pathlib import Path

import httpx
import pytest

from api.conftest import LiveServer  # tests/ is on sys.path (rootdir conftest)
from ingest.fixtures import make_pdf
from llm.scripted_server import ScriptedServer
from docqa.api import create_app
from docqa.kb import KnowledgeBase

expect = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e .[test])").expect

COMMENT = '=HYPERLINK("http://example.invalid","too vague")'
NOTES = "# Release notes\n\n## Rollbacks\n\nA release is rolled back with `acmectl rollback` within 15 minutes.\n"
DROP = """async ([files, target]) => {
  const transfer = new DataTransfer();
  for (const f of files) {
    const bytes = Uint8Array.from(atob(f.data), (c) => c.charCodeAt(0));
    transfer.items.add(new File([bytes], f.name, { type: f.type }));
  }
  const zone = document.querySelector(target);
  zone.dispatchEvent(new DragEvent("dragover", { dataTransfer: transfer, bubbles: true, cancelable: true }));
  zone.dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
}"""


def _file(name: str, data: bytes, kind: str) -> dict:
    return {"name": name, "data": base64.b64encode(data).decode(), "type": kind}


def _drop(page, *files: dict) -> None:
    page.evaluate(DROP, [list(files), "#drop-zone"])


def _csv(download) -> list[dict]:
    assert download.suggested_filename.endswith(".csv")
    return list(csv.DictReader(io.StringIO(Path(download.path()).read_text(encoding="utf-8"))))


def _result(page, path: str):
    return page.locator(f".upload-files tr[data-path='{path}']")


def test_drop_files_see_results_and_list_then_delete(page, web_app, tmp_path, screenshot):
    pdf = make_pdf(tmp_path / "report.pdf", ["Quarterly report. Revenue grew by 12 percent in the third quarter."])
    with LiveServer(web_app) as server:
        page.goto(server.url + "/#documents")
        page.locator("#drop-zone").wait_for()
        page.locator("#upload-collection").fill("A")
        _drop(page, _file("report.pdf", pdf.read_bytes(), "application/pdf"),
              _file("notes.md", NOTES.encode(), "text/markdown"))
        for name in ("report.pdf", "notes.md"):
            expect(_result(page, name)).to_have_attribute("data-result", "added")
        expect(page.locator(".upload-summary")).to_contain_text("2 file(s)")
        rows = page.locator("#docs-rows tr")
        expect(rows.filter(has_text="report.pdf")).to_have_count(1)
        pdf_row = rows.filter(has_text="report.pdf")
        assert pdf_row.get_attribute("data-status") == "ok" and "pdf" in pdf_row.inner_text()
        assert "indexed" in pdf_row.locator(".state").inner_text()
        assert int(pdf_row.locator("td.num").first.inner_text()) >= 1  # its chunks

        _drop(page, _file("notes.md", NOTES.encode(), "text/markdown"))  # the same file again
        expect(page.locator(".upload-files tr[data-path='notes.md'][data-result='unchanged']")).to_have_count(1)
        page.locator("#docs-search").fill("report")
        expect(rows).to_have_count(1)
        page.locator("#docs-search").fill("")
        expect(rows.filter(has_text="notes.md")).to_have_count(1)
        screenshot(page, "documents")
        assert page.locator("#ingest-form").count() == 0  # the server reads no folders of its own (no ingest roots)

        page.once("dialog", lambda dialog: dialog.accept())
        rows.filter(has_text="notes.md").locator("button.delete").click()
        expect(rows.filter(has_text="notes.md")).to_have_count(0)
        listed = httpx.get(f"{server.url}/api/v1/documents", params={"collection": "A"}).json()["documents"]
        assert sorted(d["path"].rsplit("/", 1)[-1] for d in listed) == ["a.md", "report.pdf"]


def test_a_dropped_file_no_reader_takes_fails_with_its_reason(page, web_app):
    with LiveServer(web_app) as server:
        page.goto(server.url + "/#documents")
        page.locator("#drop-zone").wait_for()
        _drop(page, _file("fake.pdf", b"just some text, not a PDF", "application/pdf"),
              _file("ok.md", NOTES.encode(), "text/markdown"))
        fake = _result(page, "fake.pdf")
        expect(fake).to_have_attribute("data-result", "failed")  # the batch was refused: each file sent alone
        assert "not a format docqa reads" in fake.locator(".result").inner_text()
        expect(_result(page, "ok.md")).to_have_attribute("data-result", "added")


def test_a_long_list_loads_fifty_at_a_time(page, web_app, web_settings, tmp_path):
    many = tmp_path / "many"
    many.mkdir()
    for i in range(52):
        (many / f"note-{i:02d}.md").write_text(f"# Note {i}\n\nNumber {i}.\n", encoding="utf-8")
    with KnowledgeBase(web_settings) as kb:
        kb.add([many], "many")
    with LiveServer(web_app) as server:
        page.goto(server.url + "/#documents")
        rows = page.locator("#docs-rows tr")
        expect(rows).to_have_count(50)
        expect(page.locator("#docs-message")).to_have_text("50 of 55 files")  # every status: files (issue 33)
        page.locator("#docs-more").click()
        expect(rows).to_have_count(55)
        assert page.locator("#docs-more").is_hidden()
        assert len(set(rows.evaluate_all("rs => rs.map(r => r.dataset.id)"))) == 55  # no row twice
        page.locator("#docs-collection").select_option("many")
        page.locator("#docs-status").select_option("ok")
        expect(page.locator("#docs-message")).to_have_text("50 of 52 documents")


@pytest.fixture
def folder_app(web_settings, tmp_path):
    """The app with a server folder under api.ingest_roots: two Markdown files and a broken PDF."""
    root = tmp_path / "server"
    (root / "handbook" / "sub").mkdir(parents=True)
    (root / "handbook" / "rollbacks.md").write_text(NOTES, encoding="utf-8")
    (root / "handbook" / "sub" / "oncall.md").write_text("# On call\n\nThe on-call rota changes on Mondays.\n",
                                                          encoding="utf-8")
    (root / "handbook" / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not really a PDF\n")
    settings = web_settings.model_copy(update={"api": web_settings.api.model_copy(update={"ingest_roots": [str(root)]})})
    app = create_app(settings, kb_factory=lambda: KnowledgeBase(settings))
    app.root = root
    return app


def test_folder_picker_keeps_paths_and_folder_ingest_shows_progress(page, folder_app, tmp_path):
    picked = tmp_path / "picked" / "guide"
    (picked / "deep").mkdir(parents=True)
    (picked / "intro.md").write_text("# Intro\n\nWelcome to the guide.\n", encoding="utf-8")
    (picked / "deep" / "faq.md").write_text("# FAQ\n\nAsk the platform team.\n", encoding="utf-8")
    with LiveServer(folder_app) as server:
        page.goto(server.url + "/#documents")
        page.locator("#upload-folder").set_input_files(str(picked))
        for path in ("guide/intro.md", "guide/deep/faq.md"):
            expect(_result(page, path)).to_have_attribute("data-result", "added")
        paths = [d["path"] for d in httpx.get(f"{server.url}/api/v1/documents").json()["documents"]]
        assert any(p.endswith("/uploads/default/guide/deep/faq.md") for p in paths)  # the folders kept

        form = page.locator("#ingest-form")
        assert str(folder_app.root) in form.inner_text()  # where it may read
        page.locator("#ingest-path").fill(str(folder_app.root / "handbook"))
        page.locator("#ingest-collection").fill("server")
        form.locator("button[type=submit]").click()
        counts = page.locator("#ingest-result .ingest-counts")
        expect(counts).to_contain_text("added 2")
        assert "failed 1" in counts.inner_text()
        expect(page.locator("#ingest-progress")).to_contain_text("3 of 3 files")
        assert page.locator("#ingest-bar").evaluate("b => b.value === b.max && b.max === 3")
        failed = page.locator("#ingest-result li[data-result='failed']")
        assert "broken.pdf" in failed.inner_text() and ":" in failed.inner_text()  # with its reason
        page.locator("#docs-collection").select_option("server")
        expect(page.locator("#docs-rows tr")).to_have_count(3)
        expect(page.locator("#docs-rows tr[data-status='error']")).to_contain_text("failed")


def test_log_attention_trace_and_csv(page, web_app, web_settings, tmp_path, screenshot):
    with KnowledgeBase(web_settings) as kb:
        good = kb.ask("How long are backups kept?", collection="A")
        missing = kb.ask("Who signs the backups contract?", collection="A")
        rated = kb.ask("When are invoices paid?", collection="B")
    with LiveServer(web_app) as server:
        r = httpx.post(f"{server.url}/api/v1/runs/{rated.run_id}/feedback", json={"rating": "down", "comment": COMMENT})
        assert r.status_code == 201
        page.goto(server.url + "/#log")
        rows = page.locator("#log-rows tr")
        expect(rows).to_have_count(3)
        page.locator("#log-show").select_option("attention")
        expect(rows).to_have_count(2)
        shown = set(rows.evaluate_all("rs => rs.map(r => r.dataset.runId)"))
        assert shown == {missing.run_id, rated.run_id}
        page.locator("#log-show").select_option("not_found")
        expect(rows).to_have_count(1)
        expect(rows.first).to_have_attribute("data-run-id", missing.run_id)
        page.locator("#log-show").select_option("rated_down")
        expect(rows.first).to_have_attribute("data-run-id", rated.run_id)
        expect(rows).to_have_count(1)
        assert f"rated down: {COMMENT}" in rows.first.locator(".reason").inner_text()

        rows.first.locator("button.open-trace").click()
        trace = page.locator("#log-trace")
        expect(trace).to_be_visible()
        assert trace.locator(".trace-question .question").inner_text() == "When are invoices paid?"
        assert "30 days" in trace.locator(".trace-answer").inner_text()
        assert trace.locator(".citations li").count() >= 1 and "b.md" in trace.locator(".citations").inner_text()
        stages = trace.locator(".trace-step").evaluate_all("s => s.map(x => x.dataset.stage)")
        assert "routing" in stages and "retrieving" in stages
        assert "total" in trace.locator(".trace-timings").inner_text()
        assert COMMENT in trace.locator(".trace-feedback li[data-rating='down']").inner_text()
        screenshot(page, "log")
        page.keyboard.press("Escape")  # closes the trace, back on its row
        expect(trace).to_be_hidden()
        assert page.evaluate("document.activeElement.closest('tr').dataset.runId") == rated.run_id

        page.locator("#log-show").select_option("")
        expect(rows).to_have_count(3)
        with page.expect_download() as info:
            page.locator("#log-csv").click()
        table = _csv(info.value)
        assert {row["run_id"] for row in table} == {good.run_id, missing.run_id, rated.run_id}
        cell = next(row["comments"] for row in table if row["run_id"] == rated.run_id)
        assert cell == "'" + COMMENT  # a spreadsheet shows it, never runs it
        page.locator("#log-show").select_option("attention")
        expect(rows).to_have_count(2)
        with page.expect_download() as info:
            page.locator("#log-csv").click()
        table = _csv(info.value)
        assert {row["run_id"] for row in table} == {missing.run_id, rated.run_id} and all(row["reason"] for row in table)


def test_an_agent_runs_trace_shows_its_tool_calls(page, agent_app):
    script = [{"tool_calls": [{"name": "search_docs", "arguments": {"query": "backup retention"}}]},
              {"tool_calls": [{"name": "answer", "arguments": {"text": "Backups are kept for 35 days [1]."}}]}]
    with ScriptedServer(script) as model, LiveServer(agent_app(model)) as server:
        asked = httpx.post(f"{server.url}/api/v1/ask", json={"question": "How long are backups kept?", "mode": "agent"},
                           timeout=30).json()
        page.goto(server.url + "/#log")
        row = page.locator(f"#log-rows tr[data-run-id='{asked['run_id']}']")
        row.locator("button.open-trace").click()
        tool = page.locator("#log-trace .trace-step[data-stage='tool']").first
        expect(tool).to_contain_text("search_docs")
        assert "backup retention" in tool.locator("summary").inner_text()  # its arguments
        tool.locator("summary").click()
        assert "a.md" in tool.locator("pre").inner_text()  # what the tool returned: the passage it found
        assert "35 days" in page.locator("#log-trace .trace-answer").inner_text()


def test_status_names_the_extractive_answerer_and_bm25(page, web_app, screenshot):
    with LiveServer(web_app) as server:
        page.goto(server.url + "/#status")
        chat = page.locator("#status-chat")
        expect(chat.locator(".model-name")).to_have_text("Extractive answerer (no chat model)")
        assert "llm.provider is 'none'" in chat.locator(".why").inner_text()
        embedder = page.locator("#status-embedder")
        assert "BM25" in embedder.locator(".model-name").inner_text() and "bm25" in embedder.inner_text()
        index = page.locator("#status-index")
        assert index.locator("[data-count='documents']").inner_text() == "3"
        assert index.locator("[data-count='collections']").inner_text() == "3"
        assert index.locator("[data-count='failed']").inner_text() == "0"
        health = page.locator("#status-health")
        assert health.locator("[data-ok]").evaluate_all("s => s.map(x => x.dataset.ok)") == ["true", "true"]
        assert "not watching" in health.inner_text()
        screenshot(page, "status")


def test_a_reader_key_sees_no_upload_delete_log_or_status(page, web_app, web_settings):
    with KnowledgeBase(web_settings) as kb:
        _, key = kb.keys.create("reader", ["A"], "reader of A")
    with LiveServer(web_app) as server:
        page.goto(server.url + "/#documents")
        page.locator("#key-input").fill(key)
        page.locator("#key-input").press("Enter")
        rows = page.locator("#docs-rows tr")
        expect(rows).to_have_count(1)
        assert rows.first.get_attribute("data-path").endswith("/A/a.md")  # only its collection
        assert page.locator("#drop-zone").count() == 0 and page.locator("#ingest-form").count() == 0
        assert page.locator("button.delete").count() == 0
        assert page.locator("#nav [data-view='log']").is_hidden() and page.locator("#nav [data-view='status']").is_hidden()
        page.goto(server.url + "/#log")
        expect(page.locator("#view-ask")).to_be_visible()  # not a view for a reader
        assert page.locator("#view-log").is_hidden() and page.locator("#log-rows").count() == 0


@pytest.mark.parametrize("view", ["documents", "log", "status"])
def test_the_keepers_views_fit_a_phone(browser, web_app, view, screenshot):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        with LiveServer(web_app) as server:
            page.goto(f"{server.url}/#{view}")
            page.locator({"documents": "#docs-rows tr", "log": "#log-message", "status": "#status-index"}[view]).first.wait_for()
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # no sideways scrolling
            screenshot(page, f"{view}-phone")
    finally:
        context.close()


def test_a_collection_name_that_is_a_path_is_refused_with_the_rule(page, web_app):
    with LiveServer(web_app) as server:
        page.goto(server.url + "/#documents")
        page.locator("#drop-zone").wait_for()
        page.locator("#upload-collection").fill("team/ops")
        _drop(page, _file("ok.md", NOTES.encode(), "text/markdown"))
        row = _result(page, "ok.md")
        expect(row).to_have_attribute("data-result", "failed")
        assert "cannot name a collection" in row.locator(".result").inner_text()
        assert "team/ops" not in [c["name"] for c in httpx.get(f"{server.url}/api/v1/collections").json()["collections"]]


def test_a_site_url_is_crawled_from_the_documents_view_and_its_source_opens_live(page, web_settings):
    from crawl.site import Site

    with Site() as site:
        api = web_settings.api.model_copy(update={"ingest_urls": ["127.0.0.1"]})
        crawl = web_settings.crawl.model_copy(update={"request_timeout": 1.0, "max_page_mb": 1, "rate": 0})
        settings = web_settings.model_copy(update={"api": api, "crawl": crawl})
        with LiveServer(create_app(settings, kb_factory=lambda: KnowledgeBase(settings))) as server:
            page.goto(server.url + "/#documents")
            form = page.locator("#site-form")
            assert "127.0.0.1" in form.inner_text()  # the hosts it may crawl
            page.locator("#site-url").fill(site.url("/docs/"))
            page.locator("#site-collection").fill("web")
            form.locator("button[type=submit]").click()
            counts = page.locator("#site-result .ingest-counts")
            expect(counts).to_contain_text("added", timeout=120_000)  # a crawl of ~70 pages, on a loaded machine
            failed = page.locator("#site-result li[data-result='failed']")
            assert any("missing.html: 404" in text for text in failed.all_inner_texts())  # a page's failure: URL, reason
            page.goto(server.url + "/")
            page.locator("#question").fill("Which codeword does the guide3 option have?")
            page.locator("#question").press("Enter")
            page.locator(".chip").first.click()
            live = page.locator("#viewer a.live")
            expect(live).to_have_count(1)
            href = live.get_attribute("href")
            assert href.startswith(site.url("/docs/guide/page3.html#")) and live.get_attribute("target") == "_blank"
