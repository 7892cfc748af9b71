"""`docqa skills list | show NAME | lint PATH`: the procedures the agent may load (docqa.skills)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from docqa.cli.console import err, out
from docqa.cli.help import Typer
from docqa.settings import Settings

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON (stable shape, see README).")]


def skills_app(settings: Callable[[], Settings]) -> typer.Typer:
    """The `skills` command group; `settings`: the settings in effect (for skills.paths and the knowledge base's folder)."""
    group = Typer(help="Skills: procedures (SKILL.md folders) the agent loads when a question needs them.",
                  no_args_is_help=True)

    def loaded():
        from docqa.skills import load_skills, skill_roots

        return load_skills(skill_roots(settings()))

    @group.command("list")
    def list_(as_json: JsonFlag = False) -> None:
        """The skills the agent may use: name, where it comes from, description; then any SKILL.md left out, and why."""
        found = loaded()
        if as_json:
            print(json.dumps({"skills": [s.summary() for s in found], "problems": [str(p) for p in found.problems]},
                             ensure_ascii=False, indent=2))
            return
        if not len(found):
            out.print("no skills: skills.enabled is false, or skills.builtin is false and none were found")
        table = Table("name", "from", "description", box=None)
        for s in found:
            origin = s.origin + (f" (replaces {found.replaced[s.name]})" if s.name in found.replaced else "")
            table.add_row(s.name, origin, escape(s.description))
        out.print(table) if len(found) else None
        for problem in found.problems:
            err.print(f"[yellow]left out:[/] {escape(str(problem))}")

    @group.command("show")
    def show(
        name: Annotated[str, typer.Argument(metavar="NAME", help="The skill's name (see 'docqa skills list').")],
        as_json: JsonFlag = False,
    ) -> None:
        """A skill in full: description, triggers, where its SKILL.md is, its procedure and its resources."""
        skill = loaded().get(name)
        if as_json:
            print(json.dumps({**skill.summary(), "body": skill.body}, ensure_ascii=False, indent=2))
            return
        out.print(f"[bold]{skill.name}[/] ({skill.origin}) — {escape(str(skill.path))}")
        out.print(escape(skill.description))
        if skill.triggers:
            out.print("triggers: " + escape(", ".join(skill.triggers)))
        out.print()
        out.print(escape(skill.body))
        if resources := skill.resources():
            out.print("\nresources: " + escape(", ".join(resources)))

    @group.command("lint")
    def lint(
        path: Annotated[Path, typer.Argument(metavar="PATH", help="A skill folder, its SKILL.md, or a folder of skill folders.")],
        as_json: JsonFlag = False,
    ) -> None:
        """Check skills: front matter (name, description, triggers) and the sections Workflow, Required evidence,
        Stop conditions and Report rules. Each problem names the file and line; exit code 1 when there are any."""
        from docqa.skills import lint as check

        skills, problems = check(path)
        if as_json:
            print(json.dumps({"skills": [s.name for s in skills], "problems": [
                {"file": str(p.file), "line": p.line, "message": p.message} for p in problems]}, ensure_ascii=False, indent=2))
        else:
            for problem in problems:
                err.print(f"[red]{escape(str(problem))}[/]")
            for skill in skills:
                out.print(f"ok {skill.name} ({escape(str(skill.path))})")
        if problems:
            if not as_json:
                err.print(f"{len(problems)} problem(s)")
            sys.exit(1)

    return group
