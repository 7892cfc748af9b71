// The page's views: Ask (everyone), Documents (everyone; adding and removing for editors), Log and Status
// (editors).  Which tabs show follows the caller's role from /whoami; the server decides every request anyway.
import { getJSON } from "./api.js";

const ROLES = { reader: 1, editor: 2, admin: 3 };
const NEEDS = { ask: "reader", documents: "reader", log: "editor", status: "editor" };
const opened = new Map(); // view name -> function called each time the view is shown
export const caller = { role: "reader", collections: [], keyId: null, loaded: null };

export function can(role) {
  return (ROLES[caller.role] || 0) >= (ROLES[role] || 99);
}

// A module registers what to do when its view is shown (e.g. load the document list).
export function onShow(view, callback) {
  opened.set(view, callback);
}

export function show(view) {
  if (!(view in NEEDS) || !can(NEEDS[view])) view = "ask";
  for (const tab of document.querySelectorAll("#nav [data-view]")) {
    const current = tab.dataset.view === view;
    tab.setAttribute("aria-current", current ? "page" : "false");
  }
  for (const name of Object.keys(NEEDS)) {
    const section = document.getElementById(`view-${name}`);
    if (section) section.hidden = name !== view;
  }
  document.body.dataset.view = view;
  document.dispatchEvent(new CustomEvent("docqa:view", { detail: { view } }));
  if (location.hash !== `#${view}` && !(view === "ask" && !location.hash)) history.replaceState(null, "", `#${view}`);
  const callback = opened.get(view);
  if (callback) callback();
}

// Who is asking: hides what the role may not do (elements with data-needs="editor" etc.).
export async function loadCaller() {
  try {
    const who = await getJSON("/whoami");
    caller.role = who.role || "reader";
    caller.collections = who.collections || [];
    caller.keyId = who.key_id || null;
  } catch (_) {
    caller.role = "reader";
  }
  for (const node of document.querySelectorAll("[data-needs]")) node.hidden = !can(node.dataset.needs);
  return caller;
}

export function startViews() {
  for (const tab of document.querySelectorAll("#nav [data-view]")) {
    tab.addEventListener("click", () => show(tab.dataset.view));
  }
  window.addEventListener("hashchange", () => show(location.hash.slice(1) || "ask"));
  if (!document.body.dataset.view) document.body.dataset.view = "ask"; // the ask box shows while the caller loads
  caller.loaded = loadCaller().then(() => show(location.hash.slice(1) || "ask"));
  return caller.loaded;
}
