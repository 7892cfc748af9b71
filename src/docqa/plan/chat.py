"""Which chat model docqa would use, found without starting one: the choice logic of
docqa.llm.factory (`choose_chat_model`) with the local model looked up, not launched."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docqa.errors import ConfigError
from docqa.llm import ChatModel, Choice, choose_chat_model
from docqa.llm.factory import OLLAMA_URL


@dataclass(slots=True)
class Found:
    """The chat model docqa would answer with: its name (None: extractive answers), where it comes
    from (configured, ollama, local, extractive), why, and — when it answers now — the model itself."""

    name: str | None
    source: str
    reason: str
    base_url: str = ""
    model: ChatModel | None = None  # None when none answers now (or only a local model not started)
    local_installed: bool = False  # the local model could be started for a command

    @property
    def is_local(self) -> bool:
        """Runs on this machine (Ollama or docqa's local model): it costs nothing per token."""
        return self.source in ("ollama", "local") or _loopback(self.base_url)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "reason": self.reason, "local": self.is_local,
                "answers_now": self.model is not None}


def detect_chat(llm: Any, start_local: bool = False) -> Found:
    """The chat model `llm` (the llm settings) chooses; the local model of 'docqa model install' is
    started only with `start_local` (else it is reported as what commands would start)."""
    models_dir = _models_dir(llm.models_dir)
    local = _serving(models_dir, llm.context_window) if start_local else None
    if llm.provider == "local" and not start_local:
        return _local_found(models_dir) or Found(None, "extractive", "llm.provider is 'local' but no local model is set up here")
    try:
        choice = choose_chat_model(llm.provider, llm.base_url, llm.model, llm.api_key, llm.temperature,
                                   llm.max_tokens, llm.timeout, llm.max_retries, llm.ollama_url or OLLAMA_URL,
                                   via=llm.from_environment.get("base_url"), local=local)
    except ConfigError as exc:  # the configured model is not there: said, and planned without it
        return Found(None, "extractive", f"the configured chat model cannot be used: {exc}")
    if choice.model is None and llm.provider == "auto" and not start_local:
        found = _local_found(models_dir)
        if found is not None:
            return found
    return from_choice(choice, llm.base_url)


def from_choice(choice: Choice, base_url: str) -> Found:
    """A Found for a choice already made (a server's, or a model given to the KnowledgeBase)."""
    model = choice.model
    url = getattr(model, "base_url", "") or base_url
    return Found(model.name if model else None, choice.source, choice.reason, str(url or ""), model)


def _local_found(models_dir: Path) -> Found | None:
    """docqa's local model: a 'docqa model serve' that answers now, else an installed one (not started)."""
    from docqa.llm.openai_compat import OpenAICompatModel
    from docqa.llm.server import LocalServing, running

    serving = LocalServing(models_dir)
    name = serving.model.name
    shared = running(models_dir)
    if shared is not None:
        return Found(name, "local", f"the local model {name} served by 'docqa model serve'", shared,
                     OpenAICompatModel(shared, name, timeout=120.0, max_retries=0), True)
    if serving.problem() is None:
        return Found(name, "local", f"the local model {name} ('docqa model install'), started by each command that "
                     "answers", "", None, True)
    return None


def _serving(models_dir: Path, context_window: int):
    from docqa.llm.server import LocalServing

    return LocalServing(models_dir, ctx=max(4096, context_window))


def _models_dir(configured: str) -> Path:
    from docqa.llm.local import default_models_dir

    return Path(configured).expanduser() if configured else default_models_dir()


def _loopback(url: str) -> bool:
    from urllib.parse import urlsplit

    host = urlsplit(url).hostname or ""
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")
