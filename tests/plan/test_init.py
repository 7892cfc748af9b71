"""`docqa init`: the survey of generated folders (mixed formats, Chinese, an encrypted PDF, a scanned
page, code), the proposal and the commented docqa.yml it writes, the overwrite prompt, --yes, --json,
'docqa config lint' on the written file, a chat model refining the proposal (the scripted server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from docqa.plan import plan_folder, render
from docqa.plan.chat import Found
from docqa.plan.propose import Environment, propose
from docqa.plan.survey import Limits, survey
from docqa.settings import Settings, lint_config
from ingest.fixtures import make_pdf
from llm.scripted_server import ScriptedServer

ENGLISH = ("# Operations\n\n## Backups\n\nThe database is backed up every six hours to object storage. "
           "Backups are kept for thirty-five days and restored with the restore tool.\n") * 4
CHINESE = ("# 运维手册\n\n## 备份\n\n数据库每六小时备份一次，备份保留三十五天。恢复时使用恢复工具，"
           "并在恢复后检查数据的完整性。\n") * 6
PYTHON = "def backup(path):\n    '''Copy a file to the backup store.'''\n    return path\n\n\nclass Store:\n    def put(self, key):\n        return key\n"
JS = "export function restore(name) {\n  return name.trim();\n}\n"


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """handbook/ (English and Chinese), code/ (Python, JavaScript), pdfs/ (text, locked, half scanned), loose files."""
    root = tmp_path / "docs"
    for folder in ("handbook", "code", "pdfs"):
        (root / folder).mkdir(parents=True)
    (root / "handbook" / "ops.md").write_text(ENGLISH, encoding="utf-8")
    (root / "handbook" / "guide.md").write_text(ENGLISH.replace("Backups", "Restores"), encoding="utf-8")
    (root / "handbook" / "运维.md").write_text(CHINESE, encoding="utf-8")
    (root / "code" / "backup.py").write_text(PYTHON, encoding="utf-8")
    (root / "code" / "store.py").write_text(PYTHON * 3, encoding="utf-8")
    (root / "code" / "restore.js").write_text(JS, encoding="utf-8")
    make_pdf(root / "pdfs" / "report.pdf", ["Quarterly report on storage costs and backup volume."] * 2)
    make_pdf(root / "pdfs" / "locked.pdf", ["Salaries of the operations team."], user_password="secret")
    make_pdf(root / "pdfs" / "scan.pdf", ["A page with a text layer about tape rotation.", ""])
    (root / "empty.txt").write_bytes(b"")
    (root / "blob.bin").write_bytes(bytes(range(256)) * 64)
    return root


def _env(**extra: str) -> dict[str, str]:
    """The test process's environment (conftest: no Ollama, no local model) without DOCQA_ settings."""
    keep = {"DOCQA_LLM__MODELS_DIR"}
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_") or k in keep}
    return {**env, "DOCQA_LLM__PROVIDER": "auto", **extra}


def docqa(cwd: Path, *args: str, input: str | None = None, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "docqa", *args], cwd=cwd, capture_output=True, text=True,
                          input=input, env=_env(**env), timeout=300)


