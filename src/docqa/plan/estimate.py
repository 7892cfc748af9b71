"""Estimates: what a first `docqa add` of a surveyed folder will take (time, chunks, index size,
embedding tokens and their price), and what one question costs (tokens, model calls, time, money)
— from the averages of recent runs in the run log, or from stated defaults when it has none."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from statistics import mean
from typing import Any

from docqa.plan import rates
from docqa.plan.survey import Survey
from docqa.types import FALLBACK, SUCCESS, RunRecord

# formats whose parsing follows their text (the others: their file bytes; see rates.CHAR_S, PAGE_BYTE_S)
_TEXT_TYPES = {"text", "markdown", "rst", "man", "json", "yaml", "csv", "compressed", "code", "html", "eml", "epub", "docx"}
_OCR_PAGE_CHARS = 1500  # characters OCR reads on a typical page
_PREFIX_TOKENS = 12  # the title and section path embedded with each chunk
RECENT_RUNS = 50  # runs averaged, newest first
E5 = "multilingual-e5-small"
_EMBED_DIMS = {"use-multilingual-v3": 512, E5: 384}


@dataclass(slots=True)
class IngestEstimate:
    """A first `docqa add` of a folder, predicted."""

    files: int
    bytes: int
    text_chars: int
    tokens: int
    chunks: int
    ocr_pages: int
    parse_seconds: float
    ocr_seconds: float
    embed_seconds: float
    seconds: float
    index_bytes: int
    embedder: str | None
    embed_tokens: int
    embed_cost: float | None  # None: a paid embedder without embed.price
    basis: str
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def estimate_ingest(survey: Survey, embedder: str | None, max_tokens: int = 512, embed_price: float = 0.0,
                    paid: bool = False, ocr: bool = False) -> IngestEstimate:
    """Extrapolate the survey's sample to the whole folder with the measured rates (docqa.plan.rates).
    `embedder`: use-multilingual-v3, multilingual-e5-small, another name (remote) or None (BM25 only);
    `paid`: a remote embedder that bills per token (`embed_price` per million)."""
    total = dict.fromkeys(TEXT_KEYS, 0.0)
    parse = model = 0.0
    for kind, stat in survey.by_type.items():
        found = format_text(survey, kind, max_tokens)
        total = {key: total[key] + found[key] for key in TEXT_KEYS}
        parse += _parse_seconds(kind, stat["files"], stat["bytes"], found)
        model += _e5_seconds(found) if embedder == E5 else _model_seconds(found)
    chars, han, tokens, chunks, pages = (total[k] for k in ("text_chars", "han_chars", "tokens", "chunks", "pages"))
    ocr_pages = _ocr_pages(survey) if ocr else 0
    chars += ocr_pages * _OCR_PAGE_CHARS
    model += ocr_pages * (0.7 * rates.E5_CHUNK_TOKENS * rates.E5_TOKEN_S if embedder == E5 else _OCR_PAGE_CHARS * rates.USE_CHAR_S)
    tokens += ocr_pages * _OCR_PAGE_CHARS / rates.CHARS_PER_TOKEN
    chunks += ocr_pages * 0.7  # a chunk never spans two pages: about one per page, fewer for short ones
    pages += ocr_pages * 0.7 * rates.ROW_PAGES_PER_CHUNK
    distinct = 1.0 - survey.duplicate_chunks  # equal chunk texts are embedded (and their vector kept) once
    embed_seconds = _embed_seconds(embedder, chars, model, distinct) if embedder else 0.0
    embed_tokens = int((tokens + chunks * _PREFIX_TOKENS) * distinct) if embedder else 0
    ocr_seconds = _ocr_seconds(survey) if ocr else 0.0
    notes = _outsized(survey, chunks) + _ingest_notes(survey, embedder, paid, embed_price)
    return IngestEstimate(
        files=survey.files, bytes=survey.bytes, text_chars=int(chars), tokens=int(tokens), chunks=int(round(chunks)),
        ocr_pages=ocr_pages, parse_seconds=round(parse, 1), ocr_seconds=round(ocr_seconds, 1),
        embed_seconds=round(embed_seconds, 1), seconds=round(rates.START_S + parse + ocr_seconds + embed_seconds, 1),
        index_bytes=int(_index_bytes(chars, han, chunks, pages, embedder, distinct) + total["wide"] * rates.INDEX_BYTES_PER_WIDE
                        + survey.files * rates.INDEX_BYTES_PER_FILE),
        embedder=embedder, embed_tokens=embed_tokens,
        embed_cost=_embed_cost(embed_tokens, embed_price, paid),
        basis=_basis(survey), notes=notes)


def _embed_cost(tokens: int, price: float, paid: bool) -> float | None:
    """The embedding's price (0 for a local model; None for a paid one without embed.price)."""
    if price:
        return round(tokens * price / 1e6, 4)
    return None if paid and tokens else 0.0


