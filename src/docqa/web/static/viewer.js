// The source viewer beside the answer: a cited document's stored text with line numbers, the cited
// span highlighted and scrolled into view.  The text comes from GET /documents/{id}/text (access is the API's).
import { getJSON } from "./api.js";
import { el } from "./dom.js";

const texts = new Map(); // document id -> its text (a promise)

function textOf(id) {
  if (!texts.has(id)) {
    const promise = getJSON(`/documents/${encodeURIComponent(id)}/text`).then((body) => body.text);
    promise.catch(() => texts.delete(id));
    texts.set(id, promise);
  }
  return texts.get(id);
}

// Where the span is in the text: the citation's characters when they hold its quote, else the
// quote found in the text, else its lines.
function spanOf(text, source) {
  const { char_start: start, char_end: end, quote } = source;
  if (Number.isInteger(start) && Number.isInteger(end) && end > start) {
    if (!quote || text.slice(start, end) === quote) return [start, end];
  }
  if (quote) {
    const at = text.indexOf(quote);
    if (at >= 0) return [at, at + quote.length];
  }
  return null;
}

function lines(text) {
  const out = [];
  let at = 0;
  for (const line of text.split("\n")) {
    out.push([at, line]);
    at += line.length + 1;
  }
  return out;
}

function render(text, source) {
  const span = spanOf(text, source);
  const first = source.line_start, last = source.line_end || source.line_start;
  const rows = lines(text).map(([at, line], i) => {
    const n = i + 1;
    const code = el("span", { class: "code" });
    let marked = false;
    if (span && span[0] < at + line.length + 1 && span[1] > at) {
      const a = Math.max(0, span[0] - at), b = Math.min(line.length, span[1] - at);
      code.append(line.slice(0, a), el("mark", { class: "hl" }, line.slice(a, b) || " "), line.slice(b));
      marked = true;
    } else {
      code.append(line || " ");
    }
    const inLines = !span && first && n >= first && n <= last;
    return el("div", { class: "line" + (marked || inLines ? " cited" : ""), "data-line": n },
      el("span", { class: "ln", "aria-hidden": "true" }, String(n)), inLines ? el("mark", { class: "hl" }, code) : code);
  });
  return rows;
}

function meta(source) {
  const lines = source.line_start ? `L${source.line_start}` +
    (source.line_end && source.line_end !== source.line_start ? `–${source.line_end}` : "") : null;
  const pairs = [["Path", source.path], ["Section", source.section], ["Page", source.page], ["Lines", lines]];
  return pairs.filter(([, v]) => v !== null && v !== undefined && v !== "")
    .flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, String(v))]);
}

export async function openSource(source) {
  const viewer = document.getElementById("viewer");
  const body = document.getElementById("viewer-body");
  const title = document.getElementById("viewer-title");
  viewer.hidden = false;
  document.body.classList.add("with-viewer");
  title.textContent = source.title || (source.path || "Source").split("/").pop();
  document.getElementById("viewer-meta").replaceChildren(...meta(source));
  body.replaceChildren(el("p", { class: "muted" }, "Loading…"));
  try {
    const text = await textOf(source.document_id);
    body.replaceChildren(...render(text, source));
    const target = body.querySelector("mark.hl");
    if (target) target.scrollIntoView({ block: "center" });
  } catch (error) {
    body.replaceChildren(el("p", { class: "error" }, `Cannot show this source: ${error.message}`));
  }
}

export function closeSource() {
  document.getElementById("viewer").hidden = true;
  document.body.classList.remove("with-viewer");
}
