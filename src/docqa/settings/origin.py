"""Where each setting's value came from (flag, env DOCQA_X__Y, docqa.yml or default), and each
validation error named the way its source spells the key."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from docqa.settings.model import leaf_of, leaves, sections
from docqa.settings.seed import ConfigFile, ConfigProblem, current_config, suggest
from docqa.settings.standard import standard_values


def unknown_env(name: str) -> ConfigProblem:
    """A DOCQA_* variable that names no setting, with the closest valid name."""
    hint = suggest(name.upper(), env_names())
    return ConfigProblem("env", name, "unknown setting" + (f"; did you mean {hint}?" if hint else ""))


def env_names() -> list[str]:
    """Every DOCQA_* variable that names a setting or a section."""
    return [f"DOCQA_{key}".upper() for key in (*sections(), *(leaf.replace(".", "__") for leaf in leaves()))]


def value_problem(where: str, err: Any, written: Mapping[str, str]) -> ConfigProblem:
    """A bad value in docqa.yml, named as the file spells it (and natively, when that differs)."""
    dotted = ".".join(str(part) for part in err["loc"])
    leaf = leaf_of(dotted)
    key = written.get(leaf, leaf) + dotted[len(leaf):]
    label = key if key == dotted else f"{key} ({dotted})"
    return ConfigProblem(where, label, reason(err))


def reason(err: Any) -> str:
    """pydantic's reason and the offending value."""
    value = json.dumps(err["input"], ensure_ascii=False, default=str)
    value = value if len(value) <= 60 else value[:57] + "..."
    return f"{err['msg'].removeprefix('Value error, ')} (got {value})"


def explain(err: Any, overrides: Mapping[str, Any], environ: Mapping[str, str], config: ConfigFile | None) -> ConfigProblem:
    """One validation error, named the way its source spells it."""
    dotted = ".".join(str(part) for part in err["loc"])
    source = origin_of(leaf_of(dotted), overrides, environ, config)
    if source.startswith("docqa.yml") and config is not None:
        return value_problem(str(config.path), err, config.written)
    if source.startswith("env ") and err["type"] == "extra_forbidden":
        return unknown_env(source.removeprefix("env "))
    return ConfigProblem(source, dotted, reason(err))


def setting_sources(overrides: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, str]:
    """Where each setting's value came from: flag, env DOCQA_X__Y, docqa.yml (path), env OPENAI_* /
    OLLAMA_HOST (settings.standard) or default."""
    config = current_config(environ)
    found = {leaf: origin_of(leaf, overrides, environ, config) for leaf in leaves()}
    given = {leaf.removeprefix("llm.") for leaf, origin in found.items() if leaf.startswith("llm.") and origin != "default"}
    provider = _value("llm.provider", found["llm.provider"], overrides, environ, config) or "auto"
    for field, (_, variable) in standard_values(given, str(provider), environ).items():
        found[f"llm.{field}"] = f"env {variable}"
    return found


def _value(leaf: str, origin: str, overrides: Mapping[str, Any], environ: Mapping[str, str],
           config: ConfigFile | None) -> Any:
    """The raw value of one setting from the source `origin` names (None for the default)."""
    section, _, field = leaf.partition(".")
    if origin == "flag":
        return overrides[section][field]
    if origin.startswith("env "):
        raw = environ[origin.removeprefix("env ")]
        return json.loads(raw).get(field) if origin.removeprefix("env ").upper() == f"DOCQA_{section}".upper() else raw
    if origin.startswith("docqa.yml") and config is not None:
        return config.values.get(section, {}).get(field)
    return None


def origin_of(leaf: str, overrides: Mapping[str, Any], environ: Mapping[str, str], config: ConfigFile | None) -> str:
    """Where one setting's value comes from: flag, env VAR, docqa.yml (path) or default."""
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
