"""The commented docqa.yml `docqa init` writes: the native shape, one section per part of docqa,
each value with its reason, and above them what the folder holds and how each format is read."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from docqa.plan.propose import Proposal
from docqa.plan.survey import Survey

_WIDTH = 100


def render(survey: Survey, proposal: Proposal, version: str = "") -> str:
    """The docqa.yml text (valid YAML that 'docqa config lint' accepts)."""
    lines = _header(survey, proposal, version)
    sections: dict[str, list[tuple[str, Any]]] = {}
    for key, value in proposal.values.items():
        section, name = key.split(".", 1)
        sections.setdefault(section, []).append((name, value))
    for section, items in sections.items():
        lines.append(f"{section}:")
        for name, value in items:
            lines += _item(name, value, proposal.reasons.get(f"{section}.{name}", ""))
    lines += _footer(survey, proposal)
    return "\n".join(lines) + "\n"


def _header(survey: Survey, proposal: Proposal, version: str) -> list[str]:
    est = proposal.estimate
    kinds = ", ".join(f"{t} {s['files']}" for t, s in survey.by_type.items())
    lines = [f"# docqa.yml — written by 'docqa init {survey.root}' on {date.today().isoformat()}"
             + (f" (docqa {version})" if version else ""),
             "# Check it with 'docqa config lint'; 'docqa config show --sources' shows what is in effect.",
             "#", f"# The folder: {survey.files:,} files, {_size(survey.bytes)}: {kinds}"]
    if not survey.complete:
        lines.append(f"#   (the listing stopped at {survey.limits.get('scan_files', 0):,.0f} files)")
    lines.append(f"# Languages (letters sampled): {_languages(survey)}")
    if est is not None:
        lines.append(f"# A first 'docqa add': about {_duration(est.seconds)}, {est.chunks:,} chunks, an index of about "
                     f"{_size(est.index_bytes)} ({est.basis})")
    if proposal.refined and proposal.refined.get("changes"):
        lines.append(f"# Refined by {proposal.refined['model']}: {proposal.refined['why']}")
    lines += ["#", "# How each format is read (built into docqa's chunkers, not settings):"]
    for entry in proposal.formats:
        extra = f" ({', '.join(f'{k} {n}' for k, n in entry['languages'].items())})" if entry.get("languages") else ""
        lines.append(f"#   {entry['type']} ({entry['files']} files{extra}): {entry['how']}")
    return lines + [""]


def _item(name: str, value: Any, why: str) -> list[str]:
    """`  name: value` with its reason as comment lines above it (wrapped)."""
    out = [f"  # {line}" for line in _wrap(why)] if why else []
    return out + [f"  {name}: {json.dumps(value, ensure_ascii=False)}"]


def _footer(survey: Survey, proposal: Proposal) -> list[str]:
    lines = ["", "# Prices (per million tokens) for 'docqa estimate' and each answer's usage.cost; 0 for local models:",
             "# llm: {prompt_price: 0.15, completion_price: 0.6}    embed: {price: 0.02}"]
    if proposal.collections:
        lines += ["", "# Collections by top-level folder (keep them apart, search one or all):"]
        lines += [f"#   docqa add {json.dumps(survey.root + '/' + c['folder'], ensure_ascii=False)} -c "
                  f"{json.dumps(c['name'], ensure_ascii=False)}    # {c['files']} files" for c in proposal.collections]
    else:
        lines += ["", f"# Then: docqa add {json.dumps(survey.root, ensure_ascii=False)}"]
    if survey.skipped:
        lines += ["", "# Skipped or failing when added (and why):"]
        lines += [f"#   {n} × {reason}" for reason, n in survey.skipped.items()]
    return lines


def _wrap(text: str) -> list[str]:
    import textwrap

    return textwrap.wrap(" ".join(text.split()), _WIDTH - 4) or [""]


def _languages(survey: Survey) -> str:
    total = sum(survey.scripts.values())
    if not total:
        return "no text sampled"
    names = {"latin": "Latin (English …)", "han": "Chinese", "other": "other scripts"}
    return ", ".join(f"{names[k]} {v / total:.0%}" for k, v in sorted(survey.scripts.items(), key=lambda kv: -kv[1]) if v)


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):  # 1024 a step, as the CLI's tables count
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
