"""Skills: SKILL.md parsing and its problems (file and line), the built-in skills, resources read in
pieces and never outside the skill's folder, and where a knowledge base finds its skills."""

from __future__ import annotations

import os

import pytest

from docqa.errors import NotFoundError, SkillError
from docqa.settings import Settings
from docqa.skills import BUILTIN, SECTIONS, lint, load_skills, skill_roots
from docqa.skills.lint import read_skill
from docqa.skills.match import contains, match

GOOD = """---
name: {name}
description: Check a runbook step by step.
triggers: [runbook, "check the steps"]
---

## Workflow
1. grep_docs for the runbook.

## Required evidence
- The runbook's steps [n].

## Stop conditions
- Every step is checked.

## Report rules
- A numbered list.
"""


def write_skill(root, name="check-runbook", text=None, **resources):
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(text if text is not None else GOOD.format(name=name), encoding="utf-8")
    for rel, content in resources.items():
        path = folder / rel.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return folder


def problems_of(tmp_path, text, name="check-runbook"):
    folder = write_skill(tmp_path, name, text)
    skill, problems = read_skill(folder, "test")
    assert skill is None
    return [(p.file.name, p.line, p.message) for p in problems]


def test_a_good_skill_parses_with_its_sections_and_resources(tmp_path):
    folder = write_skill(tmp_path, **{"reference__checklist.md": "one\ntwo\n", "templates__report.md": "x", ".hidden": "no"})
    skill, problems = read_skill(folder, "test")
    assert problems == []
    assert (skill.name, skill.description, skill.triggers) == ("check-runbook", "Check a runbook step by step.",
                                                               ("runbook", "check the steps"))
    assert list(skill.sections) == list(SECTIONS) and skill.sections["Stop conditions"] == "- Every step is checked."
    assert skill.body.startswith("## Workflow") and "name:" not in skill.body
    assert skill.resources() == ["reference/checklist.md", "templates/report.md"]


@pytest.mark.parametrize("text, line, words", [
    ("# no front matter\n", 1, "no front matter"),
    ("---\nname: check-runbook\n", 1, "never closed"),
    ("---\nname: [unclosed\n---\n", 2, "not valid YAML"),
    ("---\n- a\n- b\n---\n", 2, "must be a mapping"),
    (GOOD.format(name="check-runbook").replace("triggers:", "colour: red\ntriggers:"), 4, "unknown key 'colour'"),
    (GOOD.format(name="Check_Runbook"), 2, "lowercase letters"),
    (GOOD.format(name="other-name"), 2, "differs from its folder 'check-runbook'"),
    (GOOD.format(name="check-runbook").replace("description: Check a runbook step by step.\n", ""), 1,
     "description is missing"),
    (GOOD.format(name="check-runbook").replace('[runbook, "check the steps"]', "runbook"), 4, "triggers must be a list"),
    (GOOD.format(name="check-runbook").replace("## Stop conditions\n- Every step is checked.\n", ""), 15,
     "section 'Stop conditions' is missing"),
    (GOOD.format(name="check-runbook").replace("- The runbook's steps [n].\n", ""), 10, "section 'Required evidence' is empty"),
    (GOOD.format(name="check-runbook") + "\n## Workflow\nagain\n", 19, "appears twice"),
])
def test_problems_name_the_file_and_line(tmp_path, text, line, words):
    found = problems_of(tmp_path, text)
    assert any(f == "SKILL.md" and ln == line and words in m for f, ln, m in found), found


def test_a_heading_inside_a_code_block_is_not_a_section(tmp_path):
    text = GOOD.format(name="check-runbook").replace("## Report rules\n- A numbered list.\n",
                                                     "```\n## Report rules\n```\n")
    assert any("'Report rules' is missing" in m for _, _, m in problems_of(tmp_path, text))


def test_lint_a_folder_of_skills_reports_each_file(tmp_path):
    write_skill(tmp_path, "good-one")
    write_skill(tmp_path, "bad-one", "---\nname: bad-one\n---\n")
    skills, problems = lint(tmp_path)
    assert [s.name for s in skills] == ["good-one"]
    assert problems and all(p.file == tmp_path / "bad-one" / "SKILL.md" for p in problems)
    assert str(problems[0]).startswith(f"{tmp_path / 'bad-one' / 'SKILL.md'}:")
    assert lint(tmp_path / "nowhere")[1][0].message == "no such file or folder"
    (tmp_path / "empty").mkdir()
    assert "no SKILL.md" in lint(tmp_path / "empty")[1][0].message


def test_the_builtin_skills_are_valid_and_cover_the_tasks():
    skills, problems = lint(BUILTIN)
    assert problems == []
    assert {s.name for s in skills} == {"compare-versions", "summarise-collection", "find-mentions",
                                        "answer-from-table", "write-procedure"}
    assert all(s.triggers and len(s.sections) == 4 for s in skills)


def test_resources_are_read_in_pieces(tmp_path):
    lines = "\n".join(f"line {i}" for i in range(1, 301))
    skill, _ = read_skill(write_skill(tmp_path, **{"reference__long.md": lines}), "test")
    first = skill.read_resource("reference/long.md")
    assert "lines 1–80 of 300" in first and "   80| line 80" in first and "line 81" not in first
    assert "offset=81" in first
    piece = skill.read_resource("reference/long.md", offset=290, limit=50)
    assert "lines 290–300 of 300" in piece and "more:" not in piece
    wide = "\n".join("x" * 500 for _ in range(100))
    (skill.folder / "reference" / "wide.md").write_text(wide, encoding="utf-8")
    assert len(skill.read_resource("reference/wide.md", limit=200)) < 4500  # bounded by characters too


