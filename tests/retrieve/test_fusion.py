"""Fusion arithmetic and score calibration (pure functions: exact numbers)."""

from __future__ import annotations

import math

import pytest

from docqa.retrieve.fusion import Calibration, convex, min_max, monotone, rrf


def test_rrf_sums_reciprocal_ranks():
    fused = dict(rrf([[("a", 9.0), ("b", 5.0)], [("b", 0.9), ("c", 0.8)]], k=60))
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 62)
    assert [cid for cid, _ in rrf([[("a", 9.0), ("b", 5.0)], [("b", 0.9), ("c", 0.8)]], k=60)] == ["b", "a", "c"]


def test_rrf_k_changes_the_weight_of_top_ranks():
    lists = [[("a", 1.0), ("b", 0.5), ("x", 0.2), ("c", 0.1)], [("y", 1.0), ("z", 0.9), ("w", 0.8), ("c", 0.7)]]
    # Small k: a first place dominates; large k: appearing in both lists wins.
    assert rrf(lists, k=1)[0][0] == "a"
    assert rrf(lists, k=1000)[0][0] == "c"


def test_ties_keep_bm25_order():
    assert [cid for cid, _ in rrf([[("a", 1.0)], [("b", 1.0)]])] == ["a", "b"]
    assert [cid for cid, _ in convex([("a", 3.0), ("b", 1.0)], [("b", 0.9), ("a", 0.1)], 0.5)] == ["a", "b"]


def test_min_max():
    assert min_max([("a", 10.0), ("b", 6.0), ("c", 2.0)]) == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert min_max([("a", 3.0), ("b", 3.0)]) == {"a": 1.0, "b": 1.0}
    assert min_max([]) == {}


def test_convex_weights_normalised_scores():
    bm25 = [("a", 10.0), ("b", 6.0), ("c", 2.0)]
    dense = [("c", 0.9), ("d", 0.5), ("a", 0.1)]
    fused = dict(convex(bm25, dense, 0.3))
    assert fused["a"] == pytest.approx(0.7 * 1.0 + 0.3 * 0.0)
    assert fused["b"] == pytest.approx(0.7 * 0.5)  # missing from the dense list: 0 there
    assert fused["c"] == pytest.approx(0.7 * 0.0 + 0.3 * 1.0)
    assert fused["d"] == pytest.approx(0.3 * 0.5)
    assert [cid for cid, _ in convex(bm25, dense, 0.9)][0] == "c"  # the weight decides
    assert [cid for cid, _ in convex(bm25, dense, 0.0)] == ["a", "b", "c", "d"]


def test_calibration_is_a_logistic_of_the_evidence():
    cal = Calibration(cos=10.0, bm25=1.0, bias=-5.0)
    assert cal(0.5, 0.0) == pytest.approx(0.5)
    assert cal(0.3, math.e - 1) == pytest.approx(1 / (1 + math.exp(-(3 + 1 - 5))))
    assert cal(None, None) == pytest.approx(1 / (1 + math.exp(5)))
    assert 0.0 < cal(-1.0, 0.0) < cal(0.2, 0.0) < cal(0.9, 50.0) < 1.0


def test_monotone_never_rises():
    assert monotone([0.9, 0.95, 0.4, 0.6, 0.1]) == [0.9, 0.9, 0.4, 0.4, 0.1]
    assert monotone([]) == []


def test_other_language_hits_get_an_imputed_bm25_part():
    bm25 = [("en1", 5.0), ("en2", 1.0)]
    dense = [("zh1", 0.8), ("en1", 0.5), ("en2", 0.2)]
    # Without the rule a passage BM25 could not see scores only its dense part.
    assert dict(convex(bm25, dense, 0.3))["zh1"] == pytest.approx(0.3)
    full = dict(convex(bm25, dense, 0.3, dense_only={"zh1"}, impute=1.0))
    assert full["zh1"] == pytest.approx(1.0) and full["en1"] == pytest.approx(0.7 + 0.3 * 0.5)
    half = dict(convex(bm25, dense, 0.3, dense_only={"zh1"}, impute=0.5))
    assert half["zh1"] == pytest.approx(0.3 + 0.7 * 0.5)
    none = dict(convex(bm25, dense, 0.3, dense_only={"zh1"}, impute=0.0))
    assert none["zh1"] == pytest.approx(0.3)
    assert dict(convex(bm25, dense, 0.3, dense_only={"en1"}))["en1"] == full["en1"]  # only chunks BM25 missed
    both = dict(rrf([bm25, dense], 60, dense_only={"zh1"}))
    assert both["zh1"] == pytest.approx(2 / 61)


def test_coverage_counts_distinct_terms_with_inflections():
    from docqa.retrieve.snippet import coverage

    assert coverage("API keys are rotated every 90 days", ["rotate", "keys", "api"]) == 1.0
    assert coverage("The pager is carried at night", ["hotel", "limit", "night", "business"]) == 0.25
    assert coverage("每天凌晨进行一次全量备份", ["备份", "数据库"]) == 0.5
    assert coverage("anything", []) == 0.0


def test_an_other_language_hit_bm25_found_by_a_stray_token_is_judged_by_its_meaning():
    # A Chinese question over English text: BM25 matched the English passage only through `apt`, low in its list.
    bm25 = [("zh1", 9.0), ("zh2", 6.0), ("en1", 1.0)]
    dense = [("en1", 0.8), ("zh1", 0.5), ("zh2", 0.2)]
    fused = dict(convex(bm25, dense, 0.3, dense_only={"en1"}, impute=1.0))
    assert fused["en1"] == pytest.approx(1.0) and max(fused, key=fused.__getitem__) == "en1"
    # The imputed part never lowers what BM25 gave: a strong same-word match keeps its score.
    strong = dict(convex([("en1", 9.0), ("zh1", 1.0)], dense, 0.3, dense_only={"en1"}, impute=0.2))
    assert strong["en1"] == pytest.approx(0.3 + 0.7)
    assert dict(rrf([bm25, dense], 60, dense_only={"en1"}))["en1"] == pytest.approx(2 / 61)
    assert dict(rrf([[("en1", 9.0)], [("zh1", 0.5), ("en1", 0.4)]], 60, dense_only={"en1"}))["en1"] == pytest.approx(1 / 61 + 1 / 62)
