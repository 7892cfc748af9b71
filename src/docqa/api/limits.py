"""Rate limits per caller: a token bucket per API key (or, with no key, per client address).

`api.rate_limit` requests a minute (0: no limit), with bursts of up to `api.rate_burst`.  A caller
over its limit gets 429 with Retry-After (the seconds until its next request is allowed), at once;
other callers are not affected.  Health, readiness and metrics are never limited.
"""

from __future__ import annotations

import math
import threading
import time

from docqa.api.errors import ApiError

_IDLE_BUCKETS = 10_000  # forget full buckets beyond this many callers (they are full: nothing is lost)


class RateLimiter:
    def __init__(self, per_minute: float, burst: int):
        self.rate = per_minute / 60.0  # tokens a second
        self.burst = max(1, burst)
        self._buckets: dict[str, tuple[float, float]] = {}  # caller -> (tokens, when)
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.rate > 0

    def take(self, caller: str) -> None:
        """Spend one request of `caller`'s budget; ApiError 429 with Retry-After when it has none left."""
        if not self.enabled:
            return
        now = time.monotonic()
        with self._lock:
            tokens, then = self._buckets.get(caller, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - then) * self.rate)
            if tokens < 1.0:
                self._buckets[caller] = (tokens, now)
                wait = math.ceil((1.0 - tokens) / self.rate)
                raise ApiError(429, "too_many_requests",
                               f"more than {self.rate * 60:g} requests a minute from this caller (api.rate_limit): "
                               f"retry in {wait} s", {"Retry-After": str(wait)})
            self._buckets[caller] = (tokens - 1.0, now)
            if len(self._buckets) > _IDLE_BUCKETS:
                self._forget_full(now)

    def _forget_full(self, now: float) -> None:
        for caller, (tokens, then) in list(self._buckets.items()):
            if tokens + (now - then) * self.rate >= self.burst:
                del self._buckets[caller]
