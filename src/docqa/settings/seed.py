"""docqa.yml: read and translated to native keys, in native shape (snake_case or camelCase) or the
seed's (qa-agent.yml: `model`, `rag`, `runtime`, `react`), remembering how the file spelled each key.

Unknown keys are problems that name the closest valid key ("did you mean llm.model?").
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from docqa.errors import ConfigError
from docqa.settings.model import SettingsModel, leaves, sections

CONFIG_ENV = "DOCQA_CONFIG"

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


def current_config(environ: Mapping[str, str]) -> ConfigFile | None:
    """The settings file in effect, translated (None when there is none)."""
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
            elif name in sections():
                self._section(name, str(key), value)
            elif name in SettingsModel.model_fields:
                self._put(name, str(key), value, 0)
            else:
                tops = [*SettingsModel.model_fields, *_SEED]
                self._unknown(str(key), suggest(name, [*tops, *leaves()]), tops)
        values: dict[str, Any] = {}
        for dotted, (_, value, _) in self.leaves.items():
            _assign(values, dotted, value)
        return ConfigFile(self.path, values, {d: leaf[0] for d, leaf in self.leaves.items()}, self.problems)

    def _section(self, name: str, written: str, value: Any) -> None:
        if not isinstance(value, dict):
            self._put(name, written, value, 0)  # validation says what it should be
            return
        fields = list(sections()[name].model_fields)
        for key, item in value.items():
            field = _snake(key)
            if field in fields:
                self._put(f"{name}.{field}", f"{written}.{key}", item, 0)
            else:
                hint = suggest(field, fields)
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
                hint = suggest(_camel(field), valid)
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


def suggest(name: str, candidates: list[str]) -> str | None:
    found = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return found[0] if found else None


def _assign(values: dict, dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        values = values.setdefault(part, {})
        if not isinstance(values, dict):
            return  # the section itself is not a mapping: validation reports that
    values[last] = value

