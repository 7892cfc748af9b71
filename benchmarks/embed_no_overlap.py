"""Run a benchmark script with the bundled model reading each chunk without its overlap (an experiment, not shipped).

    python benchmarks/embed_no_overlap.py benchmarks/retrieval_hybrid.py cmrc2018-dev --queries 150 --distractors 600
    python benchmarks/embed_no_overlap.py benchmarks/trust/retrieval.py --docset all --mode hybrid --kb /tmp/x.db

In this process `embed_inputs` (ingest/pipeline.py) gives the model each chunk's title / section line and its text
from where the previous chunk of the same file ended (chunks overlap by about `chunk.overlap` tokens; the stored
chunk keeps its overlap, BM25 too); the text hash is that input's.  The local model's version gets an `o`, so a
knowledge base of this shape is never one of the shipped shape.  Only a fresh add is meaningful (`docqa reindex`
rebuilds inputs from one stored chunk and would not know the overlap).
"""

from __future__ import annotations

import runpy
import sys

import docqa.ingest.pipeline as pipeline
from docqa.embed.base import embed_text, text_hash
from docqa.embed.local import LocalEmbedder


def embed_inputs(parsed: pipeline.Parsed) -> list[tuple[str, str]]:
    inputs, end = [], 0
    for chunk in parsed.chunks:
        chunk.text = parsed.text[chunk.char_start : chunk.char_end]
        fresh = parsed.text[max(chunk.char_start, end) : chunk.char_end] or chunk.text
        end = max(end, chunk.char_end)
        enriched = embed_text(parsed.title, chunk.section, fresh, chunk.context, chunk.symbol)
        inputs.append((text_hash(enriched), enriched))
    return inputs


def main() -> None:
    pipeline.embed_inputs = embed_inputs
    shipped = LocalEmbedder.__init__

    def init(self: LocalEmbedder, *args, **kwargs) -> None:
        shipped(self, *args, **kwargs)
        self.version += "o"

    LocalEmbedder.__init__ = init  # type: ignore[method-assign]
    sys.argv = sys.argv[1:]
    runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
