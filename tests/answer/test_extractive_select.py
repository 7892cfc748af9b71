"""Which sentences the extractive answerer quotes: the learned sentence ranking (SELECT_MODEL), the decision kept on
the base-scored sentence (or, `judge_picked`, on the ranking's pick), and an option's label quoted with its description."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from docqa.answer import answerability, extractive
from docqa.answer.extractive import _labelled, extract
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

from .hits import hit_in, sources

DOC = """# Signing keys

The release manager rotates the signing keys of the service after every release.
After a rotation the old signing key of the service stays valid for a short while.
After a rotation the old signing key of the service stays valid for two weeks.
Clients fetch the new key from the key server when they see a signature they cannot check.
"""


def embed(hash_embedder):
    return lambda texts, kind: hash_embedder.embed_batch(texts, kind)


def test_a_sentence_holding_the_kind_of_token_asked_for_ranks_first(hash_embedder, monkeypatch):
    """Two sentences alike but for the duration: the base score ranks the vague one first (its hash vector is a
    hair closer), the learned ranking the one that holds what "how long" asks for."""
    question = "How long does the old signing key stay valid after a rotation?"
    pool = sources(hit_in(DOC, 0, len(DOC)))
    result = extract(question, pool, {}, embed(hash_embedder), threshold=0.0)
    assert result.chosen[0].text.endswith("two weeks.")
    assert result.chosen[0].features["type"] == 1.0
    assert all(0.0 < s.score < 1.0 for s in result.candidates)  # a probability of being a right sentence
    monkeypatch.setattr(extractive, "SELECT_MODEL", {})
    assert extract(question, pool, {}, embed(hash_embedder), threshold=0.0).chosen[0].text.endswith("short while.")


def test_the_decision_judges_the_base_scored_sentence_and_weighs_the_rankings_confidence(hash_embedder, monkeypatch):
    """The evidence features are computed on the sentence the base score (terms, embedding, retrieval) ranks first,
    with or without the learned ranking; the ranking adds its probability of its best pick (`select_best`), which
    the shipped decision weighs (decision.json): a confident pick raises the probability that answering is right."""
    pool = sources(hit_in(DOC, 0, len(DOC)))
    questions = ["How long does the old signing key stay valid after a rotation?",
                 "Who rotates the signing keys?", "Where do clients fetch the new key from?"]
    learned = [extract(q, pool, {}, embed(hash_embedder), threshold=0.0) for q in questions]
    monkeypatch.setattr(extractive, "SELECT_MODEL", {})
    base = [extract(q, pool, {}, embed(hash_embedder), threshold=0.0) for q in questions]
    ranking = ("select_best", "select_name")  # the ranking's confidence, and the same on a question asking for a name
    judged = [k for k in answerability.decision()["features"] if k not in ranking]
    assert [[r.features[k] for k in judged] for r in learned] == [[r.features[k] for k in judged] for r in base]
    weights = answerability.decision()["dense"]
    for with_rank, without in zip(learned, base):
        confidence = {k: with_rank.features.get(k, 0.0) for k in ranking}
        raised = extractive.evidence_probability({**without.features, **confidence})
        assert with_rank.evidence == pytest.approx(raised)
        assert (with_rank.evidence > without.evidence) == (sum(weights.get(k, 0.0) * v for k, v in confidence.items()) > 0)
    for result in learned:  # what the selection adds is recorded for a refit of the decision, and ignored by it
        assert 0.0 < result.features["select_best"] < 1.0 and result.features["select_same"] in (0.0, 1.0)
    assert all("select_best" not in r.features for r in base)


def test_a_decision_fitted_on_the_quoted_sentence_judges_the_rankings_pick(hash_embedder, tmp_path, monkeypatch):
    """`judge_picked` in the decision: the evidence is computed on what is quoted (the ranking's best pick), where the
    shipped decision judges the base score's best ("short while", not the "two weeks" that is quoted)."""
    question = "How long does the old signing key stay valid after a rotation?"
    pool = sources(hit_in(DOC, 0, len(DOC)))
    assert extract(question, pool, {}, embed(hash_embedder), threshold=0.0).features["select_same"] == 0.0
    candidate = tmp_path / "decision.json"
    candidate.write_text(json.dumps({**answerability.decision(), "judge_picked": True}), encoding="utf-8")
    monkeypatch.setenv("DOCQA_DECISION_FILE", str(candidate))
    result = extract(question, pool, {}, embed(hash_embedder), threshold=0.0)
    assert result.chosen[0].text.endswith("two weeks.")
    assert result.features["select_same"] == 1.0
    monkeypatch.setattr(extractive, "SELECT_MODEL", {})  # no learned ranking: the base score's best, as shipped
    assert "select_same" not in extract(question, pool, {}, embed(hash_embedder), threshold=0.0).features


def test_the_decision_records_whether_its_sentence_and_the_pick_hold_the_kind_asked_for(hash_embedder):
    """"How long" asks for a number: the base score's best ("a short while") holds none, the ranking's pick ("two
    weeks") does; both are recorded for the decision (answerability.kind_features)."""
    question = "How long does the old signing key stay valid after a rotation?"
    features = extract(question, sources(hit_in(DOC, 0, len(DOC))), {}, embed(hash_embedder), threshold=0.0).features
    assert features["kind_missing"] == 1.0 and features["pick_kind_missing"] == 0.0
    assert features["kind_missing_picks"] == 0.0 and features["kind_none"] == 0.0
    assert features["select_margin"] > 0.0


def test_without_an_embedder_the_base_score_ranks():
    result = extract("How long does the old signing key stay valid?", sources(hit_in(DOC, 0, len(DOC))), {}, None,
                     threshold=0.0)
    assert all(s.score == s.base for s in result.candidates)
    assert "select_best" not in result.features


OPTIONS = """OPTIONS

--poll=<number> [default: 5000]

The scheduler checks for commands after this many basic blocks. A lower value reacts faster.

-c

Cancels a pending shutdown.

See also the FAQ.
"""


def test_an_option_label_joins_the_first_sentence_of_its_description():
    spans = [(OPTIONS.index("The scheduler"), OPTIONS.index(" A lower")), (OPTIONS.index("A lower"), OPTIONS.index("\n\n-c")),
             (OPTIONS.index("Cancels"), OPTIONS.index("\n\nSee")), (OPTIONS.index("See also"), len(OPTIONS) - 1)]
    quoted = [OPTIONS[s:e] for s, e in _labelled(OPTIONS, spans)]
    assert quoted[0].startswith("--poll=<number> [default: 5000]\n\nThe scheduler")
    assert quoted[1] == "A lower value reacts faster."  # only the first sentence of a description
    assert quoted[2] == "-c\n\nCancels a pending shutdown."
    assert quoted[3] == "See also the FAQ."  # after a sentence, not a label


def test_a_label_that_is_a_sentence_is_not_joined():
    text = "Use -v for more output.\n\nIt prints each step."
    spans = [(0, text.index("\n")), (text.index("It"), len(text))]
    assert _labelled(text, spans) == spans


def test_a_default_is_quoted_with_its_option(tmp_path, hash_embedder):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "manual.txt").write_text(OPTIONS, encoding="utf-8")
    settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"}, answer={"abstain_threshold": 0.0})
    with KnowledgeBase(settings, embedder=hash_embedder) as kb:  # what is quoted, not whether: threshold 0
        kb.add([tmp_path / "docs"])
        answer = kb.ask("What is the default value of --poll?")
    assert answer.answerable, answer.answer
    assert "[default: 5000]" in answer.answer
    assert any("--poll=<number>" in c.quote for c in answer.citations)


