"""Resolving the settings: flags, then DOCQA_* variables, then docqa.yml, then defaults.

docqa.yml is read by a hand-written source, not pydantic-settings' YamlConfigSettingsSource.
Observed with pydantic-settings 2.16.3, that source (yaml_file="docqa.yml") answers
  model: {provider: dashscope, name: qwen-plus}   model: Extra inputs are not permitted (the seed shape is lost)
  llm: {maxTokens: 512}                           llm.maxTokens: Extra inputs are not permitted (camelCase)
  llm: {modle: x}                                 llm.modle: Extra inputs are not permitted (no "did you mean")
  llm: [                                          yaml's ParserError, not a ConfigError naming the file
  - a                                             ValueError "dictionary update sequence element #0 ..."
Keeping those would mean overriding its private `_read_file` with our own reading and translation,
leaving it only the `is_file()` check below.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import ValidationError, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

from docqa.errors import ConfigError
from docqa.settings.model import SettingsModel
from docqa.settings.origin import explain
from docqa.settings.seed import ConfigProblem, current_config
from docqa.settings.standard import apply_standard


class YamlSource(PydanticBaseSettingsSource):
    """Reads `docqa.yml` from $DOCQA_CONFIG or the working directory, in native or seed shape."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # pragma: no cover
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        config = current_config(os.environ)
        if config is None:
            return {}
        fatal = [p for p in config.problems if p.fatal]
        if fatal:
            raise ConfigError(invalid(fatal))
        return config.values


class Settings(SettingsModel):
    """All of docqa's settings, read from flags, DOCQA_* variables, docqa.yml and defaults (strongest first)."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, YamlSource(settings_cls))

    @model_validator(mode="after")
    def _standard_variables(self) -> Settings:
        """OPENAI_API_KEY, OPENAI_BASE_URL, OLLAMA_HOST: weaker than every docqa source (settings.standard)."""
        self.llm._standard = apply_standard(self.llm, os.environ)
        return self


def load_settings(**overrides: Any) -> Settings:
    """Resolve settings from overrides, environment and docqa.yml; errors become ConfigError."""
    clean = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**clean)
    except ValidationError as exc:
        config = current_config(os.environ)
        raise ConfigError(invalid([explain(e, clean, os.environ, config) for e in exc.errors()])) from exc


def invalid(problems: list[ConfigProblem]) -> str:
    """The ConfigError message: one problem a line, then what to run."""
    lines = "".join(f"\n  {p}" for p in problems)
    return f"invalid settings:{lines}\nrun 'docqa config lint' to check docqa.yml and the DOCQA_* variables"
