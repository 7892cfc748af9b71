"""How ingest time and memory grow with the corpus: mixed files at 1k / 10k / 100k (issue 18).

    nice -n 15 python benchmarks/growth.py --sizes 1000,10000,100000            # full text only
    nice -n 15 python benchmarks/growth.py --sizes 1000 --embed                 # with the bundled embedder
    python benchmarks/growth.py --sizes 200 --embed --baseline /tmp/base/src --reps 2   # two trees, same files

The corpus is generated once (seeded per file, so the first 1,000 files of the 100k corpus are the
1k corpus): 45 % Markdown, 30 % HTML, 15 % plain text, 5 % Word (.docx), 5 % Chinese Markdown;
1-8 KB of real sentences each (SciFact abstracts; CMRC 2018 paragraphs for Chinese), 1,000 files a
folder.  Each size is a fresh `KnowledgeBase.add` in a fresh process with default settings; the
parent samples the process tree's memory (summed RSS; summed PSS, shared pages split, every 10th
sample).  After each ingest, one `docqa search` in a fresh process on the new index (hybrid when
embedded) is timed.  With --baseline the two trees take turns on the same files.
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
SRC = HERE.parent / "src"
SHARED = HERE.parent.parent / "shared" / "data" / "retrieval"
QUERY = "how does vitamin D affect bone density"

CHILD = r"""
import sys, time, json, resource
def _cpu():
    return sum(getattr(resource.getrusage(w), f) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for f in ("ru_utime", "ru_stime"))
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
folder, db, embed = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
started, cpu0 = time.perf_counter(), _cpu()
with KnowledgeBase(Settings(kb=db, embed={"provider": "local" if embed else "none"})) as kb:
    report = kb.add([folder])
    chunks = kb.status.stats()["chunks"]
