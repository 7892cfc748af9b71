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
        # --baseline: the same estimates by another tree (main) in a subprocess; --embed local: with vectors (e5: by
        # multilingual-e5-small)
    python benchmarks/init_estimate.py table ROWS.jsonl...   # the rows `folders` printed, as a Markdown table (median CPU)
    python benchmarks/init_estimate.py usr-doc [text] [subset] [build] [--runs N] [--dest DIR] [--embed local|e5]
        # [--every N] [--no-gdb]  # issue 33 as met: the whole
        # /usr/share/doc full text; a subset shaped like the issue's folder (usr_doc_subset: gdb, the PDF packages, every
        # 18th package folder: 246 files) with the bundled model; "build" only writes the subset
    python benchmarks/init_estimate.py rescore ROWS.jsonl [--baseline SRC]  # those rows with this tree's estimates (the adds
        # not redone); --baseline: the baseline's estimates redone by the tree at SRC
    python benchmarks/init_estimate.py test-log           # writes TEST_LOG (a generated test-suite log, a fit folder)
    python benchmarks/init_estimate.py fit-time ROWS.jsonl...  # CHAR_S (or a rate a token), PACKED_S, JSON_CHAR_S fitted on the fit rows
    python benchmarks/init_estimate.py start [REPS]       # CPU seconds of adding an empty and a one-page folder (START_S,
        # EMBED_START_S, E5_START_S)
    python benchmarks/init_estimate.py fit-embed ROWS.jsonl...  # USE_TOKEN_S, USE_CHAR_S, USE_HAN_S (rows with and without vectors)
    python benchmarks/init_estimate.py windows [REPS]     # the bundled model's CPU a window and a token: windows of fixed
        # widths cut from the same texts (English, SciFact, Chinese) through the embedder (USE_WINDOW_S); what padding costs
    python benchmarks/init_estimate.py e5 [REPS]          # multilingual-e5-small against the bundled model in process, on
        # passages of 300-4,000 characters (prose, a test log): CPU seconds and each model's tokens
    python benchmarks/init_estimate.py fit-e5 ROWS.jsonl...  # E5_TOKEN_S on the fit folders' `folders --embed e5` rows
    python benchmarks/init_estimate.py fit-size ROWS.jsonl...  # INDEX_BYTES_PER_CHAR, _PER_HAN, _PER_CHUNK, _PER_FILE
    python benchmarks/init_estimate.py ocr-fit [FOLDER]   # OCR CPU seconds of each distinct picture of FOLDER (default
        # OCR_FIT: the Rust documentation's screenshots and diagrams) in a parser-like process, against its detected
        # megapixels (from the header), fitted as seconds = a + b x megapixels (rates.OCR_PICTURE_S, OCR_MEGAPIXEL_S)

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
# TEST_LOG: a generated test-suite log (`python benchmarks/init_estimate.py test-log` writes it), the fit folders' one
# text of repeated lines, for the rate that follows compressed size (rates.PACKED_S).  /usr/share/info (texinfo manuals,
# gzipped) and /usr/share/common-licenses: plain English prose, which the fit folders lacked (none is in a check folder).
TEST_LOG = REPO / "benchmarks" / ".work" / "estimate" / "test-log"
FIT_FOLDERS = [DATA / "qa" / "squad2-dev-subset", DATA / "docs" / "code", TRUST / "lilypond-zh", TRUST / "manpages-zh",
               TRUST / "lxgw-wenkai", TRUST / "pdf-manuals", Path("/usr/share/man/zh_CN"), Path("/usr/share/vim/vim90/tutor"),
               Path("/usr/share/man/man1"), TEST_LOG, Path("/usr/share/info"), Path("/usr/share/common-licenses")]
CHECK_FOLDERS = [Path("/usr/share/doc"), Path("/usr/share/doc/gdb"), DATA / "docs" / "multiformat",
                 DATA / "retrieval" / "scifact", DATA / "retrieval" / "cmrc2018-dev", TRUST / "debian-edu-zh", TRUST / "wiki-zh",
                 Path("/usr/share/man/zh_TW"), TRUST / "debian-readmes", TRUST / "git-relnotes", TRUST / "markdown-docs",
                 TRUST / "valgrind-html"]
SETS = {"fit": FIT_FOLDERS, "check": CHECK_FOLDERS}
# Pictures for the OCR rates: the Rust toolchain's documentation (screenshots, diagrams, logos; none in a check folder).
OCR_FIT = Path.home() / ".rustup" / "toolchains" / "stable-x86_64-unknown-linux-gnu" / "share" / "doc" / "rust" / "html"


