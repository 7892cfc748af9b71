"""Zip bombs and hostile files: peak memory and time to refuse, before and after the limits (issue 15).

    python benchmarks/bombs.py make DIR                   # write the bombs (a few seconds)
    python benchmarks/bombs.py run FILE                   # ingest one file in-process; prints one JSON line
    python benchmarks/bombs.py compare DIR --base SRC --after SRC [--timeout 90] [--as-gb 4]
    python benchmarks/bombs.py kill DIR                   # SIGKILL a parse worker mid-batch: what is lost

`compare` runs `run` for every bomb in a fresh process under each source tree (PYTHONPATH),
each capped by RLIMIT_AS (as `prlimit --as` does) and a timeout so the baseline cannot take the
machine down, and prints a markdown table: peak RSS (VmHWM of the process and its workers, sampled
from /proc), wall time, what the report said.  Embedding is off
(embed.provider none): the figures are the parse alone.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

MB = 1024 * 1024
# (seed builder, member, text before which the repeated unit goes, the unit): 100 MB of real XML.
DOCX = ("docx", "word/document.xml", b"<w:sectPr", b"<w:p><w:r><w:t>All work and no play makes a dull bomb.</w:t></w:r></w:p>")
ODT = ("odt", "content.xml", b"</office:text>", b"<text:p>All work and no play makes a dull bomb.</text:p>")
EPUB = ("epub", "EPUB/chap1.xhtml", b"</body>", b"<p>All work and no play makes a dull bomb.</p>")
XLSX = ("xlsx", "xl/worksheets/sheet1.xml", b"</sheetData>",
        b'<row><c t="inlineStr"><is><t>All work and no play makes a dull bomb.</t></is></c></row>')
PPTX = ("pptx", "ppt/slides/slide1.xml", b"</p:txBody>", b"<a:p><a:r><a:t>All work and no play makes a dull bomb.</a:t></a:r></a:p>")


def seed(kind: str, folder: Path) -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from ingest import fixtures

    path = folder / f"seed.{kind}"
    builders = {
        "docx": lambda: fixtures.make_docx(path, [(0, "seed")]),
        "odt": lambda: fixtures.make_odt(path, [(0, "seed")]),
        "epub": lambda: fixtures.make_epub(path, "Seed", [("One", "seed")]),
        "xlsx": lambda: fixtures.make_xlsx(path, {"S": [["seed"]]}),
        "pptx": lambda: fixtures.make_pptx(path, [("Seed", "seed")]),
    }
    return builders[kind]()


def bomb(spec: tuple, folder: Path, megabytes: int) -> Path:
    """The seed file with one member grown to `megabytes` MB of valid, repetitive XML."""
    kind, member, marker, unit = spec
    src = seed(kind, folder)
    dest = folder / f"bomb-{megabytes}mb.{kind}"
    with zipfile.ZipFile(src) as old, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            body = old.read(info)
            if info.filename != member:
                new.writestr(info, body)
                continue
            head, tail = body.split(marker, 1) if marker in body else (body, b"")
            head = re.sub(rb'<dimension ref="[^"]*"/>', b"", head)  # else openpyxl stops at the declared last row
            big = zipfile.ZipInfo(member)
            big.compress_type = zipfile.ZIP_DEFLATED
            block = unit * (MB // len(unit))
            with new.open(big, "w", force_zip64=True) as out:
                out.write(head)
                for _ in range(megabytes):
                    out.write(block)
                out.write(marker + tail)
    src.unlink()
    return dest


def make(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    made = [bomb(spec, folder, 100) for spec in (EPUB, ODT, DOCX, XLSX, PPTX)]
    made.append(bomb(DOCX, folder, 1024))  # the "3 MB .docx expanding to 1 GB"
    return made


def run(path: Path) -> dict:
    """Ingest one file with the source tree on PYTHONPATH; time and memory of the add alone."""
    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings

    with tempfile.TemporaryDirectory() as tmp:
        kb = KnowledgeBase(Settings(kb=f"{tmp}/kb.db", embed={"provider": "none"}, search={"mode": "bm25"}))
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        started = time.perf_counter()
        report = kb.add([path])
        seconds = time.perf_counter() - started
        kb.close()
    peak = max(resource.getrusage(who).ru_maxrss // 1024 for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    outcome = (f"failed {report.failed[0][1]}: {report.failed[0][2]}" if report.failed
               else f"accepted, {report.chunks} chunks")
    return {"file": path.name, "seconds": round(seconds, 2), "rss_before_mb": before, "peak_mb": peak, "outcome": outcome}


def kill_one_worker(folder: Path) -> dict:
    """Ingest a folder (20 small files and 20 MB of text) with 2 workers; SIGKILL one worker 0.5 s after the workers start,
    as the OOM killer would.  Prints what the batch made of it."""
    import multiprocessing
    import os
    import random
    import signal
    import threading

    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings

    folder.mkdir(parents=True, exist_ok=True)
    for n in range(20):
        (folder / f"note{n:02}.txt").write_text(f"Note {n} about the marmalade harbour.\n")
    words, rng = "alpha beta gamma delta omega river stone cloud".split(), random.Random(7)
    (folder / "big.txt").write_text("\n\n".join(" ".join(rng.choices(words, k=60)) for _ in range(52_000)))

    def killer() -> None:
        for _ in range(600):
            if children := multiprocessing.active_children():
                time.sleep(0.5)  # the workers are parsing now
                os.kill(children[0].pid, signal.SIGKILL)
                return
            time.sleep(0.05)

    with tempfile.TemporaryDirectory() as tmp, KnowledgeBase(Settings(
            kb=f"{tmp}/kb.db", embed={"provider": "none"}, ingest={"workers": 2})) as kb:
        threading.Thread(target=killer, daemon=True).start()
        try:
            report = kb.add([folder])
        except Exception as exc:  # noqa: BLE001 — the baseline's BrokenProcessPool is the figure
            return {"outcome": f"batch aborted: {type(exc).__name__}: {exc}"[:160], "indexed": 0}
    return {"outcome": f"failed: {[(Path(p).name, k, r) for p, k, r in report.failed]}"[:300],
            "indexed": len(report.added)}


def measure(path: Path, src: str, timeout: int, as_gb: float) -> dict:
    """`run` in a child process capped by RLIMIT_AS and a timeout; its peak RSS (and its workers')
    sampled from /proc every 0.1 s, so a run killed at the timeout still reports its peak."""
    cap = int(as_gb * 1024**3)
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, __file__, "run", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin"},
                            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (cap, cap)))
    peak = 0
    while proc.poll() is None and time.perf_counter() - started < timeout:
        peak = max(peak, _tree_hwm_mb(proc.pid))
        time.sleep(0.1)
    killed = proc.poll() is None
    if killed:
        proc.kill()
    out, err = proc.communicate()
    wall = time.perf_counter() - started
    line = out.strip().splitlines()[-1:] if proc.returncode == 0 else []
    result = json.loads(line[0]) if line else {
        "file": path.name, "seconds": None, "rss_before_mb": None,
        "outcome": f"killed at the {timeout} s timeout" if killed else
                   f"died (exit {proc.returncode}) under the {as_gb:g} GB cap: {(err.strip().splitlines() or ['?'])[-1][:100]}"}
    result.update(peak_mb=max(peak, result.get("peak_mb") or 0), wall_s=round(wall, 1))
    return result


def _tree_hwm_mb(pid: int) -> int:
    """The largest peak RSS (VmHWM) of a process and its children, in MB."""
    best = 0
    for each in [pid, *_children(pid)]:
        try:
            for line in Path(f"/proc/{each}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    best = max(best, int(line.split()[1]) // 1024)
        except OSError:
            pass
    return best


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def compare(folder: Path, base: str, after: str, timeout: int, as_gb: float) -> None:
    print("| bomb | packed | before: peak RSS, time, outcome | after: peak RSS (above start), time, outcome |")
    print("|---|---|---|---|")
    for path in sorted(folder.glob("bomb-*")):
        old, new = measure(path, base, timeout, as_gb), measure(path, after, timeout, as_gb)
        above = new["peak_mb"] - (new["rss_before_mb"] or 0)
        print(f"| {path.name} | {path.stat().st_size // 1024} KB | {old['peak_mb']} MB, {old['wall_s']:.1f} s, "
              f"{old['outcome'][:90]} | {new['peak_mb']} MB (+{above}), {new['seconds']} s, {new['outcome'][:90]} |",
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("make", "run", "compare", "kill"))
    parser.add_argument("path", type=Path)
    parser.add_argument("--base", default="")
    parser.add_argument("--after", default=str(Path(__file__).resolve().parents[1] / "src"))
    parser.add_argument("--timeout", type=int, default=90)
    parser.add_argument("--as-gb", type=float, default=4.0)
    args = parser.parse_args()
    if args.command == "make":
        for path in make(args.path):
            print(path, path.stat().st_size // 1024, "KB")
    elif args.command == "kill":
        print(json.dumps(kill_one_worker(args.path)))
    elif args.command == "run":
        print(json.dumps(run(args.path)))
    else:
        compare(args.path, args.base, args.after, args.timeout, args.as_gb)


if __name__ == "__main__":
    main()
