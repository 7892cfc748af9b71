"""The two consoles every command writes to: results on standard output, the rest on standard error."""

from rich.console import Console

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)
