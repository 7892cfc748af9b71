"""Request bodies (and the error shape) as pydantic models: they validate input and write the OpenAPI schema."""

from __future__ import annotations

from typing import Literal

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, model_validator

Mode = Literal["pipeline", "agent", "auto"]


NUL = "holds a NUL character (\\0): remove it"


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _no_nul(cls, data: object) -> object:
        """No text of a request holds a NUL: no database stores it (422 here, on every backend)."""
        if _has_nul(data):
            raise ValueError(f"a text field {NUL}")
        return data


def _has_nul(value: object) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_has_nul(v) for v in value)
    return False


def no_nul_params(request: Request) -> None:
    """The path and query parameters of every route: none may hold a NUL (422, as for a body)."""
    found = [("path", k) for k, v in request.path_params.items() if _has_nul(v)]
    found += [("query", k) for k, v in request.query_params.multi_items() if _has_nul(v) or _has_nul(k)]
    if found:
        raise RequestValidationError([{"loc": where, "msg": NUL, "type": "value_error"} for where in found])


class ErrorDetail(BaseModel):
    code: str = Field(description="A stable, machine-readable error code, e.g. not_found, busy, too_large.")
    message: str = Field(description="What went wrong and what to do next, for people.")


class ErrorBody(BaseModel):
    error: ErrorDetail


class CollectionCreate(Body):
    name: str = Field(min_length=1, max_length=200, pattern=r"^\S(.*\S)?$", description="The collection's name.")


class IngestRequest(Body):
    paths: list[str] = Field(default_factory=list, max_length=100, description="Absolute paths of server files or folders, "
                             "each under one of api.ingest_roots.")
    urls: list[str] = Field(default_factory=list, max_length=20, description="Documentation sites to crawl, each within "
                            "its URL's folder, only on the hosts api.ingest_urls names (paths and urls: at least one).")
    collection: str | None = Field(None, min_length=1, max_length=200, description="Collection (default: settings.collection).")
    include: list[str] | None = Field(None, max_length=100, description="Only files matching these globs.")
    exclude: list[str] | None = Field(None, max_length=100, description="Skip files matching these globs.")

    @model_validator(mode="after")
    def _something(self) -> IngestRequest:
        if not self.paths and not self.urls:
            raise ValueError("give 'paths' (server folders) or 'urls' (documentation sites), or both")
        return self


class SearchRequest(Body):
    query: str = Field(min_length=1, max_length=2000, pattern=r"\S", description="What to look for (any language).")
    top_k: int | None = Field(None, ge=1, le=100, description="Number of hits (default: search.top_k).")
    collection: str | None = Field(None, min_length=1, max_length=200, description="Only this collection (default: all).")
    mode: Literal["hybrid", "bm25", "dense"] | None = Field(None, description="Retrieval mode (default: search.mode).")
    path: str | None = Field(None, min_length=1, max_length=500, description="Only files whose path matches this glob.")
    types: list[str] = Field(default_factory=list, max_length=20, description="Only these file types or extensions.")
    rerank: Literal["none", "llm"] | None = Field(
        None, description="Reorder the best hits with the chat model (llm) or not (none); default: search.rerank.")


class VerifyRequest(Body):
    text: str = Field(min_length=1, max_length=20000, pattern=r"\S", description="The text to fact-check (any language).")
    question: str | None = Field(None, min_length=1, max_length=4000, description="The question the text answers, if any.")
    collection: str | None = Field(None, min_length=1, max_length=200, description="Only this collection (default: all).")
    llm: bool | None = Field(None, description="Also ask the chat model's verdict (true: whatever its size; false: never; "
                                               "default: as answer.llm_check decides).")


class AskRequest(Body):
    question: str = Field(min_length=1, max_length=20000, pattern=r"\S", description="The question.")
    session_id: str | None = Field(None, min_length=1, max_length=100, pattern=r"^[\w.-]+$",
                                   description="Continue this conversation (a follow-up is understood from its last turn).")
    collection: str | None = Field(None, min_length=1, max_length=200, description="Only this collection (default: all).")
    check: bool | None = Field(None, description="Fact-check the answer (default: answer.check).")
    mode: Mode | None = Field(None, description="pipeline, agent or auto (default: answer.mode).")
    fresh: bool = Field(False, description="Answer anew even when an earlier verified answer to the same question holds (answer.recall).")


class AgentRunRequest(Body):
    input: str = Field(min_length=1, max_length=20000, pattern=r"\S", description="The question (the seed's field name).")
    session_id: str | None = Field(None, min_length=1, max_length=100, pattern=r"^[\w.-]+$",
                                   description="Continue this conversation.")
    stream: bool = Field(False, description="Answer as Server-Sent Events (as with Accept: text/event-stream).")
    mode: Mode | None = Field(None, description="pipeline, agent or auto (default: agent).")


class MessageRequest(Body):
    text: str = Field(min_length=1, max_length=20000, pattern=r"\S", description="The steering message or follow-up question.")


class CorrectionRequest(Body):
    text: str = Field(min_length=1, max_length=4000, pattern=r"\S",
                      description="The right answer, or the fact the documents miss, as a short note.")


class FeedbackRequest(Body):
    rating: Literal["up", "down"] = Field(description="up or down.")
    comment: str | None = Field(None, max_length=5000, description="Why, in a few words.")