@pytest.mark.parametrize("question", ["What is the default value of --poll?", "--poll 的默认值是多少？"])
def test_a_default_is_quoted_with_its_option_real_embedder(tmp_path, local_embedder, question):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "manual.txt").write_text(OPTIONS, encoding="utf-8")
    settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"}, answer={"abstain_threshold": 0.0})
    with KnowledgeBase(settings, embedder=local_embedder) as kb:
        kb.add([tmp_path / "docs"])
        answer = kb.ask(question)
    assert "5000" in answer.answer, answer.answer


NOTES_ITEM = """ * CVE-2022-39253:
   Local clones may end up including sensitive data from the source repository.

 * CVE-2022-39260:
   An overly-long command string given to `git shell` can result in
   overflow in `split_cmdline()`, leading to arbitrary heap writes.
   `git shell` is taught to refuse interactive commands that are
   longer than 4MiB in size.

 * The documentation of the config variables has been updated here.
"""


def test_a_sentence_under_the_item_that_names_the_asked_token_holds_it_in_its_paragraph(hash_embedder):
    """Release notes name a CVE once, at the head of its item; the sentence that answers comes after it.  `exact`
    counts the question's exact tokens in the sentence, `exact_paragraph` in its paragraph up to it."""
    pool = sources(hit_in(NOTES_ITEM, 0, len(NOTES_ITEM), path="/docs/git/RelNotes/2.30.6.txt", section=""))
    question = "After the fix for CVE-2022-39260, what is the largest interactive command git shell will still accept?"
    result = extract(question, pool, {}, embed(hash_embedder), threshold=0.0)
    by_text = {" ".join(s.text.split()): s.features for s in result.candidates}
    answer = by_text["`git shell` is taught to refuse interactive commands that are longer than 4MiB in size."]
    other = by_text["* The documentation of the config variables has been updated here."]
    assert (answer["exact"], answer["exact_paragraph"]) == (0.0, 1.0)
    assert (other["exact"], other["exact_paragraph"]) == (0.0, 0.0)


