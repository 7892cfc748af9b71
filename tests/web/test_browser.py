"""The page in a real browser (Debian's chromium under Playwright) against the real app under uvicorn on
loopback, with extractive answers (no model): ask, see the answer stream in with its steps and chips, open
the cited span, follow up in the same session, see what a not-found answer searched, and a key scoped to
one collection sees only it."""

from __future__ import annotations

import httpx
import pytest

from api.conftest import LiveServer  # tests/ is on sys.path (rootdir conftest)
from llm.scripted_server import ScriptedServer
from docqa.kb import KnowledgeBase

expect = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e .[test])").expect


def _ask(page, question: str) -> None:
    box = page.locator("#question")
    box.fill(question)
    box.press("Enter")


def test_ask_stream_cite_view_and_follow_up(page, web_app):
    with LiveServer(web_app) as server:
        page.goto(server.url + "/")
        page.wait_for_selector("#collection option[value='A']", state="attached")
        box = page.locator("#question")
        box.fill("How long are backups kept?")
        box.press("Shift+Enter")  # a new line, not a question
        assert page.locator(".turn").count() == 0 and box.input_value() == "How long are backups kept?\n"
        box.press("Enter")
        turn = page.locator(".turn").first
        turn.locator(".answer .chip").first.wait_for()
        page.wait_for_selector(".turn:not(.running)")
        assert "35 days" in turn.locator(".answer").inner_text()
        assert turn.locator(".step").count() >= 2  # routing, retrieving, extracting
        assert turn.locator(".step-label").first.text_content() == "Routing the question"
        assert turn.locator("details.steps").get_attribute("open") is None  # folded away when done
        order = turn.evaluate("t => [...t.children].map(c => c.className)")
        assert order.index("answer") < order.index("steps")  # the answer on top

        turn.locator(".chip").first.click()
        mark = page.locator("#viewer-body mark.hl")
        mark.first.wait_for()
        assert page.locator("#viewer").is_visible()
        assert mark.first.inner_text() == "Backups are kept for 35 days."
        cited = page.locator("#viewer-body .line.cited")
        assert cited.count() == 1 and cited.get_attribute("data-line") == "6"
        meta = page.locator("#viewer-meta").inner_text()
        assert "a.md" in meta and "Backups" in meta and "L6" in meta
        assert mark.first.evaluate("m => { const r = m.getBoundingClientRect(), v = "
                                   "document.getElementById('viewer-body').getBoundingClientRect();"
                                   " return r.top >= v.top && r.bottom <= v.bottom; }")

        _ask(page, "How often are API keys rotated?")
        expect(page.locator(".turn:not(.running)")).to_have_count(2)
        sessions = page.locator(".turn").evaluate_all("ts => ts.map(t => t.dataset.sessionId)")
        assert len(sessions) == 2 and sessions[0] == sessions[1]
        runs = httpx.get(f"{server.url}/api/v1/sessions/{sessions[0]}").json()
        assert len(runs["runs"]) == 2

        page.locator("#new-conversation").click()
        assert page.locator(".turn").count() == 0 and not page.locator("#viewer").is_visible()
        _ask(page, "Who signs the backups contract?")
        query = page.locator(".not-found .query")
        query.wait_for()
        assert query.inner_text() == "Who signs the backups contract?"
        closest = page.locator(".not-found .hit")
        assert closest.count() >= 1 and "a.md" in closest.first.inner_text()
        closest.first.click()  # each closest passage opens in the viewer, its lines marked
        page.locator("#viewer-body .line.cited").first.wait_for()
        assert page.locator(".turn").first.get_attribute("data-session-id") != sessions[0]  # a new conversation


def test_a_key_scoped_to_a_sees_only_a(page, web_app, web_settings):
    with KnowledgeBase(web_settings) as kb:
        _, key = kb.keys.create("reader", ["A"], "reader of A")
    with LiveServer(web_app) as server:
        page.goto(server.url + "/")
        form = page.locator("#key-form")
        form.wait_for()  # the collections call got a 401: the page asks for a key
        page.locator("#key-input").fill("dq_not-a-key")
        page.locator("#key-input").press("Enter")
        expect(form.locator(".hint")).to_contain_text("refused")  # a wrong key: asked again
        page.locator("#key-input").fill(key)
        page.locator("#key-input").press("Enter")
        page.wait_for_selector("#collection option[value='A']", state="attached")
        options = page.locator("#collection option").evaluate_all("os => os.map(o => o.value)")
        assert options == ["", "A"] and not form.is_visible()
        cookie, = page.context.cookies()  # the key was traded for the sign-in cookie, which no script can read
        assert (cookie["name"], cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == ("docqa_key", True, "Strict", "/")
        assert page.evaluate("() => document.cookie") == "" and page.evaluate("() => sessionStorage.length") == 0
        expect(page.locator("#signed-in .who")).to_have_text("Signed in: reader · A")
        _ask(page, "How long are backups kept?")
        page.locator(".turn .chip").first.wait_for()
        page.locator(".turn .chip").first.click()
        page.locator("#viewer-body mark.hl").first.wait_for()
        page.reload()  # the cookie lasts the browser session: no prompt again
        page.wait_for_selector("#collection option[value='A']", state="attached")
        assert not form.is_visible()
        page.locator("#sign-out").click()
        form.wait_for()  # signed out: asked again
        assert page.context.cookies() == []


def _call(name: str, delay: float = 0.0, **arguments) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}], "delay": delay}


