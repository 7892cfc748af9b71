"""Exact tokens: versions, paths, options and identifiers found in a question and in a text."""

from __future__ import annotations

import pytest

from docqa.text import exact_tokens, holds_exact


@pytest.mark.parametrize("question, expected", [
    ("Why was Git 2.39.5 released?", ["2.39.5"]),
    ("git 2.39.5 为什么发布？", ["2.39.5"]),  # Chinese around the token
    ("Git 2.39.5修复了什么？", ["2.39.5"]),
    ("Which ASN.1 types does libtasn1 not handle?", ["ASN.1"]),  # libtasn1: one full-text term already
    ("I ran `passwd -l`; what about /etc/ssh/sshd_config and --depth=1?", ["-l", "/etc/ssh/sshd_config", "--depth"]),
    ("Is CVE-2024-32002 fixed on x86_64 with core.hooksPath?", ["CVE-2024-32002", "x86_64", "core.hooksPath"]),
    ("What does ERR_SSL_PROTOCOL mean in Python 3.11.", ["ERR_SSL_PROTOCOL", "3.11"]),
    ("Is COVID-19 or Ca2+ in phosphatidylinositol-3,4-bisphosphate?", ["COVID-19", "phosphatidylinositol-3,4-bisphosphate"]),
])
def test_exact_tokens_are_found_as_written(question, expected):
    assert exact_tokens(question) == expected


@pytest.mark.parametrize("question", [
    "What is the default PermitRootLogin setting for new OpenSSH installations?",  # names: the word search's job
    "What changed in 2024, e.g. in the 2nd release, and/or over TCP/IP?",  # a year, an abbreviation, an ordinal
    "Does E0425 or sha256 break X11 in libtasn1?",  # one full-text term each: BM25 matches them whole
    "Which 2.30.x point release added it?",  # a version family, not one version
    "数据库多久备份一次？",
])
def test_plain_words_numbers_and_names_are_not_exact_tokens(question):
    assert exact_tokens(question) == []


@pytest.mark.parametrize("question", [
    "我已经用 shutdown 22:00 定好了晚上关机，现在临时不想关了，怎么撤销？",  # trust dev manpages-zh-058
    "The backup runs at 6:30 every day; how do I move it to 23:59:59?",
    "cron 任务设在 03:15 执行，日志在哪里看？",
])
def test_a_time_of_day_is_a_value_not_an_exact_token(question):
    """A time the user gives (`shutdown 22:00`) is a value like a number: documentation writes the format (`hh:mm`)
    or its own example, so the answer need not hold it."""
    assert exact_tokens(question) == []


@pytest.mark.parametrize("question, expected", [
    ("Connect to 10.0.0.1:22 or host:8080 and read 2022-10-18", ["10.0.0.1:22", "host:8080", "2022-10-18"]),
    ("Is a:10:30 or 25:00 valid?", ["a:10:30", "25:00"]),  # not a time of day alone
])
def test_tokens_with_a_colon_that_are_no_time_of_day_stay_exact(question, expected):
    assert exact_tokens(question) == expected


def test_a_token_repeated_in_another_case_is_listed_once():
    assert exact_tokens("sshd_config or SSHD_CONFIG?") == ["sshd_config"]


@pytest.mark.parametrize("text", ["Git v2.39.5 Release Notes", "RelNotes/2.39.5.txt", "发布2.39.5版本", "ends with 2.39.5."])
def test_a_text_holds_a_version_at_token_boundaries(text):
    assert holds_exact(text, "2.39.5")


@pytest.mark.parametrize("text", ["2.39.50", "12.39.5", "2.39.5.1", "v2.39.4 and 2.39", "1.2.39.5"])
def test_a_sibling_or_longer_version_does_not_hold_it(text):
    assert not holds_exact(text, "2.39.5")


def test_identifiers_and_options_match_whole_and_ignore_case():
    assert holds_exact("Edit /etc/ssh/SSHD_CONFIG and restart.", "sshd_config")
    assert not holds_exact("sshd_configs", "sshd_config")
    assert holds_exact("clone --depth=1", "--depth") and not holds_exact("clone ---depth", "--depth")
    assert not holds_exact("--depth-limit", "--depth")
