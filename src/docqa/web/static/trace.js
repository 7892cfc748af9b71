// A run's full trace, as the Log view shows it: question, answer, citations, steps and tool calls,
// verification, timings, usage and feedback.  Every value is set as text.
import { el, oneLine } from "./dom.js";
import { register, t } from "./i18n.js";
import { when } from "./format.js";

register({
  en: {
    "trace.question": "Question", "trace.answer": "Answer", "trace.citations": "Citations", "trace.steps": "Steps",
    "trace.verification": "Verification", "trace.timings": "Timings", "trace.usage": "Usage", "trace.feedback": "Feedback",
    "trace.error": "Error", "trace.none": "none", "trace.run": "Run {id} · {status} · {when}", "trace.close": "Close the trace",
    "trace.rejected": "rejected claims",
  },
  zh: {
    "trace.question": "问题", "trace.answer": "回答", "trace.citations": "引用", "trace.steps": "步骤",
    "trace.verification": "核查", "trace.timings": "耗时", "trace.usage": "用量", "trace.feedback": "反馈", "trace.error": "错误",
    "trace.none": "无", "trace.run": "运行 {id} · {status} · {when}", "trace.close": "关闭详情", "trace.rejected": "被否定的陈述",
  },
});

function part(key, ...content) {
  return el("section", { class: `trace-part trace-${key}` }, el("h3", {}, t(`trace.${key}`)), ...content);
}

function pairs(object) {
  const entries = Object.entries(object || {});
  if (!entries.length) return el("p", { class: "muted" }, t("trace.none"));
  return el("dl", { class: "meta" }, entries.flatMap(([k, v]) => [el("dt", {}, k),
    el("dd", {}, typeof v === "number" ? String(Math.round(v * 10000) / 10000) : oneLine(v, 400))]));
}

function citation(c) {
  const where = [c.section, c.page ? `p. ${c.page}` : null, c.line_start ? `L${c.line_start}–${c.line_end}` : null]
    .filter(Boolean).join(" · ");
  return el("li", { "data-n": c.n }, el("strong", {}, `[${c.n}] `), c.path || "", where ? ` (${where})` : "",
    c.quote ? el("blockquote", {}, c.quote) : null);
}

// One step of the trace: its stage and, folded, every detail it recorded.
function step(entry) {
  const { stage, ...rest } = entry;
  const args = rest.arguments !== undefined ? oneLine(rest.arguments, 100) : null; // a tool call's arguments
  const label = [stage, rest.name || rest.model_call, args, rest.seconds !== undefined ? `${rest.seconds}s` : null]
    .filter(Boolean).join(" · ");
  return el("li", { class: "trace-step", "data-stage": stage || "" },
    el("details", {}, el("summary", {}, label), el("pre", {}, JSON.stringify(rest, null, 2))));
}

function verification(v) {
  if (!v) return el("p", { class: "muted" }, t("trace.none"));
  const rejected = v.rejected_claims || [];
  return el("div", {}, pairs({ status: v.status, checked_claims: v.checked_claims, rounds: v.rounds, checker: v.checker }),
    rejected.length ? el("p", {}, t("trace.rejected")) : null,
    rejected.length ? el("ul", {}, rejected.map((r) => el("li", {}, oneLine(r, 400)))) : null);
}

export function renderTrace(run) {
  const result = run.result || {};
  const feedback = run.feedback || [];
  return el("article", { class: "trace", "data-run-id": run.id },
    el("p", { class: "muted" }, t("trace.run", { id: run.id, status: run.status, when: when(run.created_at) })),
    part("question", el("p", { class: "question" }, run.question)),
    part("answer", el("p", { class: "answer" }, run.answer ?? result.answer ?? "")),
    run.error ? part("error", el("p", { class: "error" }, run.error)) : null,
    part("citations", (result.citations || []).length ? el("ol", { class: "citations" }, result.citations.map(citation))
      : el("p", { class: "muted" }, t("trace.none"))),
    part("steps", el("ol", { class: "trace-steps" }, (run.trace || []).map(step))),
    part("verification", verification(result.verification)),
    part("timings", pairs(run.timings)),
    part("usage", pairs(run.usage)),
    part("feedback", feedback.length ? el("ul", { class: "trace-feedback" }, feedback.map((f) =>
      el("li", { "data-rating": f.rating }, el("strong", {}, f.rating), f.comment ? `: ${f.comment}` : ""))) :
      el("p", { class: "muted" }, t("trace.none"))));
}
