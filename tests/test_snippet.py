"""Snippets: the densest window, matches marked, inflections matched, markup dropped."""

from docqa.retrieve import highlight


def test_marks_terms_and_inflections():
    assert highlight("Keys are rotated often.", ["keys", "rotate"]) == "**Keys** are **rotated** often."


def test_window_goes_to_the_matches():
    text = "filler " * 100 + "the walrus sleeps here" + " filler" * 100
    snippet = highlight(text, ["walrus"], width=60)
    assert "**walrus**" in snippet and snippet.startswith("…") and snippet.endswith("…")


def test_chinese_terms_and_heading_markup():
    assert highlight("## 备份\n\n每天全量备份一次", ["备份"]) == "**备份** 每天全量**备份**一次"


def test_no_match_gives_the_head():
    assert highlight("abc def", ["zzz"]) == "abc def"
