// A cited document's stored text as the viewer needs it: fetched once per document (with the pages,
// slides or sheets it divides into), the cited span found in it, and lines rendered with their numbers.
import { getJSON } from "./api.js";
import { el } from "./dom.js";

const documents = new Map(); // document id -> {text, type, path, layout} (a promise)

export function documentOf(id) {
  if (!documents.has(id)) {
    const promise = getJSON(`/documents/${encodeURIComponent(id)}/text`);
    promise.catch(() => documents.delete(id));
    documents.set(id, promise);
  }
  return documents.get(id);
}

export function forgetDocuments() {
  documents.clear();
}

// Where the span is in the text: the citation's characters when they hold its quote, else the
// quote found in the text, else null (the lines are used).
export function spanOf(text, source) {
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

// [offset, line] for each line of the text.
export function lines(text) {
  const out = [];
  let at = 0;
  for (const line of text.split("\n")) {
    out.push([at, line]);
    at += line.length + 1;
  }
  return out;
}

// Lines `from`..`to` (1-based, inclusive) with their numbers, the span marked (else the cited lines).
export function renderLines(text, source, span, from = 1, to = Infinity) {
  const first = source.line_start, last = source.line_end || source.line_start;
  return lines(text).slice(from - 1, to).map(([at, line], i) => {
    const n = from + i;
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
}

// The unit (page, slide, sheet) holding character `offset`, else null.
export function unitAt(units, offset) {
  let found = null;
  for (const unit of units) if (unit.char_start <= offset && offset <= unit.char_end) { found = unit; break; }
  return found;
}

// Previous / next buttons around a label ("Page 2 of 9"); go(n) shows another unit.
export function pager(label, n, count, go, words) {
  return el("div", { class: "pager", role: "group", "aria-label": words.group },
    el("button", { type: "button", class: "prev", disabled: n <= 1, "aria-label": words.prev,
      onclick: () => go(n - 1) }, "‹"),
    el("span", { class: "pager-label", "aria-live": "polite" }, label),
    el("button", { type: "button", class: "next", disabled: count && n >= count, "aria-label": words.next,
      onclick: () => go(n + 1) }, "›"));
}

// Replace `body`'s content with `nodes`, keeping the keyboard focus on the pager button that had it
// (else on the body), so paging with Enter or the arrow keys goes on from where it was.
export function replaceKeepingFocus(body, nodes) {
  const active = document.activeElement;
  const which = active && body.contains(active) ? ["prev", "next"].find((c) => active.classList.contains(c)) : null;
  body.replaceChildren(...nodes.filter(Boolean));
  if (!which) return;
  const button = body.querySelector(`.pager .${which}`);
  if (button && !button.disabled) button.focus();
  else body.focus();
}
