"""The bundled model's CPU on the texts an add feeds it, one fresh process per run, two trees taking turns.

    python benchmarks/embed_session.py [--baseline /work/main/src] [--reps 3] [--limit N] [--profile]

The texts are the distinct enriched chunk texts of the Debian documentation corpus (`debian_docs.py`, parsed as
`embed_tokens.py` does).  Each run is a new process that loads `LocalEmbedder` (the graph cache already built)
and embeds them all; it reports the CPU seconds of the load and of the embedding (`time.process_time`: all
threads), its wall time and its peak RSS.  Runs alternate between this tree and `--baseline` (e.g. main's
src), and the vectors of the two are compared.  `--profile` instead runs onnxruntime's profiler on this tree's
session and prints the kernel time per op type and the run time outside the kernels.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"

CHILD = """
import json, resource, sys, time
import numpy as np
from docqa.embed.local import LocalEmbedder
texts = json.load(open(sys.argv[1]))
cpu, wall = time.process_time(), time.perf_counter()
model = LocalEmbedder()
model._load()
load = time.process_time() - cpu
vectors = model.embed_batch(texts)
np.save(sys.argv[2], vectors)
print(json.dumps({"load": load, "embed": time.process_time() - cpu - load, "wall": time.perf_counter() - wall,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def corpus_texts(limit: int) -> list[str]:
    sys.path.insert(0, str(HERE))
    import debian_docs
    import embed_tokens

    folder = debian_docs.build(HERE / ".work" / "vs_llamaindex" / "debian", Path(tempfile.gettempdir()) / "docqa-debian-docs")
    texts = list(embed_tokens.shapes(folder)["enriched"].values())
    return texts[:limit] if limit else texts


def run(src: Path, texts_file: Path, out: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(texts_file), str(out)], env=env, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(trees: dict[str, Path], reps: int, texts: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        texts_file = Path(tmp) / "texts.json"
        texts_file.write_text(json.dumps(texts))
        for src in trees.values():  # build the graph cache (and warm the page cache) outside the timed runs
            run(src, texts_file, Path(tmp) / "warm.npy")
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for r in range(reps):
            for name in trees if r % 2 == 0 else list(trees)[::-1]:
                runs[name].append(run(trees[name], texts_file, Path(tmp) / f"{name}.npy"))
        vectors = {name: np.load(Path(tmp) / f"{name}.npy") for name in trees}
    print(f"{len(texts):,} texts, {sum(map(len, texts)):,} characters; {reps} runs per tree, taking turns\n")
    print("| tree | embed CPU s (runs) | median | load CPU s | wall s | peak RSS MB |\n|---|---|---:|---:|---:|---:|")
    for name, got in runs.items():
        embed = [g["embed"] for g in got]
        print(f"| {name} | {', '.join(f'{c:.2f}' for c in embed)} | {statistics.median(embed):.2f} | "
              f"{statistics.median(g['load'] for g in got):.2f} | {statistics.median(g['wall'] for g in got):.1f} | "
              f"{max(g['rss'] for g in got):.0f} |")
    first, *others = vectors.values()
    for name, other in zip(list(vectors)[1:], others, strict=True):
        cosine = (first * other).sum(1) / np.linalg.norm(first, axis=1) / np.linalg.norm(other, axis=1)
        print(f"\nvectors vs {name}: bit-identical {np.array_equal(first, other)}, min cosine {cosine.min():.6f}")


def profile(texts: list[str]) -> None:
    import onnxruntime as ort

    from docqa.embed.local import LocalEmbedder, _custom_ops_library, default_graph_cache

    model = LocalEmbedder(threads=1)
    model._load()
    opts = ort.SessionOptions()
    opts.register_custom_ops_library(_custom_ops_library())
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    opts.enable_profiling, opts.profile_file_prefix = True, str(Path(tempfile.gettempdir()) / "docqa-embed-profile")
    graph = sorted(default_graph_cache().glob("*.onnx"))
    model._session = ort.InferenceSession(str(graph[-1]), opts, providers=["CPUExecutionProvider"])
    model.embed_batch(texts)
    events = json.loads(Path(model._session.end_profiling()).read_text())
    by_op: collections.Counter[str] = collections.Counter()
    total = sum(e["dur"] for e in events if e.get("name") == "model_run")
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            by_op[e["args"]["op_name"]] += e["dur"]
    print(f"{graph[-1].name}: model_run {total / 1e3:,.0f} ms, kernels {sum(by_op.values()) / 1e3:,.0f} ms")
    for op, dur in by_op.most_common(12):
        print(f"| {op} | {dur / 1e3:,.0f} ms | {100 * dur / total:.1f} % |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="another tree's src folder, e.g. /work/main/src")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--limit", type=int, default=0, help="only the first N texts")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    texts = corpus_texts(args.limit)
    if args.profile:
        profile(texts)
        return
    trees = {"this tree": SRC} | ({"baseline": args.baseline} if args.baseline else {})
    compare(trees, args.reps, texts)


if __name__ == "__main__":
    main()