def write_test_log(folder: Path, lines: int = 90_000, seed: int = 11) -> Path:
    """A generated test-suite log, gzipped: a run header, then per test a "Running" line and a few result lines
    from small vocabularies (suites, test names, actions, outcomes): repeated text, as test output is."""
    import gzip

    rng = random.Random(seed)
    suites = [f"suite.{w}" for w in ("base", "python", "cp", "threads", "server", "opt", "arch", "linespec", "mi", "trace")]
    names = [f"{a}-{b}" for a in ("break", "watch", "step", "print", "frame", "signal", "attach", "catch", "display")
             for b in ("basic", "cond", "multi", "nested", "remote", "static", "inline", "tls", "vla", "error")]
    actions = ["set breakpoint at main", "continue to marker", "print value of variable", "info frame", "run until exit",
               "check the backtrace", "step into function", "finish out of function", "x/4xw address", "disassemble"]
    outcomes = ["PASS", "PASS", "PASS", "PASS", "FAIL", "XFAIL", "UNSUPPORTED", "KFAIL"]
    out, n = ["Test run by builder\nNative configuration is x86_64-pc-linux-gnu\n\n\t\t=== tests ===\n"], 0
    while n < lines:
        suite, name = rng.choice(suites), rng.choice(names)
        out.append(f"Running /build/src/testsuite/{suite}/{name}.exp ...\n")
        for _ in range(rng.randint(2, 12)):
            out.append(f"{rng.choice(outcomes)}: {suite}/{name}.exp: {rng.choice(actions)} (line {rng.randint(1, 400)})\n")
            n += 1
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "check.log.gz"
    path.write_bytes(gzip.compress("".join(out).encode(), mtime=0))
    return path


def _work(folder: Path) -> dict:
    """What the estimate of a first add of `folder` rests on, from its survey: for the time, files, non-Han characters
    and their packed bytes (text-like formats), JSON characters, Han characters, bytes of laid-out formats, OCR
    seconds; for the size, all characters, chunks and the pages their rows fill."""
    from docqa.plan import estimate as est
    from docqa.plan.planner import ocr_enabled, survey_folder

    settings = _settings("/tmp/unused.db", embed={"provider": "none"})
    s = survey_folder(folder, settings)
    work = {"files": s.files, "chars": 0.0, "packed": 0.0, "json": 0.0, "han": 0.0, "laid_out": 0.0,
            "ocr_s": est._ocr_seconds(s) if ocr_enabled(settings.ingest.ocr) else 0.0,
            "all_chars": 0.0, "chunks": 0.0, "pages": 0.0, "wide": 0.0, "tokens": 0.0, "distinct": 1.0 - s.duplicate_chunks,
            "cut": 0.0, "model_tokens": 0.0, "model_windows": 0.0, "model_s_by_chars": 0.0}
    for kind, stat in s.by_type.items():
        found = est.format_text(s, kind)
        work["model_tokens"] += found["model_tokens"]
        work["model_windows"] += found["model_windows"]
        if not found["model_tokens"]:  # not counted: the model's time by characters (rates.USE_CHAR_S, USE_HAN_S)
            work["model_s_by_chars"] += est._model_seconds(found)
        c, z, p = found["text_chars"], found["han_chars"], found["packed"]
        work["han"] += z
        work["all_chars"] += c
        work["chunks"] += found["chunks"]
        work["pages"] += found["pages"]
        work["wide"] += found["wide"]
        if kind == "json":
            work["json"] += c - z
            work["cut"] += found["cut"]
        elif kind in est._TEXT_TYPES:
            work["chars"] += c - z
            work["packed"] += p
            work["tokens"] += found["tokens"]
        elif kind != "image":
            work["laid_out"] += stat["bytes"]
    return work


def _fit_rows(rows_files: list[Path], embed: str = "none") -> dict[str, list[dict]]:
    """The fit folders' rows of `folders` runs (JSON lines in `rows_files`) with embeddings `embed`, by folder."""
    fit = {str(f) for f in FIT_FOLDERS} | {str(f.relative_to(DATA)) for f in FIT_FOLDERS if f.is_relative_to(DATA)}
    rows: dict[str, list[dict]] = {}
    for path in rows_files:
        for line in path.read_text().splitlines():
            r = json.loads(line)
            if r["folder"] in fit and r["embed"] == embed:
                rows.setdefault(r["folder"], []).append(r)
    return rows


