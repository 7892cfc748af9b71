"""Prometheus metrics (prometheus_client, one registry per app): requests, latencies, queue depth,
runs by status, tokens, jobs.  Served as text at GET /metrics."""

from __future__ import annotations

import time
from collections.abc import Callable

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from docqa.types import Answer

_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        self.requests = Counter("docqa_http_requests", "HTTP requests answered, by route and status.",
                                ["method", "route", "status"], registry=r)
        self.latency = Histogram("docqa_http_request_duration_seconds", "Time to answer a request (a stream: until it ends).",
                                 ["method", "route"], buckets=_BUCKETS, registry=r)
        self.runs = Counter("docqa_runs", "Questions answered, by final status.", ["status"], registry=r)
        self.tokens = Counter("docqa_tokens", "Chat model tokens used by answers.", ["kind"], registry=r)
        self.jobs = Counter("docqa_jobs", "Background jobs finished, by kind and status.", ["kind", "status"], registry=r)
        self.queue_depth = Gauge("docqa_queue_depth", "Requests waiting for a worker.", registry=r)
        self.workers_busy = Gauge("docqa_workers_busy", "Workers searching or answering now.", registry=r)
        self.writer_queue = Gauge("docqa_writer_queue_depth", "Writes and jobs waiting for the writer.", registry=r)
        self.live_runs = Gauge("docqa_live_runs", "Runs being answered now.", registry=r)
        self.streams = Gauge("docqa_sse_streams", "Open SSE answer streams.", registry=r)

    def watch(self, queued: Callable[[], float], busy: Callable[[], float], writer: Callable[[], float],
              live: Callable[[], float]) -> None:
        """Gauges read when scraped."""
        self.queue_depth.set_function(queued)
        self.workers_busy.set_function(busy)
        self.writer_queue.set_function(writer)
        self.live_runs.set_function(live)

    def run_finished(self, answer: Answer) -> None:
        self.runs.labels(answer.status).inc()
        for kind in ("prompt_tokens", "completion_tokens"):
            value = (answer.usage or {}).get(kind) or 0
            if value:
                self.tokens.labels(kind.removesuffix("_tokens")).inc(value)

    def render(self) -> bytes:
        return generate_latest(self.registry)


class MetricsMiddleware:
    """Counts every request by its route template (never the raw path: ids would explode the labels)."""

    def __init__(self, app: ASGIApp, metrics: Metrics):
        self.app, self.metrics = app, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started, status = time.perf_counter(), 500

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            self.metrics.requests.labels(scope["method"], route, str(status)).inc()
            self.metrics.latency.labels(scope["method"], route).observe(time.perf_counter() - started)