def _content(stat: dict) -> float:
    """Bytes of content of a format's files (or one file): inflated for .gz files, else their size."""
    return float(stat.get("inflated") or stat.get("bytes") or stat.get("size") or 0)


TEXT_KEYS = ("text_chars", "han_chars", "packed", "tokens", "chunks", "pages", "wide", "cut", "model_tokens", "model_windows")


def format_text(survey: Survey, kind: str, max_tokens: int = 512) -> dict[str, float]:
    """What the files of one format hold (TEXT_KEYS: characters, Han characters, packed bytes, tokens, chunks, the
    pages their rows fill, UTF-8 bytes past one a character other than Han): the heavy ones as measured, the rest
    scaled from the sample."""
    stat = survey.by_type[kind]
    heavy = [h for h in survey.heavy if h["type"] == kind]
    rest = _per_type(survey, kind, max(_content(stat) - sum(_content(h) for h in heavy), 0), max_tokens, len(heavy))
    return {key: rest[key] + sum(h.get(key, 0) for h in heavy) for key in TEXT_KEYS}


def _per_type(survey: Survey, kind: str, size: float, max_tokens: int, heavy: int = 0) -> dict[str, float]:
    """What `size` bytes of content (a .gz file's inflated size) of one format hold (TEXT_KEYS), the `heavy` ones
    measured apart: the sample's ratios, else the heavy files' own, else the fallbacks."""
    if not size or kind == "image" and not survey.sample.get(kind):
        return dict.fromkeys(TEXT_KEYS, 0.0)
    sample = survey.sample.get(kind) or _pooled([h for h in survey.heavy if h["type"] == kind])
    if sample and _content(sample) and sample.get("text_chars"):
        scale = size / _content(sample)  # the sample's counts scaled to `size`
        found = {key: scale * sample.get(key, 0) for key in TEXT_KEYS}
        if "packed" not in sample:
            found["packed"] = found["text_chars"] * rates.PACKED_PER_CHAR
        if "pages" not in sample:
            found["pages"] = found["chunks"] * rates.ROW_PAGES_PER_CHUNK
        return found
    if survey.by_type.get(kind, {}).get("inflated"):  # .gz content: text, as plain text holds it
        chars = size / rates.BYTES_PER_CHAR
    else:
        chars = size * rates.TEXT_PER_BYTE.get(kind, 1.0 / rates.BYTES_PER_CHAR)
    tokens = chars / rates.CHARS_PER_TOKEN
    files = survey.by_type.get(kind, {}).get("files", 0) - heavy
    chunks = max(tokens / (max_tokens * 0.8), files)
    return {"text_chars": chars, "han_chars": chars * _han_share(survey), "packed": chars * rates.PACKED_PER_CHAR,
            "tokens": tokens, "chunks": chunks, "pages": chunks * rates.ROW_PAGES_PER_CHUNK, "wide": 0.0,
            "cut": 0.0, "model_tokens": 0.0, "model_windows": 0.0}


def _han_share(survey: Survey) -> float:
    """Han characters per character of text in all the files measured (sampled and heavy)."""
    measured = [*survey.sample.values(), *survey.heavy]
    return sum(m.get("han_chars", 0) for m in measured) / max(sum(m["text_chars"] for m in measured), 1)


def _pooled(files: list[dict]) -> dict[str, float]:
    """Several measured files' counts added up, as a sample's."""
    keys = ("bytes", "inflated", *TEXT_KEYS)
    return {k: float(sum(f.get("size" if k == "bytes" else k, 0) for f in files)) for k in keys} if files else {}


