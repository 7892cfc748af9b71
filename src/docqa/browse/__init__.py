"""Browsing documents as text, for a model that explores them with tools (agent mode).

An llms.txt-style catalog (`list_docs`, `llms_txt`), a document read in numbered lines
(`fetch_doc`) and a regular expression over every document's stored text (`grep_docs`).  Each
result has `render()`, the text a model sees, ending in a note that says how to get more.
"""

from docqa.browse.catalog import DocPage, list_docs, llms_txt
from docqa.browse.grep import GrepFile, GrepLine, GrepResult, grep_docs
from docqa.browse.read import DocText, fetch_doc

__all__ = ["DocPage", "DocText", "GrepFile", "GrepLine", "GrepResult", "fetch_doc", "grep_docs", "list_docs", "llms_txt"]
