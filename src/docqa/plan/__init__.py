"""Planning: what a folder holds and the configuration that fits it (`docqa init`), and what
ingesting it or asking a question will cost (`docqa estimate`).

    survey.py       the folder, within stated limits (listing, sniffing, a sampled few read)
    probe.py        one sampled file, read in a bounded worker process
    propose.py      the rules: settings with their reasons, how each format is read, collections
    refine.py       a chat model may change a few settings, saying why
    chat.py         which chat model docqa would use, without starting one
    estimate.py     ingest and per-question estimates
    rates.py        the measured rates, each citing benchmarks/RESULTS.md
    config_file.py  the commented docqa.yml
    planner.py      the steps put together
"""

from __future__ import annotations

from docqa.plan.config_file import render
from docqa.plan.estimate import IngestEstimate, QuestionEstimate, estimate_ingest, estimate_question
from docqa.plan.planner import Plan, environment, ingest_estimate, plan_folder, survey_folder
from docqa.plan.survey import Survey

__all__ = ["IngestEstimate", "Plan", "QuestionEstimate", "Survey", "environment", "estimate_ingest",
           "estimate_question", "ingest_estimate", "plan_folder", "render", "survey_folder"]
