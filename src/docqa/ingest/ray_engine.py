"""The Ray engine of `docqa add --engine ray`: parsing, chunking, enrichment and embedding on a Ray cluster.

The driver (the process running `docqa add`) scans, triages, detects renames and writes exactly as
with the local engine (pipeline.Ingestor); only the parse jobs travel.  A Ray task takes a group of
files (pipeline.groups) and runs the local engine on them inside its Ray worker — each file in the
same bounded parser process (pool.py: ingest.parse_timeout, ingest.worker_memory_mb), so a hostile
file costs only itself — then embeds the group's chunks in one model call with that worker's own
copy of the embedder.  The driver gets spans, metadata and vectors back and only writes.

A Ray worker that dies under a task (the OOM killer, a lost node, a crash outside the parser
process) loses only that task: its files go out again one per task, on whichever worker Ray gives
them, and a file whose task has died RETRIES times is reported failed.  A killed driver loses
nothing written: the writer commits each document whole, and the next run skips what is done.
"""

from __future__ import annotations

import logging
import os
import socket
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, replace

from docqa.errors import ConfigError, EmbedderMismatchError, MissingExtraError, WorkerKilledError
from docqa.ingest.pipeline import IngestOptions, Parsed, embed_inputs, failed_job, groups, parse_jobs

INSTALL = "pip install 'docqa[ray]'"
RETRIES = 3  # tasks a file may see die under it before it is reported failed
_QUEUED_PER_CPU = 2  # tasks handed to the cluster per CPU: a worker finds its next group ready
TEST_EXIT_ENV = "DOCQA_TEST_RAY_EXIT_ON"  # tests: a Ray worker given a file whose path holds this value dies


def require_ray():
    """The ray module, or MissingExtraError naming the install command."""
    try:
        import ray
    except ImportError as exc:
        raise MissingExtraError("Ray ingestion (--engine ray)", INSTALL) from exc
    return ray


@dataclass(frozen=True, slots=True)
class EmbedSpec:
    """What a Ray worker needs to build the driver's embedder (settings.embed), and the key it must have."""

    provider: str
    model: str
    base_url: str
    api_key: str | None
    timeout: float
    window_chars: int
    key: str  # the driver's embedder fingerprint: a worker whose model differs refuses to embed


class RayEngine:
    """An ingest engine (pipeline.Engine) over a Ray cluster: `engine(jobs, opts)` yields one Parsed per job."""

    def __init__(self, address: str = "", workers: int = 0, embed: EmbedSpec | None = None):
        self.ray = require_ray()
        self.address, self.workers, self.embed = address, workers, embed

    def __call__(self, jobs: list[tuple], opts: IngestOptions) -> Iterator[Parsed]:
        if not jobs:
            return
        self._connect()
        ray = self.ray
        task = ray.remote(num_cpus=1, max_retries=0)(process_group)  # retries are ours: per file, not per group
        opts = replace(opts, workers=1)  # one parser process per Ray worker: the task holds one CPU
        queue = deque((group, 0) for group in groups(jobs))
        running: dict = {}
        limit = _QUEUED_PER_CPU * max(1, int(ray.cluster_resources().get("CPU", 1)))
        while queue or running:
            while queue and len(running) < limit:
                group, tries = queue.popleft()
                running[task.remote(group, opts, self.embed)] = (group, tries)
            ready, _ = ray.wait(list(running), num_returns=1)
            for ref in ready:
                yield from self._outcome(ref, *running.pop(ref), queue)  # type: ignore[call-arg]  # mypy takes a star tuple to fill every parameter

    def _outcome(self, ref, group: list[tuple], tries: int, queue: deque) -> list[Parsed]:
        """A finished task's results; for a task whose worker died, its files queued again or failed."""
        died = self.ray.exceptions
        try:
            return self.ray.get(ref)
        except (died.WorkerCrashedError, died.OutOfMemoryError, died.NodeDiedError) as exc:
            if len(group) > 1:  # which of its files killed it is unknown: each goes again, alone
                queue.extend(([job], tries + 1) for job in group)
            elif tries + 1 < RETRIES:
                queue.append((group, tries + 1))
            else:
                return [failed_job(group[0], WorkerKilledError(
                    group[0][0], f"the Ray worker processing this file died {RETRIES} times ({type(exc).__name__}); "
                                 "it may need more memory than a worker has, or crash a library"))]
            return []
        except self.ray.exceptions.RayTaskError as exc:  # our own error in the task (e.g. EmbedError): as if local
            raise exc.as_instanceof_cause() from None

    def _connect(self) -> None:
        """Join the configured cluster, or start a local one; a session already open (tests, a server) is reused."""
        ray = self.ray
        if ray.is_initialized():
            return
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # docqa sends nothing anywhere unasked
        quiet = {"log_to_driver": False, "logging_level": logging.WARNING}
        try:
            if self.address:
                _check_reachable(self.address)
                ray.init(address=self.address, **quiet)
            else:
                ray.init(num_cpus=self.workers or os.cpu_count() or 1, include_dashboard=False, **quiet)
        except ConnectionError as exc:
            raise ConfigError(f"cannot reach the Ray cluster at {self.address}: {exc}. Is it running ('ray status' "
                              "on the head node)? Check --ray-address / ingest.ray_address.") from exc


