"""The page for the people who ask, in a real browser against the real app on loopback: past conversations
reopened and continued, steering and stopping the agent, follow-ups queued while it works, thumbs up / down,
the page in Chinese, and a key scoped to one collection seeing only its conversations (over REST too)."""

from __future__ import annotations

import threading

import httpx
import pytest

from api.conftest import LiveServer, wait_for  # tests/ is on sys.path (rootdir conftest)
from llm.scripted_server import ScriptedServer
from docqa.kb import KnowledgeBase

expect = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e .[test])").expect

BACKUPS, KEYS = "How long are backups kept?", "How often are API keys rotated?"


def _ask(page, question: str) -> None:
    box = page.locator("#question")
    box.fill(question)
    box.press("Enter")


def _call(name: str, delay: float = 0.0, **arguments) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}], "delay": delay}


def _done(page, n: int) -> None:
    expect(page.locator(".turn:not(.running):not(.queued)")).to_have_count(n)


def _sessions(page) -> list[str]:
    page.wait_for_selector("#sessions[data-loaded]", state="attached")
    return page.locator("#session-list .session").evaluate_all("bs => bs.map(b => b.dataset.sessionId)")


def test_past_conversations_reopen_and_follow_up(page, web_app):
    with LiveServer(web_app) as server:
        page.goto(server.url + "/")
        _ask(page, BACKUPS)
        _done(page, 1)
        first = page.locator(".turn").first.get_attribute("data-session-id")
        expect(page.locator(f"#session-list .session[data-session-id='{first}']")).to_have_attribute("aria-current", "true")
        page.locator("#new-conversation").click()
        _ask(page, "Who signs the backups contract?")
        _done(page, 1)
        second = page.locator(".turn").first.get_attribute("data-session-id")
        expect(page.locator("#session-list .session")).to_have_count(2)
        assert _sessions(page) == [second, first]  # newest first
        assert page.locator("#session-list .session-q").all_inner_texts() == ["Who signs the backups contract?", BACKUPS]

        page.reload()  # a fresh page: the conversations come from the server
        expect(page.locator("#session-list .session")).to_have_count(2)
        page.locator(f"#session-list .session[data-session-id='{first}']").click()
        turn = page.locator(".turn").first
        expect(turn.locator(".answer")).to_contain_text("35 days")
        assert page.locator(".turn").count() == 1 and turn.locator(".question").inner_text() == BACKUPS
        assert turn.locator(".step").count() >= 2 and turn.locator("details.steps").get_attribute("open") is None
        assert turn.locator(".step-label").first.text_content() == "Routing the question"  # from the recorded trace
        turn.locator(".chip").first.click()  # the chips of a past answer open its source
        expect(page.locator("#viewer-body mark.hl").first).to_have_text("Backups are kept for 35 days.")

        _ask(page, KEYS)  # a follow-up in the reopened conversation
        _done(page, 2)
        assert "90 days" in page.locator(".turn").nth(1).locator(".answer").inner_text()
        assert set(page.locator(".turn").evaluate_all("ts => ts.map(t => t.dataset.sessionId)")) == {first}
        runs = httpx.get(f"{server.url}/api/v1/sessions/{first}").json()["runs"]
        assert [r["question"] for r in runs] == [BACKUPS, KEYS]
        expect(page.locator("#session-list .session").first).to_have_attribute("data-session-id", first)  # the list updates
        expect(page.locator("#session-list .session").first.locator(".session-meta")).to_contain_text("2 questions")

        page.locator("#new-conversation").click()
        assert page.locator(".turn").count() == 0
        assert page.locator("#session-list .session[aria-current='true']").count() == 0