def test_the_quoted_picks_own_evidence_and_the_value_it_holds_are_recorded(hash_embedder, monkeypatch):
    """Beside the base score's sentence ("a short while": no value for "how long"), the decision's rows record the
    evidence of what is quoted first, the ranking's pick ("two weeks"), for refits of the decision."""
    question = "How long does the old signing key stay valid after a rotation?"
    pool = sources(hit_in(DOC, 0, len(DOC)))
    result = extract(question, pool, {}, embed(hash_embedder), threshold=0.0)
    features, pick = result.features, result.chosen[0]
    assert pick.text.endswith("two weeks.") and features["select_same"] == 0.0
    assert features["new_missing"] == 1.0 and features["new_missing_picks"] == 0.0
    assert features["pick_dense"] == pick.dense != features["dense"]
    assert 0.0 < features["pick_coverage"] <= 1.0 and features["pick_missing_name"] in (0.0, 1.0)
    monkeypatch.setattr(extractive, "SELECT_MODEL", {})  # no learned ranking: no pick of its own to record
    assert "pick_coverage" not in extract(question, pool, {}, embed(hash_embedder), threshold=0.0).features


# journald.conf(5) in Chinese (manpages-zh): what the limits are, then their defaults.
JOURNALD = """SystemMaxUse=, SystemKeepFree=, SystemMaxFileSize=, SystemMaxFiles=, RuntimeMaxUse=, RuntimeKeepFree=

SystemMaxUse= 与 RuntimeMaxUse= 限制全部日志文件加在一起最多可以占用多少空间。 SystemKeepFree= 与 RuntimeKeepFree= 表示除日志文件之外，\
至少保留多少空间给其他用途。 systemd-journald 会同时考虑这两个因素， 并且尽量限制日志文件的总大小，以同时满足这两个限制。

SystemMaxUse= 与 RuntimeMaxUse= 的默认值是10%空间与4G空间两者中的较小者； SystemKeepFree= 与 RuntimeKeepFree= 的默认值是15%空间与4G空间两者中的较大者；
"""


