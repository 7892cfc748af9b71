"""What the bundled model reads per chunk ("shapes"), its cost, and a runner for the quality guards under a shape.

    python benchmarks/embed_shapes.py cost FOLDER... [--shapes w500,w500x1,w0] [--rounds 2]
    python benchmarks/embed_shapes.py run w500x1 benchmarks/crosslingual.py
    python benchmarks/embed_shapes.py run w500x1 benchmarks/trust/retrieval.py --mode hybrid --kb /tmp/x.db

A shape is `w<window_chars>` (every window of at most that many characters, vectors averaged; `w0`: the
whole enriched text as one window) or `w<window_chars>x<n>` (only the first n windows: the title and section
path lead the enriched text, so the first window holds them).

`cost` parses every file under the folders as ingest does (`parse_file`, `embed_inputs`: the enriched text of
each chunk), keeps the distinct texts, and embeds them once per shape per round (rounds interleaved, the
model loaded once): windows per chunk, characters read, wall seconds and chunks/s, CPU seconds (all
threads; steadier than wall time on a shared machine), each the best of the rounds.
`run` makes the shape the bundled model's default in this process and runs SCRIPT as `__main__`.
"""

from __future__ import annotations

import argparse
import runpy
import sys
import time
from pathlib import Path

from docqa.embed.base import Embedder
from docqa.embed.local import LocalEmbedder
from docqa.ingest.pipeline import IngestOptions, embed_inputs, parse_file


def parse_shape(shape: str) -> tuple[int, int]:
    """'w500x1' -> (500, 1); 'w0' -> (0, 0)."""
    body = shape.removeprefix("w")
    chars, _, count = body.partition("x")
    return int(chars), int(count or 0)


def apply_shape(embedder: Embedder, shape: str) -> None:
    """Make `embedder` read its passages in `shape` (its fingerprint's version names the shape)."""
    chars, count = parse_shape(shape)
    embedder.window_chars = chars
    if count:
        embedder.windows = lambda text: type(embedder).windows(embedder, text)[:count]  # type: ignore[method-assign]
    else:
        embedder.__dict__.pop("windows", None)
    head, _, tail = embedder.version.rpartition("-w")
    rest = tail.partition("-")[2]  # what follows the window in the version (the filler rules) stays
    embedder.version = f"{head}-{shape}" + (f"-{rest}" if rest else "")


def corpus_texts(folders: list[str]) -> list[str]:
    """The distinct enriched chunk texts of every file under the folders."""
    opts = IngestOptions()
    seen: dict[str, str] = {}
    for folder in folders:
        for path in sorted(Path(folder).rglob("*")):
            if not path.is_file():
                continue
            st = path.stat()
            parsed = parse_file(str(path), st.st_size, st.st_mtime_ns, None, opts)
            if parsed.error is None:
                seen.update(embed_inputs(parsed))
    return list(seen.values())


def cost(folders: list[str], shapes: list[str], rounds: int, limit: int = 0) -> None:
    texts = corpus_texts(folders)
    texts = texts[:limit] if limit else texts
    embedder = LocalEmbedder()
    embedder.embed_batch(texts[:8])  # load the model outside the timings
    best: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for _ in range(rounds):
        for shape in shapes:
            apply_shape(embedder, shape)
            started, cpu_started = time.perf_counter(), time.process_time()
            embedder.embed_batch(texts)
            seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
            best[shape] = min(best.get(shape, seconds), seconds)
            cpu[shape] = min(cpu.get(shape, cpu_seconds), cpu_seconds)
    chars = sum(len(t) for t in texts)
    print(f"{len(texts)} distinct chunk texts, {chars:,} characters; best of {rounds} rounds, interleaved")
    print("| shape | windows per chunk | characters read | wall s | chunks/s | CPU s | CPU vs first |\n|---|---:|---:|---:|---:|---:|---:|")
    for shape in shapes:
        apply_shape(embedder, shape)
        pieces = [w for t in texts for w in embedder.windows(t)]
        print(f"| {shape} | {len(pieces) / len(texts):.2f} | {sum(map(len, pieces)):,} | {best[shape]:.1f} | "
              f"{len(texts) / best[shape]:.0f} | {cpu[shape]:.1f} | {cpu[shape] / cpu[shapes[0]]:.2f} |")


def run(shape: str, script: str, args: list[str]) -> None:
    init = LocalEmbedder.__init__

    def shaped(self: LocalEmbedder, *a: object, **kw: object) -> None:
        init(self, *a, **kw)  # type: ignore[arg-type]
        apply_shape(self, shape)

    LocalEmbedder.__init__ = shaped  # type: ignore[method-assign]
    sys.argv = [script, *args]
    runpy.run_path(script, run_name="__main__")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], sys.argv[4:])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["cost"])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--shapes", default="w500,w500x1,w1000x1,w1000,w0")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--limit", type=int, default=0, help="embed only the first N distinct texts (0: all)")
    args = ap.parse_args()
    cost(args.folders, args.shapes.split(","), args.rounds, args.limit)


if __name__ == "__main__":
    main()