def test_agent_steps_show_each_tool_call_and_fold_when_done(page, agent_app):
    script = [_call("search_docs", query="backup retention"),
              _call("answer", delay=3.0, text="Backups are kept for 35 days [1].")]  # 3 s: seen on a busy machine
    with ScriptedServer(script) as model, LiveServer(agent_app(model)) as server:
        page.goto(server.url + "/")
        page.select_option("#mode", "agent")
        _ask(page, "How long are backups kept?")
        current = page.locator(".turn .current-step")
        expect(current).to_contain_text("Thinking (step 2)")  # the model is asked again, after the tool
        running = page.locator(".turn.running .step-label", has_text="search_docs")
        expect(running).to_be_visible()  # while it runs the steps are open
        assert "backup retention" in running.inner_text()  # the call's arguments
        page.wait_for_selector(".turn:not(.running)")
        labels = page.locator(".turn .step-label").evaluate_all("ls => ls.map(l => l.textContent)")
        tool = next(label for label in labels if label.startswith("Tool search_docs"))
        assert '"backup retention"' in tool and "→ 2 hits" in tool  # its arguments and one-line result
        assert "35 days" in page.locator(".turn .answer").inner_text() and not current.is_visible()
        step = page.locator(".turn .step[data-phase='tool_call']").first
        page.locator(".turn details.steps > summary").click()  # unfold the steps, then open the tool's
        step.locator("summary").click()
        assert "backup retention" in step.locator("pre").first.inner_text()
        assert model.requests[0]["messages"][-1]["content"].startswith("How long are backups kept?")


def test_stop_cancels_the_run(page, agent_app):
    with ScriptedServer([_call("search_docs", query="backups"), _call("answer", delay=3.0, text="never [1]")]) as model, \
            LiveServer(agent_app(model)) as server:
        page.goto(server.url + "/")
        page.select_option("#mode", "agent")
        _ask(page, "How long are backups kept?")
        expect(page.locator(".turn .current-step")).to_contain_text("Thinking (step 2)")
        page.keyboard.press("Escape")  # Esc stops, as the Stop button does
        page.wait_for_selector(".turn:not(.running)")
        assert "CANCELLED" in page.locator(".turn .outcome").inner_text()
        assert page.locator("#stop").is_hidden() and page.locator("#ask").is_enabled()
        assert len(model.requests) == 2  # the answer call that was waiting; no further model call


def test_markup_from_documents_and_questions_stays_text(page, web_app):
    with LiveServer(web_app) as server:
        page.goto(server.url + "/")
        page.wait_for_selector("#collection option[value='C']", state="attached")
        page.select_option("#collection", "C")
        _ask(page, "How long are invoices archived? <img src=x onerror=\"window.pwned=3\">")
        page.locator(".turn .chip").first.wait_for()
        page.locator(".turn .chip").first.click()
        page.locator("#viewer-body mark.hl").first.wait_for()
        assert "<img src=x" in page.locator("#viewer-body").inner_text()
        assert "<img src=x" in page.locator(".turn .question").inner_text()
        assert page.locator("#thread img, #viewer img, #thread script, #viewer script").count() == 0
        assert page.evaluate("() => window.pwned === undefined")


def test_step_labels(page, web_app):
    """Each kind of status event as its one line (the labels the seeds describe)."""
    with LiveServer(web_app) as server:
        page.goto(server.url + "/")
        labels = page.evaluate("""async () => {
            const { Steps } = await import("/static/steps.js");
            const steps = new Steps();
            const events = [{phase: "routing"}, {phase: "retrieving", hits: 4},
                            {phase: "tool_call", name: "grep_docs", arguments: {pattern: "backup"}},
                            {phase: "tool_result", name: "grep_docs", size: 10, error: "bad pattern"},
                            {phase: "checking"}, {phase: "reviewing", round: 2, problems: ["claim A", "claim B"]},
                            {phase: "steered", text: "only the 2023 version"}];
            events.forEach((e) => steps.add(e));
            const out = [...steps.node.querySelectorAll(".step-label")].map((l) => l.textContent);
            out.push(steps.node.querySelector("[data-phase=reviewing] li").textContent, steps.current.textContent);
            return out;
        }""")
    assert labels == ["Routing the question", "Retrieving passages (4 hits)",
                      'Tool grep_docs({"pattern":"backup"}) → error: bad pattern', "Fact-checking the answer",
                      "Review round 2: 2 rejected claims", "Steered: only the 2023 version", "claim A",
                      "Steered: only the 2023 version…"]


def test_phone_viewport(page, web_app):
    """At 390×844 the page fits the width, and the source opens below the answer."""
    page.set_viewport_size({"width": 390, "height": 844})
    with LiveServer(web_app) as server:
        page.goto(server.url + "/")
        _ask(page, "How long are backups kept?")
        page.locator(".turn .chip").first.click()
        page.locator("#viewer-body mark.hl").first.wait_for()
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        answer, viewer = page.locator(".turn .answer").bounding_box(), page.locator("#viewer").bounding_box()
        assert viewer["y"] >= answer["y"] + answer["height"] and page.locator("#ask").is_visible()
