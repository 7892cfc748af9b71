// The API, as the page calls it: the same endpoints and keys as any client.  With API keys the page
// asks for one once (kept in sessionStorage) and sends it as a Bearer token; it decides nothing else.
export const API = "/api/v1";
const KEY = "docqa.key";

let waiting = null; // the pending key prompt, shared by every request that got a 401

function askKey(refused) {
  if (waiting) return waiting;
  const form = document.getElementById("key-form");
  const input = document.getElementById("key-input");
  form.querySelector(".hint").textContent = refused ? "That key was refused: try another." :
    "Kept for this browser session only.";
  form.hidden = false;
  input.focus();
  waiting = new Promise((resolve) => {
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      sessionStorage.setItem(KEY, input.value.trim());
      input.value = "";
      form.hidden = true;
      waiting = null;
      resolve();
    }, { once: true });
  });
  return waiting;
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// fetch with the key; a 401 asks for a key and tries again.  Other errors: ApiError.
export async function call(path, options = {}) {
  for (;;) {
    const headers = { ...(options.headers || {}) };
    const key = sessionStorage.getItem(KEY);
    if (key) headers["Authorization"] = `Bearer ${key}`;
    const response = await fetch(API + path, { ...options, headers });
    if (response.status === 401) {
      sessionStorage.removeItem(KEY);
      await askKey(Boolean(key));
      continue;
    }
    if (!response.ok) {
      let code = "http_" + response.status, message = response.statusText;
      try {
        const body = await response.json();
        if (body && body.error) ({ code, message } = body.error);
      } catch (_) { /* not JSON */ }
      throw new ApiError(response.status, code, message);
    }
    return response;
  }
}

export async function getJSON(path) {
  return (await call(path)).json();
}

// POST a JSON body and read the answer's Server-Sent Events (EventSource cannot POST):
// onEvent(type, data) for each event, in order.
export async function stream(path, body, onEvent, signal) {
  const response = await call(path, {
    method: "POST", signal,
    headers: { "Content-Type": "application/json", "Accept": "text/event-stream" },
    body: JSON.stringify(body),
  });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
      dispatch(block, onEvent);
    }
  }
  if (buffer.trim()) dispatch(buffer, onEvent);
}

function dispatch(block, onEvent) {
  let type = "message";
  const data = [];
  for (const line of block.split(/\r?\n/)) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") type = value;
    else if (field === "data") data.push(value);
  }
  if (!data.length) return;
  onEvent(type, JSON.parse(data.join("\n")));
}
