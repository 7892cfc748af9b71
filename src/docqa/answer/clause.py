"""The clause of a question that asks (issue 28): a leading condition says when, not what is asked.

"When tee is run with -p, which output error mode is used?" asks for a mode, not a date; "如果我不指定后缀，备份
文件名后面会加什么符号？" and "apt 在没有终端时，遇到 dpkg 锁会等多久？" ask what their main clause asks.  `asking(question)`
drops such leading conditions ("When ...,", "If ...,", "Once ...,", 当……时，, ……时候，, 如果……，) when the rest still
asks something (which, what, how ..., 哪, 什么, 怎么, 多少 ...); the detections of what a question asks for
(docqa.answer.answerability.asked_type, docqa.answer.shape.asks_for, docqa.answer.kind.asked) read the rest.
"When will Debian change the default?" has no comma after its clause: it is a date question and stays whole.
"""

from __future__ import annotations

import re

from docqa.text.language import HAN

MAX_CONDITIONS = 3  # "用 tar 备份时，如果我不指定后缀，……": conditions one after another

# "When ... ," / "If ... ," before which, what, how ...; not "When was ..., and which ...?", itself a question.
_EN = re.compile(r"^\W*(?:(?:when|whenever)(?!\s+(?:is|was|were|are|did|does|do|will|would|can|could|should|has|have|had)\b)"
                 r"|if|once)\b[^?;:]{1,160}?,\s*(?=(?:which|what|how|where|who|whose|why|is|are|does|do|can|should|will|would)\b)",
                 re.IGNORECASE)
# 当……时，/ ……的时候，/ 如果……，(a clause with no question words of its own: 什么时候 asks for a date)
_ZH = re.compile(r"^(?![^，,。？?]{0,60}?(?:什么时候|何时|哪|什么|怎么|如何|多少|多久|几))(?:(?:当|在)?[^，,。？?]{1,60}?(?:时候|时)"
                 r"|(?:如果|假如|要是|若)[^，,。？?]{1,60})[，,]\s*")
# Up to two words between "which" / "what" and the noun it asks about ("which config file", "what header file",
# "which of the options"), not a verb's ("What does the file say?" asks for no file).
WHICH = (r"\b(?:which|what)\s+(?:(?!(?:does|do|did|is|are|was|were|can|could|should|will|would|has|have|had|must|may|might"
         r"|happens?|means?)\b)[\w.-]+\s+){0,2}")
# ... and up to four Chinese characters between 哪个 and a noun that is no verb: 哪个内核参数, 哪个系统文件.  命令 (to
# order), 设置 (to set up) and 包 (包括) are verbs too: "哪个皇帝命令修建 ……" asks for no command, so those take none
# (WHICH_COMMAND_ZH: 哪个命令, 哪条子命令, 子命令).
WHICH_ZH = rf"哪(?:个|一个|条|一条|些)[{HAN}]{{0,4}}?"
WHICH_COMMAND_ZH = r"哪(?:个|一个|条|一条|些)子?命令|子命令"
# "Is there an option ...?", 有这种选项吗: asks for the option (its name), as "which option" does.
IS_THERE = r"\b(?:is|are)\s+there\s+(?:an?|any)\s+(?:[\w-]+\s+)?"
IS_THERE_ZH = r"有(?:这种|这样的|这个|没有)?"
_ZH_ASKS = re.compile(r"哪|什么|怎么|怎样|如何|多少|多久|多长|几|吗|是否")
_ZH_CLAUSE = re.compile(r"[，,；;]")
_A_NOT_A = re.compile(r"(\w)[不没]\1|可不可以|呢")
HAN_RE = re.compile(f"[{HAN}]")
# clause.asked reads a Chinese question's leading clauses that ask nothing as its scene ("我们学校机房都是十年前的老电脑，……")
SCENE_CLAUSES = True


def asking(question: str) -> str:
    """`question` without its leading conditions, when what remains still asks; else `question` whole."""
    rest = question
    for _ in range(MAX_CONDITIONS):
        cut = _cut(rest)
        if cut == rest:
            break
        rest = cut
    return rest


# A sentence that ends with a question mark; a full stop before a space ends the statement before it, one inside "9.2"
# does not (docqa.answer.extractive reads the same sentences for the user's own examples).
ASKED_SENTENCE = re.compile(r"(?:[^?？。！!.]|\.(?!\s))*[?？]")


def asked(question: str) -> str:
    """The sentences of `question` that ask, when statements set the scene around them ("I locked a user's account
    with `passwd -l`, but the user can still get in with an SSH key. What else must I do?" asks "What else must I
    do?"; "我要拔 U 盘，……。手册说什么情况下卸不掉？" asks its last sentence), each Chinese one from its first clause that
    asks (SCENE_CLAUSES: "我电脑上装的是霞鹜文楷 0.x 的老版本，现在要换成 1.0，可以直接覆盖安装吗？" asks its last clause);
    "" when the question is all asking (no scene, or no question mark): what a user tells of their setup names things
    the answer need not repeat."""
    sentences = [m.group().strip() for m in ASKED_SENTENCE.finditer(question)]
    asking = " ".join(x for x in (_asking_clauses(x) if SCENE_CLAUSES else x for x in sentences) if x)
    scene = ASKED_SENTENCE.sub(" ", question).strip(" \t\n.。!！")
    return asking if asking and (scene or asking != " ".join(sentences)) else ""


def _asking_clauses(sentence: str) -> str:
    """A Chinese sentence from its first clause that asks (`_ZH_ASKS`, an A-not-A form): "我们学校机房都是十年前的老电脑，
    装 Debian Edu 时选哪个桌面最不吃资源？" asks from its second clause; an English sentence whole."""
    if not HAN_RE.search(sentence):
        return sentence
    clauses = _ZH_CLAUSE.split(sentence)
    for i, c in enumerate(clauses):
        if _ZH_ASKS.search(c) or _A_NOT_A.search(c):
            return "，".join(clauses[i:])
    return sentence


def _cut(question: str) -> str:
    m = _EN.match(question)
    if m:
        return question[m.end():]
    m = _ZH.match(question)
    if m and _ZH_ASKS.search(question, m.end()):
        return question[m.end():]
    return question

# "What is the largest file bzip2 can compress?", "the highest compression level", "what's the maximum size": a superlative
# over a thing that is measured asks for a quantity (docqa.answer.answerability, docqa.answer.quantity); "What is the
# largest city?" asks for a name.
EXTREME = (r"\bwhat(?:\s+is|'s)\s+the\s+(?:largest|biggest|smallest|maximum|minimum|max|min|highest|lowest|longest|shortest)\s+"
           r"(?:[\w.-]+\s+){0,2}?(?:files?|inputs?|commands?|lines?|messages?|levels?|blocks?|buffers?|names?"
           r"|sizes?|length|number|values?|limits?|count|ports?)\b")
