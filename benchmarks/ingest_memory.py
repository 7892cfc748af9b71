"""Peak memory of `docqa add` with embeddings, parent and parser processes apart, two trees in turns.

    python benchmarks/ingest_memory.py --baseline /tmp/base/src [--reps 2] [--cases md-embed,mixed-embed]
    python benchmarks/ingest_memory.py --baseline /tmp/base/src --tree arena=/tmp/arena/src ...  # more trees


The corpora are vs_llamaindex.py's (md-embed: 200 generated heading-dense Markdown files, 2.2 MB;
mixed-embed: the 30 multi-format files of ../shared/data both tools read).  Each run is a fresh
process adding the folder to a fresh index with default settings and the bundled embedder; the
parent samples every 0.1 s the RSS and PSS (shared pages split between the processes) of the
process and of its children.  "RSS summed" is the figure of issue 18's table (a forked child's
shared pages count again); PSS summed is what the tree really holds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from vs_llamaindex import CASES, DOCQA_CHILD, corpora  # noqa: E402

FIELDS = ("sum_rss", "sum_pss", "main_rss", "main_pss", "kids_rss", "kids_pss")


def run(src: str, folder: Path, scratch: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    env["PYTHONPATH"] = src
    with tempfile.TemporaryDirectory(dir=scratch) as out:
        proc = psutil.Popen([sys.executable, "-c", DOCQA_CHILD, str(folder), str(Path(out) / "kb.db"), "1"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        peak = dict.fromkeys(FIELDS, 0) | {"parsers": 0}
        while proc.poll() is None:
            try:
                kids = [k.memory_full_info() for k in proc.children(recursive=True)]
                main = proc.memory_full_info()
            except psutil.Error:
                continue
            now = {"main_rss": main.rss, "main_pss": main.pss, "kids_rss": sum(k.rss for k in kids),
                   "kids_pss": sum(k.pss for k in kids)}
            now["sum_rss"], now["sum_pss"] = now["main_rss"] + now["kids_rss"], now["main_pss"] + now["kids_pss"]
            now["parsers"] = len(kids)
            peak = {k: max(peak[k], now[k]) for k in peak}
            time.sleep(0.1)
        out_text, err = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"{src}: the ingest failed:\n{err[-3000:]}")
    return {**json.loads(out_text.strip().splitlines()[-1]), **{k: v / 2**20 if k != "parsers" else v for k, v in peak.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="src folder of the tree to compare with")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=SRC",
                        help="a further tree to measure in the same turns (repeatable)")
    parser.add_argument("--cases", default="md-embed,mixed-embed")
    parser.add_argument("--work", default=str(HERE / ".work" / "vs_llamaindex"))
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    folders = corpora(work)
    trees = {"baseline": args.baseline, "new": str(HERE.parent / "src")} | dict(t.split("=", 1) for t in args.tree)
    rows: dict[tuple[str, str], list[dict]] = {}
    for case in args.cases.split(","):
        for rep in range(args.reps):
            for name in (list(trees) if rep % 2 == 0 else list(trees)[::-1]):
                r = run(trees[name], folders[CASES[case][0]], work)
                rows.setdefault((case, name), []).append(r)
                print(f"{case} {name}: {r['seconds']:.1f} s, CPU {r['cpu']:.1f} s, {r['chunks']} chunks, RSS summed "
                      f"{r['sum_rss']:.0f} MB (parent {r['main_rss']:.0f} + {r['parsers']} parsers {r['kids_rss']:.0f}), "
                      f"PSS summed {r['sum_pss']:.0f} MB; load {os.getloadavg()[0]:.1f}", flush=True)
    print("\n| case | tree | wall s | CPU s | chunks | peak RSS summed MB | parent RSS | parsers: n, RSS | peak PSS summed MB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for (case, name), runs in rows.items():
        med = {k: statistics.median(r[k] for r in runs) for k in ("seconds", "cpu", *FIELDS)}
        print(f"| {case} | {name} | {med['seconds']:.1f} | {med['cpu']:.1f} | {runs[0]['chunks']:,} | {med['sum_rss']:.0f} | "
              f"{med['main_rss']:.0f} | {runs[0]['parsers']}, {med['kids_rss']:.0f} | {med['sum_pss']:.0f} |")


if __name__ == "__main__":
    main()
