"""One error shape, `{"error": {"code", "message"}}`, with the right status, and nothing internal in it."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from docqa.api.errors import classify
from docqa.errors import (AuthError, ConfigError, CorruptFileError, EmbedderMismatchError, FileTooLargeError, InputError,
                          LLMError, MissingExtraError, NotFoundError, PermissionDeniedError, SchemaError,
                          UnsupportedFormatError)
from docqa.kb import KnowledgeBase
from docqa.retrieve.service import Search



def assert_error(response, status: int, code: str | None = None) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert "Traceback" not in response.text and 'File "' not in response.text
    if code is not None:
        assert body["error"]["code"] == code
    return body["error"]


@pytest.mark.parametrize("exc,status,code", [
    (InputError("bad"), 400, "invalid_input"),
    (ConfigError("bad"), 400, "invalid_config"),
    (AuthError("who?"), 401, "unauthorized"),
    (PermissionDeniedError("no"), 403, "forbidden"),
    (NotFoundError("none"), 404, "not_found"),
    (EmbedderMismatchError("reindex"), 409, "embedder_mismatch"),
    (FileTooLargeError("a", "big"), 413, "too_large"),
    (UnsupportedFormatError("a", "what"), 415, "unsupported_type"),
    (CorruptFileError("a", "broken"), 422, "unreadable_file"),
    (LLMError("down"), 503, "model_unavailable"),
    (SchemaError("newer"), 503, "store_unavailable"),
    (MissingExtraError("x", "pip install x"), 503, "missing_extra"),
    (RuntimeError("secret detail"), 500, "internal"),
])
def test_the_error_tree_maps_to_statuses(exc, status, code):
    assert classify(exc)[:2] == (status, code)


@pytest.mark.slow
def test_http_errors_have_the_shape(client):
    assert_error(client.get("/api/v1/nothing-here"), 404, "not_found")
    assert_error(client.delete("/api/v1/search"), 405, "method_not_allowed")
    assert_error(client.post("/api/v1/search", json={}), 422, "invalid_request")
    assert_error(client.post("/api/v1/search", json={"query": "x", "top_k": 0}), 422, "invalid_request")
    assert_error(client.post("/api/v1/search", json={"query": "x", "surprise": 1}), 422, "invalid_request")
    assert_error(client.post("/api/v1/search", content=b"{not json", headers={"content-type": "application/json"}), 422)
    assert_error(client.post("/api/v1/search", content=b"query=x", headers={"content-type": "text/plain"}), 415)
    assert_error(client.post("/api/v1/ask", json={"question": "   "}), 422, "invalid_request")
    assert_error(client.post("/api/v1/ask", json={"question": "x", "mode": "magic"}), 422)
    assert_error(client.get("/api/v1/runs/nope"), 404, "not_found")
    assert_error(client.get("/api/v1/sessions/nope"), 404, "not_found")
    assert_error(client.get("/api/v1/jobs/nope"), 404, "not_found")
    assert_error(client.post("/api/v1/runs/nope/feedback", json={"rating": "up"}), 404, "not_found")
    assert_error(client.post("/api/v1/runs/nope/feedback", json={"rating": "meh"}), 422)
    assert_error(client.delete("/api/v1/documents/nope"), 404, "not_found")
    assert_error(client.delete("/api/v1/collections/nope"), 404, "not_found")
    assert_error(client.post("/api/v1/search", content=b"x" * (2 * 1024 * 1024),
                             headers={"content-type": "application/json"}), 413, "too_large")


def test_an_unexpected_exception_is_a_generic_500(make_app, caplog, monkeypatch):
    def explode(self, *args, **kwargs):
        raise RuntimeError("/srv/secret/path leaked? no")

    monkeypatch.setattr(KnowledgeBase, "search", explode)
    with TestClient(make_app(), raise_server_exceptions=False) as c:
        r = c.post("/api/v1/search", json={"query": "backups"})
    error = assert_error(r, 500, "internal")
    assert "secret" not in r.text and "RuntimeError" not in r.text and "incident" in error["message"]
    assert any("secret" in str(record.exc_info) for record in caplog.records)  # the detail is in the server log


def test_a_failed_run_does_not_describe_internals(make_app, monkeypatch):
    def explode(self, *args, **kwargs):
        raise KeyError("internal-key-name")

    monkeypatch.setattr(Search, "search", explode)  # inside the run: retrieval (the run's library calls the service)
    with TestClient(make_app()) as c:
        r = c.post("/api/v1/ask", json={"question": "How long are backups kept?"})
        with c.stream("POST", "/api/v1/ask", json={"question": "again?"}, headers={"accept": "text/event-stream"}) as s:
            text = s.read().decode()
    assert r.status_code == 200 and r.json()["status"] == "FAILED"
    assert "internal-key-name" not in r.text and "KeyError" not in r.text
    assert "event: failure" in text and "internal-key-name" not in text and '"status": "FAILED"' in text


def test_the_knowledge_base_path_never_shows(make_app, tmp_path, monkeypatch):
    def mismatch(self, *args, **kwargs):
        raise EmbedderMismatchError(f"{self.settings.kb}: embedded with another model. Run 'docqa reindex'")

    monkeypatch.setattr(KnowledgeBase, "search", mismatch)
    with TestClient(make_app()) as c:
        error = assert_error(c.post("/api/v1/search", json={"query": "x"}), 409, "embedder_mismatch")
    assert str(tmp_path) not in error["message"] and error["message"].startswith("the knowledge base: ")
