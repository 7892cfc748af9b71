"""One settings model, resolved once at the edge (CLI, API) and passed into the core.

Sources, strongest first: explicit values (command-line flags), `DOCQA_*` environment variables
(nested keys joined by `__`, e.g. `DOCQA_CHUNK__MAX_TOKENS=256`), `docqa.yml`, defaults.
The core never reads the environment or user files itself.

    model.py   Settings and its sections (and masked, for display)
    source.py  load_settings: the sources in order, docqa.yml read by a source of ours (why: there)
    seed.py    docqa.yml translated to native keys (camelCase, the seed's shape, "did you mean")
    origin.py  where each value came from, and errors named the way their source spells them
    lint.py    'docqa config lint'
"""

from __future__ import annotations

from docqa.settings.model import (
    APP_NAME,
    AgentSettings,
    AnswerSettings,
    ApiSettings,
    ChunkSettings,
    EmbedSettings,
    IngestSettings,
    LLMSettings,
    SearchSettings,
    SkillsSettings,
    default_kb_path,
    masked,
)
from docqa.settings.origin import setting_sources
from docqa.settings.seed import CONFIG_ENV, ConfigFile, ConfigProblem, config_path, read_config
from docqa.settings.source import Settings, load_settings


def __getattr__(name: str):
    # 'docqa config lint' only: not loaded with the settings every command needs (start-up time)
    if name in ("env_problems", "lint_config"):
        from docqa.settings import lint

        return getattr(lint, name)
    raise AttributeError(f"module 'docqa.settings' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "env_problems", "lint_config"})


__all__ = [
    "APP_NAME", "CONFIG_ENV", "AgentSettings", "AnswerSettings", "ApiSettings", "ChunkSettings", "ConfigFile",
    "ConfigProblem", "EmbedSettings", "IngestSettings", "LLMSettings", "SearchSettings", "Settings", "SkillsSettings", "config_path",
    "default_kb_path", "env_problems", "lint_config", "load_settings", "masked", "read_config", "setting_sources",
]
