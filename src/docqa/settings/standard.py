"""The environment variables other tools share: OPENAI_API_KEY, OPENAI_BASE_URL, OLLAMA_HOST.

They are weaker than every docqa source (flags, DOCQA_* variables, docqa.yml): each fills an llm
setting only where none of those set it.  OPENAI_API_KEY goes only to the server OPENAI_BASE_URL
names, or to OpenAI itself when it is the only one set: never to a base_url configured for docqa
(a DashScope key there would otherwise be replaced by an OpenAI key sent to DashScope).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from docqa.errors import ConfigError
from docqa.settings.model import LLMSettings, check_url

OPENAI_API_URL = "https://api.openai.com/v1"
OPENAI_MODEL = "gpt-4o-mini"  # the model used when only OPENAI_API_KEY is set (llm.model chooses another)
VARIABLES = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST")


def standard_values(given: set[str], provider: str, environ: Mapping[str, str]) -> dict[str, tuple[Any, str]]:
    """llm field -> (value, variable) that the shared variables supply, given the fields already set."""
    found: dict[str, tuple[Any, str]] = {}
    key, url = environ.get("OPENAI_API_KEY") or None, environ.get("OPENAI_BASE_URL") or None
    if "base_url" not in given and provider in ("auto", "openai") and (key or url):
        found["base_url"] = (url, "OPENAI_BASE_URL") if url else (OPENAI_API_URL, "OPENAI_API_KEY")
        if key and "api_key" not in given:
            found["api_key"] = (key, "OPENAI_API_KEY")
        if not url and "model" not in given:
            found["model"] = (OPENAI_MODEL, "OPENAI_API_KEY")
    host = environ.get("OLLAMA_HOST")
    if host and "ollama_url" not in given:
        found["ollama_url"] = (ollama_url(host), "OLLAMA_HOST")
    return found


def apply_standard(llm: LLMSettings, environ: Mapping[str, str]) -> dict[str, str]:
    """Fill `llm` from the shared variables (see the module); returns field -> the variable used."""
    found = standard_values(set(llm.model_fields_set), llm.provider, environ)
    for field, (value, variable) in found.items():
        if field in ("base_url", "ollama_url"):
            try:
                check_url(value)
            except ValueError as exc:
                raise ConfigError(f"env {variable}: {exc} (got {environ.get(variable)!r}); fix or unset it, "
                                  "or set llm.base_url for docqa") from None
        setattr(llm, field, value)
    return {field: variable for field, (_, variable) in found.items()}


def ollama_url(host: str) -> str:
    """OLLAMA_HOST as Ollama reads it: 'host', 'host:port' or a URL; default port 11434, and the
    listen-everywhere address 0.0.0.0 reached as 127.0.0.1."""
    host = host.strip()
    parts = urlsplit(host if "://" in host else "http://" + host)
    name = parts.hostname or "127.0.0.1"
    name = "127.0.0.1" if name in ("0.0.0.0", "::") else name
    try:
        port = parts.port
    except ValueError:
        return host  # reported by check_url with the reason
    if port is None:
        port = 443 if parts.scheme == "https" else 11434
    netloc = f"[{name}]:{port}" if ":" in name else f"{name}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
