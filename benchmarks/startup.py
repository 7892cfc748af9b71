"""Start-up cost of the `docqa` command, against a baseline checkout measured in the same run.

    git worktree add /tmp/baseline-main 857175e        # the tree to compare with
    python benchmarks/startup.py --baseline /tmp/baseline-main/src [--reps 7]

Each figure is a fresh interpreter, the baseline and the new tree taking turns, so a busy
moment of a shared machine hits both alike; the tables show the median and the minimum.

- import: `python -X importtime -c "import docqa.cli"`: the sum of the cumulative times of the
  top-level imports, and how many modules were imported;
- the bundled embedding model's load (`LocalEmbedder._load`: onnxruntime, the tokenizer op's
  library, the session), in process, its module already imported;
- `docqa --help`, `docqa --version` (new tree only: the baseline has no --version);
- `docqa search "how do I rotate the API keys"` and `docqa ask "How often are the API keys
  rotated?"` on a knowledge base built from samples/ (ask is extractive: llm.provider none, so a
  chat model served on this machine is never asked); the hits of three hybrid searches (English,
  the question, Chinese) are compared between the trees first;
- the CPU seconds of the search (user + system, all its threads: steadier than wall time on a
  busy machine);
- a running `docqa serve` of each tree (POST /api/v1/search over loopback with httpx): its first
  search, sent as soon as /readyz answers; then, after 8 searches 4 at a time (so every worker
  thread has searched), searches one at a time (the floor a command line could approach) and 4 at a
  time; the server's RSS and peak RSS at the end.

`--kb PATH [--query Q]` times the same commands on an existing knowledge base instead (left as it
is; e.g. one built by `docqa add` over the growth benchmark's 10k or 100k files), where a first
search also reads every stored vector once.

Bytecode is cached (as for an installed package): PYTHONDONTWRITEBYTECODE is unset in the child
processes and their .pyc files go to a scratch PYTHONPYCACHEPREFIX, warmed before timing.
`--source` keeps the environment as it is instead.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
NEW = HERE.parent / "src"
SAMPLES = HERE.parent / "samples"
QUERY = "how do I rotate the API keys"
QUESTION = "How often are the API keys rotated?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="src folder of the tree to compare with")
    parser.add_argument("--new", default=str(NEW), help="src folder of the tree measured (default: this one)")
    parser.add_argument("--reps", type=int, default=7, help="runs of each command per tree")
    parser.add_argument("--source", action="store_true", help="do not cache bytecode (keep the environment)")
    parser.add_argument("--kb", help="an existing knowledge base to search (default: one built from samples/)")
    parser.add_argument("--query", default=QUERY, help="the search timed (with --kb)")
    args = parser.parse_args()
    query = args.query if args.kb else QUERY

    work = Path(tempfile.mkdtemp(prefix="docqa-startup-"))
    trees = {name: Tree(name, src, work, args.source) for name, src in (("baseline", args.baseline), ("new", args.new))}
    kb = Path(args.kb).resolve() if args.kb else work / "demo.db"
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; work in {work}")
    if not args.kb:
        trees["new"].run("--kb", str(kb), "add", str(SAMPLES))
    found = {}
    for tree in trees.values():  # warm the bytecode cache and the page cache
        tree.run("--kb", str(kb), "search", query)
        found[tree.name] = [(h["chunk_id"], h["score"]) for q in (query, QUESTION, "API 密钥多久轮换一次")
                            for h in json.loads(tree.run("--kb", str(kb), "search", q, "--json").stdout)]
        mode = re.search(r'"mode": "(\w+)"', tree.run("--kb", str(kb), "ask", QUESTION, "--json").stdout)
        print(f"{tree.name}: ask answered in mode {mode.group(1) if mode else '?'}")
    print(f"hybrid search results (3 queries, chunk ids and scores) the same in both trees: {found['baseline'] == found['new']}")

    rows: dict[str, dict[str, list[float]]] = {}
    counts: dict[str, list[int]] = {}
    commands = {
        "docqa --help": ("--help",),
        "docqa search": ("--kb", str(kb), "search", query),
        "docqa ask (extractive)": ("--kb", str(kb), "ask", QUESTION),
    }
    for rep in range(args.reps):
        for tree in (trees["baseline"], trees["new"]) if rep % 2 == 0 else (trees["new"], trees["baseline"]):
            total, modules = tree.importtime()
            rows.setdefault("import docqa.cli (importtime sum)", {}).setdefault(tree.name, []).append(total)
            counts.setdefault(tree.name, []).append(modules)
            rows.setdefault("load the embedding model (in process)", {}).setdefault(tree.name, []).append(tree.model_load())
            for label, argv in commands.items():
                rows.setdefault(label, {}).setdefault(tree.name, []).append(tree.timed(*argv))
                if label == "docqa search":  # CPU seconds: what a busy machine's wall time hides
                    rows.setdefault("docqa search, CPU seconds (user + system)", {}).setdefault(tree.name, []).append(tree.cpu)
        rows.setdefault("docqa --version", {}).setdefault("new", []).append(trees["new"].timed("--version"))
        print(f"rep {rep + 1}/{args.reps} done, load average {os.getloadavg()[0]:.2f}", flush=True)
    served = {name: _served(tree, kb, query, args.reps * 4) for name, tree in trees.items()}
    print(f"load average at the end {os.getloadavg()[0]:.2f}\n")
    _report(rows, counts, served)
    shutil.rmtree(work, ignore_errors=True)


@dataclass
class Tree:
    """A source tree to run `docqa` from, in a fresh interpreter each time (cwd: the scratch folder)."""

    name: str
    src: str
    work: Path
    source: bool

    def __post_init__(self) -> None:
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
        self.env["DOCQA_LLM__PROVIDER"] = "none"  # ask is extractive, whatever chat model this machine serves
        self.env["PYTHONPATH"] = str(Path(self.src).resolve())
        if not self.source:
            self.env.pop("PYTHONDONTWRITEBYTECODE", None)
            self.env["PYTHONPYCACHEPREFIX"] = str(self.work / "pycache")

    def run(self, *argv: str) -> subprocess.CompletedProcess:
        proc = subprocess.run([sys.executable, "-m", "docqa", *argv], env=self.env, cwd=self.work,
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise SystemExit(f"{self.name}: docqa {' '.join(argv)} failed:\n{proc.stderr}")
        return proc

    def timed(self, *argv: str) -> float:
        """Wall seconds of one run; its CPU seconds (user + system, all threads) go to `self.cpu`."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        self.run(*argv)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        return wall

    def importtime(self) -> tuple[float, int]:
        """(seconds of imports under `import docqa.cli`, modules imported), from -X importtime."""
        proc = subprocess.run([sys.executable, "-X", "importtime", "-c", "import docqa.cli"], env=self.env,
                              cwd=self.work, capture_output=True, text=True, timeout=600)
        entries = re.findall(r"^import time:\s+\d+ \|\s+(\d+) \|( *)\S", proc.stderr, re.M)
        top = sum(int(cumulative) for cumulative, indent in entries if len(indent) == 1)
        return top / 1e6, len(entries)


    def model_load(self) -> float:
        """Seconds to open the bundled embedding model's session, its module already imported."""
        code = ("import time\nfrom docqa.embed.local import LocalEmbedder\nembedder = LocalEmbedder()\n"
                "started = time.perf_counter()\nembedder._load()\nprint(time.perf_counter() - started)")
        proc = subprocess.run([sys.executable, "-c", code], env=self.env, cwd=self.work, capture_output=True, text=True,
                              timeout=600)
        if proc.returncode != 0:
            raise SystemExit(f"{self.name}: loading the embedding model failed:\n{proc.stderr}")
        return float(proc.stdout.split()[-1])