def test_steering_changes_the_next_tool_call(page, agent_app, screenshot):
    def after_steering(body: dict) -> dict:  # the second model call: what it does depends on the steering
        said = " ".join(str(m.get("content") or "") for m in body["messages"])
        return _call("grep_docs", pattern="2023") if "look only at the 2023 version" in said else \
            _call("list_docs")

    script = [_call("search_docs", delay=2.0, query="backup retention"), after_steering,
              _call("answer", text="Backups are kept for 35 days [1].")]
    with ScriptedServer(script) as model, LiveServer(agent_app(model)) as server:
        page.goto(server.url + "/")
        page.select_option("#mode", "agent")
        assert page.locator("#steer-form").is_hidden()
        _ask(page, BACKUPS)
        page.wait_for_selector(".turn[data-run-id]")
        steer = page.locator("#steer-input")
        expect(steer).to_be_visible()  # shown while the agent works
        steer.fill("look only at the 2023 version")
        steer.press("Enter")
        expect(page.locator("#steer-note")).to_contain_text("Sent")
        _done(page, 1)
        labels = page.locator(".turn .step-label").evaluate_all("ls => ls.map(l => l.textContent)")
        steered = labels.index("Steered: look only at the 2023 version")
        assert labels[steered - 1].startswith("Tool search_docs")  # it joined after the tool round...
        nxt = labels[steered + 2]  # (after "Thinking (step 2)")
        assert nxt.startswith("Tool grep_docs(") and '"2023"' in nxt  # ...and changed the next call
        assert not any(label.startswith("Tool list_docs") for label in labels)
        assert "look only at the 2023 version" in str(model.requests[1]["messages"])
        assert "look only at the 2023 version" not in str(model.requests[0]["messages"])
        expect(page.locator("#steer-form")).to_be_hidden()

        page.locator(".turn details.steps > summary").click()  # the picture: steps open, a source shown
        page.locator(".turn .chip").first.click()
        page.locator("#viewer-body mark.hl").first.wait_for()
        screenshot(page, "ask")


def test_stop_makes_no_further_model_calls(page, agent_app):
    script = [_call("search_docs", query="backups"), _call("grep_docs", delay=6.0, pattern="backup"),
              _call("fetch_doc", doc_id="a.md"), _call("answer", text="never [1]")]
    with ScriptedServer(script) as model, LiveServer(agent_app(model)) as server:
        page.goto(server.url + "/")
        page.select_option("#mode", "agent")
        _ask(page, BACKUPS)
        expect(page.locator(".turn .current-step")).to_contain_text("Thinking (step 2)")
        run_id = page.locator(".turn").first.get_attribute("data-run-id")
        _ask(page, KEYS)  # queued behind the run: stopping drops it too
        expect(page.locator(".turn.queued")).to_have_count(1)
        page.locator("#stop").click()
        _done(page, 2)
        assert "CANCELLED" in page.locator(".turn .outcome").first.inner_text()
        expect(page.locator(".turn.dropped .queued-note")).to_have_text("Not asked: the run was stopped.")
        # the run ends (recorded CANCELLED, its last act) when the call it was waiting on returns (6 s): any
        # further model call would have been made before that
        run = wait_for(lambda: (x := httpx.get(f"{server.url}/api/v1/runs/{run_id}").json())["status"] != "RUNNING"
                       and x, timeout=60)
        assert run["status"] == "CANCELLED"
        assert len(model.requests) == 2  # no model call after the stop
        assert page.locator(".turn .step[data-phase='tool_call']").count() == 1  # grep_docs never ran
        assert page.locator(".turn .feedback").count() == 0  # nothing to rate
        assert len(httpx.get(f"{server.url}/api/v1/log").json()["questions"]) == 1  # the follow-up was never asked


def test_a_follow_up_typed_while_it_works_is_asked_after_the_answer(page, agent_app):
    script = [_call("search_docs", delay=2.0, query="backup retention"),
              _call("answer", text="Backups are kept for 35 days [1]."),
              _call("search_docs", query="api key rotation"),
              _call("answer", text="API keys are rotated every 90 days [1].")]
    with ScriptedServer(script) as model, LiveServer(agent_app(model)) as server:
        page.goto(server.url + "/")
        page.select_option("#mode", "agent")
        _ask(page, BACKUPS)
        page.wait_for_selector(".turn[data-run-id]")
        expect(page.locator("#question")).to_have_attribute("placeholder", "A follow-up? It is asked after the answer (Esc stops)")
        _ask(page, KEYS)  # while the agent works
        queued = page.locator(".turn").nth(1)
        expect(queued).to_have_class("turn queued")
        expect(queued.locator(".queued-note")).to_have_text("Asked after the answer above.")
        assert len(model.requests) == 1  # not asked yet
        _done(page, 2)
        turns = page.locator(".turn")
        assert "35 days" in turns.nth(0).locator(".answer").inner_text()
        assert turns.nth(1).locator(".question").inner_text() == KEYS
        assert "90 days" in turns.nth(1).locator(".answer").inner_text()
        sessions = turns.evaluate_all("ts => ts.map(t => t.dataset.sessionId)")
        assert sessions[0] == sessions[1]
        runs = httpx.get(f"{server.url}/api/v1/sessions/{sessions[0]}").json()["runs"]
        assert [r["question"] for r in runs] == [BACKUPS, KEYS]
        assert runs[0]["finished_at"] <= runs[1]["created_at"]  # asked after the answer
        assert len(model.requests) == 4 and KEYS in str(model.requests[2]["messages"][-1])


