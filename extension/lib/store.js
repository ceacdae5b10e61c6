// What the extension keeps, and where. chrome.storage.local (this device only, never sync): the server and token,
// the connection state the popup shows, and the shared sites with their tools. chrome.storage.session (memory,
// gone when Chrome quits): the worker's starts and counters, and the calls waiting for the human.

export const STATES = Object.freeze({
  signedOut: "signedOut",
  connected: "connected",
  offline: "offline", // signed in, but the server cannot be reached (or refuses for a reason other than the token)
  refused: "refused", // the server refused the token (401): sign in again
});

const local = chrome.storage.local;
const session = chrome.storage.session;

// Read-modify-write of one key must not interleave with another in this worker: one queue for all of them.
let queue = Promise.resolve();
function serially(work) {
  const run = queue.then(work, work);
  queue = run.catch(() => {});
  return run;
}

async function update(area, key, change) {
  return serially(async () => {
    const { [key]: before } = await area.get(key);
    const after = change(before);
    if (after !== before) await area.set({ [key]: after }); // unchanged (a late answer after sign-out): no write
    return after;
  });
}

export async function auth() {
  const { auth: saved } = await local.get("auth");
  return saved?.server && saved?.token ? saved : null;
}

export async function saveAuth(server, token) {
  await local.set({ auth: { server, token }, lastServer: server });
}

export async function clearAuth() {
  await local.remove("auth");
}

export async function status() {
  const { status: saved } = await local.get("status");
  return saved ?? { state: STATES.signedOut };
}

// How the worker hears its calls while connected: a push socket, or long-polls.
export const DELIVERIES = Object.freeze({ push: "push", poll: "poll" });

/** Set the connection state; `details` (error, server, lastContactAt, retryAt) replace the previous ones. */
export function setStatus(state, details = {}) {
  return update(local, "status", (before) => ({
    state,
    delivery: before?.delivery ?? null,
    server: details.server ?? before?.server ?? null,
    error: details.error ?? null,
    retryAt: details.retryAt ?? null,
    lastContactAt: details.lastContactAt ?? before?.lastContactAt ?? null,
    changedAt: before?.state === state ? before.changedAt : Date.now(),
  }));
}

/** Note a successful exchange with the server: connected now (hearing calls by `delivery`, when given). An answer
 * that arrives after a sign-out (or a refused token) changes nothing: only signing in leaves those states. */
export function setContact(delivery = null) {
  return update(local, "status", (before) => before?.state === STATES.signedOut || before?.state === STATES.refused ? before : {
    ...before,
    state: STATES.connected,
    delivery: delivery ?? before?.delivery ?? null,
    error: null,
    retryAt: null,
    lastContactAt: Date.now(),
    changedAt: before?.state === STATES.connected ? before.changedAt : Date.now(),
  });
}

/** How the worker hears its calls now (`DELIVERIES`), for the popup; the state is left as it is. */
export function setDelivery(delivery) {
  return update(local, "status", (before) => (before ? { ...before, delivery } : before));
}

export async function shared() {
  const { shared: sites } = await local.get("shared");
  return sites ?? {};
}

/** Change the shared sites under the queue: `change(sites)` returns the new map. */
export function updateShared(change) {
  return update(local, "shared", (before) => change({ ...(before ?? {}) }));
}

export async function sharedFor() {
  return (await local.get("sharedFor")).sharedFor ?? null;
}

export async function setSharedFor(fingerprint) {
  await local.set({ sharedFor: fingerprint });
}

/** Counters and timestamps of the worker's life, for the popup and the tests (gone when Chrome quits). */
export function noteWorker(change) {
  return update(session, "worker", (before) => change({ starts: [], polls: 0, reports: 0, calls: 0, ...(before ?? {}) }));
}

export async function setPending(calls) {
  await session.set({ pending: { calls, fetchedAt: Date.now() } });
}

export async function pending() {
  return (await session.get("pending")).pending ?? { calls: [], fetchedAt: null };
}
