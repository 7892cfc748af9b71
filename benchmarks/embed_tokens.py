"""What the bundled model reads of a corpus, in windows, characters and its own tokens, and what that costs.

    python benchmarks/embed_tokens.py [FOLDER] [--rounds 2]

FOLDER defaults to the Debian documentation corpus (`debian_docs.py`, built as vs_llamaindex.py builds it).
Every file is parsed as `docqa add` parses it (`parse_file`, `embed_inputs`: the enriched text of each chunk,
distinct texts only).  Rows: every window as main read them (filler included), the distinct windows, the
distinct windows without filler (`without_filler`: what `LocalEmbedder` reads now), and two shapes not
shipped — without the chunk overlap (each chunk read from where the previous one of its file ended) and
without the title / section line.  Tokens are counted by the model's own tokenizer: the first node of its
graph (SentencepieceTokenizer) run alone.  `--rounds N` then embeds the distinct texts with the filler read
and without, taking turns, and prints the model's CPU seconds (all threads) and wall seconds of each round.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import debian_docs  # noqa: E402

from docqa.embed.base import without_filler  # noqa: E402
from docqa.embed.local import LocalEmbedder, _custom_ops_library, _model_file  # noqa: E402
from docqa.ingest.pipeline import IngestOptions, embed_inputs, parse_file  # noqa: E402


def tokenizer():
    """A session running only the model's tokenizer node: texts -> row splits of their tokens."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    model = onnx.load(str(_model_file()))
    node = model.graph.node[0]
    inits = [i for i in model.graph.initializer if i.name in node.input]
    splits = helper.make_tensor_value_info(node.output[1], TensorProto.INT64, None)
    graph = helper.make_graph([node], "tokenizer", [model.graph.input[0]], [splits], inits)
    opts = ort.SessionOptions()
    opts.register_custom_ops_library(_custom_ops_library())
    small = helper.make_model(graph, opset_imports=list(model.opset_import))
    return ort.InferenceSession(small.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def count_tokens(session, texts: list[str]) -> int:
    total = 0
    for start in range(0, len(texts), 256):
        splits = session.run(None, {"inputs": np.array(texts[start : start + 256], dtype=object)})[0]
        total += int(splits[-1] - splits[0])
    return total


def shapes(folder: Path) -> dict[str, dict[str, str]]:
    """Per shape, the distinct texts (hash -> model text): today's enriched text, without overlap, without head."""
    opts = IngestOptions()
    out: dict[str, dict[str, str]] = {"enriched": {}, "no overlap": {}, "no head line": {}}
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix != ".tsv"):
        st = path.stat()
        parsed = parse_file(str(path), st.st_size, st.st_mtime_ns, None, opts)
        end = 0
        for chunk, (digest, enriched) in zip(parsed.chunks, embed_inputs(parsed), strict=True):
            head = enriched[: len(enriched) - len(chunk.text)]
            out["enriched"][digest] = enriched
            out["no overlap"][digest] = head + parsed.text[max(chunk.char_start, end) : chunk.char_end]
            out["no head line"][digest] = chunk.text
            end = max(end, chunk.char_end)
    return out


def report(model: LocalEmbedder, session, texts: dict[str, dict[str, str]]) -> None:
    enriched = list(texts["enriched"].values())
    rows = {"every window, filler read (main)": [w for t in enriched for w in model.windows(t)],
            "distinct windows, filler read": list(dict.fromkeys(w for t in enriched for w in model.windows(t)))}
    for name, label in (("enriched", "distinct windows, no filler (shipped)"),
                        ("no overlap", "the same, no chunk overlap (not shipped)"),
                        ("no head line", "the same, no head line (not shipped)")):
        rows[label] = list(dict.fromkeys(w for t in texts[name].values() for w in model.windows(without_filler(t))))
    print(f"{len(enriched)} distinct enriched chunk texts, {sum(map(len, enriched)):,} characters\n")
    print("| what the model reads | windows | characters | tokens |\n|---|---:|---:|---:|")
    for label, windows in rows.items():
        print(f"| {label} | {len(windows):,} | {sum(map(len, windows)):,} | {count_tokens(session, windows):,} |")


def cpu_rounds(model: LocalEmbedder, texts: list[str], rounds: int) -> None:
    model.embed_batch(texts[:8])  # load the model outside the rounds
    seconds: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for r in range(rounds):
        for drops in (False, True) if r % 2 == 0 else (True, False):
            model.drops_filler = drops
            cpu, wall = time.process_time(), time.perf_counter()
            model.embed_batch(texts)
            seconds[drops].append((time.process_time() - cpu, time.perf_counter() - wall))
    for drops, runs in seconds.items():
        shown = ", ".join(f"{c:.2f} CPU s ({w:.1f} s)" for c, w in runs)
        print(f"model, filler {'dropped' if drops else 'read'}: {shown}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", help="a folder of files (default: the Debian documentation corpus)")
    parser.add_argument("--rounds", type=int, default=0, help="time the model on the texts, filler read and dropped")
    args = parser.parse_args()
    folder = Path(args.folder) if args.folder else debian_docs.build(
        HERE / ".work" / "vs_llamaindex" / "debian", Path(tempfile.gettempdir()) / "docqa-debian-docs")
    model = LocalEmbedder()
    texts = shapes(folder)
    report(model, tokenizer(), texts)
    if args.rounds:
        cpu_rounds(model, list(texts["enriched"].values()), args.rounds)


if __name__ == "__main__":
    main()
