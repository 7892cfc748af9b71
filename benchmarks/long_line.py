"""Parse one single-line text file of N MB (issue 30 #6): seconds and peak memory above an empty parse.

    PYTHONPATH=src python benchmarks/long_line.py 8 32 64

Each size runs in a fresh process (peak RSS is per process); the file is random words on one line,
written once under /tmp.  parse_file in-process: read, hash, chunk, enrich (what a worker does).
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import time

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"]


def _file(mb: float) -> str:
    path = f"/tmp/docqa_long_line_{mb:g}.txt"
    if not os.path.exists(path):
        rnd, parts, size = random.Random(1), [], 0
        while size < mb * 1e6:
            word = rnd.choice(WORDS)
            parts.append(word)
            size += len(word) + 1
        with open(path, "w") as f:
            f.write(" ".join(parts))
    return path


def _one(mb: float) -> dict:
    from docqa.ingest.pipeline import IngestOptions, parse_file

    path = _file(mb)
    st = os.stat(path)
    opts = IngestOptions(max_tokens=512, overlap=64, max_bytes=int(1e9), workers=0)
    started = time.perf_counter()
    parsed = parse_file(path, st.st_size, st.st_mtime_ns, None, opts)
    return {"mb": mb, "seconds": round(time.perf_counter() - started, 2), "chunks": len(parsed.chunks),
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, "error": str(parsed.error or "")}


def main() -> None:
    if sys.argv[1] == "--one":
        print(json.dumps(_one(float(sys.argv[2]))))
        return
    runs = [json.loads(subprocess.run([sys.executable, __file__, "--one", mb], capture_output=True, text=True,
                                      check=True).stdout) for mb in ["0.01", *sys.argv[1:]]]
    base = runs[0]["peak_mb"]
    for r in runs[1:]:
        extra = r["peak_mb"] - base
        print(f"{r['mb']:>6g} MB  {r['seconds']:>7.2f} s  {r['seconds'] / r['mb']:.2f} s/MB  peak {r['peak_mb']} MB "
              f"(+{extra} MB = {extra / r['mb']:.1f}x the text)  {r['chunks']} chunks {r['error']}")


if __name__ == "__main__":
    main()
