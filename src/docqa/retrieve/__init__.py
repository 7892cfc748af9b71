"""Retrieval: query parsing and escaping, snippets, the retriever."""

from docqa.retrieve.query import parse_query
from docqa.retrieve.retriever import Retriever
from docqa.retrieve.snippet import highlight

__all__ = ["Retriever", "highlight", "parse_query"]
