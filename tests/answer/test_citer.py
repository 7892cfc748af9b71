"""The citer: markers mapped to sources, invented ones dropped, spans exact (English and Chinese)."""

from __future__ import annotations

import pytest

from docqa.answer.citer import cite
from docqa.answer.sources import label

from .hits import hit_in, sources

CONFIG = """# Setup

Intro line.

## Database

The database listens on port 5432.
Backups run every 6 hours and are kept for 35 days.
Connections are limited to 200 per node.

## Logging

Logs are written to /var/log/acme/app.log and rotated daily.
"""
DB = CONFIG.index("The database")
LOG = CONFIG.index("Logs are")
ZH = """# 运维手册

## 备份策略

数据库每天凌晨 2 点进行一次全量备份。备份保留三十五天。

## 告警

磁盘使用率超过 85% 时发送告警。
"""


def db_and_log():
    return sources(hit_in(CONFIG, DB, LOG - 2, chunk_id="db"),
                   hit_in(CONFIG, LOG, len(CONFIG), chunk_id="log", section="Setup > Logging"))


def test_each_sentence_gets_the_exact_span_it_rests_on():
    cited = cite("Backups run every 6 hours [1]. Logs go to /var/log/acme/app.log [2].", db_and_log())
    assert [c.sources for c in cited.claims] == [[1], [2]]
    first, second = cited.citations
    assert CONFIG[first.char_start:first.char_end] == first.quote
    assert first.quote.startswith("Backups run every 6 hours") and "5432" not in first.quote
    assert first.line_start == first.line_end == CONFIG.count("\n", 0, CONFIG.index("Backups")) + 1
    assert CONFIG[second.char_start:second.char_end] == second.quote and "/var/log/acme/app.log" in second.quote
    assert first.label == f"[source: config.md §Database, L{first.line_start}]"
    assert all(c.supported for c in cited.claims)


def test_invented_markers_are_dropped_and_reported():
    cited = cite("Backups run every 6 hours [1][7]. Connections are limited to 200 per node [9].", db_and_log())
    assert cited.invented == [7, 9]
    assert cited.claims[0].sources == [1]
    # the second claim's only marker was invented; the source that holds it is found instead
    assert cited.claims[1].sources == [1] and cited.claims[1].supported
    assert all(c.n in (1, 2) for c in cited.citations)


def test_marker_after_the_full_stop_belongs_to_the_sentence_before():
    cited = cite("Backups are kept for 35 days. [1] Logs rotate daily. [2]", db_and_log())
    assert [c.sources for c in cited.claims] == [[1], [2]]


def test_unmarked_sentence_gets_the_best_source_or_is_flagged():
    cited = cite("The database listens on port 5432. The moon is made of cheese.", db_and_log())
    port, moon = cited.claims
    assert port.sources == [1] and port.supported and port.citations[0].quote == "The database listens on port 5432."
    assert not moon.supported and moon.problems == ["no source supports it"]


def test_wrongly_numbered_marker_is_moved_to_the_source_that_holds_the_claim():
    cited = cite("Logs are rotated daily [1].", db_and_log())
    claim = cited.claims[0]
    assert claim.sources == [2] and claim.supported
    assert "the text is in [2]" in claim.problems[0]


def test_a_marker_on_an_unrelated_source_is_flagged_not_trusted():
    cited = cite("Passwords must have 12 characters [1].", db_and_log())
    claim = cited.claims[0]
    assert not claim.supported and claim.citations and "hardly supports" in claim.problems[0]


def test_saying_the_documents_lack_something_needs_no_source():
    cited = cite("The documents do not mention the backup region.", db_and_log())
    assert cited.claims[0].supported and not cited.citations


def test_chinese_answer_spans_and_label():
    src = sources(hit_in(ZH, ZH.index("数据库每天"), ZH.index("## 告警") - 2, path="/kb/运维手册.md", section="运维手册 > 备份策略"))
    cited = cite("数据库每天凌晨2点做全量备份【1】。备份保留35天[1]。", src, language="zh")
    first, second = cited.citations
    assert first.quote == "数据库每天凌晨 2 点进行一次全量备份。"
    assert second.quote == "备份保留三十五天。"
    assert ZH[second.char_start:second.char_end] == second.quote
    assert first.label == f"[来源: 运维手册.md §备份策略 第{first.line_start}行]"
    assert all(c.supported for c in cited.claims)


@pytest.mark.parametrize("page,page_end,language,expected", [
    (5, 5, "zh", "[来源: deploy.pdf §Install 第5页]"),
    (5, 5, "en", "[source: deploy.pdf §Install, p. 5]"),
    (5, 6, "en", "[source: deploy.pdf §Install, pp. 5–6]"),
])
def test_paged_documents_cite_pages(page, page_end, language, expected):
    doc = "Install the agent with apt.\n"
    hit = hit_in(doc, 0, len(doc) - 1, path="/kb/deploy.pdf", section="Install", type_="pdf", page=page, page_end=page_end)
    assert label(hit, language) == expected


def test_a_span_covers_consecutive_sentences_when_the_claim_needs_them():
    cited = cite("Backups run every 6 hours, are kept for 35 days and connections are limited to 200 per node [1].",
                 db_and_log())
    quote = cited.citations[0].quote
    assert quote.startswith("Backups run") and quote.endswith("200 per node.")


def test_a_spreadsheet_citation_points_at_the_row_not_the_whole_table():
    sheet = "Staff\nName | Role | Floor\nAnn | Nurse | 3\nBob | Porter | 1\nCarla | Radiologist | 5\nDev | Cook | 0"
    hit = hit_in(sheet, 0, len(sheet), path="/kb/staff.xlsx", section="Staff", type_="xlsx")
    citation = cite("Carla works on floor 5 as a Radiologist [1].", sources(hit)).claims[0].citations[0]
    assert citation.quote == "Carla | Radiologist | 5" and citation.line_start == citation.line_end == 5
    prose = hit_in(sheet, 0, len(sheet), type_="markdown")  # prose keeps its sentences (here: one)
    assert cite("Carla works on floor 5 as a Radiologist [1].", sources(prose)).claims[0].citations[0].quote == sheet
