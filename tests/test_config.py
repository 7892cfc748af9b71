"""Configuration: docqa.yml in native and seed shape, DOCQA_* overrides, `docqa config show` and `lint`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docqa.cli import app
from docqa.errors import ConfigError
from docqa.settings import load_settings

SEED = """\
model:
  provider: dashscope
  name: qwen-plus
  temperature: 0.1
  maxTokens: 2048
  apiKey: sk-very-secret
rag:
  chunkSize: 400
  chunkOverlap: 40
  topK: 5
  relevanceThreshold: 0.3
runtime:
  reviewRounds: 1
  timeoutSeconds: 30
"""


@pytest.fixture(autouse=True)
def clean_env(tmp_path, monkeypatch) -> Path:
    """No DOCQA_* variables from the caller, and a fresh working directory."""
    for name in list(os.environ):
        if name.upper().startswith("DOCQA_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(text: str, name: str = "docqa.yml") -> Path:
    path = Path(name)
    path.write_text(text, encoding="utf-8")
    return path


def config(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["config", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout


def test_seed_shape_maps_to_native_settings():
    write(SEED)
    s = load_settings()
    assert (s.llm.provider, s.llm.model, s.llm.temperature, s.llm.max_tokens) == ("openai", "qwen-plus", 0.1, 2048)
    assert s.llm.api_key == "sk-very-secret" and s.llm.timeout == 30
    assert (s.chunk.max_tokens, s.chunk.overlap, s.answer.top_k) == (400, 40, 5)
    assert s.search.relevance_threshold == 0.3 and s.answer.review_rounds == 1


@pytest.mark.parametrize("given, expected", [("llama.cpp", "openai"), ("vLLM", "openai"), ("ollama", "ollama"), ("none", "none")])
def test_seed_providers(given, expected):
    write(f"model: {{provider: {given}}}\n")
    assert load_settings().llm.provider == expected


def test_camel_case_native_keys():
    write("llm: {maxTokens: 512, baseUrl: 'http://127.0.0.1:8080/v1'}\nsearch: {relevanceThreshold: 0.25}\n")
    s = load_settings()
    assert (s.llm.max_tokens, s.llm.base_url, s.search.relevance_threshold) == (512, "http://127.0.0.1:8080/v1", 0.25)


def test_seed_agent_budgets_map_to_agent_settings():
    write("runtime: {maxSteps: 8, toolTimeoutSeconds: 20, maxWallSeconds: 300, maxCostUsd: 0.5}\n"
          "react: {maxResultChars: 3000}\n")
    agent = load_settings().agent
    assert (agent.max_steps, agent.tool_timeout, agent.max_wall_seconds, agent.max_cost, agent.max_result_chars) == (
        8, 20, 300, 0.5, 3000)
    code, out = config("lint")
    assert code == 0 and out.strip().endswith("ok")


@pytest.mark.parametrize("yml, key, hint", [
    ("llm: {modle: x}\n", "llm.modle", "did you mean llm.model?"),
    ("llm: {maxTokns: 9}\n", "llm.maxTokns", "did you mean llm.max_tokens?"),
    ("rag: {chunkSise: 300}\n", "rag.chunkSise", "did you mean rag.chunkSize?"),
    ("max_tokens: 3\n", "max_tokens", "did you mean llm.max_tokens?"),
])
def test_unknown_key_names_file_key_and_closest(yml, key, hint):
    write(yml)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert f"docqa.yml: {key}: unknown key; {hint}" in str(caught.value)


def test_bad_values_name_file_key_and_value_one_per_line():
    write("rag: {chunkSize: 5, mode: fuzzy}\nllm: {temperature: 9}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    lines = [line.strip() for line in str(caught.value).splitlines()]
    assert "docqa.yml: rag.chunkSize (chunk.max_tokens): Input should be greater than or equal to 16 (got 5)" in lines[1:]
    assert any(line.startswith("docqa.yml: rag.mode (search.mode):") and '"fuzzy"' in line for line in lines)
    assert any(line.startswith("docqa.yml: llm.temperature:") and "(got 9)" in line for line in lines)
    assert "docqa config lint" in lines[-1]


def test_bad_env_value_names_the_variable(monkeypatch):
    monkeypatch.setenv("DOCQA_CHUNK__MAX_TOKENS", "3")
    with pytest.raises(ConfigError, match=r"env DOCQA_CHUNK__MAX_TOKENS: chunk.max_tokens: .*16"):
        load_settings()


def test_precedence_flag_env_yml_default(monkeypatch):
    write("kb: from-yml.db\nmodel: {name: from-yml, temperature: 0.7}\n")
    monkeypatch.setenv("DOCQA_LLM__MODEL", "from-env")
    monkeypatch.setenv("DOCQA_KB", "from-env.db")
    s = load_settings(kb="from-flag.db")
    assert (s.kb, s.llm.model, s.llm.temperature, s.llm.max_tokens) == ("from-flag.db", "from-env", 0.7, 1024)


def test_config_file_from_env(monkeypatch, tmp_path):
    write("model: {name: elsewhere}\n", "other.yml")
    monkeypatch.setenv("DOCQA_CONFIG", str(tmp_path / "other.yml"))
    assert load_settings().llm.model == "elsewhere"


def test_given_twice_native_wins_and_lint_errors():
    write("llm: {max_tokens: 512}\nmodel: {maxTokens: 2048}\n")
    assert load_settings().llm.max_tokens == 512
    code, out = config("lint")
    assert code == 1
    assert "docqa.yml: model.maxTokens: given twice (also as llm.max_tokens); llm.max_tokens wins" in out


def test_show_masks_secrets_and_names_sources(monkeypatch, tmp_path):
    write(SEED)
    monkeypatch.setenv("DOCQA_LLM__MODEL", "from-env")
    code, out = config("show")
    assert code == 0 and "sk-very-secret" not in out and "api_key: '***'" in out and "model: from-env" in out
    result = CliRunner().invoke(app, ["--kb", str(tmp_path / "kb.db"), "config", "show", "--json", "--sources"])
    data = json.loads(result.stdout)
    assert data["settings"]["llm"]["api_key"] == "***" and data["settings"]["embed"]["api_key"] is None
    sources = data["sources"]
    assert sources["kb"] == "flag"
    assert sources["llm.model"] == "env DOCQA_LLM__MODEL"
    assert sources["chunk.max_tokens"] == f"docqa.yml ({(tmp_path / 'docqa.yml').resolve()})"
    assert sources["search.fusion"] == "default"


def test_show_sources_text_and_kb_from_env(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCQA_KB", str(tmp_path / "env.db"))
    code, out = config("show", "--sources")
    assert code == 0
    assert f'kb: "{tmp_path / "env.db"}"  # env DOCQA_KB' in out
    assert 'search.mode: "hybrid"  # default' in out


def test_lint_clean_errors_and_bad_yaml():
    write(SEED)
    assert config("lint") == (0, "docqa.yml: ok\n")
    write("rag: {chunkSize: 5}\nllm: {modle: x}\n", "bad.yml")
    code, out = config("lint", "bad.yml")
    assert code == 1
    assert "bad.yml: llm.modle: unknown key; did you mean llm.model?" in out
    assert "bad.yml: rag.chunkSize (chunk.max_tokens): Input should be greater than or equal to 16 (got 5)" in out
    write("llm: [unclosed\n", "broken.yml")
    code, out = config("lint", "broken.yml")
    assert code == 1 and "broken.yml: not valid YAML" in out


def test_lint_flags_environment_variables_that_name_no_setting(monkeypatch):
    write(SEED)
    for name, value in {"DOCQA_LLM__MODLE": "x", "DOCQA_CONFIG": "docqa.yml", "DOCQA_VENV": "/v", "DOCQA_KB": "k.db",
                        "DOCQA_LLM__MODEL": "m", "DOCQA_LLM": "{}"}.items():
        monkeypatch.setenv(name, value)
    code, out = config("lint")
    assert code == 1
    assert "env: DOCQA_LLM__MODLE: unknown setting; did you mean DOCQA_LLM__MODEL?" in out
    assert out.count("unknown setting") == 1


@pytest.mark.slow
def test_lint_missing_file_exits_2(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("DOCQA_")}
    proc = subprocess.run([sys.executable, "-m", "docqa", "config", "lint", "nope.yml"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and "nope.yml: no such file" in proc.stderr


def test_allowed_hosts_takes_the_patterns_the_host_check_takes():
    assert load_settings(api={"allowed_hosts": ["*", "docs.example.org", "*.example.org"]}).api.allowed_hosts
    with pytest.raises(ConfigError, match=r"api.allowed_hosts.*'\*.example.org' \(its subdomains\)"):
        load_settings(api={"allowed_hosts": ["docs*.example.org"]})


def test_settings_all_matches_public_names():
    import docqa.settings as package

    modules = {"lint", "model", "origin", "seed", "source", "standard", "annotations"}
    assert set(package.__all__) == {n for n in dir(package) if not n.startswith("_")} - modules


def test_lint_checks_the_ingest_engine_and_ray_address():
    write("ingest: {engine: ray, ray_address: 'http://head:8265'}\n")
    code, out = config("lint")
    assert code == 1 and "docqa.yml: ingest.ray_address: not a Ray address: use 'auto'" in out and "(got \"http://head:8265\")" in out
    write("ingest: {engine: spark}\n")
    code, out = config("lint")
    assert code == 1 and "docqa.yml: ingest.engine: Input should be 'local' or 'ray'" in out
    write("ingest: {engine: ray, ray_address: 'ray://head:10001'}\n")
    assert config("lint") == (0, "docqa.yml: ok\n")
