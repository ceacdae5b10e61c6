// What waits on the human, read every round while a workspace is chosen: GET …/board/needs-you (questions,
// blockers, site calls, triage, reviews) and Claude Code's tool permission requests. Kept in the store as
// `needs`; the top bar counts it, the tab title carries the count, the board marks the cards that ask the
// human something, the inbox lists it and the drawer decides a task's part of it. The permission requests as
// read (every status) are kept as `permissions` too: the inbox shows the ones answered last from it, rather
// than reading …/permissions a second time in the same round.

import * as store from "./store.js";

const KINDS = ["permissions", "questions", "blockers", "siteCalls", "triage", "reviews"];
// "kind:id" decided from this page: a listing read before the decision must not bring it back.
const decided = new Set();

/** Read the inbox (two requests in parallel) and publish it. */
export async function refreshNeeds(current) {
  const [needs, permissions] = await Promise.all([
    store.api("GET", store.ws("/board/needs-you")),
    store.api("GET", store.ws("/permissions")),
  ]);
  if (!current()) return;
  const requests = permissions && Array.isArray(permissions.permissions) ? permissions.permissions : [];
  const pending = requests.filter((p) => p.status === "pending");
  const read = { ...needs, permissions: pending };
  const listed = new Set();
  const out = {};
  for (const kind of KINDS) {
    const items = Array.isArray(read[kind]) ? read[kind] : [];
    for (const item of items) listed.add(`${kind}:${item.id}`);
    out[kind] = items.filter((item) => !decided.has(`${kind}:${item.id}`));
  }
  for (const key of [...decided]) if (!listed.has(key)) decided.delete(key);
  for (const task of [...out.blockers, ...out.triage, ...out.reviews]) store.learnTask(task);
  store.set("permissions", requests);
  publish(out);
}

function publish(needs) {
  needs.count = KINDS.reduce((sum, kind) => sum + needs[kind].length, 0);
  store.set("needs", needs);
}

/** An item decided here leaves the inbox at once, and stays out until the server stops listing it. */
export function markDecided(kind, id) {
  decided.add(`${kind}:${id}`);
  const needs = store.get("needs");
  if (!needs) return;
  const next = { ...needs };
  next[kind] = needs[kind].filter((item) => item.id !== id);
  publish(next);
}

/** What the task asks of the human now: [{kind, item}] (its questions, site calls, permission requests, its
 * blocker, triage or review). */
export function asksFor(taskId) {
  const needs = store.get("needs");
  if (!needs) return [];
  const found = [];
  for (const kind of KINDS) {
    for (const item of needs[kind]) {
      const of = kind === "blockers" || kind === "triage" || kind === "reviews" ? item.id : item.taskId;
      if (of === taskId) found.push({ kind, item });
    }
  }
  return found;
}

export function clearNeeds() {
  decided.clear();
  store.set("permissions", null);
  store.set("needs", null);
}