def test_thumbs_with_a_comment_are_stored_and_shown_as_given(page, web_app):
    with LiveServer(web_app) as server:
        api = f"{server.url}/api/v1"
        past = httpx.post(f"{api}/ask", json={"question": BACKUPS, "session_id": "earlier"}).json()
        page.goto(server.url + "/")
        _ask(page, KEYS)
        _done(page, 1)
        live = page.locator(".turn").first
        live.locator(".fb-up").click()
        live.locator(".fb-send").click()  # the comment is optional
        expect(live.locator(".fb-given")).to_have_text("Rated helpful")
        live_run = live.get_attribute("data-run-id")
        assert [(f["rating"], f["comment"]) for f in httpx.get(f"{api}/runs/{live_run}").json()["feedback"]] == [("up", None)]

        page.locator("#session-list .session[data-session-id='earlier']").click()  # a past conversation
        turn = page.locator(f".turn[data-run-id='{past['run_id']}']")
        turn.locator(".fb-down").click()
        expect(turn.locator(".fb-down")).to_have_attribute("aria-pressed", "true")
        turn.locator(".fb-comment").fill("It should say where the backups go")
        turn.locator(".fb-comment").press("Enter")
        expect(turn.locator(".fb-given")).to_contain_text("Rated not helpful")
        feedback = httpx.get(f"{api}/runs/{past['run_id']}").json()["feedback"]
        assert [(f["rating"], f["comment"]) for f in feedback] == [("down", "It should say where the backups go")]
        attention = httpx.get(f"{api}/log", params={"attention": "true"}).json()["questions"]
        assert {row["run_id"]: row["reason"] for row in attention}[past["run_id"]] == \
            "rated down: It should say where the backups go"

        page.reload()  # reopened, the rating shows as given and cannot be sent twice
        page.locator("#session-list .session[data-session-id='earlier']").click()
        given = page.locator(f".turn[data-run-id='{past['run_id']}'] .feedback")
        expect(given).to_have_attribute("data-rating", "down")
        expect(given.locator(".fb-said")).to_have_text("It should say where the backups go")
        assert given.locator(".fb-down").is_disabled() and given.locator(".fb-comment").is_hidden()


