"""Deterministic fact checks: what a claim states must be in the text it cites."""

from __future__ import annotations

import pytest

from docqa.answer import facts_in, missing_facts, normalise


def kinds(claim: str) -> list[tuple[str, str]]:
    return [(f.kind, f.value) for f in facts_in(claim)]


def test_normalise():
    assert normalise("备份保留三十五天") == "备份保留35天"
    assert normalise("每年两千零五次，一万二千人") == "每年2005次,12000人"  # NFKC also turns ， into ,
    assert normalise("百分之五的流量") == "5%的流量"
    assert normalise("１２３ＡＢＣ") == "123ABC"  # full-width
    assert normalise("1,000 users and 12,345,678 rows; 3,14") == "1000 users and 12345678 rows; 3,14"
    assert normalise("一个服务") == "一个服务"  # a lone 一 is usually a word


def test_facts_of_a_claim():
    claim = ('Run `acmectl keys rotate` every 90 days; PostgreSQL 16.2 keeps WAL in /var/lib/pg/wal, '
             'the MAX_RETRIES setting is 5 and backups start at 02:00 on 2024-05-01 ("full backup").')
    found = kinds(claim)
    assert ("quote", "acmectl keys rotate") in found and ("quote", "full backup") in found
    assert ("number", "90") in found and ("version", "16.2") in found and ("path", "/var/lib/pg/wal") in found
    assert ("identifier", "MAX_RETRIES") in found and ("number", "5") in found
    assert ("date", "02:00") in found and ("date", "2024-05-01") in found
    assert kinds("It is fast and reliable.") == []


SOURCE = """Full backups run every night at 02:00 UTC and are kept for 35 days. PostgreSQL 16.2 keeps its
WAL in /var/lib/pg/wal. Set MAX_RETRIES to 5. About 1,200 customers were affected."""


@pytest.mark.parametrize("claim", [
    "Backups are kept for 35 days [1].",
    "Backups run at 02:00 [1].",
    "PostgreSQL 16.2 stores the WAL under /var/lib/pg/wal [1].",
    "MAX_RETRIES should be 5 [1].",
    "About 1200 customers were affected [1].",
    "备份保留三十五天 [1]。",        # Chinese numerals
    "备份保留３５天 [1]。",          # full-width digits
])
def test_supported_claims_pass(claim):
    assert missing_facts(claim, SOURCE) == []


@pytest.mark.parametrize("claim, missing", [
    ("Backups are kept for 30 days [1].", "30"),
    ("Backups are kept for 3 days [1].", "3"),          # not a piece of 35
    ("PostgreSQL 16.3 is used [1].", "16.3"),
    ("The WAL lives in /var/lib/postgres [1].", "/var/lib/postgres"),
    ("Set MAX_RETRY to 5 [1].", "MAX_RETRY"),
    ("备份保留三十天 [1]。", "30"),
    ('The docs say "restore weekly" [1].', "restore weekly"),
])
def test_unsupported_facts_are_named(claim, missing):
    assert missing in [f.value for f in missing_facts(claim, SOURCE)]