@pytest.mark.parametrize("path", ["../other/SKILL.md", "/etc/passwd", "reference/../../other/secret.md", "",
                                  "C:/Windows/win.ini", "..\\other\\secret.md", "link/secret.md"])
def test_a_resource_path_never_leaves_the_skill_folder(tmp_path, path):
    skill, _ = read_skill(write_skill(tmp_path, **{"reference__ok.md": "fine"}), "test")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "secret.md").write_text("SECRET", encoding="utf-8")
    os.symlink(tmp_path / "other", skill.folder / "link")  # a link inside the folder that points out of it
    with pytest.raises(SkillError) as refused:
        skill.read_resource(path)
    assert "SECRET" not in str(refused.value)
    assert "link/secret.md" not in skill.resources()
    assert "fine" in skill.read_resource("reference/ok.md")


def test_a_missing_or_binary_resource_is_a_clear_error(tmp_path):
    skill, _ = read_skill(write_skill(tmp_path, **{"reference__ok.md": "fine"}), "test")
    with pytest.raises(SkillError, match="has no resource 'nope.md'; it has: reference/ok.md"):
        skill.read_resource("nope.md")
    (skill.folder / "blob.bin").write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(SkillError, match="not a UTF-8 text file"):
        skill.read_resource("blob.bin")


def test_a_knowledge_base_reads_builtin_paths_and_its_own_folder(tmp_path):
    extra = tmp_path / "team-skills"
    write_skill(extra, "check-runbook")
    write_skill(tmp_path / "skills", "compare-versions",
                GOOD.format(name="compare-versions").replace("Check a runbook", "Our own comparison"))
    write_skill(tmp_path / "skills", "broken", "no front matter\n")
    settings = Settings(kb=str(tmp_path / "kb.db"), skills={"paths": [str(extra)]})
    found = load_skills(skill_roots(settings))
    assert {"check-runbook", "compare-versions", "write-procedure"} <= set(found.names)
    assert found.get("check-runbook").origin == "skills.paths"
    mine = found.get("compare-versions")  # the knowledge base's own replaces the built-in one
    assert mine.origin == "knowledge base" and mine.description.startswith("Our own") and found.replaced == {
        "compare-versions": "builtin"}
    assert [p.file.parent.name for p in found.problems] == ["broken"]
    with pytest.raises(NotFoundError, match="no skill named 'nope'"):
        found.get("nope")
    assert load_skills(skill_roots(Settings(kb=str(tmp_path / "kb.db"), skills={"enabled": False}))).names == []
    only_own = load_skills(skill_roots(Settings(kb=str(tmp_path / "kb.db"), skills={"builtin": False})))
    assert set(only_own.names) == {"compare-versions"}


@pytest.mark.parametrize("question, phrase, hit", [
    ("What changed between v1 and v2?", "what changed", True),
    ("What CHANGED   between v1 and v2?", "what changed", True),
    ("Is it unchanged?", "changed", False),  # whole words only
    ("Compare the two", "compar*", True),
    ("A comparison, please", "compar*", True),
    ("比较这两个版本", "比较", True),
    ("How long are backups kept?", "how to", False),
])
def test_trigger_phrases(question, phrase, hit):
    assert contains(question, phrase) is hit


def test_matching_says_why_and_keeps_the_best(embedder, local_embedder):
    skills = list(load_skills([(BUILTIN, "builtin")]))
    embed = lambda texts, kind: embedder.embed_batch(texts, kind)  # noqa: E731
    by_trigger = match("What changed between steam-engine-v1 and v2?", skills, embed, 0.3, 2)
    assert by_trigger[0].skill.name == "compare-versions" and "trigger 'what changed'" in by_trigger[0].reason
    by_meaning = match("Give me an overview of the documents in the hr folder", skills, None, 0.3, 2)
    assert by_meaning and by_meaning[0].skill.name == "summarise-collection"  # "overview" is a trigger
    close = match("Tell me what the hr folder holds and what its documents are about", skills, embed, 0.3, 2)
    assert [m.skill.name for m in close] == ["summarise-collection"] and "similarity" in close[0].reason
    assert match("How long are backups kept?", skills, embed, 0.3, 2) == []
    assert len(match("Compare the table summary, step by step", skills, embed, 0.3, 1)) == 1  # max_active


def test_one_run_loads_a_skill_once_and_records_why(tmp_path):
    from docqa.skills import ActiveSkills

    trace: list[dict] = []
    active = ActiveSkills(load_skills([(BUILTIN, "builtin")]), trace)
    assert "- find-mentions: Find every mention" in active.guidance() and "## Workflow" not in active.guidance()
    first = active.load("find-mentions", "the agent called use_skill")
    again = active.load("find-mentions", "the agent called use_skill")
    assert first.startswith("# Skill: find-mentions") and again.startswith("Skill find-mentions is already loaded")
    assert trace == [{"stage": "skill", "name": "find-mentions", "reason": "the agent called use_skill",
                      "origin": "builtin"}]
    assert "(skill find-mentions, loaded because the agent called use_skill)" in active.guidance()
    assert [t.name for t in active.tools()] == ["use_skill", "read_skill_resource"]
    assert ActiveSkills(load_skills([]), []).tools() == [] and ActiveSkills(load_skills([]), []).guidance() == ""
