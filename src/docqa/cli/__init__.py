"""The `docqa` command line: parse input, call KnowledgeBase, render the result (typer + rich).

`app` holds the commands; `paths` names files as the terminal shows them; `links` makes them
clickable; `help` writes the help pages with human type names and every default.
"""

from docqa.cli.app import app, main

__all__ = ["app", "main"]
