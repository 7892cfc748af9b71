"""Version-specific questions over real release notes: does the exact version's file come first?

    python benchmarks/exact_tokens.py [--notes /usr/share/doc/git/RelNotes] [--ask 40]

Copies Git's release notes 2.20.0-2.39.x (near-identical siblings: every maintenance release
"merges up the fixes that appear in v2.30.9, v2.31.8, ...") and a few other documents of
/usr/share/doc into a temporary knowledge base (the real pipeline and the bundled embedder),
then asks, for every notes file, "What changed in Git X.Y.Z?" and "Git X.Y.Z 修复了什么？"; the gold
is that file.  Versions alternate between a dev and a test half (sorted order, even/odd): nothing
here is tuned on the test half.  Reports hit@1 and hit@5 of the gold file (chunks folded to files)
for each search mode, and with `--ask N` the share of N test questions per language that `ask`
without a model answers, and answers citing the gold file first.

Run it once with main's code and once with the branch's (PYTHONPATH), on the same machine, for
a before/after; the first line names the docqa that ran.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import docqa
from docqa.embed import make_embedder
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

VERSION = re.compile(r"2\.(2\d|3\d)\.\d+")
OTHERS = ["/usr/share/doc/libtasn1-doc/libtasn1.pdf", "/usr/share/doc/git/README.Debian",
          "/usr/share/doc/openssh-client/README.Debian.gz", "/usr/share/doc/curl/README.gz"]
TEMPLATES = {"en": "What changed in Git {v}?", "zh": "Git {v} 修复了什么？"}
MODES = ("bm25", "dense", "hybrid")


def build(notes: Path, root: Path) -> dict[str, Path]:
    """The documents folder; returns version -> its notes file in it."""
    gold = {}
    for path in sorted(notes.glob("2.*.txt")):
        version = path.stem
        if VERSION.fullmatch(version):
            target = root / "git" / "RelNotes" / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
            gold[version] = target
    for other in map(Path, OTHERS):
        if other.is_file():
            target = root / other.parent.name / other.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(other, target)
    return gold


def split(versions: list[str]) -> dict[str, list[str]]:
    ordered = sorted(versions, key=lambda v: tuple(int(x) for x in v.split(".")))
    return {"dev": ordered[0::2], "test": ordered[1::2]}


def files(hits) -> list[str]:
    return list(dict.fromkeys(h.path for h in hits))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", default="/usr/share/doc/git/RelNotes")
    ap.add_argument("--ask", type=int, default=0, help="test questions per language answered by `ask` (no model)")
    args = ap.parse_args()
    notes = Path(args.notes)
    if not notes.is_dir():
        raise SystemExit(f"{notes} not found: install the git package's documentation or pass --notes")
    print(f"docqa: {Path(docqa.__file__).parent}")
    with tempfile.TemporaryDirectory(prefix="exact-tokens-") as tmp:
        root = Path(tmp)
        gold = build(notes, root / "docs")
        settings = Settings(kb=str(root / "kb.db"), llm={"provider": "none"})
        with KnowledgeBase(settings, embedder=make_embedder("local", "")) as kb:
            report = kb.add([root / "docs"])
            print(f"{len(report.added)} files, {kb.stats()['chunks']} chunks; {len(gold)} release notes")
            halves = split(list(gold))
            rows = []
            for half, versions in halves.items():
                for lang, template in TEMPLATES.items():
                    for mode in MODES:
                        top1 = top5 = 0
                        started = time.perf_counter()
                        for v in versions:
                            ranked = files(kb.search(template.format(v=v), top_k=20, mode=mode))
                            top1 += ranked[:1] == [str(gold[v])]
                            top5 += str(gold[v]) in ranked[:5]
                        ms = (time.perf_counter() - started) * 1000 / len(versions)
                        rows.append((half, lang, mode, len(versions), top1 / len(versions), top5 / len(versions), ms))
            print("\n| half | question | mode | n | hit@1 | hit@5 | ms/query |\n|---|---|---|---|---|---|---|")
            for half, lang, mode, n, h1, h5, ms in rows:
                print(f"| {half} | {lang} | {mode} | {n} | {h1:.3f} | {h5:.3f} | {ms:.0f} |")
            if args.ask:
                ask(kb, gold, halves["test"][: args.ask])


def ask(kb: KnowledgeBase, gold: dict[str, Path], versions: list[str]) -> None:
    print("\n| question (test half) | n | answered | answered citing the gold file first |\n|---|---|---|---|")
    for lang, template in TEMPLATES.items():
        answered = right = 0
        for v in versions:
            answer = kb.ask(template.format(v=v), fresh=True)
            if answer.answerable and answer.citations:
                answered += 1
                right += answer.citations[0].path == str(gold[v])
        print(f"| {lang} | {len(versions)} | {answered / len(versions):.3f} | {right / len(versions):.3f} |")


if __name__ == "__main__":
    sys.exit(main())
