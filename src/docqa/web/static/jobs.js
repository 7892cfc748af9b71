// Background jobs (uploads, folder ingests): poll GET /jobs/{id} until it ends, reporting each state.
import { getJSON } from "./api.js";

const ENDED = new Set(["succeeded", "failed"]);

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// onUpdate(job) after every poll; resolves with the finished job.
export async function followJob(id, onUpdate, interval = 400) {
  for (;;) {
    const job = await getJSON(`/jobs/${encodeURIComponent(id)}`);
    if (onUpdate) onUpdate(job);
    if (ENDED.has(job.status)) return job;
    await sleep(interval);
  }
}

// The outcome of each file of an ingest report (the job's result): path -> {result, reason}.
export function outcomes(report) {
  const found = new Map();
  const put = (path, result, reason) => found.set(path, { result, reason: reason || "" });
  for (const path of report.added || []) put(path, "added");
  for (const path of report.updated || []) put(path, "updated");
  for (const path of report.unchanged || []) put(path, "unchanged");
  for (const m of report.moved || []) put(m.to, "updated", m.from);
  for (const s of report.skipped || []) put(s.path, "skipped", s.reason);
  for (const path of report.still_skipped || []) put(path, "skipped");
  for (const f of report.failed || []) put(f.path, "failed", f.reason);
  for (const path of report.still_failing || []) put(path, "failed");
  for (const u of report.unreadable || []) put(u.path, "failed", u.reason);
  return found;
}
