"""Text services: scripts and languages, token counting, Chinese-aware segmentation for full-text search,
sentences."""

from docqa.text.exact import exact_tokens, holds_exact
from docqa.text.language import guess_language, has_cjk, language_of, script
from docqa.text.segment import query_terms, query_words, segment_for_index, segmented_forms, segmenter
from docqa.text.sentences import sentence_spans, split_sentences
from docqa.text.tokens import count_tokens, encode, decode

__all__ = ["count_tokens", "encode", "decode", "exact_tokens", "holds_exact", "guess_language", "has_cjk", "language_of", "query_terms", "query_words",
           "script", "segment_for_index", "segmented_forms", "segmenter", "sentence_spans", "split_sentences"]
