"""The API's one error shape, `{"error": {"code", "message"}}`, and where each exception maps.

    ApiError (ours: busy 503, timeout 504, too large 413, unsupported type 415, ...)  its status
    RequestValidationError (FastAPI: a body or query that fails its schema)           422
    HTTPException (Starlette: no such route 404, method not allowed 405)              its status
    DocqaError: InputError, ConfigError 400 · AuthError 401 · PermissionDeniedError 403 · NotFoundError 404
                EmbedderMismatchError, RunStateError 409 · FileTooLargeError 413 · UnsupportedFormatError 415
                other IngestError 422 · LLMError, EmbedError, StoreError, MissingExtraError 503
                (StoreUnavailableError: 503 with Retry-After, the database is expected back)
    anything else                                                                      500, generic message;
                                                                                       the detail only in the log

Under /v1/ (the OpenAI-compatible endpoint, routes/openai_compat.py) the same errors come in OpenAI's
shape, `{"error": {"message", "type", "code", "param"}}`, so chat apps and the `openai` SDK read them.

Messages of docqa's own errors are written for people; the knowledge base path and the model's URL
are replaced before they leave the server.  No stack trace ever reaches a client.
"""

from __future__ import annotations

import logging
import sqlite3
import uuid
from collections.abc import Callable, Sequence

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from docqa.errors import (AuthError, ConfigError, DocqaError, EmbedderMismatchError, EmbedError, FileTooLargeError,
                          IngestError, InputError, LLMError, MissingExtraError, NotFoundError, PermissionDeniedError,
                          RunStateError, StoreError, StoreUnavailableError, UnsupportedFormatError)

log = logging.getLogger("docqa.api")

# Most specific first: the first class in an exception's MRO found here decides.
_DOCQA: dict[type[DocqaError], tuple[int, str]] = {
    PermissionDeniedError: (403, "forbidden"),
    AuthError: (401, "unauthorized"),
    EmbedderMismatchError: (409, "embedder_mismatch"),
    RunStateError: (409, "not_running"),
    NotFoundError: (404, "not_found"),
    StoreError: (503, "store_unavailable"),
    FileTooLargeError: (413, "too_large"),
    UnsupportedFormatError: (415, "unsupported_type"),
    IngestError: (422, "unreadable_file"),
    InputError: (400, "invalid_input"),
    ConfigError: (400, "invalid_config"),
    MissingExtraError: (503, "missing_extra"),
    LLMError: (503, "model_unavailable"),
    EmbedError: (503, "embedder_unavailable"),
}
_HTTP_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
               406: "not_acceptable", 409: "conflict", 413: "too_large", 415: "unsupported_media_type",
               422: "invalid_request", 429: "too_many_requests", 503: "unavailable"}
INTERNAL = "internal error: the server logged the details"
RETRY_STORE = 2  # seconds a client waits after the database was unreachable (the pool reconnects meanwhile)


class ApiError(Exception):
    """An HTTP error with the API's shape; `headers` go with it (Retry-After, WWW-Authenticate)."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers or {}


class BusyError(ApiError):
    """Every worker is busy and the queue is full: 503 at once, with Retry-After."""

    def __init__(self, retry_after: int, what: str = "every worker is busy and the queue is full"):
        super().__init__(503, "busy", f"{what}: retry in {retry_after} s", {"Retry-After": str(retry_after)})


class ClientGone(Exception):
    """The client hung up while its request was worked on (the run was cancelled; nobody reads the answer)."""


OPENAI_PREFIX = "/v1/"
_OPENAI_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                 404: "invalid_request_error", 409: "invalid_request_error", 413: "invalid_request_error",
                 415: "invalid_request_error", 422: "invalid_request_error", 429: "rate_limit_error"}


def body(code: str, message: str, status: int = 400, path: str = "") -> dict:
    """The error shape: docqa's, or OpenAI's under /v1/ (`type` from the status, as OpenAI's API gives it)."""
    if path.startswith(OPENAI_PREFIX):
        kind = _OPENAI_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
        return {"error": {"message": message, "type": kind, "code": code, "param": None}}
    return {"error": {"code": code, "message": message}}


def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None,
                   path: str = "") -> JSONResponse:
    return JSONResponse(body(code, message, status, path), status_code=status, headers=headers)