def fit_embed(rows_files: list[Path]) -> dict:
    """USE_TOKEN_S (the bundled model's own tokens, as the survey counts them), and USE_CHAR_S and USE_HAN_S (for when its tokenizer is not installed) by least squares on
    the fit folders' CPU seconds with the bundled model less those without (medians of the `folders` rows in
    `rows_files`), the model's load (EMBED_START_S) and its windows (USE_WINDOW_S, measured apart: `windows`) taken
    out."""
    import statistics

    import numpy as np

    from docqa.plan import rates

    plain = {k: statistics.median(r["actual_cpu_s"] for r in v) for k, v in _fit_rows(rows_files).items()}
    points = []
    for name, rows in _fit_rows(rows_files, "local").items():
        if name not in plain:
            continue
        w = _work(_fit_path(name))
        rest = statistics.median(r["actual_cpu_s"] for r in rows) - plain[name] - rates.EMBED_START_S
        windows_s = w["model_windows"] * w["distinct"] * rates.USE_WINDOW_S
        points.append(([(w["all_chars"] - w["han"]) * w["distinct"], w["han"] * w["distinct"]], rest,
                       w["model_tokens"] * w["distinct"], rest - windows_s - w["model_s_by_chars"] * w["distinct"]))
        print(json.dumps({"folder": name, "chars": round(w["all_chars"]), "han": round(w["han"]),
                          "model_tokens": round(w["model_tokens"]), "model_windows": round(w["model_windows"]), "distinct": round(w["distinct"], 3),
                          "rest_s": round(rest, 3)}), flush=True)
    char_s, han_s = np.linalg.lstsq(np.array([p[0] for p in points]), np.array([p[1] for p in points]), rcond=None)[0]
    tokens, rests = np.array([p[2] for p in points]), np.array([p[3] for p in points])
    token_s = float(tokens @ rests / max(float(tokens @ tokens), 1e-12))  # rest = tokens x rate, least squares
    result = {"use_char_s": char_s, "use_han_s": han_s, "use_token_s": token_s,
              "token_err_pct": [round(100 * (t * token_s - r) / r, 1) for t, r in zip(tokens, rests, strict=True)],
              "folders": len(points)}
    print(json.dumps(result), flush=True)
    return result


def fit_e5(rows_files: list[Path]) -> dict:
    """rates.E5_TOKEN_S by least squares (relative errors) on the fit folders' adds with e5 (`folders --embed e5` rows in `rows_files`,
    medians): the add's CPU seconds less the estimate's full-text part and E5_START_S, against the tokens e5 reads (a
    chunk's, cut at E5_CHUNK_TOKENS, as the survey counts them)."""
    import statistics

    from docqa.plan import estimate as est
    from docqa.plan import rates
    from docqa.plan.planner import survey_folder

    points = []
    for name, rows in _fit_rows(rows_files, "e5").items():
        s = survey_folder(_fit_path(name), _settings("/tmp/unused.db", embed={"provider": "none"}))
        text_s = est.estimate_ingest(s, None).seconds
        tokens = sum(est._e5_seconds(est.format_text(s, kind)) for kind in s.by_type) / rates.E5_TOKEN_S * (1 - s.duplicate_chunks)
        rest = statistics.median(r["actual_cpu_s"] for r in rows) - text_s - rates.E5_START_S
        points.append((name, tokens, rest))
        print(json.dumps({"folder": name, "e5_tokens": round(tokens), "text_s": text_s, "rest_s": round(rest, 2),
                          "us_a_token": round(1e6 * rest / tokens, 1)}), flush=True)
    # least squares on relative errors (as fit-size): the largest folder does not decide alone
    rate = sum(t / r for _, t, r in points) / max(sum((t / r) ** 2 for _, t, r in points), 1e-12)
    result = {"e5_token_s": rate, "err_pct": {n: round(100 * (t * rate - r) / r, 1) for n, t, r in points}}
    print(json.dumps(result), flush=True)
    return result