print(json.dumps({"seconds": time.perf_counter() - started, "cpu": _cpu() - cpu0, "chunks": chunks, "failed": len(report.failed)}))
"""


# -- the corpus --------------------------------------------------------------------------------

def _texts(name: str, limit: int) -> list[str]:
    path = Path(os.environ.get("DOCQA_SHARED_RETRIEVAL", SHARED)) / name / "corpus.jsonl"
    if not path.exists():
        raise SystemExit(f"{path} is missing: this benchmark needs ../shared/data (see its README)")
    with path.open(encoding="utf-8") as f:
        return [json.loads(line)["text"] for line, _ in zip(f, range(limit))]


def _paragraphs(rng: random.Random, pool: list[str], size: int) -> list[str]:
    out, total = [], 0
    while total < size:
        text = rng.choice(pool)
        out.append(text)
        total += len(text.encode("utf-8"))
    return out


def _write(path: Path, i: int, english: list[str], chinese: list[str]) -> None:
    rng = random.Random(i)
    kind = i % 20
    size = int(min(8000, max(1000, rng.lognormvariate(8.0, 0.5))))  # median ~3 KB
    if kind == 19:
        paras = _paragraphs(rng, chinese, size)
        body = "\n\n".join(f"## 第{k + 1}节\n\n{p}" if k % 2 == 0 else p for k, p in enumerate(paras))
        path.with_suffix(".md").write_text(f"# 文档 {i}\n\n{body}\n", encoding="utf-8")
        return
    paras = _paragraphs(rng, english, size)
    title = " ".join(paras[0].split()[:6])
    if kind < 9:
        body = "\n\n".join(f"## {' '.join(p.split()[:4])}\n\n{p}" if k % 2 == 0 else p for k, p in enumerate(paras))
        path.with_suffix(".md").write_text(f"# {title}\n\n{body}\n", encoding="utf-8")
    elif kind < 15:
        body = "".join(f"<h2>{' '.join(p.split()[:4])}</h2><p>{p}</p>" if k % 2 == 0 else f"<p>{p}</p>" for k, p in enumerate(paras))
        path.with_suffix(".html").write_text(f"<!doctype html><html><head><title>{title}</title></head>"
                                             f"<body><nav><a href='/'>Home</a></nav><h1>{title}</h1>{body}</body></html>",
                                             encoding="utf-8")
    elif kind < 18:
        path.with_suffix(".txt").write_text(f"{title}\n\n" + "\n\n".join(paras) + "\n", encoding="utf-8")
    else:
        import docx

        doc = docx.Document()
        doc.add_heading(title, 1)
        for k, p in enumerate(paras):
            if k % 2 == 0:
                doc.add_heading(" ".join(p.split()[:4]), 2)
            doc.add_paragraph(p)
        doc.save(path.with_suffix(".docx"))


def generate(folder: Path, n: int) -> list[Path]:
    """The first `n` files of the corpus (kept between runs), 1,000 per sub-folder."""
    done = folder / f".done-{n}"
    if not done.exists():
        english, chinese = _texts("scifact", 5000), _texts("cmrc2018-dev", 2000)
        for i in range(n):
            sub = folder / f"part{i // 1000:03}"
            sub.mkdir(parents=True, exist_ok=True)
            if not any(sub.glob(f"f{i:06}.*")):
                _write(sub / f"f{i:06}", i, english, chinese)
        done.touch()
    return sorted(p for p in folder.rglob("f*.*") if int(p.stem[1:]) < n)


def subset(source: Path, n: int, target: Path) -> Path:
    """A folder holding the first `n` files of `source`, hard-linked."""
    if not (target / ".done").exists():
        for path in generate(source, n):
            link = target / path.relative_to(source)
            link.parent.mkdir(parents=True, exist_ok=True)
            if not link.exists():
                os.link(path, link)
        (target / ".done").touch()
    return target


# -- the runs ----------------------------------------------------------------------------------

def ingest(src: str, folder: Path, db: Path, embed: bool) -> dict:
    sys.path.insert(0, str(HERE))
    from vs_llamaindex import measure  # the process-tree memory sampler shared with the side-by-side

    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    env["PYTHONPATH"] = src
    result = measure([sys.executable, "-c", CHILD, str(folder), str(db), "1" if embed else "0"], env)
    result["db_mb"] = sum(p.stat().st_size for p in db.parent.glob(db.name + "*")) / 1e6
    started = time.perf_counter()
    env["DOCQA_EMBED__PROVIDER"] = "local" if embed else "none"  # a full-text index is searched with BM25
    subprocess.run([sys.executable, "-m", "docqa", "--kb", str(db), "search", QUERY], env=env, check=True,
                   capture_output=True, timeout=600)
    result["search_s"] = time.perf_counter() - started
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--embed", action="store_true", help="with the bundled embedding model")
    parser.add_argument("--baseline", help="src folder of another docqa tree, run in turns on the same files")
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "docqa-growth"))
    args = parser.parse_args()
    work, sizes = Path(args.work), [int(s) for s in args.sizes.split(",")]
    started = time.perf_counter()
    generate(work / "all", max(sizes))
    print(f"corpus of {max(sizes):,} files ready in {time.perf_counter() - started:.0f} s; {os.cpu_count()} CPUs", flush=True)
    trees = {"new": str(SRC), **({"baseline": args.baseline} if args.baseline else {})}
    rows = []
    for size in sizes:
        folder = subset(work / "all", size, work / f"n{size}")
        files = [p for p in folder.rglob("f*.*")]
        mb = sum(p.stat().st_size for p in files) / 1e6
        for rep in range(args.reps):
            for name in (list(trees) if rep % 2 == 0 else list(trees)[::-1]):
                with tempfile.TemporaryDirectory(dir=work) as scratch:
                    r = ingest(trees[name], folder, Path(scratch) / "kb.db", args.embed)
                r.update(tree=name, files=len(files), mb=mb, load=os.getloadavg()[0])
                rows.append(r)
                print(json.dumps(r), flush=True)
    report(rows, args.embed)


def report(rows: list[dict], embed: bool) -> None:
    print("\n| files | MB | tree | wall s | CPU s | files/s | MB/s | chunks | peak RSS MB (summed) | peak PSS MB | index MB | first search s | load |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['files']:,} | {r['mb']:.1f} | {r['tree']}{' +embed' if embed else ''} | {r['seconds']:.1f} | {r['cpu']:.1f} | "
              f"{r['files'] / r['seconds']:.0f} | {r['mb'] / r['seconds']:.2f} | {r['chunks']:,} | {r['peak_mb']:.0f} | "
              f"{r['peak_pss_mb']:.0f} | {r['db_mb']:.0f} | {r['search_s']:.2f} | {r['load']:.1f} |")


if __name__ == "__main__":
    main()