def _parse_seconds(kind: str, files: int, size: int, found: dict[str, float]) -> float:
    """CPU seconds to read, chunk and index files of one format (pictures: OCR, counted apart; `found`: what they hold,
    format_text): text by its characters and by what it compresses to (repeated lines cost less), laid-out formats
    by their bytes."""
    chars, han = found["text_chars"], found["han_chars"]
    if kind == "image":
        return 0.0
    if kind == "json":  # records: a rate of its own (the fit folders' JSON is SQuAD's), lines over a chunk cut by tokens
        work = (chars - han) * rates.JSON_CHAR_S + found.get("cut", 0.0) * rates.JSON_CUT_S
    elif kind in _TEXT_TYPES:
        work = (chars - han) * rates.CHAR_S + found["packed"] * rates.PACKED_S
    else:
        work = size * rates.PAGE_BYTE_S
    return files * rates.FILE_S + work + han * rates.HAN_S


def _ocr_seconds(survey: Survey) -> float:
    """CPU seconds of OCR: each picture by its pixels as text detection sees them (from its header) and a start
    of its own; each PDF page without a text layer as a rendered page."""
    pictures = survey.by_type.get("image", {}).get("files", 0)
    picture_s = pictures * rates.OCR_PICTURE_S + survey.image_megapixels * rates.OCR_MEGAPIXEL_S
    return picture_s + _scanned_pages(survey) / rates.OCR_PAGES_PER_S


def _scanned_pages(survey: Survey) -> float:
    """PDF pages without a text layer, scaled from the PDFs checked to all of them."""
    pdfs = survey.by_type.get("pdf", {}).get("files", 0)
    scanned = sum(x["pages"] * x["without_text"] / max(x["checked"], 1) for x in survey.scanned)
    return scanned * max(1.0, pdfs / max(1, survey.pdfs_checked))


def _ocr_pages(survey: Survey) -> int:
    """PDF pages without a text layer (scaled from the PDFs checked) and pictures, counted as pages by
    their size (a page-wide scan is about PAGE_BYTES_SCANNED; an icon a tenth of a page at least)."""
    pictures = survey.by_type.get("image", {"files": 0, "bytes": 0})
    pages = max(pictures["bytes"] / rates.PAGE_BYTES_SCANNED, pictures["files"] * 0.1)
    return int(round(pages + _scanned_pages(survey)))


def _model_seconds(found: dict[str, float]) -> float:
    """CPU seconds the bundled model takes over one format's text (`found`: format_text): by its own tokens and the
    windows it reads them in when the survey counted them, else by characters (a Han character about one token)."""
    if found.get("model_tokens"):
        return found["model_tokens"] * rates.USE_TOKEN_S + found.get("model_windows", 0.0) * rates.USE_WINDOW_S
    return (found["text_chars"] - found["han_chars"]) * rates.USE_CHAR_S + found["han_chars"] * rates.USE_HAN_S


def _e5_seconds(found: dict[str, float]) -> float:
    """CPU seconds multilingual-e5-small takes over one format's text (`found`: format_text): it reads each chunk as
    one window of at most rates.E5_CHUNK_TOKENS tokens (the rest is cut off), so a chunk costs its tokens up to that
    (counted with the bundled model's tokenizer, which cuts English about as e5's does; else by characters)."""
    chunks = found["chunks"]
    if not chunks:
        return 0.0
    tokens = found.get("model_tokens") or (found["text_chars"] - found["han_chars"]) / rates.CHARS_PER_TOKEN + found["han_chars"]
    return chunks * min(tokens / chunks, rates.E5_CHUNK_TOKENS) * rates.E5_TOKEN_S


def _embed_seconds(embedder: str, chars: float, model: float, distinct: float = 1.0) -> float:
    """Seconds the embedder takes over the text (the `distinct` share of it: equal chunk texts are embedded once;
    `model`: the local model's CPU seconds over all of it, _model_seconds or _e5_seconds): CPU seconds for the local
    models, with their load, a remote one's assumed speed."""
    local = model * distinct
    if embedder == "use-multilingual-v3":
        return rates.EMBED_START_S + local
    if embedder == E5:
        return rates.E5_START_S + local
    return chars * distinct / rates.REMOTE_CHARS_PER_S