@pytest.mark.parametrize(("sentence", "holds"), [
    ("SystemMaxUse= 与 RuntimeMaxUse= 的默认值是10%空间与4G空间两者中的较小者；", True),  # journald.conf(5)
    ("LTSP 服务器：40 GiB。", True),  # the Debian Edu manual
    ("`git shell` is taught to refuse interactive commands that are longer than 4MiB in size.", True),  # RelNotes/2.30.6
    ('如果未指定时间字符串， 那么 "+1" 是默认值。', True),  # shutdown(8)
    ("E. g. if you first install \"postgresql-11\" on a clean system, the default 11/main cluster will run on port 5432.", True),
    ("默认值是一个月， 设为零表示禁用基于时间的日志滚动策略。", True),  # a number in words, with its unit
    ("It involves a slow-down of about 5x, less than that of most tools.", True),  # the Valgrind FAQ
    ("SystemMaxUse= 与 RuntimeMaxUse= 限制全部日志文件加在一起最多可以占用多少空间。", False),  # 一起 is no number
    ("在主服务器安装时创建了第一个使用者帐户。", False),  # nor is 第一个
    ("* CVE-2022-39260: An overly-long command string given to `git shell` can result in overflow.", False),
    ("2. Get a shell for the database superuser 'postgres'.", False),  # a list item's number
    ("该选项使 scp 和 ssh(1) 打印出关于运行情况的调试信息。", False),  # a manual's section
    ("Git v2.30.6 Release Notes", False),  # a version
])
def test_a_quantity_is_a_number_standing_alone_with_its_unit(sentence, holds):
    assert extractive._holds_amount(sentence) is holds


@pytest.mark.slow
def test_a_how_much_question_quotes_the_sentence_with_the_quantity(local_embedder):
    """journald.conf(5): the sentence that says what the limits mean shares most of the question's words ("最多",
    "占用", "多少空间") and leads; the one with the defaults holds the quantity asked for ("10%空间与4G空间") and comes
    next, before a sentence without one that shares more words (main quoted it third)."""
    pool = sources(hit_in(JOURNALD, 0, len(JOURNALD), path="/usr/share/man/zh_CN/man5/journald.conf.5.gz", section="选项"))
    question = "journald 默认最多让日志占用多少磁盘空间？"
    result = extract(question, pool, {}, lambda texts, kind: local_embedder.embed_batch(texts, kind), threshold=0.0)
    assert any("10%空间与4G空间" in s.text for s in result.chosen[:2]), [s.text for s in result.chosen]
    assert [s.features["amount"] for s in result.candidates] == [float("%" in s.text) for s in result.candidates]


# Two sibling man pages (manpages-zh), one option defined in near the same words in each.
DF = """-h, --human-readable
以 1024 为幂显示大小（例如，1023M）

-k
类似于 --block-size=1K
"""
DU = """-h, --human-readable
以人类可读的格式输出大小（例如，1K 234M 2G）

-k
等效于 --block-size=1K
"""


def man_page(text: str, name: str, chunk_id: str):
    hit = hit_in(text, 0, len(text), path=f"/usr/share/man/zh_CN/man1/{name}.1.gz", section="选项", chunk_id=chunk_id)
    return replace(hit, title=f"{name.upper()}(1)")


@pytest.mark.parametrize(("question", "named"), [
    ("du 的 -k 选项相当于哪个 --block-size 设置？", "du"),
    ("df 的 -k 选项相当于哪个 --block-size 设置？", "df"),
])
def test_the_sibling_file_the_question_names_ranks_first(hash_embedder, monkeypatch, question, named):
    """The question names which of two sibling man pages it asks about; the page's title and file name hold that
    name (`named`), its text need not repeat it.  Without the feature the first hit's sentence wins."""
    pool = sources(man_page(DF, "df", "c1"), man_page(DU, "du", "c2"))
    result = extract(question, pool, {}, embed(hash_embedder), threshold=0.0)
    best = result.chosen[0]
    assert "--block-size=1K" in best.text and pool.get(best.n).hit.title == f"{named.upper()}(1)"
    other = "DF(1)" if named == "du" else "DU(1)"
    assert {pool.get(s.n).hit.title: s.features["named"] for s in result.candidates} == {f"{named.upper()}(1)": 1.0, other: 0.0}
    if named == "du":  # the second hit: without `named`, the first hit's sentence (df's) would lead
        monkeypatch.setattr(extractive, "SELECT_MODEL", {k: v for k, v in extractive.SELECT_MODEL.items() if k != "named"})
        unnamed = extract(question, pool, {}, embed(hash_embedder), threshold=0.0).chosen[0]
        assert "--block-size=1K" in unnamed.text and pool.get(unnamed.n).hit.title == "DF(1)"


