"""The extractive answerer quotes the option the question names in the case it is written: `tar -W` is --verify,
`tar -w` --interactive (text/segment.py OptionTerm; text/exact.py).  The options of tar(1) from manpages-zh
(zh_TW), as the man reader renders them."""

from __future__ import annotations

import pytest

from docqa.answer import neutral
from docqa.answer.extractive import extract

from .hits import hit_in, sources

DOC = """--test-label
讀取卷標； 如果一個詞被指定了， 則測試它是否匹配這個卷標

--to-command 命令
提取期間， 將提取的檔案匯入到指定命令的標準輸入

--totals
顯示用--create引數寫入的總位元組數

--transform sed表示式
用sed的轉換表示式轉換檔案或成員的名字

-U, --unlink-first
提取檔案之前，刪除已存在的與之同名的檔案

--unquote
不標識輸入檔案或成員的名字； 這是預設選項

--utc
以UTC時間顯示檔案的修改日期

-v, --verbose
列出檔案的處理情況

-V, --label 名稱
用指定卷名建立存檔

--version
顯示tar程式的版本資訊

--volno-file 檔案
保持追蹤指定檔案中多卷存檔的卷編號； 和--multi-volume一起使用

-w, --interactive, --confirmation
每一個動作都要求確認

-W, --verify
寫完存檔後對其進行校驗

--wildcards
對--exclude用萬用字元
"""

@pytest.mark.parametrize(("question", "label"), [
    ("tar 的 -W 選項是做什麼用的？", "-W, --verify"),
    ("tar 的 -w 選項是做什麼用的？", "-w, --interactive"),
    ("tar 的 -V 選項是做什麼用的？", "-V, --label"),
    ("tar 的 -v 選項是做什麼用的？", "-v, --verbose"),
    ("What does tar -W do?", "-W, --verify"),
])
def test_the_option_asked_is_quoted_not_its_other_case(question, label, hash_embedder):
    pool = sources(hit_in(DOC, 0, len(DOC), path="/kb/man/zh_TW/man1/tar.1", section="TAR"))
    result = extract(question, pool, {}, lambda texts, kind: hash_embedder.embed_batch(texts, kind), threshold=0.0)
    assert result.chosen[0].text.startswith(label)
    sibling = next(s for s in result.candidates if s.text.startswith(label.swapcase()[:2] + ","))
    assert result.chosen[0].features["exact"] == 1.0 and sibling.features["exact"] == 0.0


@pytest.mark.parametrize(("question", "held", "other"), [
    ("What does the tar -W option do?", "-W, --verify\n寫完存檔後對其進行校驗", "-w, --interactive, --confirmation\n每一個動作都要求確認"),
    ("What does ls -L do?", "-L, --dereference\n显示符号链接的文件信息时，显示符号链接指向的文件的信息，而非符号链接本身的信息",
     "-l\n使用长列表格式"),
])
def test_across_languages_the_option_is_missing_from_its_other_case(question, held, other):
    """An English question over Chinese man pages: the option is one of its language-neutral tokens, in its case."""
    tokens = neutral.tokens(question, [held, other])
    assert neutral.missing(tokens, held) == 0.0
    assert neutral.missing(tokens, other) == 1.0
