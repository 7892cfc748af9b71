"""Retry helpers used by Acme's service clients."""

import random
import time


class RetryError(Exception):
    """Raised when every attempt failed."""


def backoff_delays(attempts: int, base: float = 0.5, cap: float = 30.0):
    """Exponential backoff with full jitter: yields one delay (seconds) per retry."""
    for attempt in range(attempts):
        yield random.uniform(0, min(cap, base * 2**attempt))


def call_with_retry(func, attempts: int = 5, retry_on=(TimeoutError, ConnectionError)):
    """Call func(), retrying transient errors with exponential backoff and jitter."""
    last = None
    for delay in backoff_delays(attempts):
        try:
            return func()
        except retry_on as exc:
            last = exc
            time.sleep(delay)
    raise RetryError(f"gave up after {attempts} attempts") from last
