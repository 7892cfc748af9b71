"""What each tool gives the embedding model on one corpus of vs_llamaindex.py, and what the model costs per character.

    python benchmarks/embed_work.py [--corpus debian] [--sample 300] [--rounds 2]

docqa: every file parsed as `docqa add` parses it (`parse_file`), each chunk's enriched text
(`embed_inputs`: title / section path, then the text), distinct texts only (equal texts share a
vector), cut into the local model's windows.  LlamaIndex (vs_llamaindex.py's environment and
pipeline): `SimpleDirectoryReader` → `SentenceSplitter(512, 50)`, each node's text as its
embedding sees it (`MetadataMode.EMBED`: the file metadata lines, then the text).

The model's cost: a seeded sample of each side's texts embedded the way each tool embeds them,
the two taking turns for `--rounds`: docqa's `LocalEmbedder` as shipped (windows of ≤ 500
characters sorted by length, batches of 4, two one-thread sessions' calls at once); LlamaIndex's
wrapper (one session on all cores, batches of 32 in node order, each node whole).  CPU seconds
are the process's (all threads); on a shared machine they are the steadier figure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from vs_llamaindex import corpora, ensure_venv  # noqa: E402

LLAMA_TEXTS = r"""
import sys, json
from llama_index.core import SimpleDirectoryReader
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import MetadataMode
docs = SimpleDirectoryReader(sys.argv[1], recursive=True, exclude_hidden=False).load_data()
nodes = SentenceSplitter(chunk_size=512, chunk_overlap=50).get_nodes_from_documents(docs)
json.dump([n.get_content(metadata_mode=MetadataMode.EMBED) for n in nodes], open(sys.argv[2], "w"))
"""


def docqa_texts(folder: Path) -> list[str]:
    from docqa.ingest.pipeline import IngestOptions, embed_inputs, parse_file

    opts, texts = IngestOptions(), {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        st = path.stat()
        texts.update(embed_inputs(parse_file(str(path), st.st_size, st.st_mtime_ns, None, opts)))
    return list(texts.values())


def llama_texts(folder: Path, python: Path) -> list[str]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([str(python), "-c", LLAMA_TEXTS, str(folder), out.name], check=True)
        return json.loads(Path(out.name).read_text(encoding="utf-8"))


def timed(run) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="debian")
    parser.add_argument("--sample", type=int, default=300, help="texts of each side embedded to time the model")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--venv", default=str(Path(tempfile.gettempdir()) / "docqa-llamaindex-venv"))
    parser.add_argument("--work", default=str(HERE / ".work" / "vs_llamaindex"))
    args = parser.parse_args()
    from docqa.embed.local import LocalEmbedder, _open_session

    folder = corpora(Path(args.work))[args.corpus]
    ours, theirs = docqa_texts(folder), llama_texts(folder, ensure_venv(Path(args.venv)))
    model = LocalEmbedder()
    windows = [w for t in ours for w in model.windows(t)]
    print(f"docqa: {len(ours)} distinct chunk texts, {sum(map(len, ours)):,} characters, {len(windows):,} windows "
          f"({len(windows) / len(ours):.2f} per chunk)")
    print(f"LlamaIndex: {len(theirs)} nodes, {sum(map(len, theirs)):,} characters")
    rng = random.Random(34)
    ours_sample, theirs_sample = rng.sample(ours, min(args.sample, len(ours))), rng.sample(theirs, min(args.sample, len(theirs)))
    session = _open_session(os.cpu_count() or 1)  # as LlamaIndex's wrapper: intra-op threads = all cores
    model._load()

    def llama_way() -> None:
        for start in range(0, len(theirs_sample), 32):
            session.run(["outputs"], {"inputs": theirs_sample[start : start + 32]})

    costs: dict[str, list[tuple[float, float]]] = {"docqa": [], "LlamaIndex": []}
    for _ in range(args.rounds):
        costs["docqa"].append(timed(lambda: model.embed_batch(ours_sample)))
        costs["LlamaIndex"].append(timed(llama_way))
    for side, sample, everything in (("docqa", ours_sample, ours), ("LlamaIndex", theirs_sample, theirs)):
        chars = sum(map(len, sample))
        cpu = min(c for _, c in costs[side])
        per_char = cpu / chars
        print(f"{side}: sample of {len(sample)} texts, {chars:,} characters: wall {[round(w, 2) for w, _ in costs[side]]} s, "
              f"CPU {[round(c, 2) for _, c in costs[side]]} s; {per_char * 1e6:.2f} CPU µs per character "
              f"-> the whole corpus ≈ {per_char * sum(map(len, everything)):.1f} CPU s of model time")


if __name__ == "__main__":
    main()
