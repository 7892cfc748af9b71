// Adding files, for the people who keep the documents: drop files or whole folders (or pick them),
// uploaded in batches to POST /documents with their folders kept, each file's progress and result shown.
import { API, call } from "./api.js";
import { el } from "./dom.js";
import { register, t } from "./i18n.js";
import { followJob, outcomes, sleep } from "./jobs.js";
import { size } from "./format.js";

register({
  en: {
    "upload.drop": "Drop files or folders here", "upload.files": "Choose files", "upload.folder": "Choose a folder",
    "upload.collection": "Into collection", "upload.default": "default collection", "upload.file": "File",
    "upload.size": "Size", "upload.progress": "Progress", "upload.result": "Result", "upload.queued": "waiting",
    "upload.sending": "uploading {pct}%", "upload.indexing": "indexing {done}/{total}", "upload.hidden": "hidden file, not sent",
    "upload.too_large": "larger than the upload limit ({mb} MB)", "upload.summary": "{n} file(s): {counts}",
    "result.added": "added", "result.updated": "updated", "result.unchanged": "unchanged", "result.skipped": "skipped",
    "result.failed": "failed", "result.done": "done",
  },
  zh: {
    "upload.drop": "将文件或文件夹拖放到这里", "upload.files": "选择文件", "upload.folder": "选择文件夹",
    "upload.collection": "加入集合", "upload.default": "默认集合", "upload.file": "文件", "upload.size": "大小",
    "upload.progress": "进度", "upload.result": "结果", "upload.queued": "等待中", "upload.sending": "上传中 {pct}%",
    "upload.indexing": "索引中 {done}/{total}", "upload.hidden": "隐藏文件，未发送",
    "upload.too_large": "超过上传上限（{mb} MB）", "upload.summary": "{n} 个文件：{counts}",
    "result.added": "已添加", "result.updated": "已更新", "result.unchanged": "未变化", "result.skipped": "已跳过",
    "result.failed": "失败", "result.done": "完成",
  },
});

const BATCH_FILES = 20;

// Files of a drop, each with its path relative to what was dropped (folders walked).  The entries must be
// taken before the drop handler returns, so this reads them before its first await.
export function droppedFiles(transfer) {
  const items = [...(transfer.items || [])].filter((item) => item.kind === "file");
  const entries = items.map((item) => (item.webkitGetAsEntry ? item.webkitGetAsEntry() : null));
  const plain = [...(transfer.files || [])].map((file) => ({ file, path: file.name }));
  if (!entries.length || !entries.every(Boolean)) return Promise.resolve(plain);
  return (async () => {
    const found = [];
    for (const entry of entries) await walk(entry, found);
    return found;
  })();
}

async function walk(entry, found) {
  if (entry.isFile) {
    const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
    found.push({ file, path: entry.fullPath.replace(/^\/+/, "") || file.name });
  } else if (entry.isDirectory) {
    const reader = entry.createReader();
    for (;;) { // readEntries hands out a folder's entries a batch at a time
      const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
      if (!batch.length) break;
      for (const child of batch) await walk(child, found);
    }
  }
}

// The upload panel: a drop zone with two pickers, a collection chooser and a table of files.
export class Uploader {
  constructor({ limits, collections, onDone }) {
    this.limits = limits; // {max_upload_mb, max_files}
    this.onDone = onDone;
    this.rows = el("tbody");
    this.summary = el("p", { class: "upload-summary", "aria-live": "polite" });
    this.collection = el("input", { id: "upload-collection", list: "upload-collections", placeholder: t("upload.default") });
    this.list = el("datalist", { id: "upload-collections" });
    this.setCollections(collections);
    const files = el("input", { type: "file", multiple: true, class: "sr-only", id: "upload-files", tabindex: "-1" });
    const folder = el("input", { type: "file", class: "sr-only", id: "upload-folder", tabindex: "-1" });
    folder.webkitdirectory = true;
    files.addEventListener("change", () => this.add([...files.files].map((f) => ({ file: f, path: f.name }))));
    folder.addEventListener("change", () => this.add([...folder.files].map((f) => ({ file: f, path: f.webkitRelativePath || f.name }))));
    this.zone = el("div", { id: "drop-zone", class: "drop-zone", role: "group", "aria-label": t("upload.drop") },
      el("p", {}, t("upload.drop")),
      el("button", { type: "button", onclick: () => files.click() }, t("upload.files")),
      el("button", { type: "button", onclick: () => folder.click() }, t("upload.folder")), files, folder);
    this.zone.addEventListener("dragover", (e) => { e.preventDefault(); this.zone.classList.add("over"); });
    this.zone.addEventListener("dragleave", () => this.zone.classList.remove("over"));
    this.zone.addEventListener("drop", (e) => {
      e.preventDefault();
      this.zone.classList.remove("over");
      droppedFiles(e.dataTransfer).then((found) => this.add(found));
    });
    this.node = el("section", { class: "upload", "aria-label": t("upload.drop") },
      el("label", { for: "upload-collection" }, t("upload.collection"), " "), this.collection, this.list, this.zone,
      this.summary,
      el("table", { class: "upload-files" }, el("thead", {}, el("tr", {}, ["upload.file", "upload.size",
        "upload.progress", "upload.result"].map((k) => el("th", {}, t(k))))), this.rows));
  }

  setCollections(names) {
    this.list.replaceChildren(...names.map((n) => el("option", { value: n })));
  }