def classify(exc: BaseException) -> tuple[int, str, dict[str, str]]:
    """(status, code, headers) for a docqa error or an ApiError; 500 for anything else."""
    if isinstance(exc, ApiError):
        return exc.status, exc.code, exc.headers
    if isinstance(exc, StoreUnavailableError):  # the database will be back: say when to retry
        return 503, getattr(exc, "error_code", "store_unavailable"), {"Retry-After": str(RETRY_STORE)}
    for cls in type(exc).__mro__:
        if cls in _DOCQA:
            status, code = _DOCQA[cls]  # type: ignore[index]
            code = getattr(exc, "error_code", None) or code  # a finer code the core gave (e.g. path_not_allowed)
            return status, code, {"WWW-Authenticate": 'Bearer realm="docqa"'} if status == 401 else {}
    if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
        return 503, "busy", {"Retry-After": "1"}
    return 500, "internal", {}


def public_message(exc: BaseException, redact: Callable[[str], str]) -> str:
    """What a client may read about an exception: our own messages (redacted), else a generic line."""
    status, _, _ = classify(exc)
    if status == 500:
        return INTERNAL
    if isinstance(exc, ApiError):
        return redact(exc.message)
    if isinstance(exc, sqlite3.OperationalError):
        return "the knowledge base is busy writing: retry in a moment"
    return redact(str(exc))


def install(app: FastAPI, redact: Callable[[str], str]) -> None:
    """Register the exception handlers; unknown exceptions are caught by `ErrorBoundary`."""

    async def known(request: Request, exc: Exception) -> Response:
        if isinstance(exc, ClientGone):
            return Response(status_code=499)  # nobody is listening; the status is for the metrics
        status, code, headers = classify(exc)
        if status == 500:
            return _internal(request.scope, exc)
        return error_response(status, code, public_message(exc, redact), headers, request.url.path)

    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        return error_response(422, "invalid_request", validation_message(exc.errors()), path=request.url.path)

    async def http(request: Request, exc: HTTPException) -> Response:
        code = _HTTP_CODES.get(exc.status_code, "error")
        message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
        if exc.status_code == 404 and message == "Not Found":
            message = f"no such endpoint: {request.method} {request.url.path} (see /docs)"
        return error_response(exc.status_code, code, message, getattr(exc, "headers", None), request.url.path)

    for cls in (ApiError, DocqaError, ClientGone, sqlite3.OperationalError):
        app.add_exception_handler(cls, known)
    app.add_exception_handler(RequestValidationError, invalid)  # type: ignore[arg-type]
    app.add_exception_handler(HTTPException, http)  # type: ignore[arg-type]


def validation_message(errors: Sequence[dict]) -> str:
    """FastAPI's validation errors as one line: `body.question: Field required; query.limit: ...`."""
    parts = []
    for err in list(errors)[:5]:
        where = ".".join(str(part) for part in err.get("loc", ()))
        parts.append(f"{where}: {err.get('msg', 'invalid')}" if where else str(err.get("msg", "invalid")))
    return "; ".join(parts) or "the request does not match the API's schema (see /docs)"


def _internal(scope: Scope, exc: BaseException) -> JSONResponse:
    incident = uuid.uuid4().hex[:12]
    log.error("internal error %s in %s %s", incident, scope.get("method"), scope.get("path"), exc_info=exc)
    return error_response(500, "internal", f"{INTERNAL} (incident {incident})", path=str(scope.get("path") or ""))


class ErrorBoundary:
    """Outermost middleware: an exception nothing else handled becomes a generic 500 (detail in the log),
    or, when the response had started, the end of it."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def watch(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except Exception as exc:  # the boundary: nothing below may leak a stack trace
            if started:
                log.error("error after the response started in %s %s", scope.get("method"), scope.get("path"), exc_info=exc)
                return
            await _internal(scope, exc)(scope, receive, send)
