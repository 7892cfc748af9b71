// Slides by slide, sheets by row: a deck's cited slide (its title and text, "Slide 3 of 12") and a
// workbook's or CSV's sheet as numbered rows with the cited rows marked.  The server says where each
// slide and sheet lies in the stored text (the text endpoint's `layout`); nothing is parsed here.
import { el } from "./dom.js";
import { register, t } from "./i18n.js";
import { lines, pager, renderLines, replaceKeepingFocus, unitAt } from "./sourcetext.js";

register({
  en: { "slide.of": "Slide {n} of {count}", "slide.slides": "Slides", "slide.prev": "Previous slide",
        "slide.next": "Next slide", "slide.untitled": "(untitled slide)", "slide.empty": "This slide has no text.",
        "sheet.of": "Sheet {n} of {count}: {name}", "sheet.row": "Row", "sheet.hidden": "{n} more rows not shown" },
  zh: { "slide.of": "第 {n} 张幻灯片，共 {count} 张", "slide.slides": "幻灯片", "slide.prev": "上一张",
        "slide.next": "下一张", "slide.untitled": "（无标题幻灯片）", "slide.empty": "这张幻灯片没有文字。",
        "sheet.of": "工作表 {n}/{count}：{name}", "sheet.row": "行", "sheet.hidden": "另有 {n} 行未显示" },
});

const WINDOW = 200; // rows shown before and after the cited ones in a large sheet

// The cited slide in `body`, with previous / next slide buttons.
export function showSlide(body, doc, source, span) {
  const units = doc.layout.units;
  const count = doc.layout.count || units.length;
  const cited = source.page || (span && (unitAt(units, span[0]) || {}).n) || (units[0] || {}).n || 1;

  function go(n) {
    if (n < 1 || (count && n > count)) return;
    const unit = units.find((u) => u.n === n);
    const words = { group: t("slide.slides"), prev: t("slide.prev"), next: t("slide.next") };
    const title = el("h3", { class: "slide-title" }, (unit && unit.title) || t("slide.untitled"));
    const content = unit ? slideLines(doc, unit, n === cited ? source : {}, n === cited ? span : null)
      : [el("p", { class: "muted" }, t("slide.empty"))];
    replaceKeepingFocus(body, [pager(t("slide.of", { n, count }), n, count, go, words),
      el("section", { class: "slide", "data-slide": n }, title, content)]);
    body.dataset.page = String(n);
    const mark = body.querySelector("mark.hl");
    if (mark) mark.scrollIntoView({ block: "center" });
  }
  go(cited);
}

// A slide's lines after its title (shown as the heading), without the blank lines that end it.
function slideLines(doc, unit, source, span) {
  const text = lines(doc.text);
  let from = unit.line_start, to = unit.line_end;
  const [at, first] = text[from - 1] || [0, ""];
  const titleCited = span && span[0] < at + first.length;
  if (unit.title && first === unit.title && to > from && !titleCited) from += 1;
  while (to > from && (text[to - 1] || [0, ""])[1] === "") to -= 1;
  while (from < to && (text[from - 1] || [0, ""])[1] === "") from += 1;
  return renderLines(doc.text, source, span, from, to);
}

// The sheet holding the span (else the one named by the citation's section) as a table of rows.
export function showSheet(body, doc, source, span) {
  const units = doc.layout.units;
  const unit = (span && unitAt(units, span[0])) || units.find((u) => u.name === source.section) || units[0];
  if (!unit) return false;
  const index = units.indexOf(unit) + 1;
  // the sheet's lines after its name (the first): the header row, then one line per row
  const all = lines(doc.text).map(([at, line], i) => [at, line, i + 1])
    .slice(unit.line_start, unit.line_end).filter(([, line]) => line !== "");
  const numbers = rowNumbers(unit.rows, all.length);
  const rows = all.map(([at, line, number], i) => ({ n: numbers[i], at, line,
    cited: span ? span[0] < at + line.length && span[1] > at : inLines(source, number) }));
  const marked = rows.map((r, i) => (r.cited ? i : -1)).filter((i) => i >= 0);
  const lo = marked.length ? Math.max(0, marked[0] - WINDOW) : 0;
  const hi = marked.length ? marked[marked.length - 1] + WINDOW : 2 * WINDOW;
  const shown = rows.slice(lo, hi + 1);
  const table = el("table", { class: "sheet" },
    el("caption", {}, t("sheet.of", { n: index, count: doc.layout.count || units.length, name: unit.name })),
    el("tbody", {}, shown.map(row)));
  const hidden = rows.length - shown.length;
  body.replaceChildren(...[table, hidden && el("p", { class: "muted" }, t("sheet.hidden", { n: hidden }))].filter(Boolean));
  const first = body.querySelector("tr.cited");
  if (first) first.scrollIntoView({ block: "center" });
  return true;
}

// The file's row number of each of the sheet's `count` lines, from [first, count] runs (else 1, 2, 3…).
function rowNumbers(runs, count) {
  const out = [];
  for (const [first, n] of runs || []) for (let i = 0; i < n && out.length < count; i++) out.push(first + i);
  while (out.length < count) out.push(out.length ? out[out.length - 1] + 1 : 1);
  return out;
}

function row(r) {
  const cells = r.line.split(" | ").map((cell) => el("td", {}, cell));
  return el("tr", { class: r.cited ? "cited" : null, "data-row": r.n },
    el("th", { scope: "row", class: "rn", "aria-label": `${t("sheet.row")} ${r.n}` }, String(r.n)), cells);
}

function inLines(source, n) {
  return Boolean(source.line_start) && n >= source.line_start && n <= (source.line_end || source.line_start);
}
