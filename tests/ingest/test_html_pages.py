"""The HTML reader on documentation pages: the anchor of each heading's section (for URL#anchor citations)
and the navigation documentation generators write without a nav element (DocBook, Texinfo, Sphinx)."""

from __future__ import annotations

from pathlib import Path

from docqa.ingest.readers import read_file


def _read(html: str):
    return read_file(Path("page.html"), html.encode())


def test_each_heading_s_anchor_is_recorded_at_its_offset():
    doc = _read('<html><body><section id="install"><h1>Install<a class="headerlink" href="#install">¶</a></h1>'
                '<p>Run it.</p><section id="upgrading"><h2>Upgrading</h2><p>Up.</p></section></section>'
                '<h2 id="faq">FAQ</h2><h3><a name="old-style"></a>Old style</h3><h3>No anchor</h3></body></html>')
    anchors = dict((name, offset) for offset, name in doc.metadata["anchors"])
    assert list(anchors) == ["install", "upgrading", "faq", "old-style"]
    assert doc.text.startswith("Install\n\nRun it.")  # the headerlink's ¶ is not text
    for name, heading in (("upgrading", "Upgrading"), ("faq", "FAQ"), ("old-style", "Old style")):
        assert doc.text[anchors[name]:].startswith(heading)


def test_a_page_without_anchors_records_none():
    assert "anchors" not in _read("<html><body><h1>Title</h1><p>Text.</p></body></html>").metadata


def test_generator_navigation_is_not_text():
    doc = _read('<html><body><div class="navheader"><table class="nav"><tr><td><a href="a.html">Prev</a></td>'
                '<td><a href="c.html">Next</a></td></tr></table></div><div class="chapter"><h1>Chapter</h1>'
                '<div class="toc"><dl><dt><a href="#s1">1. Section one</a></dt></dl></div>'
                '<p>The chapter\'s own text.</p></div><div class="navfooter"><a href="index.html">Home</a></div>'
                '<div class="related" role="navigation"><a href="genindex.html">index</a></div></body></html>')
    assert doc.text == "Chapter\n\nThe chapter's own text."
