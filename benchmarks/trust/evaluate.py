"""The trust dev set, asked through docqa and scored (issue 28, items 1 and 8).

    python benchmarks/trust/evaluate.py [--split dev|test|valid|all] [--limit N] [--ids ID,...] [--lang en|zh]
        [--kind KIND,...] [--llm BASE_URL --model NAME [--mode pipeline|agent|auto]] [--reuse] [--out FILE]
    python benchmarks/trust/evaluate.py --report RUN.jsonl       # the tables of a finished (or partial) run
    python benchmarks/trust/evaluate.py --compare A.jsonl B.jsonl  # where two runs differ; exit 1 if B is worse on any

One knowledge base holds the whole corpus (every corpus_*.tsv, built by devset.py into
benchmarks/.work/trust/corpus/), with the default settings (the default embedder: hybrid search).  It is
kept in benchmarks/.work/trust/kb.db and rebuilt when the corpus, the embedder or docqa's ingest code
changes (a fingerprint beside it); --reuse keeps it as it is.  --corpus DIR and --questions FILE... evaluate another set laid
out the same way (DIR/<docset>/<relative_path>).

Each question is asked the way `docqa ask` asks it: `KnowledgeBase.start(...)`, the run iterated to its
end, `run.answer` the published answer (recorded in the knowledge base's run log, whose trace gives the
acceptance rule's verdict).  Without --llm there is no chat model (llm.provider none): the extractive
answerer, what a machine with no model gets.  With --llm the model at BASE_URL (an OpenAI-compatible
server, e.g. `docqa model serve --port 18931` for the local Qwen2.5-Coder-1.5B) writes the answers,
temperature 0; --mode pipeline (default) or agent.

Scoring (outcomes, the claims and the citation "supports" rule): see score.py's docstring.  --limit N
takes an even sample (every k-th question in id order).  Rows go to --out as they come (default
benchmarks/.work/trust/<mode>-<split>.jsonl), one per question: its id, split, lang, kind, the published
text, its citations (file, lines, span, quote), outcome, confidence, evidence probability and features,
acceptance verdict, per-claim citation scores, seconds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE.parent / ".work" / "trust"
sys.path.insert(0, str(HERE))

import model_drafts  # noqa: E402  (beside this file, on the path set above)
import report  # noqa: E402
import score  # noqa: E402

from docqa.errors import DocqaError  # noqa: E402
from docqa.kb import KnowledgeBase  # noqa: E402
from docqa.settings import Settings  # noqa: E402
from docqa.types import CANCELLED, FAILED, Answer  # noqa: E402


# -- the questions ----------------------------------------------------------------------------------
def split_of(qid: str) -> str:
    """dev, test or valid, as devset.py assigns it (valid: questions_valid.jsonl, never fitted on)."""
    import devset

    return devset.split(qid)


def load_questions(files: list[Path]) -> list[dict]:
    """Every question of the files, with its split; sorted by id."""
    out = []
    for path in files:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                try:
                    q = json.loads(line)
                except ValueError as exc:
                    raise SystemExit(f"{path}:{n}: not JSON ({exc}); run devset.py check") from None
                q["split"] = split_of(q["id"])
                out.append(q)
    return sorted(out, key=lambda q: q["id"])


def choose(questions: list[dict], args) -> list[dict]:
    """The questions the options select; --limit: an even sample of them."""
    ids = set(args.ids.split(",")) if args.ids else None
    kinds = set(args.kind.split(",")) if args.kind else None
    chosen = [q for q in questions if (args.split == "all" or q["split"] == args.split)
              and (ids is None or q["id"] in ids) and (args.lang is None or q["lang"] == args.lang)
              and (kinds is None or q["kind"] in kinds)]
    if args.limit and args.limit < len(chosen):
        step = len(chosen) / args.limit
        chosen = [chosen[int(i * step)] for i in range(args.limit)]
    return chosen


# -- the knowledge base -----------------------------------------------------------------------------
def settings(db: Path, args) -> Settings:
    """docqa's defaults; the chat model: none, or the one at --llm."""
    llm = ({"provider": "openai", "base_url": args.llm, "model": args.model, "temperature": 0.0, "timeout": 900}
           if args.llm else {"provider": "none"})
    return Settings(kb=str(db), llm=llm)


