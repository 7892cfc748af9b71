"""Help pages a person reads: human type names (TEXT, PATH, N), every default, plain text.

Typer labels values with Python types (`<str>`, `<list[Path]>`) and wraps required arguments in
braces (`{query}`); these command classes write the usage line and the option list themselves,
through click's own formatter, so help stays plain text that reflows to the terminal's width.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, get_args

import typer
from typer.core import TyperCommand, TyperGroup

# Python types -> what the help shows after an option
TYPE_NAMES = {int: "N", float: "NUMBER", str: "TEXT", Path: "PATH", datetime: "TIME"}


def _is_argument(param: Any) -> bool:
    return param.param_type_name == "argument"  # typer's parameters are not click's Argument and Option


def value_name(param: Any) -> str:
    """QUERY, PATH..., N: a parameter's metavar when given, else its kind in capitals."""
    if _is_argument(param):
        name = param.metavar or (param.name or "value").upper()
        return name + ("..." if param.nargs != 1 and not name.endswith("...") else "")
    return param.metavar or _kind(param)


def _kind(param: Any) -> str:
    """TEXT, N, PATH: the value's type (a list's element type: the option is repeatable)."""
    described = param.type_descriptor
    annotation = get_args(described.annotation)[0] if described.is_list else described.annotation
    if described.is_path:
        return "PATH"
    return TYPE_NAMES.get(annotation, getattr(annotation, "__name__", "value").upper())


def _names(param: Any) -> str:
    """`-k, --top-k`: short forms first, as click writes them; a flag's off switch after a slash (`--llm / --no-llm`)."""
    names = ", ".join(sorted(param.opts, key=lambda o: len(o) - len(o.lstrip("-"))))
    off = getattr(param, "secondary_opts", None) or []
    return " / ".join([names, *off])


def default_text(param: Any) -> str | None:
    """The default as help shows it: a given text (for settings-backed defaults), else the value;
    None for flags that are off and for values with no default."""
    shown = getattr(param, "show_default", None)
    if isinstance(shown, str):
        return shown
    default: Any = param.default
    if shown is False or default is None or default is False or default in ((), []) or callable(default):
        return None
    if isinstance(default, (list, tuple)):
        return ", ".join(map(str, default))
    return str(default)


def help_record(param: Any, ctx: Any) -> tuple[str, str] | None:
    """(names and value, help with [default: …; env: …; required]) for one parameter."""
    if getattr(param, "hidden", False):
        return None
    if _is_argument(param):
        names = value_name(param)
    else:
        names = _names(param) + ("" if getattr(param, "is_flag", False) else f" {value_name(param)}")
    extra = []
    if (default := default_text(param)) is not None:
        extra.append(f"default: {default}")
    if not _is_argument(param) and param.envvar and param.show_envvar:
        extra.append(f"env: {param.envvar}")
    if getattr(param, "min", None) is not None and getattr(param, "max", None) is not None:
        extra.append(f"{param.min} to {param.max}")
    if param.required:
        extra.append("required")
    text = getattr(param, "help", None) or ""
    return names, f"{text}  [{'; '.join(extra)}]" if extra else text


def format_params(command: Any, ctx: Any, formatter: Any) -> None:
    """The Arguments and Options sections."""
    params = command.get_params(ctx)
    for title, arguments in (("Arguments", True), ("Options", False)):
        rows = [r for p in params if _is_argument(p) == arguments and (r := help_record(p, ctx))]
        if rows:
            with formatter.section(title):
                formatter.write_dl(rows)


def usage_pieces(command: Any, ctx: Any) -> list[str]:
    """`[OPTIONS] QUERY` / `[OPTIONS] PATH...` / `[OPTIONS] [FILE]`."""
    pieces = [command.options_metavar] if command.options_metavar else []
    for param in command.get_params(ctx):
        if _is_argument(param):
            name = value_name(param)
            pieces.append(name if param.required else f"[{name}]")
    return pieces


class HumanCommand(TyperCommand):
    """A typer command whose help reads as described above."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return usage_pieces(self, ctx)

    def format_options(self, ctx: Any, formatter: Any) -> None:
        format_params(self, ctx, formatter)


class HumanGroup(TyperGroup):
    """A typer group (the app, `config`, `keys`) whose help reads as described above."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [*usage_pieces(self, ctx), self.subcommand_metavar]

    def format_options(self, ctx: Any, formatter: Any) -> None:
        format_params(self, ctx, formatter)
        self.format_commands(ctx, formatter)


class Typer(typer.Typer):
    """typer.Typer with plain help (reflowed to the terminal) and the human command classes."""

    def __init__(self, **options: Any):
        super().__init__(cls=HumanGroup, rich_markup_mode=None, **options)

    def command(self, *args: Any, **options: Any):
        options.setdefault("cls", HumanCommand)
        return super().command(*args, **options)
