// What the console knows, in one place, with events: views read it and subscribe to what they show, so a
// change (a workspace switched, the inbox read, the server unreachable) reaches every view at once.

import { ApiError, request, seg } from "./api.js";

const state = {
  token: null, // the human token (sessionStorage keeps it for the tab: session.js)
  workspaces: [],
  workspaceId: null,
  online: true, // false while the last refresh could not reach the server
  push: "off", // "live" while the push socket is open (core/push.js)
  needs: null, // the inbox as last read (core/needs.js), null before the first read
  permissions: null, // GET …/permissions as last read with the inbox (every status), null before the first read
  board: null, // GET /board: policy, labels, projects, epics, the active cycle
  cycles: [],
};
const listeners = new Map();

export function get(key) {
  return state[key];
}

/** Set a value; listeners of `key` hear it when it changed (objects always count as changed). */
export function set(key, value) {
  const before = state[key];
  state[key] = value;
  if (before !== value || (value && typeof value === "object")) emit(key, value, before);
}

/** Listen to `key` (a state key or an event name); returns the way to stop. */
export function on(key, listener) {
  if (!listeners.has(key)) listeners.set(key, new Set());
  listeners.get(key).add(listener);
  return () => listeners.get(key).delete(listener);
}

export function emit(key, value, before) {
  for (const listener of [...(listeners.get(key) || [])]) listener(value, before);
}

/** The signed-in human's REST call. */
export function api(method, path, body) {
  return request(method, path, body, state.token);
}

/** A path under the selected workspace's API. */
export function ws(rest = "") {
  return `/api/workspaces/${seg(state.workspaceId)}${rest}`;
}

export function workspace() {
  return state.workspaces.find((w) => w.id === state.workspaceId) || null;
}

// -- what the page learned about tasks, to name one where only its id is known (links, questions) ----------

const titles = new Map();
const identifiers = new Map();
const lookups = new Map();
// Tasks the server would not name in this workspace (gone, out of reach): not asked again every round, but after
// MISS_MS (it may be back), and all asked afresh in another workspace. A lookup that could not reach the server is
// not a miss.
const MISS_MS = 5 * 60 * 1000;
const misses = new Map(); // task id -> when its lookup was refused
on("workspaceId", () => misses.clear());

export function learnTask(task) {
  if (!task || !task.id) return;
  titles.set(task.id, task.title);
  if (task.identifier) identifiers.set(task.id, task.identifier);
}

export function taskTitle(taskId) {
  return titles.get(taskId) || `task ${taskId}`;
}

/** "WS-12 Fix the build", as far as the page has seen it. */
export function taskLabel(taskId) {
  const ident = identifiers.get(taskId);
  return ident ? `${ident} ${taskTitle(taskId)}` : taskTitle(taskId);
}

export function taskIdentifier(taskId) {
  return identifiers.get(taskId) || null;
}

/** Read the titles of tasks not seen yet (one lookup per task at a time); a failed one leaves the id shown, and a
 * refused one is not asked again for a few minutes. */
export async function learnTitles(taskIds, current) {
  const now = Date.now();
  for (const [id, at] of misses) if (now - at > MISS_MS) misses.delete(id);
  const unknown = [...new Set(taskIds.filter(Boolean))].filter((id) => !titles.has(id) && !misses.has(id));
  await Promise.all(
    unknown.map((id) => {
      if (!lookups.has(id)) {
        // Inside the promise: an id no address can carry ("..") fails like a refused lookup, not the caller.
        const lookup = Promise.resolve()
          .then(() => api("GET", ws(`/tasks/${seg(id)}?limit=1`)))
          .then((task) => current() && learnTask(task))
          .catch((error) => {
            if (current() && !(error instanceof ApiError && error.unreachable)) misses.set(id, Date.now());
          })
          .finally(() => lookups.delete(id));
        lookups.set(id, lookup);
      }
      return lookups.get(id);
    }),
  );
}

export function forgetTasks() {
  titles.clear();
  identifiers.clear();
  misses.clear();
}