def _index_bytes(chars: float, han: float, chunks: float, pages: float, embedder: str | None,
                 distinct: float = 1.0) -> float:
    """A new knowledge base's file, the text (a Han character weighs more: three bytes of UTF-8 in each copy,
    bigram postings), the pages the chunks' rows fill (the survey packs them as SQLite does: full chunks of prose
    leave pages half empty), their index entries, and their vectors (one per `distinct` share of the chunks: equal
    texts share a vector)."""
    size = (rates.INDEX_EMPTY_BYTES + (chars - han) * rates.INDEX_BYTES_PER_CHAR + han * rates.INDEX_BYTES_PER_HAN
            + chunks * rates.INDEX_BYTES_PER_CHUNK + pages * rates.INDEX_PAGE_BYTES)
    if embedder:
        size += chunks * distinct * rates.VECTOR_BYTES_PER_CHUNK_512D * _EMBED_DIMS.get(embedder, 1024) / 512
    return size


def _basis(survey: Survey) -> str:
    sampled = sum(int(s.get("files", 0)) for s in survey.sample.values())
    size = sum(s.get("bytes", 0) for s in survey.sample.values())
    listed = "" if survey.complete else f"; the listing stopped at {survey.limits.get('scan_files', 0):,.0f} files"
    return (f"{sampled} of {survey.files} files sampled ({size / 1e6:.1f} MB), measured rates of "
            f"benchmarks/RESULTS.md; times in CPU seconds: one free core's wall time, two free cores up to "
            f"half that, a busy machine longer{listed}")


OUTSIZED_SHARE = 0.1  # a file making this share of the chunks (and OUTSIZED_CHUNKS) is named in a warning
OUTSIZED_CHUNKS = 1000


def _outsized(survey: Survey, chunks: float) -> list[str]:
    """A warning for each file that alone makes a large share of the index, with how to leave it out."""
    notes = []
    for h in sorted(survey.heavy, key=lambda h: -h["chunks"]):
        if h["chunks"] >= max(OUTSIZED_CHUNKS, OUTSIZED_SHARE * chunks):
            rel = os.path.relpath(h["path"], survey.root) if h["path"].startswith(survey.root) else h["path"]
            notes.append(f"outsized: {rel} alone makes ~{h['chunks']:,} chunks ({h['chunks'] / max(chunks, 1):.0%} of "
                         f"the index, {h['text_chars'] / 1e6:.1f} MB of text from {h['size'] / 1e6:.1f} MB); if it is not "
                         f"worth asking (a log, test output, generated data), leave it out: --exclude '{rel}'")
    return notes


def _ingest_notes(survey: Survey, embedder: str | None, paid: bool, price: float) -> list[str]:
    notes = []
    if embedder in _EMBED_DIMS and not survey.model_tokens:
        notes.append("the embedding time is estimated by characters: the bundled model's tokenizer is not installed "
                     "(the model's own tokens estimate it closer)")
    if embedder and embedder not in _EMBED_DIMS:
        notes.append(f"{embedder}: a remote embedder's speed is not measured here; assumed "
                     f"{rates.REMOTE_CHARS_PER_S:,.0f} characters/s")
    if paid and not price:
        notes.append("the embedder's price is not set: set embed.price (per million tokens) for the cost")
    if not survey.complete:
        notes.append("the folder has more files than were listed: the figures are for the files listed")
    return notes


# -- one question -----------------------------------------------------------------------------------

@dataclass(slots=True)
class QuestionEstimate:
    """What one question is expected to cost in a mode."""

    mode: str
    model: str | None
    basis: str  # "runs": the averages of recent runs; "defaults": no run to average
    runs: int
    prompt_tokens: int
    completion_tokens: int
    model_calls: float
    seconds: float
    cost: float | None  # None: a remote model without prices
    prices: tuple[float, float]
    seconds_range: tuple[float, float] | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["prices"] = {"prompt": self.prices[0], "completion": self.prices[1]}
        return data