def fingerprint(corpus: Path, s: Settings) -> str:
    """The corpus files (paths and contents) and what shapes the index: the embedder and chunker settings
    and the source of docqa's ingest, text, embed and store packages (a branch that changes them rebuilds)."""
    import docqa

    h = hashlib.sha256(json.dumps([s.embed.model_dump(mode="json"), s.chunk.model_dump(mode="json")],
                                  sort_keys=True).encode())
    package = Path(docqa.__file__).parent
    code = [(package, p) for part in ("ingest", "text", "embed", "store") for p in sorted((package / part).rglob("*.py"))]
    for root, path in code + [(corpus, p) for p in sorted(corpus.rglob("*")) if p.is_file()]:
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def open_kb(corpus: Path, db: Path, args) -> KnowledgeBase:
    """The knowledge base of the corpus: reused when its fingerprint matches (or --reuse), else rebuilt."""
    s = settings(db, args)
    stamp = db.with_name(db.name + ".corpus")
    if args.reuse and db.exists():
        return KnowledgeBase(s)
    wanted = fingerprint(corpus, s)
    if db.exists() and stamp.exists() and stamp.read_text() == wanted:
        return KnowledgeBase(s)
    for stale in db.parent.glob(db.name + "*"):
        stale.unlink()
    db.parent.mkdir(parents=True, exist_ok=True)
    kb = KnowledgeBase(s)
    t0 = time.perf_counter()
    added = kb.add([corpus])
    print(f"ingested {corpus} in {time.perf_counter() - t0:.0f}s: {len(added.added)} files, {added.chunks} chunks; "
          f"skipped {len(added.skipped)}, failed {len(added.failed)} {[p for p, *_ in added.skipped + added.failed][:5]}",
          file=sys.stderr)
    stamp.write_text(wanted)
    return kb


class Corpus:
    """Corpus paths <-> relative_path (no docset prefix), and the gold quotes located in the indexed text."""

    def __init__(self, kb: KnowledgeBase, root: Path):
        self.kb, self.root = kb, root.resolve()
        self._by_file = {"/".join(p.relative_to(self.root).parts[1:]): p for p in self.root.rglob("*") if p.is_file()}
        self._texts: dict[str, str] = {}

    def file_of(self, path: str) -> str | None:
        try:
            parts = Path(path).resolve().relative_to(self.root).parts
        except ValueError:
            return None
        return "/".join(parts[1:]) or None

    def text(self, file: str) -> str:
        if file not in self._texts:
            path = self._by_file.get(file)
            try:
                self._texts[file] = self.kb.documents.text(self.kb.documents.get(path).document_id) if path else ""
            except DocqaError:  # not indexed (docqa cannot read it): no quote can be located in it
                self._texts[file] = ""
        return self._texts[file]

    def golds(self, q: dict) -> list[score.Span]:
        out = []
        for e in q.get("evidence") or []:
            text = self.text(e["file"])
            where = score.locate(text, e["quote"])
            out.append(score.Span(e["file"], *(where or (None, None)), e["quote"], score.context(text, *where) if where else None))
        return out


# -- asking -----------------------------------------------------------------------------------------
def ask(kb: KnowledgeBase, question: str, mode: str | None) -> tuple[Answer, float, list[dict]]:
    """As `docqa ask QUESTION` does: start the run, iterate it to its end, take its answer (recorded in
    the run log, as the CLI records it; `fresh`: never an earlier run's answer replayed, though
    answer.recall is off by default anyway)."""
    t0 = time.perf_counter()
    run = kb.start(question, mode=mode, fresh=True)
    for _event in run:
        pass
    answer = run.answer
    seconds = time.perf_counter() - t0
    trace = kb.log.run(answer.run_id).trace if answer.run_id else []
    return answer, seconds, trace


def written_by(answer: Answer) -> str:
    """model | extracted | not_found | catalog."""
    if not answer.answerable:
        return "not_found"
    return {"pipeline": "model", "agent": "model", "extractive": "extracted"}.get(answer.mode, answer.mode)


def row(q: dict, answer: Answer, seconds: float, trace: list[dict], corpus: Corpus, label: str) -> dict:
    """One question's record: what was published, how it scores, and the features behind it."""
    spans = [score.Span(corpus.file_of(c.path), c.char_start, c.char_end, c.quote) for c in answer.citations]
    cites: dict[int, list[score.Span]] = {}
    for c, span in zip(answer.citations, spans):
        cites.setdefault(c.n, []).append(span)
    failed = answer.status in (FAILED, CANCELLED)
    abstained = not answer.answerable and not failed
    groups = q.get("answers") or []
    matched = score.matched_groups(answer.answer, groups) if answer.answerable else [False] * len(groups)
    evidence_files = [e["file"] for e in q.get("evidence") or []]
    cited = score.cites_evidence([s.file for s in spans if s.file], evidence_files, q["kind"] == "multihop")
    claims = (score.score_claims(answer.answer, cites, corpus.golds(q), groups, q["answerable"])
              if answer.answerable and not failed else [])
    r = answer.retrieval.to_dict()
    accepting = [t for t in trace if t.get("stage") == "accepting"]
    extracting = [t for t in trace if t.get("stage") == "extracting"]
    return {
        "id": q["id"], "split": q["split"], "lang": q["lang"], "kind": q["kind"], "docset": q.get("docset"),
        "answerable": q["answerable"], "question": q["question"], "run": label,
        "outcome": score.outcome(answerable=q["answerable"], abstained=abstained, failed=failed,
                                 all_matched=all(matched), cited=cited),
        "matched": matched, "cited_evidence": cited, "answer": answer.answer, "written_by": written_by(answer),
        "answer_mode": answer.mode, "model": answer.model, "status": answer.status, "error": answer.error,
        "language": answer.language, "confidence": answer.confidence, "confidence_reasons": answer.confidence_reasons,
        "verification": answer.verification.to_dict(),
        "citations": [{"n": c.n, "file": span.file, "path": c.path, "lines": [c.line_start, c.line_end],
                       "span": [c.char_start, c.char_end], "quote": c.quote} for c, span in zip(answer.citations, spans)],
        "claims": [{"text": c.text, "citations": c.citations, "supported": c.supported, "entailed": c.entailed}
                   for c in claims],
        "evidence": r.get("evidence"), "evidence_features": r.get("evidence_features"),
        "low_relevance": r.get("low_relevance"), "relevance_threshold": r.get("threshold"),
        "top_score": r["hits"][0]["score"] if r.get("hits") else None, "search_mode": r.get("mode"),
        "second_look": r.get("second_look"),
        "acceptance": _acceptance(accepting[-1]) if accepting else r.get("acceptance"),
        "cross_lingual": extracting[-1].get("cross_lingual") if extracting else None,
        "seconds": round(seconds, 3), "timings": {k: round(v, 3) for k, v in answer.timings.items()},
        "usage": answer.usage, "model_trace": model_drafts.model_trace(trace) if answer.model else [],
    }


