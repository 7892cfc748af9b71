"""Fuzzing: corrupted files of every format through the real pipeline, in worker processes.

Seeded mutations (truncations, bit flips, spliced bytes and zip members, giant declared sizes)
of one real file per format.  For each batch: the batch completes, every file is accounted for
(indexed, skipped or failed with a kind and a reason), no parse outlives the time limit, no
worker outgrows its memory cap, and the untouched originals are still found.

CI runs DOCQA_FUZZ_N=120 mutants (a few seconds); by hand, e.g.
    DOCQA_FUZZ_N=2000 pytest -q -s tests/ingest/test_fuzz.py
prints the tally recorded in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import io
import os
import random
import resource
import struct
import time
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from docqa.kb import KnowledgeBase
from docqa.settings import Settings

from .fixtures import make_corpus

N = int(os.environ.get("DOCQA_FUZZ_N", "120"))
SEED = int(os.environ.get("DOCQA_FUZZ_SEED", "15"))
TIMEOUT_S = 20.0
MEMORY_MB = 1024
# Kinds a broken file may fail with.  "error" (an unexpected exception outside the readers) is
# a bug; so is "killed" (a worker died); "timeout" means a parse hung: all three fail the test.
CLEAR = {"corrupt", "empty", "no-text", "unsupported", "encrypted", "too-large"}


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(1, len(data))]


def flip_bits(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.choice((1, 4, 32))):
        out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


def splice(data: bytes, rng: random.Random, donor: bytes) -> bytes:
    """A slice of another file's bytes written over a random stretch of this one."""
    start, length = rng.randrange(len(data)), rng.randrange(1, 4096)
    piece = donor[(at := rng.randrange(len(donor))): at + length]
    return data[:start] + piece + data[start + len(piece):]


def splice_member(data: bytes, rng: random.Random, donor: bytes) -> bytes:
    """A zip with one member replaced by random bytes or a slice of another file."""
    with zipfile.ZipFile(io.BytesIO(data)) as old:
        infos = old.infolist()
        victim = rng.choice(infos).filename
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as new:
            for info in infos:
                body = old.read(info)
                if info.filename == victim:
                    body = rng.choice((rng.randbytes(rng.randrange(1, 2048)), donor[: rng.randrange(1, len(donor))], b""))
                new.writestr(info, body)
    return out.getvalue()


def giant_sizes(data: bytes, rng: random.Random) -> bytes:
    """Declared sizes that lie: a zip member's unpacked size or a PDF stream's /Length made huge."""
    out = bytearray(data)
    entries = [i for i in range(len(out)) if out[i:i + 4] == b"PK\x01\x02"]
    if entries:
        struct.pack_into("<I", out, rng.choice(entries) + 24, rng.choice((0xFFFFFFF0, 2**31, 10**9)))
        return bytes(out)
    if (at := out.find(b"/Length ")) >= 0:
        end = at + 8
        while end < len(out) and out[end:end + 1].isdigit():
            end += 1
        return bytes(out[: at + 8]) + b"99999999999" + bytes(out[end:])
    return truncate(data, rng)


def mutate(data: bytes, rng: random.Random, donor: bytes) -> tuple[str, bytes]:
    choices = ["truncate", "flip", "splice", "giant"] + (["member"] if data.startswith(b"PK\x03\x04") else [])
    how = rng.choice(choices)
    if how == "member":
        return how, splice_member(data, rng, donor)
    if how == "giant":
        return how, giant_sizes(data, rng)
    if how == "splice":
        return how, splice(data, rng, donor)
    return how, (truncate if how == "truncate" else flip_bits)(data, rng)


def write_mutants(seeds: list[Path], folder: Path, n: int, seed: int) -> dict[str, str]:
    """n mutants of the seed files, round robin; returns {file name: mutation}."""
    rng = random.Random(seed)
    originals = [p.read_bytes() for p in seeds]
    folder.mkdir(parents=True, exist_ok=True)
    made = {}
    for i in range(n):
        source = seeds[i % len(seeds)]
        how, data = mutate(originals[i % len(seeds)], rng, rng.choice(originals))
        name = f"m{i:05}-{how}-{source.stem}{source.suffix}"
        (folder / name).write_bytes(data)
        made[name] = how
    return made


@pytest.mark.slow
def test_corrupted_files_of_every_format_fail_clearly_and_alone(tmp_path):
    phrases = make_corpus(tmp_path / "seeds")
    seeds = sorted(phrases)
    docs = tmp_path / "docs"
    mutants = write_mutants(seeds, docs / "mutants", N, SEED)
    for path in seeds:  # the originals ride along: they must still be read right
        (docs / path.name).write_bytes(path.read_bytes())
    settings = Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, search={"mode": "bm25"},
                        ingest={"workers": 2, "parse_timeout": TIMEOUT_S, "worker_memory_mb": MEMORY_MB})
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # earlier tests' processes
    started = time.perf_counter()
    with KnowledgeBase(settings) as kb:
        report = kb.add([docs])
        readable = {Path(d.path).name for d in kb.documents.list() if d.status == "ok"}
    elapsed = time.perf_counter() - started

    names = {Path(p).name for p in report.added} | {Path(p).name for p, _ in report.skipped}
    failed = {Path(p).name: (kind, reason) for p, kind, reason in report.failed}
    assert names | set(failed) == set(mutants) | {p.name for p in seeds}  # every file accounted for
    unclear = {name: f for name, f in failed.items() if f[0] not in CLEAR or not f[1].strip()}
    assert not unclear, unclear
    assert {p.name for p in seeds} <= readable
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    assert children <= max(children_before, before + MEMORY_MB * 1024)  # KB: no worker outgrew its cap
    tally = Counter(kind for kind, _ in failed.values())
    print(f"\nfuzz: {N} mutants (seed {SEED}) in {elapsed:.1f} s: {len(report.added) - len(seeds)} indexed, "
          f"{len(report.skipped)} skipped, failed {dict(tally)}; by mutation {dict(Counter(mutants.values()))}; "
          f"peak RSS parent {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB, "
          f"largest worker {children // 1024} MB")
