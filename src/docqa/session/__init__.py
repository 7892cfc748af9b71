"""Conversations and their log: the previous turn for follow-up questions, the Q&A log for maintainers.

The records themselves (sessions, runs, feedback) live in the knowledge base: `docqa.store.runlog` is
their interface (`RunLog`), one module per backend implements it; `docqa.store.open_store` hands it out.
"""

from docqa.session.history import given_turns, previous_turn, trim
from docqa.session.log import (
    ATTENTION, EXPORT_FORMATS, cited_paths, export, matches, needs_attention, qa_log, render_markdown, write_csv,
    write_jsonl,
)

__all__ = ["ATTENTION", "EXPORT_FORMATS", "cited_paths", "export", "given_turns", "matches", "needs_attention",
           "previous_turn", "qa_log", "render_markdown", "trim", "write_csv", "write_jsonl"]
