"""Chunking and enrichment throughput on a synthetic 5 MB Markdown and 5 MB plain text, against
the time tiktoken takes to merely encode the whole text once (exact counts the naive way).

Enrichment is timed per 25 kB file (it only reads a file's head).  Chunking reuses the
per-process cache of word-segment counts (`docqa.text.tokens`), so its first run (cold cache,
as for the first files a worker sees) is shown beside the best of three.

Usage: python benchmarks/chunk_speed.py [--mb 5] [--max-tokens 512] [--overlap 50]
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time

from docqa.ingest.chunkers import chunk_document
from docqa.ingest.enrich import enrich
from docqa.text import count_tokens, encode
from docqa.types import HEADING, Block, Document

WORDS = ("the a of to and in is for that with on as by this be are from or at an it index "
         "query document chunk section token retrieval answer citation server database install "
         "configure version release python embedding vector search model local private").split()
FILE_CHARS = 25_000  # the size of the files of benchmarks/ingest_speed.py text
CHINESE = "本地优先的文档问答系统支持中文分词与精确引用每个答案都附带出处和行号检索结果按相关度排序"


def sentence(rng: random.Random) -> str:
    if rng.random() < 0.15:
        return "".join(rng.choice(CHINESE) for _ in range(rng.randint(12, 40))) + rng.choice("。！？")
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 24))]
    if rng.random() < 0.2:
        words.insert(2, f"{rng.randint(1, 9)}.{rng.randint(0, 99)}")
    return " ".join(words).capitalize() + rng.choice("..?!")


def paragraph(rng: random.Random) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(1, 8)))


def markdown(size: int, seed: int = 1) -> str:
    """Headings (levels 1-3), paragraphs, lists and fenced code, about `size` characters."""
    rng, parts, total = random.Random(seed), [], 0
    while total < size:
        kind = rng.random()
        if kind < 0.12:
            part = "#" * rng.randint(1, 3) + " " + " ".join(rng.choice(WORDS) for _ in range(3)).title()
        elif kind < 0.2:
            part = "```python\n" + "\n".join(f"x{i} = compute({i})" for i in range(rng.randint(2, 12))) + "\n```"
        elif kind < 0.3:
            part = "\n".join(f"- {sentence(rng)}" for _ in range(rng.randint(2, 6)))
        else:
            part = paragraph(rng)
        parts.append(part)
        total += len(part) + 2
    return "\n\n".join(parts) + "\n"


def plain(size: int, seed: int = 2) -> str:
    rng, parts, total = random.Random(seed), [], 0
    while total < size:
        parts.append(paragraph(rng))
        total += len(parts[-1]) + 2
    return "\n\n".join(parts) + "\n"


def headings(text: str) -> list[Block]:
    """HEADING blocks as the Markdown reader makes them (fences skipped)."""
    blocks, fenced = [], False
    for m in re.finditer(r"^(```.*|#{1,6} .*)$", text, re.M):
        if m.group().startswith("```"):
            fenced = not fenced
        elif not fenced:
            blocks.append(Block(m.start(), m.end(), HEADING, level=len(m.group()) - len(m.group().lstrip("#"))))
    return blocks


def timed(fn, repeat: int = 3) -> tuple[float, float]:
    """Seconds of the first run and of the best run."""
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - started)
    return runs[0], min(runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=5.0)
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--overlap", type=int, default=50)
    args = parser.parse_args()
    count_tokens("warm up")  # loading the BPE ranks takes ~0.3 s once per process
    enrich(Document("warm.txt", "text", "Warm up the word frequency tables."))
    size = int(args.mb * 1e6)
    md_text, txt_text = markdown(size), plain(size)
    docs = {"markdown": Document("bench.md", "markdown", md_text, blocks=headings(md_text)),
            "text": Document("bench.txt", "text", txt_text)}
    for name, doc in docs.items():
        mb = len(doc.text.encode("utf-8")) / 1e6
        _, base = timed(lambda: len(encode(doc.text)))
        chunks: list = []
        cold, took = timed(lambda: chunks.__setitem__(slice(None), chunk_document(doc, args.max_tokens, args.overlap)))
        # Enrichment reads the head of each file: time it per file of FILE_CHARS, not on one doc.
        files = [Document(f"{name}{i}", "text", doc.text[i : i + FILE_CHARS])
                 for i in range(0, len(doc.text), FILE_CHARS)]
        _, meta = timed(lambda: [enrich(f) for f in files])
        print(f"{name:8s} {mb:.2f} MB  chunk {mb / took:5.1f} MB/s (first run {mb / cold:5.1f}, "
              f"{len(chunks)} chunks)  enrich {mb / meta:5.1f} MB/s  chunk+enrich {mb / (took + meta):5.1f} MB/s  "
              f"| tiktoken encode-once baseline {mb / base:5.1f} MB/s: chunk+enrich costs {(took + meta) / base:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
