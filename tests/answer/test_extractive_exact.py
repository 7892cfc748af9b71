"""The evidence model's features for questions holding exact tokens (versions, identifiers)."""

from __future__ import annotations

from docqa.answer.extractive import evidence_features


def features(question: str, sentence: str) -> dict[str, float]:
    terms = ["git", "2", "39", "5", "released"]
    return evidence_features(question, sentence, sentence, terms, {}, 0.5, 0.5)


def test_a_sibling_version_is_a_missing_name_and_the_exact_one_is_not():
    question = "Why was git 2.39.5 released?"
    assert features(question, "git 2.39.4 was released to fix four CVEs.")["missing_name"] == 1.0
    assert features(question, "git 2.39.50 was released to fix four CVEs.")["missing_name"] == 1.0
    assert features(question, "git v2.39.5 was released to revert changes.")["missing_name"] == 0.0


def test_a_typeset_negation_is_a_negation():
    question = "Which ASN.1 types does libtasn1 not handle?"
    terms = ["asn", "1", "types", "libtasn1", "handle"]
    for sentence in ("This version doesn't handle the REAL type.", "This version doesn’t handle the REAL type."):
        assert evidence_features(question, sentence, sentence, terms, {}, 0.5, 0.5)["contradiction"] == 0.0
    plain = "This version handles the REAL type."
    assert evidence_features(question, plain, plain, terms, {}, 0.5, 0.5)["contradiction"] == 1.0