def _check_reachable(address: str, seconds: float = 5.0) -> None:
    """A host:port head that does not answer is refused at once (ray.init would retry for minutes)."""
    if address == "auto" or "://" in address:
        return  # Ray finds the local cluster itself; Ray Client has its own timeout
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=seconds).close()
    except OSError as exc:
        raise ConnectionError(f"nothing answers at {address} ({exc.strerror or exc})") from None


def process_group(jobs: list[tuple], opts: IngestOptions, embed: EmbedSpec | None) -> list[Parsed]:
    """A Ray task: parse a group of files with the local engine, then embed their chunks in one call."""
    _exit_if_marked(jobs)
    results = list(parse_jobs(jobs, opts))
    if embed is not None:
        _embed(results, embed)
    return results


def _embed(results: list[Parsed], spec: EmbedSpec) -> None:
    """Attach to every parsed document (archive members too) the vectors of its chunks' texts."""
    docs = [d for p in results for d in (p, *(p.members or [])) if d.error is None and not d.unchanged and d.chunks]
    inputs = [embed_inputs(d) for d in docs]
    texts = dict(pair for pairs in inputs for pair in pairs)
    if not texts:
        return
    embedder = _embedder(spec)
    if embedder.fingerprint.key != spec.key and not embedder.adopt(spec.key):
        raise EmbedderMismatchError(f"a Ray worker's embedder is {embedder.fingerprint.key}, the writer's is {spec.key}: "
                                    "install the same docqa and models on every node")
    vectors = dict(zip(texts, embedder.embed_batch(list(texts.values()), "passage")))
    for doc, pairs in zip(docs, inputs):
        doc.vectors = {h: vectors[h] for h, _ in pairs}
        for chunk in doc.chunks:  # spans travel back, not texts (the driver restores them)
            chunk.text = ""


_EMBEDDERS: dict = {}  # one per Ray worker process and spec: the model loads once, not per task


def _embedder(spec: EmbedSpec):
    from docqa.embed import make_embedder

    if spec not in _EMBEDDERS:
        _EMBEDDERS[spec] = make_embedder(spec.provider, spec.model, spec.base_url, spec.api_key, spec.timeout,
                                         spec.window_chars)
    return _EMBEDDERS[spec]


def _exit_if_marked(jobs: list[tuple]) -> None:
    """Test hook: with $DOCQA_TEST_RAY_EXIT_ON set in the workers' environment, a worker given a file
    whose path holds that value exits at once, as one the OOM killer takes (tests/ingest/test_ray_engine.py)."""
    marker = os.environ.get(TEST_EXIT_ENV)
    if marker and any(marker in job[0] for job in jobs):
        os._exit(1)
