"""Version-specific questions over real release notes: does the exact version's file come first?

    python benchmarks/exact_tokens.py [--notes /usr/share/doc/git/RelNotes] [--ask 40]
    python benchmarks/exact_tokens.py --trust benchmarks/trust/questions_en_docs.jsonl \
        --corpus benchmarks/.work/trust/corpus      # after `python benchmarks/trust/devset.py build`

Copies Git's release notes 2.20.0-2.39.x (near-identical siblings: every maintenance release
"merges up the fixes that appear in v2.30.9, v2.31.8, ...") and a few other documents of
/usr/share/doc into a temporary knowledge base (the real pipeline and the bundled embedder),
then asks, for every notes file, "What changed in Git X.Y.Z?" and "Git X.Y.Z 修复了什么？"; the gold
is that file.  Versions alternate between a dev and a test half (sorted order, even/odd): nothing
here is tuned on the test half.  Reports hit@1 and hit@5 of the gold file (chunks folded to files)
for each search mode, and with `--ask N` the share of N test questions per language that `ask`
without a model answers, and answers citing the gold file first.

With `--trust`, the same over the trust dev set (issue 28, item 1): its questions that hold an exact
token (text/exact.py), whatever their kind; per split (devset.py's rule: sha256 of the id even =
dev), hit@1/hit@5 of an evidence file for answerable ones in each mode, and `ask` without a model:
answerable ones correct (every answer group matched in the answer) and unanswerable ones abstained.
`--kinds procedure,name` takes the questions of those kinds instead (item 4's answer shapes).

Run it once with main's code and once with the branch's (PYTHONPATH), on the same machine, for
a before/after; the first line names the docqa that ran.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
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
    ap.add_argument("--trust", default="", help="a trust dev set questions_*.jsonl: measure on it instead")
    ap.add_argument("--corpus", default="benchmarks/.work/trust/corpus", help="the built trust corpus (devset.py build)")
    ap.add_argument("--kinds", default="", help="with --trust: the questions of these kinds (comma-separated) instead")
    args = ap.parse_args()
    if args.trust:
        return trust(Path(args.trust), Path(args.corpus), [k for k in args.kinds.split(",") if k])
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
            print(f"{len(report.added)} files, {kb.status.stats()['chunks']} chunks; {len(gold)} release notes")
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


def trust(questions_file: Path, corpus: Path, kinds: list[str]) -> None:
    exact_tokens = _this_tree_exact_tokens()
    if not corpus.is_dir():
        raise SystemExit(f"{corpus} not found: run python benchmarks/trust/devset.py build first")
    questions = [json.loads(line) for line in questions_file.open(encoding="utf-8") if line.strip()]
    asked = [q for q in questions if (q["kind"] in kinds if kinds else exact_tokens(q["question"]))]
    print(f"docqa: {Path(docqa.__file__).parent}")
    with tempfile.TemporaryDirectory(prefix="exact-tokens-trust-") as tmp:
        settings = Settings(kb=str(Path(tmp) / "kb.db"), llm={"provider": "none"})
        with KnowledgeBase(settings, embedder=make_embedder("local", "")) as kb:
            report = kb.add([corpus])
            print(f"{len(report.added)} files, {kb.status.stats()['chunks']} chunks; {len(asked)} of {len(questions)} questions "
                  + (f"of kinds {', '.join(kinds)}" if kinds else "hold an exact token"))
            by_file = {str(Path(r.path).resolve().relative_to(corpus.resolve())).split("/", 1)[1]: r.path
                       for r in kb.documents.list()}
            print("\n| split | mode | answerable with evidence | hit@1 | hit@5 |\n|---|---|---|---|---|")
            for half in ("dev", "test"):
                gold = [q for q in asked if _split(q["id"]) == half and q["answerable"] and q["evidence"]]
                for mode in MODES:
                    top1 = top5 = 0
                    for q in gold:
                        want = {by_file[e["file"]] for e in q["evidence"] if e["file"] in by_file}
                        ranked = files(kb.search(q["question"], top_k=20, mode=mode))
                        top1 += bool(want & set(ranked[:1]))
                        top5 += bool(want & set(ranked[:5]))
                    print(f"| {half} | {mode} | {len(gold)} | {top1 / len(gold):.3f} | {top5 / len(gold):.3f} |")
            print("\n| split | answerable | correct | unanswerable | abstained |\n|---|---|---|---|---|")
            for half in ("dev", "test"):
                part = [q for q in asked if _split(q["id"]) == half]
                right = abstained = 0
                for q in part:
                    answer = kb.ask(q["question"], fresh=True, record=False)
                    if q["answerable"]:
                        right += answer.answerable and _matches(answer.answer, q["answers"])
                    else:
                        abstained += not answer.answerable
                n_yes = sum(q["answerable"] for q in part)
                n_no = len(part) - n_yes
                print(f"| {half} | {n_yes} | {right / max(n_yes, 1):.3f} | {n_no} | {abstained / max(n_no, 1):.3f} |")


def _this_tree_exact_tokens():
    """text/exact.py of this tree, whatever docqa runs: main's code is measured on the same questions."""
    path = Path(__file__).resolve().parents[1] / "src" / "docqa" / "text" / "exact.py"
    spec = importlib.util.spec_from_file_location("exact_tokens_rule", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.exact_tokens


def _split(question_id: str) -> str:
    """benchmarks/trust/devset.py's rule: valid for a `<docset>-v<nnn>` id, else dev when the sha256 of the id is even."""
    if re.fullmatch(r".+-v\d{3,}", question_id):
        return "valid"
    return "dev" if int(hashlib.sha256(question_id.encode()).hexdigest(), 16) % 2 == 0 else "test"


def _matches(text: str, groups: list[list[str]]) -> bool:
    flat = "".join(text.lower().split())
    return all(any("".join(a.lower().split()) in flat for a in group) for group in groups)


if __name__ == "__main__":
    sys.exit(main())
