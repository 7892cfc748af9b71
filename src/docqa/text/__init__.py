"""Text services: token counting, Chinese-aware segmentation for full-text search, sentences."""

from docqa.text.segment import has_cjk, query_terms, query_words, script, segment_for_index
from docqa.text.sentences import sentence_spans, split_sentences
from docqa.text.tokens import count_tokens, encode, decode

__all__ = ["count_tokens", "encode", "decode", "has_cjk", "query_terms", "query_words", "script", "segment_for_index",
           "sentence_spans", "split_sentences"]
