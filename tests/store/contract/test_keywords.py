"""A document's keywords are indexed once, with its first chunk (as its summary is), on every backend.

Keywords are document-wide (enrich.keywords_of: the top TF-IDF words of the whole file): indexed with every chunk,
a question sharing one of them matched every chunk of the document alike.  The case from the trust dev set
(markdown-docs-027): "Zstandard 的格式是在哪个 RFC 里规定的？" over a knowledge base holding the Chinese man page of
date(1), whose keywords hold both 格式 and rfc: its 13 chunks led BM25, each matched through the keywords, above the
chunk of zstd's README that writes `RFC8878`.  Real text: the chunks and keywords exactly as the trust knowledge base
holds them (manpages-zh's date.1, all its chunks; zstd 1.5.4's README.md, three of its chunks).
"""

from __future__ import annotations

import pytest

from docqa.retrieve import parse_query
from docqa.store import SQLiteStores
from store.backends import chunks, record

DATE_KEYWORDS = ['gnu', 'coreutils', 'date', 'utc', '字符串', '格式', '日期', 'iso', '填充', 'rfc']
DATE = [
    (
        '名称\n\n'
        'date - 输出或设置系统日期与时间'
    ),
    (
        '概述\n\n'
        'date [选项]... [+格式字符串]\n'
        'date [-u|--utc|--universal] [MMDDhhmm[[CC]YY][.ss]]'
    ),
    (
        '描述\n\n'
        '按照给定的格式字符串显示日期和时间。使用了 -s 选项或 [MMDDhhmm[[CC]YY][.ss]] 参数时，设置日期和时间。\n\n'
        '必选参数对长短选项同时适用。\n\n'
        '-d, --date=字符串\n'
        '显示由字符串指定的时间，而不是当前时间\n\n'
        '--debug\n'
        '对日期的解析过程进行注解，对不规范的用法进行警告，并输出到标准错误\n\n'
        '-f, --file=日期文件\n'
        '类似 --date；对日期文件的每一行执行一次\n\n'
        '-I[格式], --iso-8601[=格式]\n'
        '以 ISO 8601 格式输出日期/时间。格式="date" 时只输出日期（默认行为），当其为 "hours"、"minutes"、"seconds" 或 "ns" 时则按照所指示'
        '的精确度显示日期和时间。示例：2006-08-14T02:34:56-06:00\n\n'
        '--resolution\n'
        '输出时间戳的可用精度 例如：0.000000001\n\n'
        '-R, --rfc-email\n'
        '以 RFC 5322 格式输出日期与时间。例：Mon, 14 Aug 2006 02:34:56 -0600\n\n'
        '--rfc-3339=格式\n'
        '以 RFC 3339 格式输出日期/时间。格式="date"、"seconds" 或 "ns"，按照所指示的精确度显示日期和时间。例如：2006-08-14 02:34:56-06:00\n\n'
        '-r, --reference=文件\n'
        '显示指定文件的最后修改时间\n\n'
        '-s, --set=字符串\n'
        '将时间设置为字符串所描述的时间\n\n'
        '-u, --utc, --universal\n'
        '按照协调世界时 (UTC) 显示或设置时间\n\n'
        '--help\n'
        '显示此帮助信息并退出\n\n'
        '--version\n'
        '显示版本信息并退出\n\n'
        '格式字符串控制输出格式。支持解释的序列有：\n\n'
        '%%\n'
        '一个 % 字符\n\n'
        '%a\n'
        '当前区域设置的星期几的缩写（例如：日）'
    ),
    (
        '格式字符串控制输出格式。支持解释的序列有：\n\n'
        '%%\n'
        '一个 % 字符\n\n'
        '%a\n'
        '当前区域设置的星期几的缩写（例如：日）\n\n'
        '%A\n'
        '当前区域设置的星期几的全称（例如：星期日）\n\n'
        '%b\n'
        '当前区域设置的月份缩写（例如：1月）\n\n'
        '%B\n'
        '当前区域设置的月份全称（例如：一月）\n\n'
        '%c\n'
        '当前区域设置的日期和时间（例如：2005年03月03日 星期四 23时05分25秒）\n\n'
        '%C\n'
        '世纪（指年份的最高两位）；类似 %Y，但省略最后两位数（例如：20）\n\n'
        '%d\n'
        '日（例如：01）\n\n'
        '%D\n'
        '日期；等于 %m/%d/%y\n\n'
        '%e\n'
        '日，以空格填充；等于 %_d\n\n'
        '%F\n'
        '完整的日期；等于 %+4Y-%m-%d\n\n'
        '%g\n'
        ' ISO 周数年的最后两位（参见 %G）\n\n'
        '%G\n'
        ' ISO 周数年（参见 %V）；一般只和 %V 一起使用\n\n'
        '%h\n'
        '等于 %b\n\n'
        '%H\n'
        '小时 (00..23)\n\n'
        '%I\n'
        '小时 (01..12)\n\n'
        '%j\n'
        '一年中的第几日 (001..366)\n\n'
        '%k\n'
        '小时，以空格填充 ( 0..23)；等于 %_H\n\n'
        '%l\n'
        '小时，以空格填充 ( 1..12)；等于 %_I\n\n'
        '%m\n'
        '月 (01..12)\n\n'
        '%M\n'
        '分钟 (00..59)\n\n'
        '%n\n'
        '换行\n\n'
        '%N\n'
        '纳秒 (000000000..999999999)\n\n'
        '%p\n'
        '当前区域设置中 AM 或 PM 的等价说法（"上午" 或 "下午"）；未知则为空\n\n'
        '%P\n'
        '类似 %p，但使用小写\n\n'
        '%q\n'
        '季度 (1..4)\n\n'
        '%r\n'
        '当前区域设置中 12 小时制钟表时间（例如：下午 11时11分04秒）'
    ),
    (
        '%q\n'
        '季度 (1..4)\n\n'
        '%r\n'
        '当前区域设置中 12 小时制钟表时间（例如：下午 11时11分04秒）\n\n'
        '%R\n'
        '24 小时制的小时和分钟；等于 %H:%M\n\n'
        '%s\n'
        '自 Epoch (1970-01-01 00:00 UTC) 以来的秒数\n\n'
        '%S\n'
        '秒 (00..60)\n\n'
        '%t\n'
        '制表符\n\n'
        '%T\n'
        ' 时间；等于 %H:%M:%S\n\n'
        '%u\n'
        '星期几 (1..7)；1 代表星期一\n\n'
        '%U\n'
        '一年中的第几周，以周日为每周第一天 (00..53)\n\n'
        '%V\n'
        'ISO 周数，以周一为每周第一天 (01..53)\n\n'
        '%w\n'
        '星期几 (0..6)；0 代表星期日\n\n'
        '%W\n'
        '一年中的第几周，以周一为每周第一天 (00..53)\n\n'
        '%x\n'
        '当前区域设置的日期表示法（例如：1999年12月31日）\n\n'
        '%X\n'
        '当前区域设置的时间表示法（例如：23时13分48秒）\n\n'
        '%y\n'
        '年的最后两位 (00..99)\n\n'
        '%Y\n'
        '年\n\n'
        '%z\n'
        '+hhmm 数字时区（例如：-0400）\n\n'
        '%:z\n'
        '+hh:mm 数字时区（例如：-04:00）\n\n'
        '%::z\n'
        '+hh:mm:ss 数字时区（例如：-04:00:00）\n\n'
        '%:::z\n'
        '数字时区，精度上有必要时加 ":"（例如：-04、+05:30）\n\n'
        '%Z\n'
        '字母时区缩写（例如：EDT）\n\n'
        '默认情况下，date 输出的数字字段以 0 填充。以下可选的标志可以跟在 "%" 后：\n\n'
        '-\n'
        '（连字符）不填充该字段\n\n'
        '_\n'
        '（下划线）以空格填充\n\n'
        '0\n'
        '（数字 0）以 0 填充'
    ),
    (
        '-\n'
        '（连字符）不填充该字段\n\n'
        '_\n'
        '（下划线）以空格填充\n\n'
        '0\n'
        '（数字 0）以 0 填充\n\n'
        '+\n'
        '以 0 填充，并且在超过四位数的未来年份之前添加 "+" 符号\n\n'
        '^\n'
        '如果可能，使用大写形式\n\n'
        '#\n'
        '如果可能，使用相反的大小写\n\n'
        '在任何标志之后可以有一个可选的字段宽度，它是一个十进制数字；然后是一个可选的修饰符，它可以是 E'
        '，表示如果可用，使用区域设置的另一种表示法，或者 O，表示如果可用，使用区域设置的另一套数字符号。'
    ),
    (
        '范例\n\n'
        '将 Epoch (1970-01-01 UTC) 以来的秒数转换为日期\n\n'
        "$ date --date='@2147483647'\n\n"
        '显示美国西海岸的当前时间（请使用 tzselect(1) 来查询 TZ 的具体数值）\n\n'
        "$ TZ='America/Los_Angeles' date\n\n"
        '显示美国西海岸下个周五上午 9 时的当地时间\n\n'
        '$ date --date=\'TZ="America/Los_Angeles" 09:00 next Fri\''
    ),
    (
        '日期字符串\n\n'
        '“--date=字符串”选项中的的字符串可以是人类易于理解阅读的日期字符串，例如 "Sun, 29 Feb 2004 16:21:42 -0800" 或 "2004-02-29 1'
        '6:21:42"，甚至可以是 "next Thursday"。一个日期字符串可能包含表示日'
        '历日期、一日中的具体时间、时区、星期、相对时间、相对日期和数字的信息。一个空字符串表示当日'
        '的起始。日期字符串的具体格式较为复杂，在手册页中难以简单描述清楚，但是您可以在 info 文档中找到完整内容。'
    ),
    (
        '作者\n\n'
        '由 David MacKenzie 编写。'
    ),
    (
        '报告错误\n\n'
        'GNU coreutils 的在线帮助： <https://www.gnu.org/software/coreutils/>\n'
        '请向 <https://translationproject.org/team/zh_CN.html> 报告翻译错误。'
    ),
    (
        '版权\n\n'
        'Copyright © 2022 Free Software Foundation, Inc.  License GPLv3+: GNU GPL version 3 or late'
        'r <https://gnu.org/licenses/gpl.html>.\n'
        '本软件是自由软件：您可以自由修改和重新发布它。在法律允许的范围内，不提供任何保证。'
    ),
    (
        '参见\n\n'
        '完整文档请见： <https://www.gnu.org/software/coreutils/date>\n'
        "或者在本地使用： info '(coreutils) date invocation'"
    ),
    (
        '跋\n\n'
        '本页面中文版由中文 man 手册页计划提供。\n'
        '中文 man 手册页计划：https://github.com/man-pages-zh/manpages-zh'
    ),
]
ZSTD_KEYWORDS = ['zstd', 'compression', 'github', 'vcpkg', 'decompression', 'zstandard', 'png', 'compress', 'build', 'dictionary']
ZSTD = [
    (
        '<p align="center"><img src="https://raw.githubusercontent.com/facebook/zstd/dev/doc/images'
        '/zstd_logo86.png" alt="Zstandard"></p>\n\n'
        '__Zstandard__, or `zstd` as short version, is a fast lossless compression algorithm,\n'
        'targeting real-time compression scenarios at zlib-level and better compression ratios.\n'
        "It's backed by a very fast entropy stage, provided by [Huff0 and FSE library](https://gith"
        'ub.com/Cyan4973/FiniteStateEntropy).\n\n'
        "Zstandard's format is stable and documented in [RFC8878](https://datatracker.ietf.org/doc/"
        'html/rfc8878). Multiple independent implementations are already available.\n'
        'This repository represents the reference implementation, provided as an open-source dual ['
        'BSD](LICENSE) and [GPLv2](COPYING) licensed **C** library,\n'
        'and a command line utility producing and decoding `.zst`, `.gz`, `.xz` and `.lz4` files.\n'
        'Should your project require another programming language,\n'
        'a list of known ports and bindings is provided on [Zstandard homepage](https://facebook.gi'
        'thub.io/zstd/#other-languages).\n\n'
        '**Development branch status:**\n\n'
        '[![Build Status][travisDevBadge]][travisLink]\n'
        '[![Build status][AppveyorDevBadge]][AppveyorLink]\n'
        '[![Build status][CircleDevBadge]][CircleLink]\n'
        '[![Build status][CirrusDevBadge]][CirrusLink]\n'
        '[![Fuzzing Status][OSSFuzzBadge]][OSSFuzzLink]'
    ),
    (
        '## Status\n\n'
        'Zstandard is currently deployed within Facebook and many other large cloud infrastructures.\n'
        'It is run continuously to compress large amounts of data in multiple formats and use cases.\n'
        'Zstandard is considered safe for production environments.'
    ),
    (
        '## License\n\n'
        'Zstandard is dual-licensed under [BSD](LICENSE) and [GPLv2](COPYING).'
    ),
]
QUESTION = "Zstandard 的格式是在哪个 RFC 里规定的？"