def test_named_counts_only_what_tells_the_hits_names_apart():
    """A term every hit's name holds ("systemd") tells nothing; a section heading is no document's name."""
    a = replace(hit_in(DU, 0, len(DU), path="/usr/share/doc/systemd/README.Debian", section="logind", chunk_id="c1"),
                title="README.Debian")
    b = replace(hit_in(DF, 0, len(DF), path="/usr/share/doc/systemd-boot/README.Debian", section="", chunk_id="c2"),
                title="README.Debian")
    named = extractive._named(["systemd", "boot", "logind"], {"systemd": 2.0, "boot": 3.0, "logind": 5.0}, sources(a, b))
    assert named == {1: 0.0, 2: 1.0}


def test_the_decision_reads_the_confidence_of_the_ranking_it_was_fitted_with(hash_embedder, monkeypatch):
    """A refit of the ranking changes what is quoted, not whether to answer: while DECISION_SELECT holds the weights the
    decision was fitted with, `select_best` is the best candidate's probability under them, whatever SELECT_MODEL is;
    set to None (after a refit of the decision), it is the ranking's own best pick's."""
    pool = sources(hit_in(JOURNALD, 0, len(JOURNALD), path="/usr/share/man/zh_CN/man5/journald.conf.5.gz", section="选项"))
    question = "journald 默认最多让日志占用多少磁盘空间？"
    shipped = extract(question, pool, {}, embed(hash_embedder), threshold=0.0)
    monkeypatch.setattr(extractive, "SELECT_MODEL", dict(extractive.DECISION_SELECT))
    earlier = extract(question, pool, {}, embed(hash_embedder), threshold=0.0)
    assert shipped.chosen[0].score != pytest.approx(earlier.chosen[0].score)  # the two rankings differ
    assert shipped.features["select_best"] == pytest.approx(earlier.features["select_best"])
    assert shipped.evidence == pytest.approx(earlier.evidence)
    assert earlier.features["select_best"] == pytest.approx(earlier.chosen[0].score)
    monkeypatch.undo()
    monkeypatch.setattr(extractive, "DECISION_SELECT", None)
    own = extract(question, pool, {}, embed(hash_embedder), threshold=0.0)
    assert own.features["select_best"] == pytest.approx(own.chosen[0].score) == pytest.approx(shipped.chosen[0].score)


# sha256sum(1) as manpages-zh has it: each option's label on its own line, its description below.
SHA256SUM = """sha256sum - 计算并校验 SHA256 信息摘要

-b, --binary
以二进制模式读入

-c, --check
从指定文件中校验和信息并对它们进行检查

--tag
创建一个 BSD 风格的校验和
"""


@pytest.mark.parametrize("question, name", [
    ("sha256sum 用哪个参数可以根据校验和文件检查？", True),  # an option asked: the ranking's confidence weighs as a name's
    ("sha256sum 计算的是什么摘要？", False),
])
def test_the_rankings_confidence_is_recorded_apart_for_a_name_question(hash_embedder, question, name):
    features = extract(question, sources(hit_in(SHA256SUM, 0, len(SHA256SUM))), {}, embed(hash_embedder), threshold=0.0).features
    assert features["select_name"] == (features["select_best"] if name else 0.0)


def test_a_which_option_question_ranks_the_option_that_does_it_first(hash_embedder):
    """Which sha256sum option checks the sums a file lists: the `-c, --check` line holds an option and the words,
    the name line (no option) ranks under it."""
    result = extract("sha256sum 用哪个参数可以从文件中校验和信息并进行检查？", sources(hit_in(SHA256SUM, 0, len(SHA256SUM))), {},
                     embed(hash_embedder), threshold=0.0)
    assert result.chosen[0].text.startswith("-c, --check"), [s.text for s in result.chosen]
    assert result.chosen[0].features["thing"] == 1.0
