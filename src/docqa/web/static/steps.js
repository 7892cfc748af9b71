// The work as steps: each `status` event is one folded line (<details>) that opens on its details.
import { el, oneLine } from "./dom.js";

const LABELS = {
  routing: "Routing the question",
  condensing: "Understanding the follow-up",
  retrieving: "Retrieving passages",
  extracting: "Extracting the answer from the passages",
  answering: "Answering",
  generating: "Writing the answer",
  citing: "Checking the citations",
  checking: "Fact-checking the answer",
};

function label(data) {
  const { phase } = data;
  switch (phase) {
    case "retrieving":
      return LABELS.retrieving + (typeof data.hits === "number" ? ` (${data.hits} hits)` : "");
    case "tool_call":
      return `Tool ${data.name}(${oneLine(data.arguments || {}, 100)})`;
    case "thinking":
      return "Thinking" + (data.step ? ` (step ${data.step})` : "");
    case "thought":
      return "Thought: " + oneLine(data.text || "", 120);
    case "reviewing": {
      const problems = data.problems || [];
      return `Review round ${data.round || "?"}: ${problems.length} rejected claim${problems.length === 1 ? "" : "s"}`;
    }
    case "steered":
      return "Steered: " + oneLine(data.text || "", 120);
    default:
      return LABELS[phase] || (phase ? phase[0].toUpperCase() + phase.slice(1).replace(/_/g, " ") : "Working");
  }
}

function details(data) {
  const rest = { ...data };
  delete rest.phase;
  if (data.phase === "reviewing" && (data.problems || []).length) {
    return el("ul", {}, data.problems.map((p) => el("li", {}, typeof p === "string" ? p : JSON.stringify(p))));
  }
  if (!Object.keys(rest).length) return el("p", { class: "muted" }, "No details.");
  return el("pre", {}, JSON.stringify(rest, null, 2));
}

export class Steps {
  constructor() {
    this.list = el("ol", { class: "step-list" });
    this.summary = el("summary", {}, "Steps");
    this.node = el("details", { class: "steps", open: true }, this.summary, this.list);
    this.current = el("p", { class: "current-step", "aria-live": "polite" });
    this.count = 0;
    this.lastTool = null;
  }

  add(data) {
    if (data.phase === "tool_result" && this.lastTool) return this.result(data);
    for (const old of this.list.querySelectorAll(".step.current")) old.classList.remove("current");
    const text = label(data);
    const step = el("li", { class: "step current", "data-phase": data.phase },
      el("details", {}, el("summary", {}, el("span", { class: "step-label" }, text)), details(data)));
    this.list.append(step);
    this.lastTool = data.phase === "tool_call" ? step : null;
    this.count += 1;
    this.summary.textContent = `Steps (${this.count})`;
    this.current.textContent = text + "…";
    return step;
  }

  // A tool's one-line result joins its call's line.
  result(data) {
    const step = this.lastTool;
    this.lastTool = null;
    const line = data.error ? `error: ${data.error}` : (data.summary || `${data.size || 0} characters`);
    step.querySelector(".step-label").append(el("span", { class: "step-result" }, " → " + oneLine(line, 140)));
    step.querySelector("details").append(el("pre", {}, JSON.stringify({ result: data }, null, 2)));
    this.current.textContent = step.querySelector(".step-label").textContent;
    return step;
  }

  // When the answer is done the steps fold away below it.
  finish() {
    for (const old of this.list.querySelectorAll(".step.current")) old.classList.remove("current");
    this.current.textContent = "";
    this.current.hidden = true;
    this.node.open = false;
  }
}
