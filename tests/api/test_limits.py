"""The rate limiter: a burst at once, then the pace, then the per-minute budget, each refusal with
the Retry-After that is enough; on a clock the test moves (the `limits` library reads time.time)."""

from __future__ import annotations

import sys
import time

import pytest

from docqa.api import limits
from docqa.api.errors import ApiError
from docqa.api.limits import RateLimiter



@pytest.fixture
def clock(monkeypatch):
    """clock(seconds): move time.time on."""
    now = [1_000_000.0]
    monkeypatch.setattr(time, "time", lambda: now[0])

    def advance(seconds: float) -> None:
        now[0] += seconds

    return advance


def refused(limiter: RateLimiter, caller: str) -> int:
    """The Retry-After of a refused request (fails when it is allowed)."""
    with pytest.raises(ApiError) as caught:
        limiter.take(caller)
    assert caught.value.status == 429 and "api.rate_limit" in str(caught.value)
    return int(caught.value.headers["Retry-After"])


def test_off_by_default():
    limiter = RateLimiter(0, 10)
    assert not limiter.enabled
    for _ in range(1000):
        limiter.take("anyone")


def test_a_burst_then_the_pace(clock):
    limiter = RateLimiter(30, 3)  # a request every 2 s, 3 at once
    for _ in range(3):
        limiter.take("a")
    assert refused(limiter, "a") == 2
    clock(1.5)
    assert refused(limiter, "a") == 1  # a refusal spends nothing
    limiter.take("b")  # another caller has its own budget
    clock(0.6)
    limiter.take("a")


def test_the_minute_budget(clock):
    limiter = RateLimiter(30, 3)
    taken = 0
    for _ in range(60):  # 3 every 2 s would be 90 a minute
        for _ in range(3):
            try:
                limiter.take("a")
                taken += 1
            except ApiError:
                pass
        clock(2.01)
        if taken == 30:
            break
    assert taken == 30
    wait = refused(limiter, "a")
    assert 2 < wait <= 60  # until the oldest request is a minute old
    clock(wait)
    limiter.take("a")


def test_a_burst_larger_than_a_minutes_budget(clock):
    limiter = RateLimiter(5, 10)  # 10 at once, 5 a minute in the long run
    for _ in range(10):
        limiter.take("a")
    assert refused(limiter, "a") == 120  # the burst's budget comes back over two minutes
    clock(120.5)
    limiter.take("a")


def test_idle_callers_are_forgotten(clock, monkeypatch):
    monkeypatch.setattr(limits, "_IDLE_CALLERS", 3)
    limiter = RateLimiter(60, 2)
    for caller in "abcd":
        limiter.take(caller)  # the fourth sweeps, but all four are active
    assert limiter._callers == set("abcd")
    clock(30)
    limiter.take("a")
    clock(45)  # b, c and d idle for 75 s: both windows empty
    limiter.take("e")
    limiter.take("f")
    limiter.take("g")
    limiter.take("h")  # 8 callers: the next sweep comes beyond 2 x 4
    limiter.take("i")  # now: b, c, d forgotten, in the storage too
    assert {"b", "c", "d"}.isdisjoint(limiter._callers)
    assert not any(caller in key for key in limiter._strategy.storage.events for caller in ("/b/", "/c/", "/d/"))


def test_without_the_library_the_error_names_the_install_command(monkeypatch):
    from docqa.api import INSTALL
    from docqa.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "limits", None)
    RateLimiter(0, 10)  # off: never imported
    with pytest.raises(MissingExtraError, match="api.rate_limit") as caught:
        RateLimiter(30, 3)
    assert caught.value.install == INSTALL
