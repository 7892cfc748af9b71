// A PDF source as the real page: the server renders it (GET /documents/{id}/pages/{n}, a PNG) and says
// where the cited span stands on it (…/pages/{n}/boxes); translucent boxes over the image mark it.
// The image is fetched with the page's key and shown as a data: URL (the CSP allows no other origin).
import { call, getJSON } from "./api.js";
import { el } from "./dom.js";
import { register, t } from "./i18n.js";
import { pager, replaceKeepingFocus, unitAt } from "./sourcetext.js";

register({
  en: { "pdf.page": "Page {n} of {count}", "pdf.pages": "Pages", "pdf.prev": "Previous page", "pdf.next": "Next page",
        "pdf.image": "Page {n} of {name}", "pdf.quote": "Quoted text", "pdf.notOnPage": "The quoted text is not on this page." },
  zh: { "pdf.page": "第 {n} 页，共 {count} 页", "pdf.pages": "页面", "pdf.prev": "上一页", "pdf.next": "下一页",
        "pdf.image": "{name} 第 {n} 页", "pdf.quote": "引用的文字", "pdf.notOnPage": "引用的文字不在这一页。" },
});

const SCALE = 1.5;
const images = new Map(); // "id/page" -> data: URL (a promise)

function imageOf(id, n) {
  const key = `${id}/${n}`;
  if (!images.has(key)) {
    const promise = call(`/documents/${encodeURIComponent(id)}/pages/${n}?scale=${SCALE}`)
      .then((response) => response.blob()).then(dataUrl);
    promise.catch(() => images.delete(key));
    images.set(key, promise);
  }
  return images.get(key);
}

function dataUrl(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

async function boxesOf(id, n, span) {
  if (!span) return [];
  const body = await getJSON(`/documents/${encodeURIComponent(id)}/pages/${n}/boxes?char_start=${span[0]}&char_end=${span[1]}`);
  return body.boxes;
}

// Boxes are fractions of the page: placed in percent over the image, so they follow its size.
function boxNode(box) {
  const node = el("div", { class: "hl-box", "aria-hidden": "true" });
  Object.assign(node.style, {
    left: `${box.left * 100}%`, top: `${box.top * 100}%`,
    width: `${(box.right - box.left) * 100}%`, height: `${(box.bottom - box.top) * 100}%`,
  });
  return node;
}

// The cited page of a PDF in `body`, with previous / next page buttons.
export function showPdf(body, doc, source, span) {
  const units = doc.layout.units;
  const count = doc.layout.count || units.length;
  const cited = source.page || (span && (unitAt(units, span[0]) || {}).n) || 1;
  const name = (doc.path || "").split("/").pop();
  const quote = span ? doc.text.slice(span[0], span[1]) : "";
  let current = 0;

  async function go(n) {
    if (n < 1 || (count && n > count)) return;
    current = n;
    const label = t("pdf.page", { n, count });
    const words = { group: t("pdf.pages"), prev: t("pdf.prev"), next: t("pdf.next") };
    const frame = el("div", { class: "pdf-frame" });
    const note = el("p", { class: "muted pdf-note" });
    replaceKeepingFocus(body, [pager(label, n, count, go, words), frame, note,
      quote ? el("blockquote", { class: "pdf-quote", "aria-label": t("pdf.quote") }, quote) : null]);
    body.dataset.page = String(n);
    const [url, boxes] = await Promise.all([imageOf(doc.document_id, n), boxesOf(doc.document_id, n, span)]);
    if (current !== n) return; // another page was asked for meanwhile
    const image = el("img", { class: "pdf-page", src: url, alt: t("pdf.image", { n, name }) });
    frame.replaceChildren(image, ...boxes.map(boxNode));
    if (span && !boxes.length && n === cited) note.textContent = t("pdf.notOnPage");
    await image.decode().catch(() => {});
    const first = frame.querySelector(".hl-box");
    if (first) first.scrollIntoView({ block: "center" });
  }
  return go(cited);
}
