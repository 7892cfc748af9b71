// The source viewer beside the answer: the cited place, highlighted and scrolled into view.  PDFs show
// the real page (pdfpage.js), decks the cited slide and workbooks the sheet by row (units.js), every
// other document its stored text with line numbers.  Above it: path, section, page, lines and a link
// that downloads the original file.  Access is the API's: every request carries the page's key.
import { call } from "./api.js";
import { el } from "./dom.js";
import { register, t } from "./i18n.js";
import { showPdf } from "./pdfpage.js";
import { documentOf, renderLines, spanOf } from "./sourcetext.js";
import { showSheet, showSlide } from "./units.js";

register({
  en: { "viewer.source": "Source", "viewer.close": "Close the source", "viewer.path": "Path", "viewer.section": "Section", "viewer.page": "Page",
        "viewer.slide": "Slide", "viewer.lines": "Lines", "viewer.loading": "Loading…",
        "viewer.failed": "Cannot show this source: {message}", "viewer.download": "Download",
        "viewer.downloadLabel": "Download the original file {name}", "viewer.downloadFailed": "Cannot download: {message}",
        "viewer.live": "Open the page" },
  zh: { "viewer.source": "来源", "viewer.close": "关闭来源", "viewer.path": "路径", "viewer.section": "章节", "viewer.page": "页码",
        "viewer.slide": "幻灯片", "viewer.lines": "行", "viewer.loading": "加载中…",
        "viewer.failed": "无法显示此来源：{message}", "viewer.download": "下载",
        "viewer.downloadLabel": "下载原始文件 {name}", "viewer.downloadFailed": "无法下载：{message}",
        "viewer.live": "打开网页" },
});

const $ = (id) => document.getElementById(id);
let opened = null; // the source shown (re-rendered when the language changes)

function fileName(path) {
  return (path || "").split("/").pop() || "download";
}

function meta(source) {
  const lines = source.line_start ? `L${source.line_start}` +
    (source.line_end && source.line_end !== source.line_start ? `–${source.line_end}` : "") : null;
  const slides = /\.pptx$/i.test(source.path || "");
  const pairs = [[t("viewer.path"), source.path], [t("viewer.section"), source.section],
    [t(slides ? "viewer.slide" : "viewer.page"), source.page], [t("viewer.lines"), lines]];
  return pairs.filter(([, v]) => v !== null && v !== undefined && v !== "")
    .flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, String(v))]);
}

// The original file, fetched with the page's key (a plain link could not send it) and saved under its name.
// A crawled web page: the live page, at the cited section's anchor (only http(s) links are made).
function liveLink(source) {
  const url = source.url || "";
  if (!url.startsWith("https://") && !url.startsWith("http://")) return null;
  return el("p", { class: "viewer-download" }, el("a", { class: "live", href: url, target: "_blank",
    rel: "noopener noreferrer" }, t("viewer.live")));
}

function downloadLink(source) {
  const live = liveLink(source);
  if (live) return live;
  const name = fileName(source.path);
  const path = `/documents/${encodeURIComponent(source.document_id)}/file`;
  const link = el("a", { class: "download", href: `/api/v1${path}`, download: name,
    "aria-label": t("viewer.downloadLabel", { name }) }, t("viewer.download"));
  link.addEventListener("click", async (event) => {
    event.preventDefault();
    try {
      const blob = await (await call(path)).blob();
      const url = URL.createObjectURL(blob);
      const save = el("a", { href: url, download: name, hidden: true });
      document.body.append(save);
      save.click();
      save.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (error) {
      $("viewer-body").prepend(el("p", { class: "error" }, t("viewer.downloadFailed", { message: error.message })));
    }
  });
  return el("p", { class: "viewer-download" }, link);
}

async function render(body, source) {
  const doc = await documentOf(source.document_id);
  if (opened !== source) return; // another source was opened meanwhile
  const span = spanOf(doc.text, source);
  const kind = doc.layout && doc.layout.units.length ? doc.layout.kind : "text";
  body.dataset.kind = kind;
  delete body.dataset.page;
  if (kind === "page") return showPdf(body, doc, source, span);
  if (kind === "slide") return showSlide(body, doc, source, span);
  if (kind === "sheet" && showSheet(body, doc, source, span)) return;
  body.replaceChildren(...renderLines(doc.text, source, span));
  const target = body.querySelector("mark.hl");
  if (target) target.scrollIntoView({ block: "center" });
}

// Left / right arrow keys turn the pages or slides while the viewer has the focus.
function turnPages(event) {
  const step = { ArrowLeft: ".prev", ArrowRight: ".next" }[event.key];
  const button = step && event.currentTarget.querySelector(`.pager ${step}`);
  if (!button || button.disabled || event.altKey || event.ctrlKey || event.metaKey) return;
  event.preventDefault();
  button.click();
}

export async function openSource(source) {
  if (!opened && !$("viewer-body").dataset.keys) {
    $("viewer-body").addEventListener("keydown", turnPages);
    $("viewer-body").dataset.keys = "on";
  }
  opened = source;
  const viewer = $("viewer");
  const body = $("viewer-body");
  viewer.hidden = false;
  document.body.classList.add("with-viewer");
  $("viewer-title").textContent = source.title || fileName(source.path) || t("viewer.source");
  $("viewer-meta").replaceChildren(...meta(source));
  for (const old of viewer.querySelectorAll(".viewer-download")) old.remove();
  $("viewer-meta").after(downloadLink(source));
  body.replaceChildren(el("p", { class: "muted" }, t("viewer.loading")));
  try {
    await render(body, source);
  } catch (error) {
    if (opened === source) body.replaceChildren(el("p", { class: "error" }, t("viewer.failed", { message: error.message })));
  }
}

export function closeSource() {
  opened = null;
  $("viewer").hidden = true;
  document.body.classList.remove("with-viewer");
}

document.addEventListener("docqa:language", () => {
  if (opened && !$("viewer").hidden) openSource(opened);
});
