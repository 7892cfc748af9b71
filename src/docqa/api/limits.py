"""Rate limits per caller (an API key, or with no key a client address), kept by the `limits` library.

`api.rate_limit` requests a minute (0: no limit), with bursts of up to `api.rate_burst`.  A caller
over its limit gets 429 with Retry-After (the seconds until its next request is allowed), at once;
other callers are not affected.  Health, readiness and metrics are never limited.

The two settings describe a token bucket; `limits` keeps it as two moving windows per caller, in
memory: the burst within the time one request's budget takes to come back (60 / rate_limit s), and
the rate itself over a minute (or over the time a whole burst takes to come back, when longer).
Where they differ: 60 / rate_limit s after a burst the bucket has one request back, the window the
whole burst (the minute's budget still caps it); and a minute holds rate_limit requests, where a
full bucket allows rate_burst more.
"""

from __future__ import annotations

import math
import threading
import time
from typing import TYPE_CHECKING

from docqa.api.errors import ApiError
from docqa.errors import MissingExtraError

if TYPE_CHECKING:
    from limits import RateLimitItem

# limits' MemoryStorage (5.8.0) empties an expired window but keeps its key: measured 24 MB still held
# after 100,000 callers' one-second windows had expired, never freed; so beyond this many callers the
# idle ones (both windows empty: nothing is lost) are cleared (30,000 idle and 30,000 active callers:
# 30 MB held, not 60).
_IDLE_CALLERS = 10_000


class RateLimiter:
    def __init__(self, per_minute: float, burst: int):
        self.per_minute = per_minute
        self.windows = _windows(per_minute, max(1, burst)) if per_minute > 0 else ()
        self._callers: set[str] = set()
        self._sweep_at = _IDLE_CALLERS
        self._lock = threading.Lock()  # test-then-hit over both windows is one step
        if self.windows:  # only when used: its storage starts a timer thread
            from limits.storage import MemoryStorage
            from limits.strategies import MovingWindowRateLimiter

            self._strategy = MovingWindowRateLimiter(MemoryStorage())

    @property
    def enabled(self) -> bool:
        return bool(self.windows)

    def take(self, caller: str) -> None:
        """Spend one request of `caller`'s budget; ApiError 429 with Retry-After when it has none left."""
        if not self.enabled:
            return
        with self._lock:
            full = [window for window in self.windows if not self._strategy.test(window, caller)]
            if full:  # a refused request spends nothing
                wait = max(self._wait(window, caller) for window in full)
                raise ApiError(429, "too_many_requests",
                               f"more than {self.per_minute:g} requests a minute from this caller (api.rate_limit): "
                               f"retry in {wait} s", {"Retry-After": str(wait)})
            for window in self.windows:
                self._strategy.hit(window, caller)
            self._callers.add(caller)
            if len(self._callers) > self._sweep_at:
                self._forget_idle()

    def _wait(self, window: RateLimitItem, caller: str) -> int:
        """Whole seconds until the window's oldest request leaves it."""
        reset = self._strategy.get_window_stats(window, caller).reset_time
        return max(1, math.ceil(reset - time.time()))

    def _forget_idle(self) -> None:
        for caller in list(self._callers):
            if all(self._strategy.get_window_stats(w, caller).remaining == w.amount for w in self.windows):
                for window in self.windows:
                    self._strategy.clear(window, caller)
                self._callers.discard(caller)
        self._sweep_at = max(_IDLE_CALLERS, 2 * len(self._callers))  # many active callers: sweep less often


def _windows(per_minute: float, burst: int) -> tuple[RateLimitItem, ...]:
    """The bucket (`burst` deep, refilled with `per_minute` a minute) as moving windows of whole seconds."""
    try:  # imported only when rate limits are on (~70 ms)
        from limits import RateLimitItemPerSecond
    except ImportError as exc:  # an install from before it joined the [api] extra
        raise MissingExtraError("Rate limits (api.rate_limit)", "pip install 'docqa[api]'") from exc

    pace = max(1, math.ceil(60 / per_minute))  # a request's budget comes back in 60 / per_minute s
    steady = max(60, math.ceil(burst * 60 / per_minute))  # long enough to hold a whole burst
    refilled = math.floor(per_minute * pace / 60)  # budgets that come back within `pace` (1 unless it is 1 s)
    return (RateLimitItemPerSecond(burst + max(0, refilled - 1), pace),
            RateLimitItemPerSecond(max(burst, round(per_minute * steady / 60)), steady))
