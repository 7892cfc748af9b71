"""Skills: procedures for kinds of task (compare versions, summarise a collection, …), each a folder
with SKILL.md, disclosed to the agent progressively (index → procedure → resources).

    skill.py    Skill: one folder, its procedure and its resources (read in pieces, never run)
    lint.py     reading and checking SKILL.md, problems named by file and line
    catalog.py  SkillSet: built in, skills.paths, the knowledge base's skills/ folder
    match.py    which skills a question calls for (triggers, embedding similarity), and why
    active.py   ActiveSkills: one run's skills, its prompt part, tools and trace entries
    tools.py    use_skill, read_skill_resource
"""

from __future__ import annotations

from docqa.skills.active import ActiveSkills
from docqa.skills.catalog import BUILTIN, SkillSet, load_skills, skill_roots
from docqa.skills.lint import Problem, lint
from docqa.skills.match import Match, match
from docqa.skills.skill import SECTIONS, Skill

__all__ = ["BUILTIN", "SECTIONS", "ActiveSkills", "Match", "Problem", "Skill", "SkillSet", "lint", "load_skills", "match",
           "skill_roots"]
