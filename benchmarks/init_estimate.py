"""`docqa init` and `docqa estimate` (issue 17, parts 2 and 6): how long the planning step takes,
and how close the estimates come to what then happens.

    python benchmarks/init_estimate.py init      # plan_folder on the data pack and on /usr/share/doc,
                                                 # against the bare listing (Scanner.scan) in the same run
    python benchmarks/init_estimate.py ingest    # predicted vs actual first add (time, chunks, index size)
    python benchmarks/init_estimate.py ingest-large   # the same for /usr/share/doc, BM25 only
    python benchmarks/init_estimate.py question  # predicted vs actual tokens / calls / time per question
                                                 # (scripted model; defaults before runs, averages after)
    python benchmarks/init_estimate.py folders [fit|check|FOLDER...] [--baseline SRC] [--embed none|local]
        # issue 33: the estimate vs a first `docqa add` (a new process, as a user runs it): chunks, index size,
        # CPU seconds (and wall); FIT_FOLDERS / CHECK_FOLDERS, default the data pack and /usr/share/doc;
        # --baseline: the same estimates by another tree (main) in a subprocess; --embed local: with vectors
    python benchmarks/init_estimate.py table ROWS.jsonl   # the rows `folders` printed, as a Markdown table

Run with `nice -n 10`; the data pack is ../shared/data beside the repository.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
sys.path.insert(0, str(REPO / "tests"))  # the scripted OpenAI-compatible server


def _settings(kb: str, **extra):
    from docqa.settings import Settings

    return Settings(kb=kb, llm={"provider": "none"}, **extra)


def bench_init(folders: list[Path]) -> list[dict]:
    """plan_folder (rules only) per folder, and the listing alone as the same-run baseline."""
    from docqa.ingest.scan import Scanner
    from docqa.plan import plan_folder

    rows = []
    for folder in folders:
        t0 = time.perf_counter()
        listed = Scanner(exclude=["**/.git/**", "**/node_modules/**", "**/__pycache__/**", "**/.venv/**"]).scan([folder])
        listing = time.perf_counter() - t0
        t0 = time.perf_counter()
        plan = plan_folder(folder, _settings("/tmp/unused.db"), refine=False)
        took = time.perf_counter() - t0
        s = plan.survey
        rows.append({"folder": str(folder), "files_listed": len(listed.files), "files": s.files, "bytes": s.bytes,
                     "types": len(s.by_type), "sampled": sum(int(x["files"]) for x in s.sample.values()),
                     "checked": s.checked, "scanned": len(s.scanned), "encrypted": len(s.encrypted),
                     "complete": s.complete, "init_s": round(took, 2), "listing_s": round(listing, 2),
                     "predicted_add_s": plan.proposal.estimate.seconds})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the parser workers), user + system."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def bench_ingest(folders: list[tuple[Path, str]]) -> list[dict]:
    """The estimate under the default settings (embed.provider as given), then a real first add into a
    fresh knowledge base with the same settings."""
    from docqa.kb import KnowledgeBase
    from docqa.plan import ingest_estimate

    rows = []
    for folder, embed in folders:
        with tempfile.TemporaryDirectory() as tmp:
            settings = _settings(str(Path(tmp) / "kb.db"), embed={"provider": embed})
            t0 = time.perf_counter()
            est = ingest_estimate(folder, settings)
            estimate_s = time.perf_counter() - t0
            t0, cpu0 = time.perf_counter(), _cpu()
            with KnowledgeBase(settings) as kb:
                report = kb.add([folder])
            actual_s, cpu_s = time.perf_counter() - t0, _cpu() - cpu0
            size = sum(p.stat().st_size for p in Path(tmp).glob("kb.db*"))
        rows.append({"folder": str(folder.relative_to(DATA)) if folder.is_relative_to(DATA) else str(folder), "embed": embed,
                     "estimate_s": round(estimate_s, 2),
                     "predicted_s": est.seconds, "actual_s": round(actual_s, 1), "actual_cpu_s": round(cpu_s, 2),
                     "load": round(os.getloadavg()[0], 1),
                     "predicted_chunks": est.chunks, "actual_chunks": report.chunks,
                     "predicted_index_mb": round(est.index_bytes / 2**20, 2), "actual_index_mb": round(size / 2**20, 2),
                     "ocr_pages": est.ocr_pages, "added": len(report.added), "failed": len(report.failed)})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def bench_question(warm: int = 8, held_out: int = 8, seed: int = 3) -> dict:
    """Scripted runs with varied usage and delays: the estimate before any run (defaults), after `warm`
    runs (averages), against the mean of `held_out` further runs."""
    from llm.scripted_server import ScriptedServer

    from docqa.kb import KnowledgeBase
    from docqa.llm import OpenAICompatModel

    rng = random.Random(seed)
    replies = []
    for _ in range(warm + held_out):
        replies += [{"text": "Backups are kept for 35 days [1].", "usage": (rng.randint(900, 2600), rng.randint(20, 120)),
                     "delay": rng.uniform(0.05, 0.5)},
                    {"text": "VERIFIED", "usage": (rng.randint(700, 1500), rng.randint(1, 8)), "delay": rng.uniform(0.02, 0.2)}]
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer(replies) as server:
        docs = Path(tmp) / "docs"
        docs.mkdir()
        (docs / "ops.md").write_text("# Ops\n\n## Backups\n\nBackups are kept for 35 days.\n", encoding="utf-8")
        settings = _settings(str(Path(tmp) / "kb.db"), embed={"provider": "none"}, answer={"mode": "pipeline"})
        model = OpenAICompatModel(server.base_url, "scripted", timeout=30, max_retries=0)
        with KnowledgeBase(settings, chat_model=model) as kb:
            kb.add([docs])
            before = kb.estimates.question("How long are backups kept?")
            for _ in range(warm):
                kb.ask("How long are backups kept?")
            after = kb.estimates.question("How long are backups kept?")
            for _ in range(held_out):
                kb.ask("How long are backups kept?")
            runs = kb.log.runs(limit=held_out)
    actual = {"prompt_tokens": sum(r.usage["prompt_tokens"] for r in runs) / held_out,
              "completion_tokens": sum(r.usage["completion_tokens"] for r in runs) / held_out,
              "model_calls": sum(r.usage["model_calls"] for r in runs) / held_out,
              "seconds": sum(r.timings["total"] for r in runs) / held_out}
    keys = ("prompt_tokens", "completion_tokens", "model_calls", "seconds")
    result = {"defaults": {k: before[k] for k in keys}, "after_runs": {k: after[k] for k in keys},
              "actual_held_out": {k: round(v, 3) for k, v in actual.items()}, "warm": warm, "held_out": held_out}
    print(json.dumps(result), flush=True)
    return result


FOLDERS = [Path("/usr/share/doc"), Path("/usr/share/doc/gdb"), DATA / "docs" / "multiformat", DATA / "docs" / "code",
           DATA / "qa" / "squad2-dev-subset", DATA / "retrieval" / "scifact", DATA / "retrieval" / "cmrc2018-dev"]
# The trust dev set's documentation folders (`python benchmarks/trust/devset.py build`; TRUST_CORPUS overrides).
TRUST = Path(os.environ.get("TRUST_CORPUS", REPO / "benchmarks" / ".work" / "trust" / "corpus"))
# The rates of docqa.plan.rates that depend on the language (index bytes and CPU seconds per character, per
# Han character, per chunk, per file) were fitted on FIT_FOLDERS and are checked on CHECK_FOLDERS: no file of
# a fit folder is in a check folder, except pdf-manuals' three PDFs, which are inside /usr/share/doc (0.3 % of
# its bytes; the only PDFs outside the data pack's check folder), and 3 of zh_TW's 11 man pages, which
# manpages-zh also holds.
FIT_FOLDERS = [DATA / "qa" / "squad2-dev-subset", DATA / "docs" / "code", TRUST / "lilypond-zh", TRUST / "manpages-zh",
               TRUST / "lxgw-wenkai", TRUST / "pdf-manuals", Path("/usr/share/man/zh_CN"), Path("/usr/share/vim/vim90/tutor"),
               Path("/usr/share/man/man1")]
CHECK_FOLDERS = [Path("/usr/share/doc"), Path("/usr/share/doc/gdb"), DATA / "docs" / "multiformat",
                 DATA / "retrieval" / "scifact", DATA / "retrieval" / "cmrc2018-dev", TRUST / "debian-edu-zh", TRUST / "wiki-zh",
                 Path("/usr/share/man/zh_TW"), TRUST / "debian-readmes", TRUST / "git-relnotes", TRUST / "markdown-docs",
                 TRUST / "valgrind-html"]
SETS = {"fit": FIT_FOLDERS, "check": CHECK_FOLDERS}


def _baseline(src: str, folder: Path, embed: str) -> dict:
    """`docqa estimate --ingest FOLDER --json` by the tree at `src`."""
    import subprocess

    env = {**{k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}, "PYTHONPATH": src,
           "DOCQA_EMBED__PROVIDER": embed, "DOCQA_LLM__PROVIDER": "none"}
    proc = subprocess.run([sys.executable, "-m", "docqa", "estimate", "--ingest", str(folder), "--json"],
                          capture_output=True, text=True, env=env, timeout=600, check=True)
    return json.loads(proc.stdout)


def _text_shares(db: Path) -> dict:
    """The indexed documents' text: characters, Han characters (the index grows faster per Han character)."""
    import sqlite3

    from docqa.text.language import HAN_RUN

    chars = han = 0
    with sqlite3.connect(db) as conn:
        for (text,) in conn.execute("SELECT text FROM document_texts"):
            chars += len(text)
            han += sum(len(run) for run in HAN_RUN.findall(text))
    return {"actual_text_chars": chars, "actual_han_chars": han}