@pytest.fixture
def kb(stores):
    for doc_id, path, keywords, texts in [("date", "/man/zh_CN/man1/date.1.gz", DATE_KEYWORDS, DATE),
                                          ("zstd", "/zstd/README.md", ZSTD_KEYWORDS, ZSTD)]:
        doc = record(doc_id, path, content_hash=f"h-{doc_id}", title=doc_id)
        doc.keywords, doc.summary = keywords, ""
        stores.documents.replace_document(doc, *chunks(texts))
    return stores


def _text(stores, chunk_id: str) -> str:
    return stores.documents.get_hits([chunk_id])[0].text


@pytest.mark.parametrize("word, texts", [("rfc", DATE), ("格式", DATE), ("coreutils", DATE), ("github", ZSTD),
                                         ("dictionary", ZSTD)])
def test_a_keyword_matches_the_chunks_that_hold_it_and_the_first(kb, word, texts):
    hits = kb.fulltext.search_text(parse_query(word), 50)
    found = {texts.index(t) for t in (_text(kb, c) for c, _ in hits) if t in texts}
    holding = {i for i, t in enumerate(texts) if word in t.lower()}
    assert found == holding | {0}, (word, sorted(found), sorted(holding))


def test_the_hits_read_are_the_chunks_that_hold_the_words(kb):
    """The 6 hits the answerer reads: the README's `RFC8878` chunk among them, and no chunk of date(1) that holds
    none of the question's words (on every chunk, the keywords put its author, its copyright and its "see also" there)."""
    hits = [_text(kb, c) for c, _ in kb.fulltext.search_text(parse_query(QUESTION), 6)]
    assert any("RFC8878" in t for t in hits), hits
    assert all(any(w in t for w in ("RFC", "格式", "Zstandard")) or t in (DATE[0], ZSTD[0]) for t in hits), hits


