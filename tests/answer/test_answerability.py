"""The answer-or-abstain decision's own features (docqa.answer.answerability), table-driven."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from docqa.answer import answerability
from docqa.answer.extractive import evidence_features, evidence_probability


@pytest.mark.parametrize("question, kind", [
    ("How many days are backups kept?", "number"),
    ("数据库备份保留多少天？", "number"),
    ("Which file holds the daemon's settings?", "path"),
    ("哪个命令可以轮换密钥？", "command"),
    ("Which option turns off the cache?", "command"),
    ("What version of zlib added this?", "version"),
    ("When was the format first published?", "date"),
    ("When tee is run with -p, which output error mode does it use?", None),  # a condition, not a date question
    ("If the lock is held, which option makes apt wait?", "command"),
    ("当证书的日期过期时，哪个服务会拒绝连接？", None),  # 日期 in the condition asks for no date
    ("Why was Git 2.39.5 released?", None),
    # a name asked with words between the question word and its noun, in English and Chinese
    ("What header file must a program include to use the library?", "path"),
    ("Which config file does the daemon read at start?", "path"),
    ("登录总被拒绝，可能跟哪个系统文件有关？", "path"),
    ("加哪个内核参数可以让 systemd 回到旧的 cgroup 层级？", "command"),
    ("timedatectl 用哪个子命令可以打开网络时间同步？", "command"),
    ("What does the file say about backups?", None),  # a verb after "what": no file asked
    # a number a clause describes beside the name asked: the name is asked
    ("du 只想看每个子目录各占多少空间、不往下展开，应该用哪个选项？", "command"),
    ("Which option limits how many files are kept?", "command"),
    # the quantity asked by "which port" and "what is the largest"
    ("Which TCP port does the daemon listen on when it is set up as described?", "number"),
    ("What is the largest file the archive format can hold?", "number"),
    # "when" inside the question is no date asked; as the question word it is
    ("Which compression algorithm does journald use when Compress=yes?", None),
    ("Why does Memcheck stay silent when my code writes one past the end of an array?", None),
    ("When will Debian change the default to yes?", "date"),
    ("Which release removed the option, and when was it deprecated?", "version"),
])
def test_asked_type(question, kind):
    assert answerability.asked_type(question) == kind


def test_an_exact_token_found_in_the_passage_heading_counts_as_held():
    held = answerability.features("Why was Git 2.39.5 released?", "This release fixes two security bugs.",
                                  "Git v2.39.5 Release Notes 2.39.5.txt", 0.5, 0.6)
    lost = answerability.features("Why was Git 2.39.5 released?", "This release fixes two security bugs.",
                                  "Git v2.39.4 Release Notes 2.39.4.txt", 0.5, 0.6)
    assert held["exact_missing"] == 0.0 and lost["exact_missing"] == 1.0


def test_a_question_that_asks_for_a_number_misses_it_in_a_sentence_without_one():
    asked = "How many days are backups kept?"
    assert answerability.features(asked, "Backups are kept for 35 days.", "", 0.0, None)["type_missing"] == 0.0
    assert answerability.features(asked, "Backups are kept for a while.", "", 0.0, None)["type_missing"] == 1.0
    assert answerability.features("How often are snapshots made?", "Snapshots are made every six hours.", "", 0.0,
                                  None)["type_missing"] == 0.0  # a number in words is a number
    assert answerability.features("备份多久一次？", "每天凌晨进行一次全量备份。", "", 0.0, None)["type_missing"] == 0.0


def test_across_languages_the_lexical_features_that_cannot_hold_are_zero():
    terms = ["数据库", "备份", "保留", "多少"]
    weights = {t: 2.0 for t in terms}
    same = evidence_features("数据库备份保留多少天？", "每天进行一次全量备份，备份保留 35 天。", "每天进行一次全量备份，备份保留 35 天。",
                             terms, weights, 0.7, 0.6, "运维手册 备份策略")
    cross = evidence_features("数据库备份保留多少天？", "Full backups are kept for 35 days.", "Full backups are kept for 35 days.",
                              terms, weights, 0.7, 0.6, "Operations Handbook Backups")
    assert same["crossing"] == 0.0 and same["crossing_dense"] == 0.0 and same["heading"] > 0
    assert cross["crossing"] == 1.0 and cross["crossing_dense"] == 0.7
    assert cross["missing_rare"] == 0.0 and cross["heading"] == 0.0
    assert 0.0 < evidence_probability(cross) < 1.0


# -- negation in what a question asks, not in the scene it sets (extractive._asked_negated) ------------------
@pytest.mark.parametrize("question", [
    "Which ASN.1 types does libtasn1 not handle?",
    "libtasn1 不支持哪种 ASN.1 类型？",
    "What was not included in the treaty?",
    "Why did the army never return?",
    "哪个国家没有签署条约？",
])
def test_a_question_about_a_negated_fact_is_negated(question):
    from docqa.answer.extractive import _asked_negated

    assert _asked_negated(question)


@pytest.mark.parametrize("question", [
    "How long does apt-get (not apt) wait for the dpkg lock when it has no terminal?",  # an aside and a condition
    "能不能把霞鹜文楷的 TTF 文件单独拿出来放到网店里卖？",  # A-not-A: a yes-or-no question
    "journalctl -n 后面不跟数字的话，默认显示最近多少行？",  # a condition
    "不设置 SYSTEMD_BUS_TIMEOUT 时，D-Bus 方法调用默认超时是多少秒？",
    "sha256sum -c 校验时如果有文件对不上，命令的退出码是多少？",
    "我 ssh 登录服务器后开了一个 tmux 跑长任务，可一退出登录 tmux 里的进程就全没了。logind.conf 里是哪个设置造成的？",  # the scene
    "我已经用 shutdown 22:00 定好了晚上关机，现在临时不想关了，怎么撤销？",  # the clause that asks is not negated
])
def test_a_negation_in_the_scene_a_question_sets_is_not_the_asked_fact(question):
    from docqa.answer.extractive import _asked_negated, _contradicts

    assert not _asked_negated(question)
    assert not _contradicts(question, "The default is five minutes.")


# -- the weights of the question's terms, robust to the size of the knowledge base -----------------------------
def test_over_a_few_files_an_everyday_word_weighs_less_than_a_rare_one(tmp_path, monkeypatch):
    """Seven files: "take" is in no chunk, "rollback" in three, so the knowledge base's own IDF calls "take" the
    rarer; the language knows better, and over a small knowledge base the language's rarity decides (for a
    decision whose features blend them: `prior_chunks`; the shipped SQuAD model's are the IDF alone)."""
    from docqa.retrieve.weights import idf

    candidate = tmp_path / "decision.json"
    candidate.write_text('{"prior_chunks": 200}', encoding="utf-8")
    monkeypatch.setenv("DOCQA_DECISION_FILE", str(candidate))

    raw = {"rollback": idf(3, 22), "take": idf(0, 22)}
    assert raw["take"] > raw["rollback"]
    small = answerability.evidence_weights(["rollback", "take"], raw, 22)
    assert small["rollback"] > small["take"]
    counted = {"rollback": idf(3, 100_000), "take": idf(3000, 100_000)}
    large = answerability.evidence_weights(["rollback", "take"], counted, 100_000)
    assert large["rollback"] / large["take"] == pytest.approx(counted["rollback"] / counted["take"], rel=0.02)  # its own counts
    assert answerability.evidence_weights(["rollback"], raw, 0) is raw  # the size unknown: the weights as they are
    monkeypatch.delenv("DOCQA_DECISION_FILE")
    assert answerability.evidence_weights(["rollback", "take"], raw, 22) is raw  # the shipped decision: the IDF alone


