"""The prompts' sentinel words in a model's reply (docqa.answer.sentinel): read as the not-found
outcome, left out of the answer, never streamed in a draft — and the documents' own use kept."""

from __future__ import annotations

import pytest

from docqa.answer.sentinel import DraftFilter, clean, has_sentinel, said_not_found


@pytest.mark.parametrize("reply,not_found,cleaned", [
    ("NOT_FOUND", True, ""),
    ("NOT_FOUND.", True, ""),
    ("`NOT_FOUND`", True, ""),
    ("**Not_Found**", True, ""),
    ("NOT FOUND", True, ""),
    ("not found.", True, "not found."),
    ("NOT_FOUND\nThe sources only describe the schedule.", True, "The sources only describe the schedule."),
    ("NOT_FOUND [1]", True, "[1]"),
    ("The sources do not say. NOT_FOUND", False, "The sources do not say."),
    ("文档中没有提到。NOT_FOUND", False, "文档中没有提到。"),
    ("Backups are kept for 35 days [1].\nNOT_FOUND", False, "Backups are kept for 35 days [1]."),
    ("A [1]. NOT_FOUND. B [2].", False, "A [1]. B [2]."),
    ("Backups are kept for 35 days [1]. VERIFIED", False, "Backups are kept for 35 days [1]."),
    # the documents' own words stay
    ("The API returns `NOT_FOUND` [1].", False, "The API returns `NOT_FOUND` [1]."),
    ("The account is verified [1].", False, "The account is verified [1]."),
    ("NOT_FOUNDATION is a module [1].", False, "NOT_FOUNDATION is a module [1]."),
    ("Not found errors are logged [1].", False, "Not found errors are logged [1]."),
])
def test_sentinels_in_a_reply(reply, not_found, cleaned):
    assert said_not_found(reply) is not_found
    assert clean(reply) == cleaned
    assert not has_sentinel(clean(reply))


@pytest.mark.parametrize("reply", [
    "NOT_FOUND", "**NOT_FOUND**.", "The sources do not say. NOT_FOUND", "Backups are kept [1].\nNOT_FOUND\n",
    "A [1]. NOT FOUND. B [2].", "Backups are kept for 35 days [1]. VERIFIED",
])
@pytest.mark.parametrize("size", [1, 2, 3, 5, 7])
def test_a_streamed_draft_never_shows_a_sentinel_however_it_is_cut(reply, size):
    shown = DraftFilter()
    pieces = [shown.feed(reply[i:i + size]) for i in range(0, len(reply), size)] + [shown.flush()]
    text = "".join(pieces)
    assert "NOT_FOUND" not in text.upper().replace(" ", "_") and "VERIFIED" not in text
    assert " ".join(text.split()) == " ".join(clean(reply).split())  # the same words as the published text


def test_a_draft_is_held_back_only_while_it_may_become_a_sentinel():
    shown = DraftFilter()
    assert shown.feed("Backups are kept ") == "Backups are kept "
    assert shown.feed("NOT") == ""  # may be NOT_FOUND
    assert shown.feed("ICED daily") == "NOTICED daily"
    assert shown.flush() == ""
