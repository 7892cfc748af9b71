"""Deterministic claim checks: every number, date, version, path, identifier and quoted string in
a claim must occur in the text it cites.

Both sides are normalised first, so equal facts written differently still match: full-width
characters (NFKC), thousands separators (1,000 = 1000), and simple Chinese numerals
(三十五 = 35, 两千 = 2000, 百分之五 = 5%).  A fact is an exact token in the normalised cited
text, not a substring of a longer number: "35" is not found in "350".
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_UNITS = {"十": 10, "百": 100, "千": 1000}
_BIG = {"万": 10_000, "亿": 100_000_000}
_CN_NUMBER = re.compile(r"[零〇一二两三四五六七八九十百千万亿]+")
_PERCENT_CN = re.compile(r"百分之\s*([零〇一二两三四五六七八九十百千万亿]+|\d+(?:\.\d+)?)")
_THOUSANDS = re.compile(r"(?<![\d.])(\d{1,3})((?:,\d{3})+)(?!\d|,\d)")  # "8,765,000, making": the comma after ends it

_KINDS = [  # order matters: the first pattern to claim a span wins
    ("quote", re.compile(r"\"([^\"\n]{2,200})\"|“([^”\n]{2,200})”|「([^」\n]{2,200})」|`([^`\n]{1,200})`")),
    ("cve", re.compile(r"(?<![A-Za-z0-9-])CVE-\d{4}-\d{4,7}(?![\d])", re.IGNORECASE)),
    ("licence", re.compile(r"(?<![A-Za-z0-9])(?:A|L)?GPL(?:(?:-|v|\s+v?)\d+(?:\.\d+)?(?:\+|-or-later|-only|\s+or\s+later)?|\+)?(?![A-Za-z0-9])"
                           r"|(?<![A-Za-z0-9])(?:Apache|MPL|EPL|CDDL)-\d\.\d(?![\d.])|(?<![A-Za-z0-9])BSD-[234]-[Cc]lause")),
    ("path", re.compile(r"(?<![A-Za-z0-9_/])(?:[A-Za-z]:\\|~?/)?(?:[A-Za-z0-9_.-]+[/\\])+[A-Za-z0-9_.-]*[A-Za-z0-9_]")),
    ("version", re.compile(r"(?<![A-Za-z0-9_.])v?\d+(?:\.\d+){1,3}(?:-[0-9A-Za-z.]+)?(?![A-Za-z0-9_]|\.\d)")),
    ("date", re.compile(r"(?<!\d)\d{4}-\d{1,2}-\d{1,2}(?!\d)|(?<!\d)\d{1,2}:\d{2}(?!\d)")),
    ("identifier", re.compile(r"(?<![A-Za-z0-9_-])(?:[A-Za-z]+_[A-Za-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]*|[A-Z]{2,}[A-Z0-9_]*\d[A-Z0-9_]*|--[a-z][A-Za-z0-9_-]+)(?![A-Za-z0-9_-])")),  # noqa: E501 - a pattern reads best whole
    ("number", re.compile(r"(?<![A-Za-z0-9_.])\d+(?:\.\d+)?%?(?![A-Za-z0-9_]|\.\d)")),
]
# Citation markers are not facts: [1], [2, 3], [source: ...], [来源: ...]
_MARKERS = re.compile(r"\[(?:\d+(?:\s*,\s*\d+)*|(?:source|来源)\s*[:：][^\]]*)\]")


@dataclass(frozen=True, slots=True)
class Fact:
    kind: str  # number, date, version, path, identifier, quote, cve, licence
    text: str  # as written in the claim
    value: str  # normalised: what must occur in the cited text


def _cn_to_int(s: str) -> int | None:
    """A simple Chinese numeral as an integer (三十五 → 35, 两千零五 → 2005, 一万二千 → 12000)."""
    total, section, digit = 0, 0, None
    for ch in s:
        if ch in _DIGITS:
            digit = _DIGITS[ch]
        elif ch in _UNITS:
            section += (1 if digit is None else digit) * _UNITS[ch]
            digit = None
        elif ch in _BIG:
            total += (section + (digit or 0)) * _BIG[ch]
            section, digit = 0, None
        else:
            return None
    return total + section + (digit or 0)


def normalise(text: str) -> str:
    """Full-width to ASCII, Chinese numerals to digits, thousands separators dropped."""
    text = unicodedata.normalize("NFKC", text)

    def numeral(m: re.Match) -> str:
        run = m.group()
        if len(run) == 1 and run in "一二两":  # 一个, 两人: words more often than numbers; keep
            return run
        value = _cn_to_int(run)
        return run if value is None else str(value)

    text = _PERCENT_CN.sub(lambda m: f"{_cn_to_int(m.group(1)) if not m.group(1)[0].isdigit() else m.group(1)}%", text)
    text = _CN_NUMBER.sub(numeral, text)
    return _THOUSANDS.sub(lambda m: m.group(1) + m.group(2).replace(",", ""), text)


def facts_in(claim: str) -> list[Fact]:
    """The checkable facts of a claim, each once, in order of appearance."""
    norm = normalise(_MARKERS.sub(" ", claim))
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, Fact]] = []
    for kind, pattern in _KINDS:
        for m in pattern.finditer(norm):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            text = next((g for g in m.groups() if g), m.group()) if m.groups() else m.group()
            taken.append((m.start(), m.end()))
            found.append((m.start(), Fact(kind, m.group(), text.strip())))
    seen, out = set(), []
    for _, fact in sorted(found, key=lambda x: x[0]):
        if (fact.kind, fact.value) not in seen:
            seen.add((fact.kind, fact.value))
            out.append(fact)
    return out


def missing_facts(claim: str, cited: str) -> list[Fact]:
    """Facts of `claim` that do not occur in `cited` (after normalising both)."""
    source = normalise(cited)
    return [fact for fact in facts_in(claim) if not fact_positions(fact, source)]


def fact_positions(fact: Fact, source: str) -> list[int]:
    """Where `fact` occurs in `source` (already normalised): offsets of its matches."""
    if fact.kind == "licence":
        return [m.start() for m in _licences(source) if _same_licence(fact.value, m.group())]
    if fact.kind == "cve":
        return [m.start() for m in re.finditer(rf"(?<![\d]){re.escape(fact.value)}(?!\d)", source, re.IGNORECASE)]
    if fact.kind == "number":
        value = fact.value.rstrip("%")
        pattern = rf"(?<![\d.]){re.escape(value)}(?!\d|\.\d)"
    elif fact.kind in ("quote", "path"):
        flat = " ".join(source.lower().split())
        needle = " ".join(fact.value.lower().split())
        at = flat.find(needle)
        return [at] if at >= 0 else []  # offsets in the whitespace-folded text: presence only
    else:
        pattern = rf"(?<![A-Za-z0-9_.]){re.escape(fact.value.lstrip('v'))}(?![A-Za-z0-9_]|\.\d)"
    return [m.start() for m in re.finditer(pattern, source)]


_LICENCE_PARTS = re.compile(r"^((?:A|L)?GPL|Apache|MPL|EPL|CDDL|BSD)(?:-|v|\s+v?)?(\d+(?:\.\d+)?)?(\+|-or-later|-only|\s+or\s+later)?", re.IGNORECASE)


def _licences(source: str) -> list[re.Match]:
    return list(dict(_KINDS)["licence"].finditer(source))


def _same_licence(claimed: str, found: str) -> bool:
    """The licence the claim names is the one found: the same name (GPL is not LGPL), the same
    version when the claim gives one (2 = 2.0), and "or later" when the claim says so."""
    a, b = _LICENCE_PARTS.match(claimed.strip()), _LICENCE_PARTS.match(found.strip())
    if a is None or b is None or a.group(1).upper() != b.group(1).upper():
        return False
    if a.group(2) and (b.group(2) is None or float(a.group(2)) != float(b.group(2))):
        return False
    later = ("+", "-or-later") + tuple(x for x in (a.group(3), b.group(3)) if x and "later" in x and " " in x)
    return not (a.group(3) in later and b.group(3) not in later) and not (claimed.strip().endswith("GPL+") and b.group(3) not in later)