@pytest.mark.parametrize("path", [answerability.DECISION, Path(__file__).parents[2] / "benchmarks" / "trust" / "decision_refit.json"])
def test_a_decision_is_data_with_its_threshold_and_bands(path, monkeypatch):
    monkeypatch.setenv("DOCQA_DECISION_FILE", str(path))
    fitted = answerability.decision()
    assert fitted["threshold"] <= fitted["bands"]["medium"] <= fitted["bands"]["high"] and fitted["probability_of"]
    for model in ("dense", "no_dense"):
        assert set(fitted[model]) - {"bias"} <= set(fitted["features"])
    features = dict.fromkeys(fitted["features"], 0.0)
    assert answerability.probability(features) == pytest.approx(1 / (1 + math.exp(-fitted["dense"]["bias"])))


def test_the_abstain_threshold_defaults_to_the_shipped_decisions():
    from docqa.settings import Settings

    assert Settings().answer.abstain_threshold == answerability.decision()["threshold"]


# -- what a near miss lacks: the kind of token asked for, the question's exact tokens (kind_features) ------------
def test_a_sentence_without_the_kind_of_token_asked_for_misses_it_by_both_detections():
    number = "How many days are backups kept?"
    held = answerability.kind_features(number, "Backups are kept for 35 days.", "", [], [])
    lost = answerability.kind_features(number, "Backups are kept offsite.", "", ["Backups are kept offsite."],
                                       ["Backups are kept offsite.", "Restores take 2 hours."])
    assert held["kind_missing"] == 0.0
    assert lost["kind_missing"] == 1.0 and lost["kind_missing_picks"] == 1.0 and lost["kind_none"] == 0.0
    package = "Which package provides the ssh client?"  # shape.asks_for: a package, not a number or version
    assert answerability.asked_kinds(package) == (None, "package")
    assert answerability.kind_features(package, "Install openssh-client to get ssh.", "", [], [])["kind_missing"] == 0.0
    assert answerability.kind_features(package, "The client reads its configuration at start.", "", [], [])["kind_missing"] == 1.0
    assert answerability.kind_features("Why do backups fail?", "Backups are kept offsite.", "", [], [])["kind_missing"] == 0.0


def test_no_candidate_holding_the_asked_kind_is_a_near_miss_mark():
    features = answerability.kind_features("哪个版本开始默认启用压缩？", "压缩可以在配置中启用。", "", ["压缩可以在配置中启用。"],
                                           ["压缩可以在配置中启用。", "备份保存在远端。"])
    assert features["kind_none"] == 1.0 and features["kind_missing_picks"] == 1.0