@pytest.mark.slow
def test_init_reports_the_folder_and_writes_a_config_that_lint_accepts(mixed: Path, tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    proc = docqa(work, "init", str(mixed), "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    s, p = report["survey"], report["proposal"]
    assert {"markdown", "code", "pdf"} <= set(s["by_type"]) and s["by_type"]["pdf"]["files"] == 3
    assert s["code_languages"] == {"python": 2, "javascript": 1}
    assert [Path(x).name for x in s["encrypted"]] == ["locked.pdf"]
    assert [(Path(x["path"]).name, x["without_text"], x["checked"]) for x in s["scanned"]] == [("scan.pdf", 1, 2)]
    assert s["scripts"]["han"] > 0 and s["file_languages"]["zh"] == 1 and s["file_languages"]["en"] >= 4
    assert s["skipped"]["empty file"] == 1 and s["skipped"]["unsupported file type (binary)"] == 1
    assert Path(s["largest"][0]["path"]).name == max(
        (f for f in mixed.rglob("*") if f.is_file()), key=lambda f: f.stat().st_size).name
    assert p["values"]["embed.model"] == "use-multilingual-v3" and "Chinese" in p["reasons"]["embed.model"]
    assert p["values"]["chunk.max_tokens"] == 512 and p["values"]["llm.provider"] == "auto"
    assert "no chat model" in p["reasons"]["llm.provider"] and p["refined"] is None
    assert {c["name"] for c in p["collections"]} == {"handbook", "code", "pdfs"}
    assert next(f for f in p["formats"] if f["type"] == "code")["how"].startswith("by symbol")
    assert p["estimate"]["chunks"] > 0 and p["estimate"]["seconds"] > 0 and p["estimate"]["index_bytes"] > 0
    assert report["written"] is True
    written = work / "docqa.yml"
    data = yaml.safe_load(written.read_text(encoding="utf-8"))
    assert data["chunk"] == {"max_tokens": 512, "overlap": 50} and data["embed"]["model"] == "use-multilingual-v3"
    assert "# How each format is read" in written.read_text(encoding="utf-8")
    lint = docqa(work, "config", "lint", "docqa.yml")
    assert lint.returncode == 0 and lint.stdout.strip().endswith("docqa.yml: ok"), lint.stdout
    shown = json.loads(docqa(work, "config", "show", "--json").stdout)  # the settings load from it
    assert shown["chunk"]["max_tokens"] == 512 and shown["ingest"]["ocr"] == p["values"]["ingest.ocr"]


@pytest.mark.slow
def test_init_asks_before_overwriting(mixed: Path, tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    mine = work / "docqa.yml"
    mine.write_text("# my own settings\nchunk: {max_tokens: 300}\n", encoding="utf-8")
    kept = docqa(work, "init", str(mixed), "--no-refine", input="n\n")
    assert kept.returncode == 0 and "overwrite it?" in kept.stderr and "kept" in kept.stdout
    assert mine.read_text(encoding="utf-8").startswith("# my own settings")
    as_json = json.loads(docqa(work, "init", str(mixed), "--json").stdout)  # no prompt in a script: kept
    assert as_json["written"] is False and mine.read_text(encoding="utf-8").startswith("# my own settings")
    replaced = docqa(work, "init", str(mixed), input="y\n")
    assert replaced.returncode == 0 and "wrote" in replaced.stdout
    assert mine.read_text(encoding="utf-8").startswith("# docqa.yml — written by 'docqa init")
    mine.write_text("# mine again\n", encoding="utf-8")
    forced = docqa(work, "init", str(mixed), "--yes", "-o", "docqa.yml")
    assert forced.returncode == 0 and "overwrite it?" not in forced.stderr
    assert mine.read_text(encoding="utf-8").startswith("# docqa.yml — written")


@pytest.mark.slow
def test_init_of_a_missing_folder_is_a_clear_error(tmp_path: Path):
    proc = docqa(tmp_path, "init", str(tmp_path / "nowhere"))
    assert proc.returncode == 1 and "nowhere: not a folder" in proc.stderr
    assert not (tmp_path / "docqa.yml").exists()


def _found() -> Found:
    return Found(None, "extractive", "no chat model")


def test_rules_follow_the_folder(tmp_path: Path):
    code = tmp_path / "code"
    code.mkdir()
    for n in range(6):
        (code / f"m{n}.py").write_text(PYTHON * (n + 1), encoding="utf-8")
    (code / "README.md").write_text(ENGLISH, encoding="utf-8")
    found = survey(code)
    english = propose(found, Environment(ocr_installed=False, e5_installed=True, use_installed=True, chat=_found()))
    assert english.values["chunk.max_tokens"] == 1024 and "mostly code (6 of 7 files)" in english.reasons["chunk.max_tokens"]
    assert english.values["embed.model"] == "multilingual-e5-small"
    without_e5 = propose(found, Environment(False, False, True, _found()))
    assert without_e5.values["embed.model"] == "use-multilingual-v3" and "docqa[e5]" in without_e5.reasons["embed.model"]
    assert propose(found, Environment(False, False, False, _found())).values["embed.provider"] == "none"


def test_e5_is_estimated_by_the_window_it_reads_and_the_proposal_says_how_much_slower(tmp_path: Path):
    """e5 reads each chunk as one window cut at 512 tokens: a folder of full chunks costs it at most 512 tokens a chunk
    and near that, whatever the chunks hold past it; the bundled model reads every token; the proposal's reason gives the
    ratio of the two estimates."""
    from docqa.plan import rates
    from docqa.plan.estimate import estimate_ingest

    folder = tmp_path / "notes"
    folder.mkdir()
    words = " ".join(f"record {n} was checked against the backup catalogue on host{n % 17} at {n % 24:02d}:00." for n in range(900))
    for n in range(4):
        (folder / f"log{n}.txt").write_text(words, encoding="utf-8")
    found = survey(folder)
    e5, use = estimate_ingest(found, "multilingual-e5-small"), estimate_ingest(found, "use-multilingual-v3")
    per_chunk = (e5.embed_seconds - rates.E5_START_S) / rates.E5_TOKEN_S / max(e5.chunks, 1)
    assert e5.chunks > 8 and 300 < per_chunk <= rates.E5_CHUNK_TOKENS + 1
    assert e5.embed_seconds > 5 * use.embed_seconds  # the old ratio, 30/7, said 4.3
    proposal = propose(found, Environment(ocr_installed=False, e5_installed=True, use_installed=True, chat=_found()))
    ratio = e5.embed_seconds / use.embed_seconds
    assert proposal.values["embed.model"] == "multilingual-e5-small"
    assert f"embeds {ratio:.0f}x slower than the default model" in proposal.reasons["embed.model"]


def test_scans_propose_ocr_when_installed_and_the_install_otherwise(mixed: Path):
    found = survey(mixed)
    on = propose(found, Environment(True, False, True, _found()))
    assert on.values["ingest.ocr"] == "on" and "1 PDF(s)" in on.reasons["ingest.ocr"]
    off = propose(found, Environment(False, False, True, _found()))
    assert off.values["ingest.ocr"] == "auto" and "pip install 'docqa[ocr]'" in off.reasons["ingest.ocr"]


def test_the_survey_stays_within_its_limits(tmp_path: Path):
    folder = tmp_path / "many"
    folder.mkdir()
    for n in range(40):
        (folder / f"note{n:02}.md").write_text(f"# Note {n}\n\n" + ENGLISH, encoding="utf-8")
    found = survey(folder, limits=Limits(scan_files=25, sample_files=4))
    assert found.complete is False and found.files == 25 and found.limits["scan_files"] == 25
    assert sum(int(s["files"]) for s in found.sample.values()) == 4


def _settings(tmp_path: Path, server: ScriptedServer) -> Settings:
    return Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "openai", "base_url": server.base_url,
                                                      "model": "scripted", "timeout": 10, "max_retries": 0})


@pytest.mark.slow
def test_a_chat_model_refines_the_proposal_and_says_why(mixed: Path, tmp_path: Path):
    reply = {"changes": {"chunk.max_tokens": 768, "embed.model": "bge-m3", "llm.model": "gpt-9", "chunk.overlap": 900},
             "why": "long handbook sections read better whole"}
    with ScriptedServer([{"text": "```json\n" + json.dumps(reply) + "\n```"}]) as server:
        plan = plan_folder(mixed, _settings(tmp_path, server))
        sent = server.requests[0]["messages"][1]["content"]
    p = plan.proposal
    assert p.values["chunk.max_tokens"] == 768 and p.reasons["chunk.max_tokens"] == "scripted: long handbook sections read better whole"
    assert p.refined["changes"] == {"chunk.max_tokens": 768}
    assert set(p.refined["rejected"]) == {"embed.model", "llm.model", "chunk.overlap"}
    assert "below half of max_tokens" in p.refined["rejected"]["chunk.overlap"]
    assert p.values["embed.model"] == "use-multilingual-v3" and p.values["llm.model"] == "scripted"
    assert json.loads(sent)["survey"]["scanned_pdfs"] == 1  # the model saw the survey
    config = tmp_path / "refined.yml"
    config.write_text(render(plan.survey, p), encoding="utf-8")
    assert "# Refined by scripted: long handbook sections" in config.read_text(encoding="utf-8")
    assert lint_config(config, {}) == []


@pytest.mark.slow
def test_an_unusable_reply_leaves_the_rules(mixed: Path, tmp_path: Path):
    with ScriptedServer([{"text": "The proposal looks fine to me."}]) as server:
        refined = plan_folder(mixed, _settings(tmp_path, server)).proposal
    rules = plan_folder(mixed, _settings(tmp_path, server), refine=False).proposal
    assert "no JSON object" in refined.refined["error"] and refined.values == rules.values
    assert rules.refined is None