def bench_e5(reps: int = 1, per_width: int = 48) -> list[dict]:
    """multilingual-e5-small against the bundled model on the same texts, in process: passages of 300 to 4,000
    characters cut from the GPL and gdb's check.log, `per_width` of each width, embedded by each model as an add embeds
    a group; CPU seconds, the bundled model's tokens (as the survey counts them) and e5's own (it reads one window of at
    most 512 tokens a chunk, so its cost stops growing with a chunk's length).  rates.E5_SLOWER was one ratio of the two (now rates.E5_TOKEN_S)."""
    import gzip

    from docqa.embed.e5 import MAX_TOKENS, E5Embedder
    from docqa.embed.local import LocalEmbedder
    from docqa.plan.model_tokens import count, tokenizer

    texts = {"en": Path("/usr/share/common-licenses/GPL-3").read_text(),
             "log": gzip.decompress(Path("/usr/share/doc/gdb/check.log.gz").read_bytes()).decode("utf-8", "replace")}
    session, use, e5 = tokenizer(), LocalEmbedder(), E5Embedder()
    use.embed_batch(["warm up"], "passage")
    e5.embed_batch(["warm up"], "passage")
    rows: list[dict] = []
    for rep in range(reps):
        for name, text in texts.items():
            for width in (300, 800, 1500, 2500, 4000):
                passages = [text[i:i + width] for i in range(0, len(text) - width, width)][:per_width]
                row = {"rep": rep, "text": name, "width": width, "passages": len(passages),
                       "use_tokens": count(session, passages),
                       "e5_tokens": sum(min(len(e5._load().tok.ids("passage: " + t)) + 2, MAX_TOKENS) for t in passages)}
                for label, model in (("use", use), ("e5", e5)):
                    t0 = time.process_time()
                    model.embed_batch(passages, "passage")
                    row[f"{label}_cpu_s"] = round(time.process_time() - t0, 3)
                row["ratio"] = round(row["e5_cpu_s"] / max(row["use_cpu_s"], 1e-9), 2)
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