def test_an_exact_token_held_only_by_the_heading_is_missing_from_the_sentence_not_from_the_passage():
    question = "Why was Git 2.39.5 released?"
    sentence = "This release fixes two security bugs."
    under = answerability.kind_features(question, sentence, "git/RelNotes/2.39.5.txt\nGit v2.39.5 Release Notes", [], [])
    other = answerability.kind_features(question, sentence, "git/RelNotes/2.39.4.txt\nGit v2.39.4 Release Notes", [], [])
    said = answerability.kind_features(question, "Git 2.39.5 fixes two security bugs.", "", [], [])
    assert under["rare_sentence_missing"] == 1.0 and under["rare_missing"] == 0.0
    assert other["rare_sentence_missing"] == 1.0 and other["rare_missing"] == 1.0
    assert said["rare_sentence_missing"] == 0.0 and said["rare_missing"] == 0.0
    assert answerability.kind_features("Where is the cache kept?", sentence, "", [], [])["rare_missing"] == 0.0  # none asked


# -- a value the question itself writes answers nothing (holds_new; kind_features' new_missing) ---------------------
@pytest.mark.parametrize("question, sentence, new", [
    # the only numbers are the question's own: the CVE it names, the "1" of ASN.1 inside a name
    ("CVE-2023-25652 的 CVSS 评分是多少？",
     "This release merges the fixes that appear in v2.30.9 to address the security issues CVE-2023-25652 and CVE-2023-29007.", False),
    ("How many characters may an ASN.1 identifier have at most in libtasn1?",
     "ASN1_MAX_NAME_SIZE is the maximum number of characters allowed for an ASN.1 identifier.", False),
    ("What is the maximum file size bzip2 1.0.8 can compress?", "NAME bzip2, bunzip2 - a block-sorting file compressor, v1.0.8", False),
    # a value of the asked kind the question does not write
    ("How many characters may an ASN.1 identifier have at most in libtasn1?", "An ASN.1 identifier may have at most 64 characters.", True),
    ("hostnamectl 设置的 static 主机名最长能有多少个字符？", "static 主机名最长 64 个字符。", True),
    ("How long does apt-get wait for the dpkg lock when it has no terminal?", "It waits for 120 seconds if not.", True),
    ("Which version of OpenSSH 9.2 added EnableEscapeCommandline?", "OpenSSH 9.3 fixed it.", True),
    ("Which version of OpenSSH 9.2 added EnableEscapeCommandline?", "OpenSSH 9.2 added the option.", False),
    # the question's token inside a longer one is no copy of it
    ("Which version after 2.35 repaired rebase in a secondary worktree?", "Git v2.35.1 Release Notes", True),
    ("What file does libtasn1 install its types in?", "The types are listed in libtasn1.list.", True),
])
def test_a_value_the_question_writes_itself_is_no_answer(question, sentence, new):
    kinds = answerability.asked_kinds(question)
    assert kinds != (None, None)
    assert answerability.holds_new(sentence, kinds, question) is new
    features = answerability.kind_features(question, sentence, "", [sentence], [])
    assert features["new_missing"] == features["new_missing_picks"] == float(not new)
    # the older feature counts any token of the kind, the question's own too
    assert features["kind_missing"] == 0.0


def test_a_question_that_asks_for_no_kind_misses_no_value():
    features = answerability.kind_features("Why does Memcheck stay silent?", "Memcheck does no bounds checking on stack arrays.", "", [], [])
    assert features["new_missing"] == features["new_missing_picks"] == 0.0


# -- a name of the question that the heading holds (missing_name_heading) -------------------------------------------
SILENT = "Unfortunately, it doesn't do bounds checking on global or stack arrays."


@pytest.mark.parametrize("question, sentence, context, in_window, anywhere", [
    # documentation names its subject in the heading or file, and its sentences say "it"
    ("Why does Memcheck stay silent when my code writes one past the end of a local int array?", SILENT,
     "Memcheck: a memory error detector mc-manual.html", False, True),
    ("Why does Memcheck stay silent when my code writes one past the end of a local int array?", SILENT,
     "Cachegrind: a cache profiler cg-manual.html", False, False),
    ("Why does Memcheck stay silent when my code writes one past the end of a local int array?",
     "Memcheck doesn't do bounds checking on global or stack arrays.", "", True, True),
    ("How is SYSTEMD_BUS_TIMEOUT read without a unit?", "If no time unit is specified, assumes seconds.",
     "ENVIRONMENT.md Environment variables SYSTEMD_BUS_TIMEOUT", False, True),
])
def test_a_name_the_passages_heading_holds_is_not_missing_from_it(question, sentence, context, in_window, anywhere):
    terms = ["memcheck", "silent", "bounds"]
    features = evidence_features(question, sentence, sentence, terms, {t: 1.0 for t in terms}, 0.5, 0.6, context)
    assert features["missing_name"] == float(not in_window)
    assert features["missing_name_heading"] == float(not anywhere)
