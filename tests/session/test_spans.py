"""Following a cited span into a document's new version, table-driven (docqa.store.spans.follow)."""

from __future__ import annotations

import pytest

from docqa.store.spans import follow

OLD = "# Title\n\nAlpha line one.\nThe cited sentence is here.\nOmega line three.\n"
QUOTE = "The cited sentence is here."
START = OLD.index(QUOTE)

CASES = [
    ("unchanged", OLD, START),
    ("edit after it", OLD.replace("Omega", "Zeta"), START),
    ("edit above it", OLD.replace("Alpha line one.", "Alpha line one, longer now."), START + 12),
    ("a line inserted above", OLD.replace("# Title\n", "# Title\n\nA new paragraph.\n"), START + 18),
    ("edited", OLD.replace("is here", "was here"), None),
    ("deleted", OLD.replace(QUOTE + "\n", ""), None),
    ("moved to the end", OLD.replace(QUOTE + "\n", "") + QUOTE + "\n", None),
    ("moved below", OLD.replace(QUOTE + "\n", "") + "\n" + QUOTE + "\n", None),
    ("a sentence added before it in its line", OLD.replace(QUOTE, "Intro. " + QUOTE), START + 7),
    ("both its neighbours edited (flagged: cannot tell)", OLD.replace("Alpha", "Beta").replace("Omega", "Psi"), None),
]


@pytest.mark.parametrize(("new", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_follow(new, expected):
    found = follow(OLD, new, START, START + len(QUOTE), QUOTE)
    assert found == expected
    if found is not None:
        assert new[found:found + len(QUOTE)] == QUOTE


def test_the_last_sentence_moved_under_a_new_heading_at_the_end_is_moved():
    old = "# T\n\nIntro line.\n\nFirst sentence. " + QUOTE + "\n"
    new = "# T\n\nIntro line.\n\nFirst sentence.\n\n## Notes\n\n" + QUOTE + "\n"  # the same last characters
    start = old.index(QUOTE)
    assert follow(old, new, start, start + len(QUOTE), QUOTE) is None


def test_a_span_shifted_by_an_earlier_edit_is_found_again_by_its_quote():
    shifted = OLD.replace("Alpha line one.", "Alpha line one, longer now.")  # the citation's offsets are OLD's
    assert follow(shifted, shifted.replace("Omega", "Zeta"), START, START + len(QUOTE), QUOTE) == START + 12
    assert follow(shifted, shifted.replace(QUOTE, "Changed."), START, START + len(QUOTE), QUOTE) is None


def test_without_the_old_text_only_its_place_counts():
    assert follow(None, OLD, START, START + len(QUOTE), QUOTE) == START
    assert follow(None, "x" + OLD, START, START + len(QUOTE), QUOTE) is None


def test_the_bounds_found_line_by_line_are_at_most_the_shared_start_and_end():
    """Edit.bounds (what the store's index passes over) never claims more shared text than there is: whole
    lines either side of an edit."""
    import random

    from docqa.store.spans import Edit

    rng = random.Random(7)
    for alphabet in ("ab\n c.", "a\n", "ab\n\n"):
        for _ in range(3000):
            old = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
            new = list(old)
            for _ in range(rng.randint(0, 3)):
                at = rng.randint(0, len(new))
                if rng.random() < 0.5:
                    new.insert(at, rng.choice(alphabet))
                elif new:
                    del new[min(at, len(new) - 1)]
            edit = Edit(old, "".join(new))
            head, tail = edit.bounds()
            assert 0 <= head <= edit.head and 0 <= tail <= edit.tail
    edit = Edit("one\ntwo words\nthree\n", "one\ntwo other words\nthree\n")
    assert edit.bounds() == (4, 6) and (edit.head, edit.tail) == (8, 13)  # the whole lines either side
