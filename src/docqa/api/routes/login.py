"""Signing a browser in and out: the web page trades a key for an HTTP-only cookie (docqa.api.auth)."""

from __future__ import annotations

import anyio
from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import JSONResponse

from docqa.api import auth
from docqa.api.routes import PREFIX, errors

router = APIRouter(prefix=PREFIX, tags=["keys"])


class Login(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str = Field(min_length=1, max_length=500, description="An API key, dq_…")


@router.post("/login", summary="Sign a browser in: checks the key and sets the HTTP-only sign-in cookie",
             responses=errors())
async def login(body: Login, request: Request) -> JSONResponse:
    limiter = request.app.state.runtime.limiter
    if limiter.enabled:  # guesses are paced like any other request from that address (api.rate_limit)
        limiter.take(f"address:{request.client.host if request.client else 'unknown'}")
    principal = await anyio.to_thread.run_sync(request.app.state.access.login, body.key)  # bad: 401
    response = JSONResponse(principal.to_dict())
    auth.set_cookie(response, body.key.strip(), secure=request.url.scheme == "https")
    return response


@router.post("/logout", summary="Sign a browser out: clears the sign-in cookie", responses=errors())
async def logout(request: Request) -> JSONResponse:
    response = JSONResponse({"signed_out": True})
    auth.clear_cookie(response, secure=request.url.scheme == "https")
    return response
