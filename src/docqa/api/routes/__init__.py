"""The API's routes, one module per resource; each is a thin layer over KnowledgeBase."""

from __future__ import annotations

from docqa.api.schemas import ErrorBody

PREFIX = "/api/v1"
# Documented on every route (the error shape is always the same).
ERRORS = {status: {"model": ErrorBody, "description": text} for status, text in (
    (400, "Invalid input"), (401, "No or bad API key"), (403, "Not allowed for this key"), (404, "Not found"),
    (422, "The request does not match the schema"), (503, "Busy (Retry-After) or unavailable"))}


def errors(*extra: int) -> dict:
    """The common error responses plus `extra` statuses, for a route's OpenAPI entry."""
    notes = {409: "Conflict", 413: "Too large", 415: "Unsupported media type", 504: "Timed out"}
    return {**ERRORS, **{s: {"model": ErrorBody, "description": notes[s]} for s in extra}}
