"""The checker: deterministic fact checks (table-driven) and the model's verdict."""

from __future__ import annotations

import pytest

from docqa.answer.checker import blame, check_facts, parse_verdict
from docqa.answer.citer import cite

from .hits import hit_in, sources

DOC = """## Release

Version 2.4.1 was released on 2026-03-14 with 1,000 new tests.
The config lives in /etc/acme/acme.yml and the flag --max-workers sets the pool (default 8).
About 35% of users run the `acme serve` command; API_TOKEN_V2 replaces the old token.
发布说明：共修复了三十五个问题，百分之五的用户受影响。
"""
SRC = sources(hit_in(DOC, 0, len(DOC), path="/kb/release.md", section="Release"))


@pytest.mark.parametrize("claim,bad", [
    ("Version 2.4.1 was released on 2026-03-14 [1].", None),
    ("Version 2.4.2 was released on 2026-03-14 [1].", "version"),
    ("Version 2.4.1 was released on 2026-03-15 [1].", "date"),
    ("It shipped with 1000 new tests [1].", None),  # 1,000 = 1000
    ("It shipped with 10,000 new tests [1].", "number"),
    ("The config lives in /etc/acme/acme.yml [1].", None),
    ("The config lives in /etc/acme/acme.yaml [1].", "path"),
    ("The flag --max-workers sets the pool, default 8 [1].", None),
    ("The flag --max-worker sets the pool, default 8 [1].", "identifier"),
    ("The pool defaults to 16 workers with --max-workers [1].", "number"),
    ("About 35% of users run `acme serve` [1].", None),
    ("About 35% of users run `acme server` [1].", "quote"),
    ("API_TOKEN_V2 replaces the old token [1].", None),
    ("API_TOKEN_V3 replaces the old token [1].", "identifier"),
    ("发布说明：共修复了35个问题 [1]。", None),  # 三十五 = 35
    ("发布说明：共修复了３５个问题 [1]。", None),  # full-width digits
    ("发布说明：共修复了36个问题 [1]。", "number"),
    ("百分之五的用户受影响 [1]。", None),
    ("5%的用户受影响 [1]。", None),
    ("百分之六的用户受影响 [1]。", "number"),
])
def test_facts_must_occur_in_the_cited_text(claim, bad):
    cited = cite(claim, SRC, language="zh" if "用户" in claim or "问题" in claim else "en")
    rejections = check_facts(cited, SRC)
    if bad is None:
        assert rejections == [], rejections
    else:
        assert len(rejections) == 1 and any(r.startswith(bad) for r in rejections[0].reasons), rejections
        assert not cited.claims[0].supported


def test_unsupported_claims_are_rejected():
    cited = cite("Version 2.4.1 was released [1]. The moon is made of cheese.", SRC)
    rejections = check_facts(cited, SRC)
    assert [r.claim for r in rejections] == ["The moon is made of cheese."]


@pytest.mark.parametrize("text,ok,reasons", [
    ("VERIFIED", True, []),
    ("  verified.", True, []),
    ("**VERIFIED**", True, []),
    ("REJECTED: 'default 16' — the source says 8", False, ["'default 16' — the source says 8"]),
    ("REJECTED:\n- claim A is not in [1]\n- claim B contradicts [2]", False, ["claim A is not in [1]", "claim B contradicts [2]"]),
    ("After checking, the verdict is REJECTED: the date is wrong", False, ["the date is wrong"]),
    ("I think it looks fine", None, []),
    # a small model's denials in other words are rejections, and no bare token becomes a reason (issue 28)
    ("NOT VERIFIED", False, ["the fact-checker rejected the answer without reasons"]),
    ("UNVERIFIED: the date is wrong", False, ["the date is wrong"]),
    ("NOT_FOUND", False, ["the fact-checker rejected the answer without reasons"]),
    ("REJECTED:\nNOT_FOUND", False, ["the fact-checker rejected the answer without reasons"]),
    ("The claim is not entailed: it speaks of upgrades", False, ["it speaks of upgrades"]),
])
def test_parse_verdict(text, ok, reasons):
    verdict = parse_verdict(text)
    assert verdict.ok is ok and verdict.reasons == reasons


def test_blame_matches_reasons_to_claims():
    cited = cite("Version 2.4.1 was released on 2026-03-14 [1]. The config lives in /etc/acme/acme.yml [1].", SRC)
    matched = blame(["The config lives in /etc/acme/acme.yml is wrong: no such file", "something vague"], cited.claims)
    assert matched[0][0] is cited.claims[1] and matched[1][0] is None
