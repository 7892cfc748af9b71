"""The OpenAI-compatible endpoint, asked with the official `openai` client against a real server on
loopback: streamed and whole answers with their citations, a follow-up, a scoped key, a not-found."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from docqa.api import openai_format as fmt
from docqa.errors import InputError
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from llm.scripted_server import ScriptedServer

from .conftest import ANSWER

QUESTION = "How long are backups kept?"


@pytest.fixture
def client_for():
    """client_for(server, key) -> the official openai client for a live server (closed after the test)."""
    made: list[openai.OpenAI] = []

    def make(server, key: str = "none") -> openai.OpenAI:
        made.append(openai.OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0, timeout=30))
        return made[-1]

    yield make
    for client in made:
        client.close()


def _model(body: dict) -> dict:
    """The scripted model: the answer to the question, VERIFIED to the checker."""
    system = str(body["messages"][0].get("content", ""))
    return {"text": "VERIFIED" if "verif" in system.lower() and "Backups are kept" in str(body["messages"]) else ANSWER}


@pytest.mark.slow
def test_a_whole_and_a_streamed_answer_carry_the_citations_in_text_and_as_data(make_app, live, client_for):
    with ScriptedServer([_model] * 8) as model_server:
        server = live(make_app(model_server))
        client = client_for(server)
        whole = client.chat.completions.create(model="docqa", messages=[
            {"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": QUESTION}])
        chunks = list(client.chat.completions.create(model="docqa", messages=[{"role": "user", "content": QUESTION}],
                                                     stream=True, stream_options={"include_usage": True}))
    message = whole.choices[0].message
    assert message.content.startswith("Backups are kept for 35 days [1].")
    assert "**Sources:**" in message.content and "ops.md" in message.content and "35 days" in message.content.split("Sources")[1]
    cited = message.model_extra["citations"]
    assert cited and cited[0]["n"] == 1 and cited[0]["path"].endswith("ops.md") and "35 days" in cited[0]["quote"]
    assert {"document_id", "section", "page", "line_start", "line_end", "quote"} <= set(cited[0])
    assert whole.choices[0].finish_reason == "stop" and whole.model == "docqa"
    assert whole.usage.prompt_tokens > 0 and whole.usage.total_tokens == whole.usage.prompt_tokens + whole.usage.completion_tokens
    assert whole.model_extra["docqa"]["answerable"] is True
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == message.content  # the same checked answer, Sources block and all
    final = [c for c in chunks if c.choices and c.choices[0].finish_reason][0]
    assert final.choices[0].finish_reason == "stop" and final.choices[0].delta.model_extra["citations"] == cited
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens == whole.usage.total_tokens
    assert len({c.id for c in chunks}) == 1 and chunks[0].id.startswith("chatcmpl-")


@pytest.mark.slow
def test_a_follow_up_is_read_from_the_messages_history(make_app, live, client_for, embedder):
    server = live(make_app(embedder=embedder))  # no model: the follow-up is condensed and answered without one
    client = client_for(server)
    first = client.chat.completions.create(model="docqa", messages=[{"role": "user", "content": QUESTION}])
    second = client.chat.completions.create(model="docqa", messages=[
        {"role": "user", "content": QUESTION}, {"role": "assistant", "content": first.choices[0].message.content},
        {"role": "user", "content": "and how often are they backed up?"}])
    standalone = client.chat.completions.create(model="docqa", messages=[{"role": "user", "content": "How often are backups backed up?"}])
    assert "35 days" in first.choices[0].message.content
    assert second.model_extra["docqa"]["query"] == "and how often are backups backed up?"  # the subject carried over
    assert second.choices[0].message.content == standalone.choices[0].message.content  # as good as asked standalone
    assert second.usage.total_tokens == 0  # no model was called


@pytest.mark.slow
def test_a_question_the_documents_do_not_answer_reads_as_not_found(make_app, live, client_for):
    server = live(make_app())
    reply = client_for(server).chat.completions.create(model="docqa", messages=[{"role": "user", "content": "What is the office Wi-Fi password?"}])
    assert reply.model_extra["docqa"]["answerable"] is False
    assert reply.choices[0].message.model_extra["citations"] == []
    assert "Sources" not in reply.choices[0].message.content and reply.choices[0].message.content
    agent = client_for(server).chat.completions.create(model="docqa-agent", messages=[{"role": "user", "content": QUESTION}])
    assert any("agent mode needs a chat model" in note for note in agent.model_extra["docqa"]["notes"])  # asked as the agent


@pytest.mark.slow
def test_a_scoped_key_sees_and_asks_only_its_collections(make_app, live, client_for, tmp_path: Path, docs: Path):
    app = make_app()
    settings = Settings(kb=make_app.kb_path, embed={"provider": "none"}, llm={"provider": "none"})
    with KnowledgeBase(settings) as kb:
        kb.add([docs], collection="ops")
        _, scoped = kb.keys.create("reader", ["ops"])
        _, everything = kb.keys.create("reader")
    server = live(app)
    listed = [m.id for m in client_for(server, scoped).models.list()]
    assert listed == ["docqa", "docqa-agent", "docqa/ops"]
    assert [m.id for m in client_for(server, everything).models.list()] == ["docqa", "docqa-agent", "docqa/default", "docqa/ops"]
    with pytest.raises(openai.NotFoundError) as hidden:
        client_for(server, scoped).chat.completions.create(model="docqa/default", messages=[{"role": "user", "content": QUESTION}])
    assert hidden.value.body["code"] == "model_not_found" and hidden.value.body["type"] == "invalid_request_error"
    reply = client_for(server, scoped).chat.completions.create(model="docqa/ops", messages=[{"role": "user", "content": QUESTION}])
    assert "35 days" in reply.choices[0].message.content
    with pytest.raises(openai.AuthenticationError) as refused:
        client_for(server, "dq_not-a-key").models.list()
    assert refused.value.body["type"] == "authentication_error" and "docqa keys create" in refused.value.body["message"]
    with pytest.raises(openai.BadRequestError) as bad:  # the last message is not a question
        client_for(server, everything).chat.completions.create(model="docqa", messages=[{"role": "assistant", "content": "hi"}])
    assert bad.value.body["type"] == "invalid_request_error"


def test_errors_under_v1_come_in_openai_s_shape(client):
    missing = client.post("/v1/chat/completions", json={"model": "docqa"})
    wrong_type = client.post("/v1/chat/completions", content=b"hello", headers={"content-type": "text/plain"})
    unknown = client.get("/v1/embeddings")
    elsewhere = client.post("/api/v1/ask", json={})
    for response, status, kind in ((missing, 422, "invalid_request_error"), (wrong_type, 415, "invalid_request_error"),
                                   (unknown, 404, "invalid_request_error")):
        assert response.status_code == status and set(response.json()["error"]) == {"message", "type", "code", "param"}
        assert response.json()["error"]["type"] == kind
    assert "messages" in missing.json()["error"]["message"]
    assert set(elsewhere.json()["error"]) == {"code", "message"}  # the rest of the API keeps docqa's shape


@pytest.mark.parametrize("name, collection, mode", [
    ("docqa", None, None), ("docqa/ops", "ops", None), ("docqa/team/ops", "team/ops", None),
    ("docqa-agent", None, "agent"), ("docqa-agent/ops", "ops", "agent"), ("gpt-4o", None, None), ("docqa/", None, None),
])
def test_model_names(name, collection, mode):
    model = fmt.parse_model(name)
    if name in ("gpt-4o", "docqa/"):
        assert model is None
    else:
        assert model is not None and (model.collection, model.mode) == (collection, mode)


def test_messages_are_read_as_a_question_and_its_conversation():
    reply = "Backups are kept for 35 days [1].\n\n**Sources:**\n- [1] docs/ops.md §Backups, L6 — “Backups are kept for 35 days.”"
    asked = fmt.read_messages([
        {"role": "system", "content": "Answer like a pirate."},
        {"role": "user", "content": [{"type": "text", "text": QUESTION}]},
        {"role": "assistant", "content": reply},
        {"role": "user", "content": "never answered"},
        {"role": "user", "content": "and how often?"},
    ])
    assert asked.question == "and how often?"
    assert asked.history == [(QUESTION, "Backups are kept for 35 days [1].")]  # no system text, no Sources block
    for bad in ([{"role": "assistant", "content": "hi"}], [{"role": "user", "content": "  "}], [{"role": "user", "content": 3}]):
        with pytest.raises(InputError):
            fmt.read_messages(bad)