  // Upload files ({file, path}): hidden and too-large ones are refused here, the rest sent in batches.
  async add(found) {
    const max = this.limits.max_upload_mb * 1024 * 1024;
    const items = found.map(({ file, path }) => this.row(file, path));
    const sendable = [];
    for (const item of items) {
      if (item.path.split("/").some((part) => part.startsWith("."))) this.settle(item, "skipped", t("upload.hidden"));
      else if (item.file.size > max * 0.95) this.settle(item, "failed", t("upload.too_large", { mb: this.limits.max_upload_mb }));
      else sendable.push(item);
    }
    const collection = this.collection.value.trim();
    const jobs = [];
    for (const batch of batches(sendable, max * 0.9, Math.min(BATCH_FILES, this.limits.max_files || BATCH_FILES))) {
      jobs.push(...await this.send(batch, collection));
    }
    await Promise.all(jobs);
    this.summarize(items);
    if (this.onDone) this.onDone();
  }

  row(file, path) {
    const bar = el("progress", { max: 100, value: 0, "aria-label": path });
    const result = el("td", { class: "result" }, t("upload.queued"));
    const node = el("tr", { "data-path": path }, el("td", { class: "path" }, path), el("td", {}, size(file.size)),
      el("td", {}, bar), result);
    this.rows.append(node);
    return { file, path, node, bar, result, outcome: null };
  }

  settle(item, outcome, reason) {
    item.outcome = outcome;
    item.bar.value = 100;
    item.node.dataset.result = outcome;
    item.result.replaceChildren(el("strong", {}, t(`result.${outcome}`)), reason ? `: ${reason}` : "");
  }

  // One request for a batch; returns the promises of the jobs it started.  A batch the server refuses as a
  // whole (one unsupported file) is sent again file by file, so each file gets its own answer.
  async send(batch, collection) {
    const form = new FormData();
    if (collection) form.append("collection", collection);
    form.append("keep_paths", "true");
    for (const item of batch) form.append("files", item.file, item.path);
    const total = batch.reduce((n, item) => n + item.file.size, 0) || 1;
    const response = await post(form, (loaded, sent) => {
      let before = 0;
      for (const item of batch) {
        const share = ((loaded / (sent || 1)) * total - before) / (item.file.size || 1);
        item.bar.value = Math.round(Math.max(0, Math.min(1, share)) * 100);
        item.result.textContent = t("upload.sending", { pct: item.bar.value });
        before += item.file.size;
      }
    });
    if (response.status === 202) return [this.follow(batch, response.body)];
    if (response.status === 503 && response.body?.error?.code === "busy") {
      await sleep(2000);
      return this.send(batch, collection);
    }
    if (batch.length > 1 && response.status >= 400 && response.status < 500) {
      const jobs = [];
      for (const item of batch) jobs.push(...await this.send([item], collection));
      return jobs;
    }
    for (const item of batch) this.settle(item, "failed", response.body?.error?.message || `HTTP ${response.status}`);
    return [];
  }

  async follow(batch, body) {
    const names = (body.files || []).map((f) => f.name);
    try {
      const job = await followJob(body.job.id, (job) => {
        const p = job.progress || {};
        for (const item of batch) item.result.textContent = t("upload.indexing", { done: p.done || 0, total: p.total ?? "?" });
      });
      const found = outcomes(job.result || {});
      batch.forEach((item, i) => {
        if (job.status === "failed") return this.settle(item, "failed", job.error);
        const name = names[i] || item.path;
        const hit = [...found].find(([path]) => path === name || path.endsWith("/" + name));
        this.settle(item, hit ? hit[1].result : "done", hit ? hit[1].reason : "");
      });
    } catch (error) {
      for (const item of batch) this.settle(item, "failed", error.message);
    }
  }

  summarize(items) {
    const counts = {};
    for (const item of items) counts[item.outcome] = (counts[item.outcome] || 0) + 1;
    const text = Object.entries(counts).map(([k, n]) => `${n} ${t(`result.${k}`)}`).join(", ");
    this.summary.textContent = t("upload.summary", { n: items.length, counts: text });
  }
}

// Files in batches of at most `files` files and `bytes` bytes, in order.
function batches(items, bytes, files) {
  const out = [];
  let current = [], weight = 0;
  for (const item of items) {
    if (current.length && (current.length >= files || weight + item.file.size > bytes)) {
      out.push(current);
      current = [];
      weight = 0;
    }
    current.push(item);
    weight += item.file.size;
  }
  if (current.length) out.push(current);
  return out;
}

// POST a form with XMLHttpRequest (fetch reports no upload progress), with the page's key; a 401 asks
// for a key (through api.js) and sends again.  Resolves with {status, body}.
async function post(form, onProgress) {
  for (;;) {
    const response = await new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open("POST", `${API}/documents`);
      const key = sessionStorage.getItem("docqa.key");
      if (key) xhr.setRequestHeader("Authorization", `Bearer ${key}`);
      xhr.upload.addEventListener("progress", (e) => onProgress(e.loaded, e.total));
      xhr.addEventListener("load", () => {
        let body = null;
        try { body = JSON.parse(xhr.responseText); } catch (_) { /* not JSON */ }
        resolve({ status: xhr.status, body });
      });
      xhr.addEventListener("error", () => reject(new Error("the upload did not reach the server")));
      xhr.send(form);
    });
    if (response.status !== 401) return response;
    sessionStorage.removeItem("docqa.key");
    await call("/whoami"); // asks for a key, then answers
  }
}
