"""Turn user text into a full-text query: terms (Chinese segmented, stopwords dropped) and the
phrase to boost.  Search terms leave out the question's framing (`search_terms`).  The store quotes every
term, so no input can raise an FTS syntax error."""

from __future__ import annotations

from docqa.store.fulltext import TextQuery
from docqa.text import query_words
from docqa.text.segment import search_terms


def parse_query(text: str, phrase_boost: float = 1.5) -> TextQuery:
    """Terms to match any of, plus the whole query as a phrase when it has several words."""
    terms = search_terms(text)
    words = query_words(text)  # the phrase keeps stopwords: "rotate the keys" is not "rotate keys"
    phrase = " ".join(words) if len(words) > 1 else None
    return TextQuery(terms=terms, phrase=phrase, phrase_boost=phrase_boost)