def _acceptance(entry: dict) -> dict:
    """The acceptance rule's verdict from the run's trace, with the model's attempt it judged."""
    claims = entry.get("claims")
    return {"outcome": entry.get("outcome"), "verified": entry.get("verified"), "reason": entry.get("reason"),
            "claims": len(claims) if isinstance(claims, list) else claims, "attempt": (entry.get("attempt") or "")[:2000],
            "before": entry.get("before")}


def run(args) -> Path:
    import devset

    corpus_root = Path(args.corpus) if args.corpus else WORK / "corpus"
    if not args.corpus and not args.reuse:
        devset.build(corpus_root)
    files = [Path(f) for f in args.questions] if args.questions else sorted(HERE.glob("questions_*.jsonl"))
    questions = choose(load_questions(files), args)
    if not questions:
        raise SystemExit("no question matches the options")
    label = f"{args.mode}:{args.model}" if args.llm else "extractive"
    out = Path(args.out) if args.out else WORK / f"{label.replace(':', '-').replace('/', '_')}-{args.split}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    db = Path(args.kb) if args.kb else WORK / "kb.db"
    with open_kb(corpus_root, db, args) as kb:
        corpus = Corpus(kb, corpus_root)
        kb.models.warm()  # the embedding model loads before the first question, not in its time
        t0 = time.perf_counter()
        with open(out, "w", encoding="utf-8") as fp:
            for i, q in enumerate(questions, 1):
                answer, seconds, trace = ask(kb, q["question"], args.mode if args.llm else None)
                fp.write(json.dumps(row(q, answer, seconds, trace, corpus, label), ensure_ascii=False) + "\n")
                fp.flush()
                print(f"  {i}/{len(questions)} {q['id']}: {answer.status} {written_by(answer)} "
                      f"{seconds:.1f}s ({time.perf_counter() - t0:.0f}s)", file=sys.stderr, flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="dev", choices=["dev", "test", "valid", "all"])
    ap.add_argument("--limit", type=int, default=0, help="an even sample of N questions")
    ap.add_argument("--ids", default="", help="only these question ids (comma-separated)")
    ap.add_argument("--lang", choices=["en", "zh"], help="only questions in this language")
    ap.add_argument("--kind", default="", help="only these kinds (comma-separated)")
    ap.add_argument("--llm", default="", metavar="BASE_URL", help="an OpenAI-compatible server (default: no model, extractive)")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--mode", default="pipeline", choices=["pipeline", "agent", "auto"], help="answer mode with --llm")
    ap.add_argument("--reuse", action="store_true", help="keep the corpus and knowledge base as they are")
    ap.add_argument("--corpus", default="", help="a corpus folder laid out <docset>/<relative_path> (default: build it)")
    ap.add_argument("--questions", nargs="+", help="question files (default: benchmarks/trust/questions_*.jsonl)")
    ap.add_argument("--kb", default="", help="the knowledge base file (default benchmarks/.work/trust/kb.db)")
    ap.add_argument("--out", default="", help="the per-question JSONL to write")
    ap.add_argument("--report", nargs="+", metavar="RUN", help="only print the tables of these runs' rows")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"), help="list the questions where run B differs from run A")
    ap.add_argument("--curve", nargs="+", metavar="RUN", help="print the answer-or-abstain trade-off and reliability table of "
                    "runs made at threshold 0 (DOCQA_ANSWER__ABSTAIN_THRESHOLD=0)")
    args = ap.parse_args(argv)
    if args.curve:
        for path in args.curve:
            print(f"\n# {path}")
            report.curve(report.load(Path(path)))
        return 0
    if args.compare:
        worse = report.compare(*(report.load(Path(p)) for p in args.compare), names=args.compare)
        return 1 if worse else 0
    paths = [Path(p) for p in args.report] if args.report else [run(args)]
    for path in paths:
        print(f"\n# {path}")
        report.tables(report.load(path))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