def test_a_document_replaced_or_deleted_leaves_no_keyword_behind(kb):
    """SQLite's index is external content: its deletes read the keywords back from the view, first chunk only."""
    kb.documents.replace_document(record("date", "/man/zh_CN/man1/date.1.gz", content_hash="h2"), *chunks(DATE[:2]))
    assert kb.fulltext.term_counts(["rfc", "coreutils"])[0] == {"rfc": 1, "coreutils": 0}  # the README's RFC8878
    kb.documents.delete_documents(["zstd", "date"])
    assert kb.fulltext.search_text(parse_query("rfc"), 10) == [] and kb.fulltext.term_counts(["rfc"]) == ({"rfc": 0}, 0)


# schema 9's view: the keywords with every chunk
OLD_VIEW = """DROP VIEW chunks_fts_source;
CREATE VIEW chunks_fts_source AS
    SELECT c.rowid AS rowid, c.fts_title AS title, d.fts_keywords AS keywords,
           CASE WHEN c.ordinal = 0 THEN d.fts_summary ELSE '' END AS summary,
           coalesce(c.fts_content, c.text) AS content
    FROM chunks c JOIN documents d ON d.id = c.document_id;
INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild');
DELETE FROM _migrations WHERE number = 10;"""


def test_a_base_indexed_before_is_migrated_whole(tmp_path):
    """A SQLite base indexed with the keywords on every chunk: the migration rebuilds its full-text index from the
    new view, so that its searches match the keywords once and its deletes remove exactly what was indexed."""
    old = SQLiteStores(tmp_path / "kb.db")
    doc = record("date", "/man/zh_CN/man1/date.1.gz", content_hash="h-date", title="date")
    doc.keywords, doc.summary = DATE_KEYWORDS, ""
    old.documents.replace_document(doc, *chunks(DATE))
    old.db.conn.executescript(OLD_VIEW)
    assert old.fulltext.term_counts(["coreutils"])[0] == {"coreutils": len(DATE)}  # as schema 9 indexed it
    old.close()
    migrated = SQLiteStores(tmp_path / "kb.db")
    try:
        holding = sum("coreutils" in t for t in DATE)
        assert migrated.fulltext.term_counts(["coreutils"])[0] == {"coreutils": holding + 1}
        migrated.documents.delete_documents(["date"])
        assert migrated.check() == {"integrity": "ok", "fts_integrity": True, "chunks": 0, "fts_rows": 0, "fts_orphans": 0}
    finally:
        migrated.close()
