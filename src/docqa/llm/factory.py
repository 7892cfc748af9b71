"""Choose the chat model from settings (resolved at the edge and passed in).

`llm.provider: auto` takes the first of:
 1. `llm.base_url` (set in docqa.yml, DOCQA_LLM__BASE_URL or a flag; or from OPENAI_BASE_URL, or
    OpenAI itself when only OPENAI_API_KEY is set: docqa.settings resolves those);
 2. Ollama (llm.ollama_url, from OLLAMA_HOST, else 127.0.0.1:11434) with `llm.model`, else its best
    installed chat model (`best_ollama_model`);
 3. the local model: a 'docqa model serve' found running, else one started for this process when
    'docqa model install' was done;
 4. none: answers are extracted from the documents.
Every automatic choice is said once to the user, with how to choose another (`Choice.say`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from docqa.errors import ConfigError
from docqa.llm.base import ChatModel
from docqa.llm.openai_compat import OpenAICompatModel

if TYPE_CHECKING:
    from docqa.llm.server import LocalServing

OLLAMA_URL = "http://127.0.0.1:11434"
CHOOSE_ANOTHER = ("to choose another, set llm.base_url and llm.model (or llm.provider: none for answers "
                  "quoted from the documents); 'docqa config show --sources' shows what is set")
_EMBEDDING_NAMES = ("embed", "bge-", "bge:", "minilm", "rerank", "e5-")
_EMBEDDING_FAMILIES = {"bert", "nomic-bert", "jina-bert", "xlm-roberta", "roberta"}
_BASE_TAGS = re.compile(r"(?:^|[-_:])(text|base)(?:$|[-_])")
_PARAMS = re.compile(r"(?:^|[-_:])(\d+(?:\.\d+)?)([bm])(?=$|[-_:])", re.IGNORECASE)


@dataclass(slots=True)
class Choice:
    """The chat model to use (None: answer extractively) and why; `say`: tell the user once (the
    choice was made for them, not configured)."""

    model: ChatModel | None
    reason: str
    say: bool = False
    source: str = "configured"  # configured | ollama (found running locally) | local ('docqa model') | extractive | given

    @property
    def note(self) -> str | None:
        """What the user is told once (None: nothing to say)."""
        if self.model is None:
            return self.reason
        return f"{self.reason}; {CHOOSE_ANOTHER}" if self.say else None


def choose_chat_model(provider: str, base_url: str, model: str, api_key: str | None = None, temperature: float = 0.2,
                      max_tokens: int = 1024, timeout: float = 120.0, max_retries: int = 3,
                      ollama_url: str = OLLAMA_URL, *, via: str | None = None, local: LocalServing | None = None,
                      memory: int | None = None) -> Choice:
    """The chat model for `provider` (auto, openai, ollama, local, none); see the module's docstring.
    `via`: the environment variable `base_url` came from; `local`: how to serve the local model."""
    options: dict[str, Any] = dict(api_key=api_key, timeout=timeout, max_retries=max_retries, temperature=temperature,
                                   max_tokens=max_tokens)

    def build(url: str, name: str) -> OpenAICompatModel:
        return OpenAICompatModel(url, name, **options)

    if provider == "none":
        return Choice(None, "llm.provider is 'none': answers are extracted from the documents", source="extractive")
    if provider == "local":
        chosen = _local(local, options, required=True)
        assert chosen is not None  # required: it raises instead
        return chosen
    if provider == "openai" or (provider == "auto" and base_url):
        if not base_url:
            raise ConfigError("llm.base_url is required for the openai provider (e.g. http://127.0.0.1:8080/v1), "
                              "or set OPENAI_API_KEY alone to use OpenAI itself")
        return Choice(build(base_url, model), f"using {model} at {base_url}" + (f" (from {via})" if via else ""),
                      say=via is not None)
    url = (base_url if provider == "ollama" and base_url else ollama_url).rstrip("/").removesuffix("/v1")
    found = ollama_models(url)
    if found is not None:
        names = {m.get("name") for m in found}
        if model in names or f"{model}:latest" in names:
            return Choice(build(url + "/v1", model), f"using {model} on Ollama at {url}", say=provider == "auto",
                          source="ollama" if provider == "auto" else "configured")
        best = best_ollama_model(found, available_memory() if memory is None else memory)
        if best is not None:
            return Choice(build(url + "/v1", best), f"Ollama at {url} does not have {model} ('ollama pull {model}' "
                          f"to use it); using {best}, the largest installed chat model that fits in memory", say=True,
                          source="ollama")
        if provider == "ollama":
            raise ConfigError(f"Ollama at {url} has no chat model: run 'ollama pull {model}'")
    elif provider == "ollama":
        raise ConfigError(f"Ollama does not answer at {url}: start it with 'ollama serve'")
    chosen = _local(local, options, required=False)
    if chosen is not None:
        return chosen
    ollama = f"Ollama at {url} has no chat model" if found is not None else f"no Ollama at {url}"
    return Choice(None, f"no chat model configured, {ollama} and no local model: answers are extracted from the "
                  "documents; 'docqa model install' gets a small local model (see README, Chat models)", say=False,
                  source="extractive")


def _local(local: LocalServing | None, options: dict[str, Any], required: bool) -> Choice | None:
    """The local model: a shared 'docqa model serve' when one answers, else a server started now."""
    if local is None:
        if required:
            raise ConfigError("llm.provider is 'local' but no local model is set up here")
        return None
    from docqa.llm.server import LocalServerModel, ManagedServer, running

    name = local.model.name
    shared = running(local.models_dir)
    if shared is not None:
        return Choice(OpenAICompatModel(shared, name, **options),
                      f"using the local model {name} served by 'docqa model serve' at {shared}", say=True, source="local")
    problem = local.problem()
    if problem is not None:
        if required:
            raise ConfigError(f"llm.provider is 'local' but the local model cannot run: {problem}")
        return None
    server = ManagedServer(local)
    return Choice(LocalServerModel(server, **options),
                  f"using the local model {name} ('docqa model install'), started for this command", say=True,
                  source="local")


def ollama_models(url: str, timeout: float = 1.5) -> list[dict] | None:
    """The models a local Ollama has (GET /api/tags: name, size, details), or None when nothing
    answers like Ollama there."""
    import httpx  # only when asking Ollama: it is slow to import

    try:
        response = httpx.get(url.rstrip("/") + "/api/tags", timeout=timeout)
        data = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        return None
    return [m for m in data["models"] if isinstance(m, dict) and isinstance(m.get("name"), str)]


def best_ollama_model(models: list[dict], memory: int) -> str | None:
    """The installed chat model to use when `llm.model` is not there, by this rule:
    1. embedding models are skipped (a name with embed, bge, minilm, e5- or rerank, or a BERT family);
    2. chat models are preferred: a tag marked `text` or `base` (a base completion model) only when
       there is nothing else;
    3. among those, the largest parameter count (details.parameter_size, else the size in the name,
       e.g. 7b) whose file fits in `memory` bytes (with 20 % to spare); when none fits, the smallest;
    4. ties go to the first name in alphabetical order.
    """
    candidates = [m for m in models if not _is_embedding(m)]
    if not candidates:
        return None
    chat = [m for m in candidates if not _BASE_TAGS.search(m["name"].partition(":")[2] or "")]
    pool = chat or candidates
    fits = [m for m in pool if _bytes(m) * 1.2 <= memory]
    if fits:
        return min(fits, key=lambda m: (-_params(m), m["name"]))["name"]
    return min(pool, key=lambda m: (_params(m), m["name"]))["name"]


def _is_embedding(m: dict) -> bool:
    details = m.get("details") or {}
    families = {str(f).lower() for f in (details.get("families") or [])} | {str(details.get("family") or "").lower()}
    return any(word in m["name"].lower() for word in _EMBEDDING_NAMES) or bool(families & _EMBEDDING_FAMILIES)


def _params(m: dict) -> float:
    """Parameters, from details.parameter_size ('7.6B', '494.03M') or the name ('qwen2.5:1.5b'); else 0."""
    for text in (str((m.get("details") or {}).get("parameter_size") or ""), m["name"]):
        found = _PARAMS.search(text.lower()) or re.fullmatch(r"(\d+(?:\.\d+)?)([bm])", text.strip().lower())
        if found:
            return float(found.group(1)) * (1e9 if found.group(2).lower() == "b" else 1e6)
    return 0.0


def _bytes(m: dict) -> float:
    """The model's size on disk, else 0.6 bytes a parameter (4-bit quantised, with overhead)."""
    size = m.get("size")
    return float(size) if isinstance(size, (int, float)) and size > 0 else _params(m) * 0.6


def available_memory() -> int:
    """Memory free for a model now: MemAvailable on Linux, else the physical memory."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def escalation_model(name: str, base_url: str, api_key: str | None, *, default_url: str, default_key: str | None,
                     **options: Any) -> ChatModel | None:
    """llm.escalation_model (None when not set): at its own endpoint with its own key, else at the
    chat model's endpoint (`default_url`) with its key; never the chat model's key at another server."""
    if not name:
        return None
    url = base_url or default_url
    if not url:
        raise ConfigError("llm.escalation_model is set but has no endpoint: set llm.escalation_base_url "
                          "(an OpenAI-compatible URL, e.g. https://api.openai.com/v1) or llm.base_url")
    key = api_key if base_url else (api_key or default_key)
    return OpenAICompatModel(url, name, api_key=key, **options)