def bench_windows(reps: int = 3) -> list[dict]:
    """The bundled model's CPU seconds a window (one row of a batch) and a token: windows of 20 to 500 characters cut
    from the same texts (SciFact's abstracts, the GPL, CMRC's Chinese), each set embedded as an add embeds a group
    (`embed_batch`, the embedder's callers); least squares CPU = a x windows + b x tokens, per repetition
    (rates.USE_WINDOW_S).  Then what padding costs: batches of four long windows, of one long and three short (padded to
    the long one: about the same padded tokens, a third of the real ones) and of four short, one session call each."""
    import numpy as np

    from docqa.embed.local import LocalEmbedder
    from docqa.plan.model_tokens import count, tokenizer

    def field(path: Path, key: str, limit: int) -> list[str]:
        return [json.loads(line)[key] for line in path.read_text(encoding="utf-8").splitlines()[:limit]]

    scifact = field(DATA / "retrieval" / "scifact" / "corpus.jsonl", "text", 2000)
    texts = {"scifact": (" ".join(scifact[:400]), (50, 100, 200, 350, 500)),
             "en": (Path("/usr/share/common-licenses/GPL-3").read_text(), (50, 100, 200, 350, 500)),
             "zh": (" ".join(field(DATA / "retrieval" / "cmrc2018-dev" / "corpus.jsonl", "text", 300)), (20, 50, 100, 200, 350))}
    session, embedder = tokenizer(), LocalEmbedder()
    embedder.embed_batch(["warm up"], "passage")
    rows: list[dict] = []
    for rep in range(reps):
        for name, (text, widths) in texts.items():
            for width in widths:
                windows = list(dict.fromkeys(w for w in (text[i:i + width].strip() for i in range(0, len(text) - width, width)) if w))[:400]
                t0 = time.process_time()
                embedder.embed_batch(windows, "passage")
                rows.append({"rep": rep, "text": name, "width": width, "windows": len(windows),
                             "tokens": count(session, windows), "cpu_s": round(time.process_time() - t0, 4)})
                print(json.dumps(rows[-1]), flush=True)
        mine = [r for r in rows if r["rep"] == rep]
        a, b = np.linalg.lstsq(np.array([[r["windows"], r["tokens"]] for r in mine], float),
                               np.array([r["cpu_s"] for r in mine]), rcond=None)[0]
        print(json.dumps({"rep": rep, "window_s": float(a), "token_s": float(b), "load": round(os.getloadavg()[0], 1)}), flush=True)
    longs, shorts = [t[:500] for t in scifact if len(t) >= 500][:600], [t[:50] for t in scifact][:1800]
    sets = {"four long": [longs[4 * i:4 * i + 4] for i in range(150)],
            "one long, three short": [[longs[i]] + shorts[3 * i:3 * i + 3] for i in range(150)],
            "four short": [shorts[4 * i:4 * i + 4] for i in range(150)]}
    model = embedder._load()
    cpu: dict[str, list[float]] = {}
    for _ in range(reps + 2):
        for name, batches in sets.items():
            t0 = time.process_time()
            for batch in batches:
                model.run(["outputs"], {"inputs": batch})
            cpu.setdefault(name, []).append(time.process_time() - t0)
    for name, batches in sets.items():
        tokens = [[count(session, [w]) for w in batch] for batch in batches]
        rows.append({"set": name, "batches": len(batches), "tokens": sum(map(sum, tokens)),
                     "padded": sum(len(t) * max(t) for t in tokens), "cpu_s": sorted(cpu[name])[len(cpu[name]) // 2]})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def _fit_path(name: str) -> Path:
    return Path(name) if Path(name).is_absolute() else DATA / name


def fit_size(rows_files: list[Path]) -> dict:
    """INDEX_BYTES_PER_CHAR, _PER_HAN, _PER_CHUNK and _PER_FILE by least squares on the fit folders' index sizes (full-text adds),
    the empty knowledge base, the chunk rows' pages and the wide characters' bytes as they are."""
    import numpy as np

    from docqa.plan import rates

    points = []
    for name, rows in _fit_rows(rows_files).items():
        w = _work(_fit_path(name))
        rest = (rows[0]["actual_index_mb"] * 1e6 - rates.INDEX_EMPTY_BYTES - w["pages"] * rates.INDEX_PAGE_BYTES
                - w["wide"] * rates.INDEX_BYTES_PER_WIDE)
        points.append(([w["all_chars"] - w["han"], w["han"], w["chunks"], w["files"]], rest, rows[0]["actual_index_mb"] * 1e6))
        print(json.dumps({"folder": name, **{k: round(v, 1) for k, v in w.items()}, "rest": round(rest)}), flush=True)
    x = np.array([p[0] for p in points])
    weights = 1 / np.array([p[2] for p in points])  # relative errors: a small folder counts as much as a large one
    coef = np.linalg.lstsq(x * weights[:, None], np.array([p[1] for p in points]) * weights, rcond=None)[0]
    result = {"bytes_per_char": coef[0], "bytes_per_han": coef[1], "bytes_per_chunk": coef[2], "bytes_per_file": coef[3],
              "folders": len(points)}
    print(json.dumps(result), flush=True)
    return result


def fit_time(rows_files: list[Path]) -> dict:
    """CHAR_S (or a rate a token), PACKED_S and JSON_CHAR_S by least squares on the fit folders' CPU seconds (full-text
    adds in the `folders` rows of `rows_files`, the median where a folder has several), the other rates as they are; each
    model's error on each fit folder when fitted on the others."""
    import statistics


    fit = {str(f): f for f in FIT_FOLDERS} | {str(f.relative_to(DATA)): f for f in FIT_FOLDERS if f.is_relative_to(DATA)}
    cpu: dict[str, list[float]] = {}
    for rows in rows_files:
        for line in rows.read_text().splitlines():
            r = json.loads(line)
            if r["folder"] in fit and r["embed"] == "none":
                cpu.setdefault(r["folder"], []).append(r["actual_cpu_s"])
    points = []
    for name, seconds in cpu.items():
        w = _work(fit[name])
        rest = statistics.median(seconds) - seconds_fixed(w)
        points.append((name, w, rest))
        print(json.dumps({"folder": name, "cpu_s": seconds, **{k: round(v, 1) for k, v in w.items()}, "rest_s": round(rest, 3)}), flush=True)
    import numpy as np

    y = np.array([rest for _, _, rest in points])
    models = {"chars+packed+json": ("chars", "packed", "json"), "tokens+packed+json": ("tokens", "packed", "json")}
    result: dict = {"folders": len(points)}
    for label, columns in models.items():
        x = np.array([[w[c] for c in columns] for _, w, _ in points])
        coef = np.linalg.lstsq(x, y, rcond=None)[0]
        loo = []  # each fit folder predicted by the rates fitted on the others: the model's error on a folder it did not see
        for i, (_name, w, rest) in enumerate(points):
            keep = [j for j in range(len(points)) if j != i]
            c = np.linalg.lstsq(x[keep], y[keep], rcond=None)[0]
            loo.append(round(100 * float(x[i] @ c - rest) / (rest + seconds_fixed(w)), 1))
        result[label] = {"rates": dict(zip(columns, (float(v) for v in coef), strict=True)), "leave_one_out_pct": loo}
        print(json.dumps({label: result[label]}), flush=True)
    return result


def seconds_fixed(w: dict) -> float:
    """The part of an add's CPU seconds the time fit holds fixed (start, files, Han, laid-out bytes, OCR, JSON lines cut
    by tokens)."""
    from docqa.plan import rates

    return (rates.START_S + w["files"] * rates.FILE_S + w["han"] * rates.HAN_S + w["laid_out"] * rates.PAGE_BYTE_S
            + w["ocr_s"] + w.get("cut", 0.0) * rates.JSON_CUT_S)


def _ocr_one(path: str, out) -> None:
    """In a forked child (one OCR thread, as a parser worker): the CPU seconds of reading one picture."""
    from docqa.ingest.ocr import OcrOptions, _load_engine, configure
    from docqa.ingest.readers import read_file

    configure(OcrOptions(mode="on"))
    _load_engine()
    data = Path(path).read_bytes()
    t0 = time.process_time()
    try:
        chars = len(read_file(Path(path), data).text)
    except Exception:  # a picture without text is skipped by the add: its time counts all the same
        chars = 0
    out.put((time.process_time() - t0, chars))


def bench_ocr_fit(folder: Path) -> list[dict]:
    """Each distinct picture under `folder` (by content) read with OCR, one child process each: CPU seconds
    against detected megapixels; then the least-squares line seconds = a + b x megapixels."""
    import hashlib
    import multiprocessing

    from docqa.ingest.ocr import detected_megapixels
    from docqa.ingest.readers.image import ImageReader

    context = multiprocessing.get_context("fork")
    seen, rows = set(), []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        head = path.read_bytes()[:16]
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if not ImageReader.sniff(head, path) or digest in seen:
            continue
        seen.add(digest)
        out = context.Queue()
        child = context.Process(target=_ocr_one, args=(str(path), out))
        child.start()
        seconds, chars = out.get()
        child.join()
        rows.append({"path": str(path.relative_to(folder)), "bytes": path.stat().st_size,
                     "megapixels": round(detected_megapixels(path), 4), "cpu_s": round(seconds, 3), "chars": chars})
        print(json.dumps(rows[-1]), flush=True)
    n, sx, sy = len(rows), sum(r["megapixels"] for r in rows), sum(r["cpu_s"] for r in rows)
    sxx, sxy = sum(r["megapixels"] ** 2 for r in rows), sum(r["megapixels"] * r["cpu_s"] for r in rows)
    b = (n * sxy - sx * sy) / max(n * sxx - sx * sx, 1e-12)
    print(json.dumps({"pictures": n, "megapixels": round(sx, 3), "cpu_s": round(sy, 2), "picture_s": round((sy - b * sx) / n, 4),
                      "megapixel_s": round(b, 4)}), flush=True)
    return rows


def bench_start(reps: int = 5) -> dict:
    """The fixed cost of `docqa add` (rates.START_S, EMBED_START_S, E5_START_S): CPU seconds of an add in a new process
    of an empty folder and of a folder of one short page, without and with the bundled model and with e5, `reps` times
    each, alternating; the medians."""
    import statistics

    cpu: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        empty, one = Path(tmp) / "empty", Path(tmp) / "one"
        empty.mkdir()
        one.mkdir()
        (one / "page.md").write_text("# Backups\n\nBackups are kept for 35 days.\n", encoding="utf-8")
        for i in range(reps):
            for folder in (empty, one):
                for embed in ("none", "local", "e5"):
                    kb = Path(tmp) / f"kb-{i}-{folder.name}-{embed}.db"
                    cpu.setdefault(f"{folder.name}/{embed}", []).append(_cli_add(str(REPO / "src"), kb, folder, embed)[1])
    result = {k: round(statistics.median(v), 3) for k, v in cpu.items()} | {"load": round(os.getloadavg()[0], 1),
                                                                           "runs": {k: [round(x, 3) for x in v] for k, v in cpu.items()}}
    print(json.dumps(result), flush=True)
    return result


def _embed(embed: str) -> dict[str, str]:
    """The embed settings of a `folders` run: "none" (full text only), "local" (the bundled model), "e5" (the local
    multilingual-e5-small, which `docqa init` proposes for English text when its extra is installed)."""
    return {"provider": "local", "model": "multilingual-e5-small"} if embed == "e5" else {"provider": embed}


def _baseline(src: str, folder: Path, embed: str) -> dict:
    """`docqa estimate --ingest FOLDER --json` by the tree at `src`."""
    import subprocess

    env = {**{k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}, "PYTHONPATH": src,
           **{f"DOCQA_EMBED__{k.upper()}": v for k, v in _embed(embed).items()}, "DOCQA_LLM__PROVIDER": "none"}
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
           **{f"DOCQA_EMBED__{k.upper()}": v for k, v in _embed(embed).items()}, "DOCQA_LLM__PROVIDER": "none"}
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
            settings = _settings(str(Path(tmp) / "kb.db"), embed=_embed(embed))
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


USR_DOC = Path("/usr/share/doc")
SUBSET_EVERY = 18  # every 18th package folder of /usr/share/doc in sorted order (45 of its 793 real folders)


def usr_doc_subset(dest: Path, every: int = SUBSET_EVERY, gdb: bool = True) -> dict:
    """A folder shaped like issue 33's (~286 documents of /usr/share/doc, one gdb/check.log.gz making nearly half the
    chunks), by a fixed rule: gdb (its check.log.gz), the package folders holding a PDF (HTML manuals, pictures, the
    PDFs), and every `every`-th real package folder of /usr/share/doc in sorted order (a symlinked package folder is
    not one), counted from the first; copied into `dest` (symlinked files read through: a user's copy holds the
    files). What was taken, in files and bytes."""
    import shutil

    real = sorted(d.name for d in USR_DOC.iterdir() if d.is_dir() and not d.is_symlink())
    with_pdf = sorted({p.relative_to(USR_DOC).parts[0] for p in USR_DOC.rglob("*.pdf")})
    chosen = sorted({*(["gdb"] if gdb else []), *with_pdf, *real[::every]})
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in chosen:
        shutil.copytree(USR_DOC / name, dest / name, symlinks=False, ignore_dangling_symlinks=True)
    files = [f for f in dest.rglob("*") if f.is_file()]
    taken = {"folder": str(dest), "packages": len(chosen), "files": len(files), "bytes": sum(f.stat().st_size for f in files),
             "every": every, "with_pdf": with_pdf}
    print(json.dumps(taken), flush=True)
    return taken


def bench_usr_doc(parts: list[str], runs: int, dest: Path, embed: str = "local", every: int = SUBSET_EVERY,
                  gdb: bool = True) -> list[dict]:
    """issue 33's case as a new user meets it (`folders` rows): "text" the whole of /usr/share/doc, full text only;
    "subset" the subset of `usr_doc_subset` with the embedder `embed` (the bundled model; "e5": the one `docqa init`
    proposes for it when the e5 extra is installed); each `runs` times (the machine is shared)."""
    rows = []
    if "subset" in parts:
        usr_doc_subset(dest, every, gdb)
    for _ in range(runs):
        if "text" in parts:
            rows += bench_folders([USR_DOC], None, "none")
        if "subset" in parts:
            rows += bench_folders([dest], None, embed)
    return rows


def rescore(path: Path, baseline: str | None = None) -> list[dict]:
    """The rows of a `folders` run (JSON lines at `path`) with this tree's estimates in place of the ones they hold (the
    actual figures kept): the estimate of a changed tree against adds already measured, without adding again;
    `baseline`: the baseline's estimates redone too, by the tree at that `src` (main today)."""
    from docqa.plan import ingest_estimate

    rows = []
    for line in path.read_text().splitlines():
        r = json.loads(line)
        folder = Path(r["folder"]) if Path(r["folder"]).is_absolute() else DATA / r["folder"]
        est = ingest_estimate(folder, _settings("/tmp/unused.db", embed=_embed(r["embed"])))
        err = lambda p, a: round(100 * (p - a) / max(a, 1e-9), 1)  # noqa: E731
        size = r["actual_index_mb"] * 1e6
        r |= {"predicted_chunks": est.chunks, "chunks_err_pct": err(est.chunks, r["actual_chunks"]),
              "predicted_index_mb": round(est.index_bytes / 1e6, 2), "index_err_pct": err(est.index_bytes, size),
              "predicted_s": est.seconds, "time_err_pct": err(est.seconds, r["actual_cpu_s"]), "rescored": True}
        if baseline:
            base = _baseline(baseline, folder, r["embed"])
            r |= {"baseline_chunks": base["chunks"], "baseline_chunks_err_pct": err(base["chunks"], r["actual_chunks"]),
                  "baseline_index_mb": round(base["index_bytes"] / 1e6, 2), "baseline_index_err_pct": err(base["index_bytes"], size),
                  "baseline_s": base["seconds"], "baseline_time_err_pct": err(base["seconds"], r["actual_cpu_s"])}
        rows.append(r)
        print(json.dumps(r), flush=True)
    return rows


def table(paths: list[Path]) -> str:
    """The rows `folders` printed (JSON lines in `paths`) as a Markdown table: actual, main's estimate, this one;
    a folder measured in several runs by the median of its CPU seconds (errors against that median; the
    number of runs beside it)."""
    import statistics

    fit = {str(f) for f in FIT_FOLDERS} | {str(f.relative_to(DATA)) for f in FIT_FOLDERS if f.is_relative_to(DATA)}
    pct = lambda v: f"{v:+.0f} %"  # noqa: E731
    err = lambda p, a: 100 * (p - a) / max(a, 1e-9)  # noqa: E731
    runs: dict[tuple[str, str], list[dict]] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            r = json.loads(line)
            runs.setdefault((r["folder"], r["embed"]), []).append(r)
    lines = ["| folder | set | chunks: actual | main | now | index MB: actual | main | now | CPU s: actual (runs) | main | now | wall s (load) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (folder, _), rows in runs.items():
        r = rows[0]
        cpu = statistics.median(x["actual_cpu_s"] for x in rows)
        name = folder.replace(str(TRUST) + "/", "trust: ")
        walls = ", ".join(f"{x['actual_wall_s']:,.0f} ({x['load_before']:.0f})" for x in rows)
        lines.append(f"| {name} | {'fit' if folder in fit else 'check'} | {r['actual_chunks']:,} | "
                     f"{pct(r['baseline_chunks_err_pct'])} | {pct(r['chunks_err_pct'])} | {r['actual_index_mb']:,.1f} | "
                     f"{pct(r['baseline_index_err_pct'])} | {pct(r['index_err_pct'])} | {cpu:,.1f} ({len(rows)}) | "
                     f"{pct(err(r['baseline_s'], cpu))} | {pct(err(r['predicted_s'], cpu))} | "
                     f"{walls} |")
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
    if part == "fit-time":
        fit_time([Path(a) for a in sys.argv[2:]])
    if part == "start":
        bench_start(int(sys.argv[2]) if len(sys.argv) > 2 else 5)
    if part == "fit-embed":
        fit_embed([Path(a) for a in sys.argv[2:]])
    if part == "windows":
        bench_windows(int(sys.argv[2]) if len(sys.argv) > 2 else 3)
    if part == "fit-e5":
        fit_e5([Path(a) for a in sys.argv[2:]])
    if part == "e5":
        bench_e5(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    if part == "fit-size":
        fit_size([Path(a) for a in sys.argv[2:]])
    if part == "test-log":
        print(write_test_log(TEST_LOG))
    if part == "ocr-fit":
        bench_ocr_fit(Path(sys.argv[2]) if len(sys.argv) > 2 else OCR_FIT)
    if part == "usr-doc":
        args = sys.argv[2:]
        runs = int(args[args.index("--runs") + 1]) if "--runs" in args else 1
        dest = Path(args[args.index("--dest") + 1]) if "--dest" in args else REPO / "benchmarks" / ".work" / "estimate" / "usr-doc-subset"
        parts = [a for a in args if a in ("text", "subset", "build")] or ["text", "subset"]
        every = int(args[args.index("--every") + 1]) if "--every" in args else SUBSET_EVERY
        if parts == ["build"]:
            usr_doc_subset(dest, every, "--no-gdb" not in args)
        else:
            bench_usr_doc(parts, runs, dest, args[args.index("--embed") + 1] if "--embed" in args else "local", every,
                          "--no-gdb" not in args)
    if part == "rescore":
        rescore(Path(sys.argv[2]), sys.argv[sys.argv.index("--baseline") + 1] if "--baseline" in sys.argv else None)
    if part == "table":
        print(table([Path(a) for a in sys.argv[2:]]))
    if part in ("question", "all"):
        bench_question()


if __name__ == "__main__":
    os.environ.setdefault("OLLAMA_HOST", "127.0.0.1:9")  # no machine model: the figures are about docqa
    main()
