// The work as steps: each `status` event is one folded line (<details>) that opens on its details.
// A past run's steps come from its recorded trace (fromTrace).  Labels follow the page's language.
import { el, oneLine } from "./dom.js";
import { register, t } from "./i18n.js";

register({
  en: {
    "steps.title": "Steps", "steps.count": "Steps ({n})", "steps.working": "Working", "steps.no_details": "No details.",
    "steps.routing": "Routing the question", "steps.condensing": "Understanding the follow-up",
    "steps.retrieving": "Retrieving passages", "steps.hits": "Retrieving passages ({n} hits)",
    "steps.extracting": "Extracting the answer from the passages", "steps.answering": "Answering",
    "steps.generating": "Writing the answer", "steps.citing": "Checking the citations",
    "steps.checking": "Fact-checking the answer", "steps.tool": "Tool {name}({args})", "steps.thinking": "Thinking",
    "steps.thinking_step": "Thinking (step {n})", "steps.thought": "Thought: {text}",
    "steps.review_one": "Review round {round}: {n} rejected claim", "steps.review": "Review round {round}: {n} rejected claims",
    "steps.steered": "Steered: {text}", "steps.error": "error: {error}", "steps.size": "{n} characters",
    "steps.skill": "Skill {name}: {reason}", "steps.skill_resource": "Skill resource {name}/{path}",
    "steps.escalating": "Every review was rejected ({kind}): {reason}",
    "steps.draft_rejected_one": "Draft {n} rejected by the fact-check: {k} problem",
    "steps.draft_rejected": "Draft {n} rejected by the fact-check: {k} problems",
  },
  zh: {
    "steps.title": "步骤", "steps.count": "步骤（{n}）", "steps.working": "处理中", "steps.no_details": "没有详情。",
    "steps.routing": "判断问题的走向", "steps.condensing": "理解追问",
    "steps.retrieving": "检索段落", "steps.hits": "检索段落（{n} 条命中）",
    "steps.extracting": "从段落中摘取答案", "steps.answering": "作答",
    "steps.generating": "撰写答案", "steps.citing": "核对引用",
    "steps.checking": "核查答案事实", "steps.tool": "工具 {name}({args})", "steps.thinking": "思考",
    "steps.thinking_step": "思考（第 {n} 步）", "steps.thought": "想法：{text}",
    "steps.review_one": "第 {round} 轮审查：{n} 条陈述被否决", "steps.review": "第 {round} 轮审查：{n} 条陈述被否决",
    "steps.steered": "已引导：{text}", "steps.error": "出错：{error}", "steps.size": "{n} 个字符",
    "steps.skill": "技能 {name}：{reason}", "steps.skill_resource": "技能资料 {name}/{path}",
    "steps.escalating": "每轮审查都被否决（{kind}）：{reason}",
    "steps.draft_rejected_one": "草稿 {n} 未通过事实核查：{k} 个问题",
    "steps.draft_rejected": "草稿 {n} 未通过事实核查：{k} 个问题",
  },
});

const PLAIN = ["routing", "condensing", "retrieving", "extracting", "answering", "generating", "citing", "checking"];

export function label(data) {
  const { phase } = data;
  switch (phase) {
    case "retrieving":
      return typeof data.hits === "number" ? t("steps.hits", { n: data.hits }) : t("steps.retrieving");
    case "tool_call":
      return t("steps.tool", { name: data.name, args: oneLine(data.arguments || {}, 100) });
    case "thinking":
      return data.step ? t("steps.thinking_step", { n: data.step }) : t("steps.thinking");
    case "thought":
      return t("steps.thought", { text: oneLine(data.text || "", 120) });
    case "reviewing": {
      const n = (data.problems || []).length;
      return t(n === 1 ? "steps.review_one" : "steps.review", { round: data.round || "?", n });
    }
    case "draft_rejected": { // the checks rejected a draft (docqa.answer.pipeline); its reasons are the details
      const k = (data.problems || data.reasons || []).length; // live: problems; from a recorded trace: reasons
      return t(k === 1 ? "steps.draft_rejected_one" : "steps.draft_rejected", { n: data.n ?? "?", k });
    }
    case "steered":
      return t("steps.steered", { text: oneLine(data.text || "", 120) });
    case "skill": // a skill's procedure was loaded: matched to the question, or asked for with use_skill
      return t("steps.skill", { name: data.name, reason: oneLine(data.reason || "", 120) });
    case "escalating": // every review round was rejected: the diagnosis (docqa.answer.escalate)
      return t("steps.escalating", { kind: data.kind || "?", reason: oneLine(data.reason || (data.model ? `${data.model} ${data.cost ?? ""}` : ""), 120) });
    case "skill_resource":
      return t("steps.skill_resource", { name: data.name, path: data.path || "" });
    default:
      if (PLAIN.includes(phase)) return t(`steps.${phase}`);
      return phase ? phase[0].toUpperCase() + phase.slice(1).replace(/_/g, " ") : t("steps.working");
  }
}