def _cli_add(src: str, kb: Path, folder: Path, embed: str) -> tuple[float, float]:
    """`docqa add FOLDER` as a user runs it (a new process: start, imports, dictionaries, the add) into a new
    knowledge base at `kb`: (wall seconds, CPU seconds of it and its parser workers)."""
    import resource
    import subprocess

    env = {**{k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}, "PYTHONPATH": src,
           "DOCQA_EMBED__PROVIDER": embed, "DOCQA_LLM__PROVIDER": "none"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "docqa", "--kb", str(kb), "add", str(folder)], capture_output=True,
                          text=True, env=env, timeout=7200)
    if proc.returncode not in (0, 1):  # 1: some files failed (the multiformat corpus has broken ones on purpose)
        raise RuntimeError(f"docqa add {folder}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def bench_folders(folders: list[Path], baseline: str | None, embed: str = "none") -> list[dict]:
    """Chunks, index size and time, predicted and actual (a first `docqa add` in a new process, full text only
    unless `embed` is "local"), with the error in per cent; time against the add's CPU seconds (what it takes
    on two cores to itself: the wall time on this shared machine is reported beside, with the load); the
    outsized-file warnings the estimate gave; `baseline`: the estimate of another tree (main) in the same run."""
    import sqlite3

    from docqa.plan import ingest_estimate

    rows = []
    for folder in folders:
        if not folder.is_dir():
            continue
        with tempfile.TemporaryDirectory() as tmp:
            settings = _settings(str(Path(tmp) / "kb.db"), embed={"provider": embed})
            t0 = time.perf_counter()
            est = ingest_estimate(folder, settings)
            estimate_s = time.perf_counter() - t0
            load = os.getloadavg()[0]
            actual_s, cpu_s = _cli_add(str(REPO / "src"), Path(tmp) / "kb.db", folder, embed)
            size = sum(p.stat().st_size for p in Path(tmp).glob("kb.db*"))
            with sqlite3.connect(Path(tmp) / "kb.db") as conn:
                chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
                added = conn.execute("SELECT count(*) FROM documents WHERE status = 'ok'").fetchone()[0]
            shares = _text_shares(Path(tmp) / "kb.db")
        err = lambda p, a: round(100 * (p - a) / max(a, 1e-9), 1)  # noqa: E731
        row = {"folder": str(folder.relative_to(DATA)) if folder.is_relative_to(DATA) else str(folder), "embed": embed,
               "estimate_s": round(estimate_s, 1), "predicted_chunks": est.chunks, "actual_chunks": chunks,
               "chunks_err_pct": err(est.chunks, chunks), "predicted_index_mb": round(est.index_bytes / 1e6, 2),
               "actual_index_mb": round(size / 1e6, 2), "index_err_pct": err(est.index_bytes, size),
               "predicted_s": est.seconds, "actual_cpu_s": round(cpu_s, 2), "time_err_pct": err(est.seconds, cpu_s),
               "actual_wall_s": round(actual_s, 2), "load_before": round(load, 1), "load_after": round(os.getloadavg()[0], 1),
               "predicted_text_chars": est.text_chars, **shares, "added": added,
               "outsized": [n.split(" alone")[0] for n in est.notes if n.startswith("outsized")]}
        if baseline:
            base = _baseline(baseline, folder, embed)
            row |= {"baseline_chunks": base["chunks"], "baseline_chunks_err_pct": err(base["chunks"], chunks),
                    "baseline_index_mb": round(base["index_bytes"] / 1e6, 2),
                    "baseline_index_err_pct": err(base["index_bytes"], size),
                    "baseline_s": base["seconds"], "baseline_time_err_pct": err(base["seconds"], cpu_s)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def table(path: Path) -> str:
    """The rows `folders` printed (JSON lines in `path`) as a Markdown table: actual, main's estimate, this one."""
    fit = {str(f) for f in FIT_FOLDERS} | {str(f.relative_to(DATA)) for f in FIT_FOLDERS if f.is_relative_to(DATA)}
    pct = lambda v: f"{v:+.0f} %"  # noqa: E731
    lines = ["| folder | set | chunks: actual | main | now | index MB: actual | main | now | CPU s: actual | main | now | wall s (load) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for line in path.read_text().splitlines():
        r = json.loads(line)
        name = r["folder"].replace(str(TRUST) + "/", "trust: ")
        lines.append(f"| {name} | {'fit' if r['folder'] in fit else 'check'} | {r['actual_chunks']:,} | "
                     f"{pct(r['baseline_chunks_err_pct'])} | {pct(r['chunks_err_pct'])} | {r['actual_index_mb']:,.1f} | "
                     f"{pct(r['baseline_index_err_pct'])} | {pct(r['index_err_pct'])} | {r['actual_cpu_s']:,.1f} | "
                     f"{pct(r['baseline_time_err_pct'])} | {pct(r['time_err_pct'])} | {r['actual_wall_s']:,.0f} ({r['load_before']:.0f}) |")
    return "\n".join(lines)


def main() -> None:
    part = sys.argv[1] if len(sys.argv) > 1 else "all"
    if part in ("init", "all"):
        bench_init([DATA / "docs" / "multiformat", DATA, Path("/usr/share/doc")])
    if part in ("ingest", "all"):
        bench_ingest([(DATA / "docs" / "multiformat", "local"), (DATA / "docs" / "code", "local"),
                      (DATA / "qa" / "squad2-dev-subset", "local")])
    if part == "ingest-large":
        bench_ingest([(Path("/usr/share/doc"), "none")])
    if part == "folders":
        args = sys.argv[2:]
        options = {k: args[args.index(k) + 1] for k in ("--baseline", "--embed") if k in args}
        named = [a for a in args if a not in options and a not in options.values()]
        paths = [p for a in named for p in (SETS[a] if a in SETS else [Path(a)])]
        bench_folders(paths or FOLDERS, options.get("--baseline"), options.get("--embed", "none"))
    if part == "table":
        print(table(Path(sys.argv[2])))
    if part in ("question", "all"):
        bench_question()


if __name__ == "__main__":
    os.environ.setdefault("OLLAMA_HOST", "127.0.0.1:9")  # no machine model: the figures are about docqa
    main()
