"""The `docqa` command line: parse input, call KnowledgeBase, render the result (typer + rich).

    app.py      the commands
    answer.py   a run as it streams: the answer, its sources (linked), the check; chat's typing
    tables.py   tables that fit the terminal (list, log); --wide for everything
    paths.py    how a file is named: relative to the documents' folder or ~, shortened in the middle
    links.py    OSC 8 hyperlinks to files (rich writes them only to a terminal)
    help.py     help pages with human value names (TEXT, PATH, N) and every default
    console.py  the two consoles: results on stdout, the rest on stderr
"""

from docqa.cli.app import app, main

__all__ = ["app", "main"]