function resultLine(data) {
  const line = data.error ? t("steps.error", { error: data.error === true ? data.summary || "" : data.error })
    : (data.summary || t("steps.size", { n: data.size || 0 }));
  return " → " + oneLine(line, 140);
}

function details(data) {
  const rest = { ...data };
  delete rest.phase;
  const problems = data.problems || (data.phase === "draft_rejected" ? data.reasons : null) || [];
  if ((data.phase === "reviewing" || data.phase === "draft_rejected") && problems.length) {
    return el("ul", {}, problems.map((p) => el("li", {}, typeof p === "string" ? p : JSON.stringify(p))));
  }
  if (!Object.keys(rest).length) return el("p", { class: "muted", "data-i18n": "steps.no_details" }, t("steps.no_details"));
  return el("pre", {}, JSON.stringify(rest, null, 2));
}

const shown = new WeakMap(); // details.steps node -> its Steps, relabelled when the language changes

export class Steps {
  constructor() {
    this.list = el("ol", { class: "step-list" });
    this.summary = el("summary", {}, t("steps.title"));
    this.node = el("details", { class: "steps", open: true }, this.summary, this.list);
    this.current = el("p", { class: "current-step", "aria-live": "polite" });
    this.items = []; // {step, data, result}
    this.lastTool = null;
    this.done = false;
    shown.set(this.node, this);
  }

  add(data) {
    if (data.phase === "tool_result" && this.lastTool) return this.result(data);
    for (const old of this.list.querySelectorAll(".step.current")) old.classList.remove("current");
    const item = { data, result: null, text: el("span", { class: "step-label" }) };
    item.step = el("li", { class: "step current", "data-phase": data.phase },
      el("details", {}, el("summary", {}, item.text), details(data)));
    this.list.append(item.step);
    this.items.push(item);
    this.lastTool = data.phase === "tool_call" ? item : null;
    this.render(item);
    return item.step;
  }

  // A tool's one-line result joins its call's line.
  result(data) {
    const item = this.lastTool;
    this.lastTool = null;
    item.result = data;
    item.step.querySelector("details").append(el("pre", {}, JSON.stringify({ result: data }, null, 2)));
    this.render(item);
    return item.step;
  }

  render(item) {
    item.text.replaceChildren(label(item.data));
    if (item.result) item.text.append(el("span", { class: "step-result" }, resultLine(item.result)));
    this.summary.textContent = this.items.length ? t("steps.count", { n: this.items.length }) : t("steps.title");
    if (!this.done && item === this.items[this.items.length - 1]) {
      this.current.textContent = item.text.textContent + (item.result ? "" : "…");
    }
  }

  relabel() {
    for (const item of this.items) this.render(item);
  }

  // When the answer is done the steps fold away below it.
  finish() {
    this.done = true;
    for (const old of this.list.querySelectorAll(".step.current")) old.classList.remove("current");
    this.current.textContent = "";
    this.current.hidden = true;
    this.node.open = false;
  }

  // A past run's steps, from its recorded trace (GET /runs/{id}): folded, as when it finished.
  static fromTrace(trace) {
    const steps = new Steps();
    for (const entry of trace || []) {
      const { stage, at, seconds, messages, ...rest } = entry; // eslint-disable-line no-unused-vars
      if (!stage || "model_call" in entry) continue; // the model calls themselves are for the audit
      if (stage === "tool") {
        steps.add({ phase: "tool_call", name: rest.name, arguments: rest.arguments });
        steps.add({ phase: "tool_result", name: rest.name, size: rest.size, summary: rest.summary, error: rest.error });
      } else if (stage === "steering") {
        steps.add({ phase: "steered", text: rest.text });
      } else {
        steps.add({ ...rest, phase: stage, hits: Array.isArray(rest.hits) ? rest.hits.length : rest.hits });
      }
    }
    steps.finish();
    return steps;
  }
}

document.addEventListener("docqa:language", () => {
  for (const node of document.querySelectorAll("details.steps")) {
    const steps = shown.get(node);
    if (steps) steps.relabel();
  }
});