def test_the_page_in_chinese_and_the_switcher(browser, web_app, screenshot):
    context = browser.new_context(locale="zh-CN", viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        with LiveServer(web_app) as server:
            page.goto(server.url + "/")
            expect(page.locator("#ask")).to_have_text("提问")
            assert page.locator("html").get_attribute("lang") == "zh-CN"
            assert page.locator("#language").input_value() == "zh"
            assert page.locator("#new-conversation").inner_text() == "新对话"
            assert page.locator("#question").get_attribute("placeholder").startswith("就你的文档提问")
            assert page.locator("#sessions-title").inner_text() == "对话"
            _ask(page, BACKUPS)
            _done(page, 1)
            turn = page.locator(".turn").first
            assert turn.locator(".step-label").first.text_content() == "判断问题的走向"
            assert turn.locator("details.steps > summary").inner_text().startswith("步骤（")
            assert turn.locator(".fb-down").get_attribute("aria-label") == "没有帮助"
            expect(page.locator("#session-list .session-meta").first).to_contain_text("1 个问题")
            turn.locator("details.steps > summary").click()
            turn.locator(".chip").first.click()
            page.locator("#viewer-body mark.hl").first.wait_for()
            screenshot(page, "ask-zh")

            page.select_option("#language", "en")  # the switcher: back to English, the answer's steps too
            expect(page.locator("#ask")).to_have_text("Ask")
            assert page.locator("html").get_attribute("lang") == "en"
            assert page.locator("#new-conversation").inner_text() == "New conversation"
            assert turn.locator(".step-label").first.text_content() == "Routing the question"
            assert turn.locator("details.steps > summary").inner_text().startswith("Steps (")
            assert turn.locator(".fb-down").get_attribute("aria-label") == "Not helpful"
            assert page.locator("#collection option").first.inner_text() == "All collections"
            expect(page.locator("#session-list .session-meta").first).to_contain_text("1 question")
            page.reload()  # the choice is kept
            expect(page.locator("#ask")).to_have_text("Ask")
    finally:
        context.close()


def test_a_key_scoped_to_a_sees_only_its_conversations(page, web_app, web_settings):
    with KnowledgeBase(web_settings) as kb:
        _, admin = kb.keys.create("admin", [], "owner")
        _, reader = kb.keys.create("reader", ["A"], "reader of A")
    with LiveServer(web_app) as server:
        api = f"{server.url}/api/v1"
        as_admin, as_reader = ({"Authorization": f"Bearer {k}"} for k in (admin, reader))
        for session, collection in (("in-a", "A"), ("in-b", "B"), ("mixed", "A"), ("mixed", "B"), ("everywhere", None)):
            body = {"question": BACKUPS, "session_id": session, **({"collection": collection} if collection else {})}
            assert httpx.post(f"{api}/ask", json=body, headers=as_admin).status_code == 200
        everything = httpx.get(f"{api}/sessions", headers=as_admin).json()
        assert [s["id"] for s in everything["sessions"]] == ["everywhere", "mixed", "in-b", "in-a"]
        mixed = everything["sessions"][1]
        assert mixed["runs"] == 2 and mixed["first_question"] == BACKUPS and mixed["collection"] == "B"
        scoped = httpx.get(f"{api}/sessions", headers=as_reader).json()
        assert [s["id"] for s in scoped["sessions"]] == ["in-a"] and scoped["total"] == 1
        assert [s["id"] for s in httpx.get(f"{api}/sessions?limit=2", headers=as_admin).json()["sessions"]] == \
            ["everywhere", "mixed"]
        hidden = httpx.get(f"{api}/sessions/in-b", headers=as_reader)
        missing = httpx.get(f"{api}/sessions/no-such-session", headers=as_reader)
        assert hidden.status_code == missing.status_code == 404
        assert hidden.json()["error"]["code"] == missing.json()["error"]["code"]
        assert httpx.get(f"{api}/sessions").status_code == 401

        page.goto(server.url + "/")
        page.locator("#key-input").fill(reader)
        page.locator("#key-input").press("Enter")
        expect(page.locator("#session-list .session")).to_have_count(1)
        assert _sessions(page) == ["in-a"]
        page.locator("#session-list .session").click()
        expect(page.locator(".turn .answer")).to_contain_text("35 days")


def test_conversations_on_a_phone(page, web_app):
    """At 390×844 the conversations are behind a toggle, reachable by keyboard; picking one closes them."""
    page.set_viewport_size({"width": 390, "height": 844})
    with LiveServer(web_app) as server:
        httpx.post(f"{server.url}/api/v1/ask", json={"question": BACKUPS, "session_id": "earlier"})
        page.goto(server.url + "/")
        toggle = page.locator("#sessions-toggle")
        assert page.locator("#sessions").is_hidden() and toggle.is_visible()
        toggle.focus()
        page.keyboard.press("Enter")
        expect(page.locator("#sessions")).to_be_visible()
        assert toggle.get_attribute("aria-expanded") == "true"
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        page.locator("#session-list .session").first.focus()
        page.keyboard.press("Enter")
        expect(page.locator(".turn .answer")).to_contain_text("35 days")
        assert page.locator("#sessions").is_hidden() and toggle.get_attribute("aria-expanded") == "false"
        assert page.locator("#ask").is_visible() and page.evaluate("() => document.documentElement.scrollWidth") <= 390


def test_rated_down_on_the_ask_page_then_found_in_the_log_attention_list(page, web_app):
    """The whole loop through the page: ask, rate the answer down with a comment, open the Log view,
    pick the attention filter, and the run is there with its reason; its trace opens."""
    with LiveServer(web_app) as server:
        page.goto(server.url + "/")
        _ask(page, BACKUPS)
        _done(page, 1)
        turn = page.locator(".turn").first
        run_id = turn.get_attribute("data-run-id")
        turn.locator(".fb-down").click()
        turn.locator(".fb-comment").fill("Say where the backups are stored")
        turn.locator(".fb-comment").press("Enter")
        expect(turn.locator(".fb-given")).to_contain_text("Rated not helpful")

        page.locator("#nav [data-view='log']").click()
        page.locator("#log-show").select_option("attention")
        row = page.locator(f"#log-rows tr[data-run-id='{run_id}']")
        expect(row.locator(".reason")).to_contain_text("rated down: Say where the backups are stored")  # once filtered
        expect(row).to_have_count(1)
        page.locator("#log-show").select_option("not_found")  # rated down, but answered: not in this list
        expect(page.locator(f"#log-rows tr[data-run-id='{run_id}']")).to_have_count(0)
        page.locator("#log-show").select_option("rated_down")
        expect(page.locator(f"#log-rows tr[data-run-id='{run_id}']")).to_have_count(1)
        page.locator(f"#log-rows tr[data-run-id='{run_id}'] button.open-trace").click()
        expect(page.locator("#log-trace .trace-question .question")).to_have_text(BACKUPS)


# -- drafts are not answers (issue 28) ---------------------------------------------------------------
WATCH = """() => {
  window.seen = { answers: [], drafts: [] };
  new MutationObserver(() => {
    for (const turn of document.querySelectorAll("#thread .turn")) {
      window.seen.answers.push(turn.querySelector(".answer").textContent);
      const draft = turn.querySelector(".draft");
      if (!draft.hidden) window.seen.drafts.push({ label: draft.querySelector(".draft-label").textContent,
        text: draft.querySelector(".draft-text").textContent, colour: getComputedStyle(draft).color,
        answerColour: getComputedStyle(turn.querySelector(".answer")).color,
        afterSteps: !!(turn.querySelector(".current-step").compareDocumentPosition(draft) & Node.DOCUMENT_POSITION_FOLLOWING) });
    }
  }).observe(document.getElementById("thread"), { subtree: true, childList: true, characterData: true, attributes: true });
}"""


def test_the_draft_is_grey_under_the_steps_and_a_rejected_one_never_becomes_the_answer(page, agent_app, screenshot):
    shown = threading.Event()  # the page has shown draft 2 unchecked: only then does its fact-check answer

    def check(_body: dict) -> dict:
        shown.wait(60)
        return {"text": "VERIFIED"}

    script = [{"text": "The database is backed up every 8 hours [1].", "chunk_delay": 0.15},
              {"text": "The database is backed up every 6 hours [1].", "delay": 1.0}, check]
    with ScriptedServer(script) as model, LiveServer(agent_app(model)) as server:
        page.goto(server.url + "/")
        page.evaluate(WATCH)
        _ask(page, "How often is the database backed up?")
        expect(page.locator(".turn .draft-text")).to_contain_text("every 8 hours")
        screenshot(page, "ask-draft")
        try:  # else the check's verdict may replace draft 2 before the page's observer has seen it unchecked
            expect(page.locator(".turn .draft-label")).to_have_text("Draft 2, not checked yet")
            expect(page.locator(".turn .draft-text")).to_contain_text("every 6 hours")
        finally:
            shown.set()
        _done(page, 1)
        turn = page.locator(".turn").first
        expect(turn.locator(".answer")).to_have_text("The database is backed up every 6 hours [1].")
        assert turn.locator(".draft").is_hidden()  # the published answer took its place
        seen = page.evaluate("window.seen")
        labels = page.locator(".turn .step-label").evaluate_all("ls => ls.map(l => l.textContent)")
        session = turn.get_attribute("data-session-id")

        page.reload()  # reopened from the record: the answer, and the rejection among its steps
        page.locator(f"#session-list .session[data-session-id='{session}']").click()
        past = page.locator(".turn").first
        expect(past.locator(".answer")).to_have_text("The database is backed up every 6 hours [1].")
        past_labels = past.locator(".step-label").evaluate_all("ls => ls.map(l => l.textContent)")
        assert "Draft 1 rejected by the fact-check: 1 problem" in past_labels and "8 hours" not in past.inner_text()
    assert len(model.requests) == 3
    assert not any("8 hours" in text for text in seen["answers"])  # never, at any moment, the answer
    written = [d for d in seen["drafts"] if "8 hours" in d["text"] and d["label"] == "Draft 1, not checked yet"]
    assert written and all(d["colour"] != d["answerColour"] and d["afterSteps"] for d in written)  # grey, under the steps
    assert any(d["label"] == "Draft 1 was rejected by the fact-check" and "8 hours" in d["text"] for d in seen["drafts"])
    assert any(d["label"] == "Draft 2, not checked yet" and "6 hours" in d["text"] for d in seen["drafts"])
    assert "Draft 1 rejected by the fact-check: 1 problem" in labels


def test_a_not_found_reply_shows_the_not_found_answer_and_no_token(page, agent_app):
    with ScriptedServer([{"text": "NOT_FOUND."}] * 3) as model, LiveServer(agent_app(model, accept_share=0)) as server:
        page.goto(server.url + "/")
        page.evaluate(WATCH)
        _ask(page, "Who approves the backup policy?")
        _done(page, 1)
        expect(page.locator(".turn .answer")).to_contain_text("The documents do not contain an answer")
        expect(page.locator(".turn .not-found")).to_be_visible()
        seen = page.evaluate("window.seen")
        thread = page.locator("#thread").inner_text()
    assert len(model.requests) == 1
    assert "NOT_FOUND" not in thread and not any("NOT_FOUND" in x for x in seen["answers"] + [d["text"] for d in seen["drafts"]])
