"""`docqa config lint`: every problem in a docqa.yml (unknown keys, keys given twice, bad values)
and in the names of DOCQA_* variables, without loading the settings."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from pydantic import ConfigDict, ValidationError, create_model

from docqa.errors import ConfigError
from docqa.settings.model import SettingsModel, check_url
from docqa.settings.origin import env_names, unknown_env, value_problem
from docqa.settings.seed import CONFIG_ENV, ConfigFile, ConfigProblem, read_config
from docqa.settings.standard import ollama_url

_NOT_SETTINGS = {"DOCQA_CONFIG", "DOCQA_VENV"}  # DOCQA_* variables that are not settings


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
    """DOCQA_* variables that name no setting (with the closest valid name); OPENAI_BASE_URL or
    OLLAMA_HOST that are not URLs docqa can call."""
    valid = env_names()
    unknown = [unknown_env(name) for name in sorted(environ)
               if name.upper().startswith("DOCQA_") and name.upper() not in {*valid, *_NOT_SETTINGS}]
    return unknown + _standard_problems(environ)


def _standard_problems(environ: Mapping[str, str]) -> list[ConfigProblem]:
    problems = []
    for name, value in (("OPENAI_BASE_URL", environ.get("OPENAI_BASE_URL")),
                        ("OLLAMA_HOST", environ.get("OLLAMA_HOST") and ollama_url(environ["OLLAMA_HOST"]))):
        try:
            check_url(value or "")
        except ValueError as exc:
            problems.append(ConfigProblem(f"env {name}", "", f"{exc} (got {json.dumps(environ[name])})"))
    return problems


def _value_problems(config: ConfigFile) -> list[ConfigProblem]:
    """The file's values checked alone (without the environment), as loading checks them."""
    model = create_model("FileSettings", __config__=ConfigDict(extra="forbid"),  # type: ignore[call-overload]
                         **{name: (f.annotation, f) for name, f in SettingsModel.model_fields.items()})
    try:
        model.model_validate(config.values)
    except ValidationError as exc:
        return [value_problem(str(config.path), err, config.written) for err in exc.errors()]
    return []
