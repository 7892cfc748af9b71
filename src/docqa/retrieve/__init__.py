"""Retrieval: query parsing and escaping, snippets, the retriever."""

from docqa.retrieve.query import parse_query
from docqa.retrieve.fusion import Calibration, convex, rrf
from docqa.retrieve.retriever import Retriever, SearchResults
from docqa.retrieve.snippet import highlight

__all__ = ["Calibration", "Retriever", "SearchResults", "convex", "highlight", "parse_query", "rrf"]