def _served(tree: Tree, kb: Path, query: str, n: int) -> dict:
    """A running `docqa serve`: seconds to its first search (sent as soon as /readyz answers), then
    seconds per POST /api/v1/search sent 4 at a time (so every worker thread searches), and the
    server's memory at the end (VmRSS, VmHWM of /proc)."""
    import httpx
    from concurrent.futures import ThreadPoolExecutor

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "docqa", "--kb", str(kb), "serve", "--port", str(port)],
                              env=tree.env, cwd=tree.work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, timeout=120) as client:
            for _ in range(600):
                try:
                    if client.get("/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.1)
            started = time.perf_counter()
            client.post("/api/v1/search", json={"query": query}).raise_for_status()
            first = time.perf_counter() - started

            def one(_: int) -> float:
                began = time.perf_counter()
                client.post("/api/v1/search", json={"query": query}).raise_for_status()
                return time.perf_counter() - began

            with ThreadPoolExecutor(4) as pool:
                list(pool.map(one, range(8)))  # every worker thread has searched once (the baseline loads its vectors then)
                sequential = [one(i) for i in range(n)]
                times = list(pool.map(one, range(n)))
        status = Path(f"/proc/{server.pid}/status").read_text()
        memory = {k: int(re.search(rf"^{k}:\s+(\d+) kB", status, re.M).group(1)) / 1024 for k in ("VmRSS", "VmHWM")}
        return {"first": first, "sequential": sequential, "times": times, **memory}
    finally:
        server.terminate()
        server.wait(timeout=30)


def _report(rows: dict[str, dict[str, list[float]]], counts: dict[str, list[int]], served: dict[str, dict]) -> None:
    print("| measure | baseline median (min) | new median (min) | change of the median |")
    print("|---|---:|---:|---:|")
    for label, by_tree in rows.items():
        cells = [_cell(by_tree.get(name)) for name in ("baseline", "new")]
        base, new = by_tree.get("baseline"), by_tree.get("new")
        change = f"{statistics.median(new) / statistics.median(base) - 1:+.0%}" if base and new else "–"
        print(f"| {label} | {cells[0]} | {cells[1]} | {change} |")
    print(f"| modules imported by `import docqa.cli` | {statistics.median(counts['baseline']):.0f} | "
          f"{statistics.median(counts['new']):.0f} | |")
    base, new = served["baseline"], served["new"]
    print(f"| `docqa serve`: its first search, sent when /readyz answers | {base['first']:.2f} s | {new['first']:.2f} s | |")
    print(f"| `docqa serve`: then, every worker warm, {len(new['sequential'])} searches one at a time | "
          f"{_cell(base['sequential'], ms=True)} | {_cell(new['sequential'], ms=True)} | |")
    print(f"| `docqa serve`: {len(new['times'])} searches, 4 at a time | {_cell(base['times'], ms=True)} | "
          f"{_cell(new['times'], ms=True)} | |")
    print(f"| `docqa serve`: memory at the end, RSS (peak) | {base['VmRSS']:.0f} MB ({base['VmHWM']:.0f}) | "
          f"{new['VmRSS']:.0f} MB ({new['VmHWM']:.0f}) | |")


def _cell(values: list[float] | None, ms: bool = False) -> str:
    if not values:
        return "–"
    if ms:
        return f"{statistics.median(values) * 1000:.1f} ms ({min(values) * 1000:.1f})"
    return f"{statistics.median(values):.2f} s ({min(values):.2f})"


if __name__ == "__main__":
    main()
