"""A small write behind a long parse (issue 30 #5) and the time to first searchable (issue 34 #2),
measured on two source trees in one run (main as the baseline, this tree after).

    python benchmarks/write_phases.py --src /work/main/src --src src          # both parts
    python benchmarks/write_phases.py --src /work/main/src --src src writer   # one part

writer      The API server (in-process, real SQLite) ingests one large .docx (~`--docx-mb` MB of
            headings, paragraphs and tables) uploaded as a job; while the job runs, `POST /collections` is sent every
            0.25 s and its latency recorded: how long a small write waits behind a parse.
searchable  `docqa add` of generated Markdown with the bundled embedding model: a second connection
            polls the documents table every 20 ms for the first document (and for all of them) to be
            committed, i.e. found by a search; the add's own time beside it.

Each tree runs in a child process with PYTHONPATH set to it; the figures print as one table per part.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

RNG = random.Random(7)
WORDS = tuple(("backup rotation cluster gateway schedule retention replica index quorum shard snapshot tenant "
         "policy audit token secret vault ingress egress latency budget runbook escalation pager").split())


SYLLABLES = "ka to ri mu se na lo pe ti ra vo ze qu in ar en ol us mi de".split()
LEXICON = WORDS + tuple("".join(random.Random(i).choices(SYLLABLES, k=random.Random(-i).randint(2, 4))) for i in range(20_000))


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(LEXICON) for _ in range(rng.randint(8, 20))).capitalize() + "."


_DOCX_PARTS = {
    "[Content_Types].xml": '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    "_rels/.rels": '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
}
_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def make_docx(path: Path, megabytes: float) -> None:
    """A Word file of headings, paragraphs and tables, about `megabytes` large, its text in short runs
    with their own formatting, as an edited Word document's is (written as WordprocessingML
    directly: python-docx takes minutes for this size)."""
    sample = _write_docx(path, 50)
    _write_docx(path, max(1, round(50 * megabytes * 1e6 / sample)))


def _write_docx(path: Path, sections: int) -> int:
    import zipfile

    rng = random.Random(11)

    def para(text: str, style: str = "") -> str:
        props = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
        words = text.split()
        runs = "".join(f'<w:r><w:rPr><w:rFonts w:ascii="Calibri" w:hAnsi="Calibri"/><w:sz w:val="22"/>{"<w:b/>" if i % 7 == 0 else ""}'
                       f'</w:rPr><w:t xml:space="preserve">{" ".join(words[i:i + 3])} </w:t></w:r>' for i in range(0, len(words), 3))
        return f"<w:p>{props}{runs}</w:p>"

    body = []
    for section in range(1, sections + 1):
        parts = [para(f"Section {section}", "Heading2")]
        parts += [para(" ".join(sentence(rng) for _ in range(4))) for _ in range(6)]
        rows = "".join("<w:tr>" + "".join(f"<w:tc>{para(sentence(rng))}</w:tc>" for _ in range(3)) + "</w:tr>" for _ in range(4))
        parts.append(f"<w:tbl>{rows}</w:tbl>")
        body.append("".join(parts))
    document = f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="{_W}"><w:body>{"".join(body)}</w:body></w:document>'
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, xml in _DOCX_PARTS.items():
            z.writestr(name, xml)
        z.writestr("word/document.xml", document)
    return path.stat().st_size


def make_markdown(folder: Path, files: int, paragraphs: int) -> None:
    rng = random.Random(5)
    for i in range(files):
        body = "\n\n".join(f"## Part {p}\n\n" + " ".join(sentence(rng) for _ in range(6)) for p in range(paragraphs))
        (folder / f"note{i:03}.md").write_text(f"# Note {i}\n\n{body}\n", encoding="utf-8")


# -- the children ------------------------------------------------------------------------------

def child_writer(work: Path, docx_mb: float) -> dict:
    from fastapi.testclient import TestClient

    from docqa.api import create_app
    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings

    source = work / "source"
    source.mkdir()
    big = source / "handbook.docx"
    make_docx(big, docx_mb)
    settings = Settings(kb=str(work / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"},
                        api={"upload_dir": str(work / "uploads"), "allowed_hosts": ["testserver"]})
    with KnowledgeBase(settings) as kb:
        kb.documents.create_collection("default")
    waits, i = [], 0
    with TestClient(create_app(settings, kb_factory=lambda: KnowledgeBase(settings))) as c:
        with big.open("rb") as f:
            r = c.post("/api/v1/documents", files=[("files", (big.name, f, "application/octet-stream"))])
        assert r.status_code == 202, r.text
        started, url = time.perf_counter(), r.headers["location"]
        while (job := c.get(url).json())["status"] in ("queued", "running"):
            i += 1
            sent = time.perf_counter()
            assert c.post("/api/v1/collections", json={"name": f"probe{i}"}).status_code == 201
            waits.append(time.perf_counter() - sent)
            time.sleep(0.25)
        job_seconds = time.perf_counter() - started
    assert job["status"] == "succeeded", job
    return {"docx_mb": round(big.stat().st_size / 1e6, 1), "job_s": round(job_seconds, 2), "probes": len(waits),
            "median_wait_s": round(statistics.median(waits), 3), "max_wait_s": round(max(waits), 3),
            "waits_over_1s": sorted(round(w, 2) for w in waits if w > 1.0),
            "chunks": job["result"]["chunks"]}


def child_searchable(work: Path, files: int, paragraphs: int) -> dict:
    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings

    docs = work / "docs"
    docs.mkdir()
    make_markdown(docs, files, paragraphs)
    db = work / "kb.db"
    settings = Settings(kb=str(db), embed={"provider": "local"}, llm={"provider": "none"})
    seen: dict[str, float] = {}
    done = threading.Event()
    with KnowledgeBase(settings) as kb:
        kb.models.embedder.warm()  # the model's load is not the add's

        def poll(started: float) -> None:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
            while not done.is_set():
                try:
                    n = conn.execute("SELECT count(*) FROM documents WHERE status = 'ok'").fetchone()[0]
                except sqlite3.OperationalError:
                    n = 0
                if n and "first" not in seen:
                    seen["first"] = time.perf_counter() - started
                if n >= files and "all" not in seen:
                    seen["all"] = time.perf_counter() - started
                time.sleep(0.02)
            conn.close()

        started = time.perf_counter()
        poller = threading.Thread(target=poll, args=(started,))
        poller.start()
        report = kb.add([docs])
        elapsed = time.perf_counter() - started
        done.set()
        poller.join()
        embedded, chunks = kb.store.vectors.vector_count(kb.models.embedder.fingerprint.key)
    return {"files": files, "chunks": chunks, "embedded": embedded, "add_s": round(elapsed, 2),
            "first_searchable_s": round(seen.get("first", elapsed), 2), "all_searchable_s": round(seen.get("all", elapsed), 2),
            "report": getattr(report, "phases", lambda: None)()}


# -- the driver ----------------------------------------------------------------------------------

def run_child(src: str, part: str, args: argparse.Namespace) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"docqa-phases-{part}-"))
    try:
        env = {**os.environ, "PYTHONPATH": str(Path(src).resolve())}
        cmd = [sys.executable, __file__, "--child", part, "--work", str(work), "--docx-mb", str(args.docx_mb),
               "--files", str(args.files), "--paragraphs", str(args.paragraphs)]
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        if out.returncode:
            raise SystemExit(f"{part} on {src} failed:\n{out.stderr[-3000:]}")
        return json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("parts", nargs="*", default=["writer", "searchable"])
    parser.add_argument("--src", action="append", default=[], help="a source tree (repeat: the first is the baseline)")
    parser.add_argument("--child")
    parser.add_argument("--work")
    parser.add_argument("--docx-mb", type=float, default=6.0)
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--paragraphs", type=int, default=12)
    args = parser.parse_args()
    if args.child:
        work = Path(args.work)
        result = (child_writer(work, args.docx_mb) if args.child == "writer"
                  else child_searchable(work, args.files, args.paragraphs))
        print(json.dumps(result))
        return
    for part in args.parts:
        print(f"## {part}")
        for src in args.src or ["src"]:
            print(f"{src}: {json.dumps(run_child(src, part, args))}", flush=True)


if __name__ == "__main__":
    main()
