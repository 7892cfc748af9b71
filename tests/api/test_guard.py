"""HostGuard: Starlette's TrustedHostMiddleware answering its refusal in the API's error shape."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from api.test_errors import assert_error
from docqa.api.guard import HostGuard


def _client(allowed: list[str], bind: str = "127.0.0.1") -> TestClient:
    async def hello(request):
        return PlainTextResponse("hello")

    return TestClient(HostGuard(Starlette(routes=[Route("/", hello)]), allowed=allowed, bind=bind))


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost", "LOCALHOST:8000", "[::1]:8000", "[::1]",
                                  "127.0.0.5:8000", "docs.example.org", "a.proxy.example:443"])
def test_loopback_names_the_bind_address_and_allowed_names_pass(host):
    client = _client(["docs.example.org", "*.proxy.example"], bind="127.0.0.5")
    response = client.get("/", headers={"host": host})
    assert response.status_code == 200 and response.text == "hello"


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1.evil.example", "::1",
                                  "localhost@evil.example", "", "proxy.example"])
def test_other_names_get_421_in_the_api_error_shape(host):
    """421 (as the MCP SDK answers the same check on /mcp), not Starlette's plain-text 400."""
    response = _client(["*.proxy.example"]).get("/", headers={"host": host})
    error = assert_error(response, 421, "bad_host")
    assert "api.allowed_hosts" in error["message"] and "localhost" in error["message"]
    assert "Invalid host header" not in response.text


def test_a_star_accepts_any_name():
    assert _client(["*"]).get("/", headers={"host": "evil.example"}).status_code == 200


def test_an_ipv6_name_is_compared_in_brackets():
    client = _client(["::2"], bind="::1")
    assert client.get("/", headers={"host": "[::2]:8000"}).status_code == 200
    assert client.get("/", headers={"host": "[::1]:8000"}).status_code == 200