# Defaults when the log has no run of the mode: a rough shape of each mode, scaled by the settings.
_PROMPT_OVERHEAD = 450  # instructions, question and source labels of a pipeline prompt
_SOURCE_FILL = 0.7  # a source chunk holds about this share of chunk.max_tokens
_ANSWER_TOKENS = 160
_CHECK_TOKENS = 40
AGENT_CALLS = 6  # model turns of a typical agent run (budget: agent.max_steps)
AGENT_PROMPT_PER_CALL = 3000  # the conversation grows with each tool result (capped at agent.max_result_chars)
AGENT_COMPLETION_PER_CALL = 120
EXTRACTIVE_SECONDS = 0.3


def estimate_question(runs: list[RunRecord], mode: str, model: str | None, *, local: bool, prices: tuple[float, float],
                      top_k: int = 6, max_tokens: int = 512, check: bool = True) -> QuestionEstimate:
    """The averages of the recent `runs` of `mode` (those of `model` when there are some), else defaults."""
    done = [r for r in runs if r.status in (SUCCESS, FALLBACK) and r.mode == mode][:RECENT_RUNS]
    same = [r for r in done if r.model == model]
    used = same or done
    notes = []
    if used:
        est = _from_runs(used, mode, model, prices, local)
        if done and not same and mode != "extractive":
            notes.append(f"no recent run of {model or 'this model'}: averaged runs of other models")
    else:
        est = _defaults(mode, model, prices, local, top_k, max_tokens, check)
        notes.append(f"no recorded {mode} run to average: estimated from defaults (docqa.plan.estimate); "
                     "ask a few questions and estimate again")
    if est.cost is None:
        notes.append("a remote model without prices: set llm.prompt_price and llm.completion_price (per million tokens)")
    est.notes = notes + est.notes
    return est


def _from_runs(runs: list[RunRecord], mode: str, model: str | None, prices: tuple[float, float],
               local: bool) -> QuestionEstimate:
    prompt = mean(int(r.usage.get("prompt_tokens") or 0) for r in runs)
    completion = mean(int(r.usage.get("completion_tokens") or 0) for r in runs)
    calls = mean(int(r.usage.get("model_calls") or 0) for r in runs)
    seconds = [float(r.timings.get("total") or 0.0) for r in runs]
    return QuestionEstimate(mode, model, "runs", len(runs), round(prompt), round(completion), round(calls, 2),
                            round(mean(seconds), 3), _cost(prompt, completion, prices, local, mode), prices,
                            (round(min(seconds), 3), round(max(seconds), 3)))


def _defaults(mode: str, model: str | None, prices: tuple[float, float], local: bool, top_k: int, max_tokens: int,
              check: bool) -> QuestionEstimate:
    if mode in ("extractive", "catalog") or model is None:
        return QuestionEstimate(mode if model else "extractive", model, "defaults", 0, 0, 0, 0, EXTRACTIVE_SECONDS,
                                0.0, prices)
    prompt: float
    completion: float
    if mode == "agent":
        calls = AGENT_CALLS
        prompt, completion = AGENT_PROMPT_PER_CALL * calls, AGENT_COMPLETION_PER_CALL * calls
    else:
        sources = _PROMPT_OVERHEAD + top_k * max_tokens * _SOURCE_FILL
        calls = 2 if check else 1
        prompt = sources + (sources + _ANSWER_TOKENS if check else 0)
        completion = _ANSWER_TOKENS + (_CHECK_TOKENS if check else 0)
    prompt, completion = int(prompt), int(completion)
    read, write = ((rates.LOCAL_PROMPT_TOKENS_PER_S, rates.LOCAL_COMPLETION_TOKENS_PER_S) if local
                   else (rates.REMOTE_PROMPT_TOKENS_PER_S, rates.REMOTE_COMPLETION_TOKENS_PER_S))
    seconds = rates.RETRIEVAL_S + prompt / read + completion / write
    notes = [] if local else ["a remote model's speed is assumed (not measured here)"]
    return QuestionEstimate(mode, model, "defaults", 0, prompt, completion, calls, round(seconds, 1),
                            _cost(prompt, completion, prices, local, mode), prices, notes=notes)


def _cost(prompt: float, completion: float, prices: tuple[float, float], local: bool, mode: str) -> float | None:
    if mode in ("extractive", "catalog") or prompt + completion == 0:
        return 0.0
    if not any(prices):
        return 0.0 if local else None
    return round((prompt * prices[0] + completion * prices[1]) / 1e6, 6)
