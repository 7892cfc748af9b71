"""A prose line that quotes a shell pipeline or a choice in braces is prose, not a table row or a breadcrumb: its
sentences may be quoted (the Debian Edu manual's CSV import paragraph was never a candidate: its
"(… getent passwd | grep tjener/home | cut …)" made the whole line a table row).  Rendered table rows and navigation
bars stay structure."""

from __future__ import annotations

import pytest

from docqa.answer.statement import quotable_spans, structure_line

GOSA = ("可以通过使用 CSV 文件用 GOsa² 大量创建用户，可以使用任何好的电子表格软件（例如， localc ）。至少，为随后的字段输入提供：uid，姓，"
        "名字和密码。确定在 uid 字段中没有重复的记录。请注意应该检查重复的 LDAP 中已经存在的 uid 记录（由在命令行中执行 getent passwd | "
        "grep tjener/home | cut -d\":\" -f1 而得到）。")
VGDB = ("- v.set {gdb_output | log_output | mixed_output} allows redirection of the Valgrind output (e.g. the errors "
        "detected by the tool). The default setting is mixed_output.")

LINES = [  # (line of a real chunk, its structure: None for prose)
    (GOSA, None),  # debian-edu-bookworm-manual.html (zh_CN), 7.3.4
    (VGDB, None),  # valgrind manual-core-adv.html, vgdb monitor commands
    ("  - (cache size / line size / associativity) = 2^N bytes", None),  # valgrind cg-manual.html
    ('"transient" | 单元文件是被运行时API动态临时生成的。该临时单元可能并未被启用。 | 0', "table"),  # systemctl(1), a rendered table row
    ("starting | 启动的晚期阶段。 也就是任务队列首次达到空闲之前的阶段， 或者已经启动到了某个救援 target 中。 | > 0", "table"),
    ("[ < 时值 (节奏) ] | [ 上 : 简单记谱法 ] | [ 拍子记号 > ]", "table"),  # LilyPond's learning manual, its navigation bar
    ("- `htonl()`/`ntohl()` and `htons()`/`ntohs()` are weird. Please use `htobe32()`", None),  # systemd CODING_STYLE.md
]


@pytest.mark.parametrize(("line", "kind"), LINES)
def test_bars_inside_brackets_are_text(line, kind):
    assert structure_line(line) == kind


def test_the_sentence_beside_a_quoted_pipeline_is_quotable():
    text = f"7.3.4. 提高的用户管理\n\n{GOSA}\n\n上述 CSV 文件格式指标（GOsa² 对之相当不容）：\n"
    quoted = [text[s:e] for s, e in quotable_spans(text, "7. 开始 > 7.3. 使用 GOsa² 管理用户 > 7.3.4. 提高的用户管理")]
    assert "至少，为随后的字段输入提供：uid，姓，名字和密码。" in quoted
