// The bridge loop: long-poll the server for site-tool calls, run each in a tab of its site, post the outcome; keep the
// browser reported online (heartbeat) and the approvals badge current.
//
// Chrome stops an extension's service worker after 30 s without events or extension API calls. While signed in, the
// loop makes an extension API call at least every TICK_MS (storage writes, the badge), which keeps the worker alive;
// if Chrome stops it anyway (an update, memory pressure), the 30-second alarm in background.js starts it again.

import { Api, ApiError, NetworkError, serverNow } from "./api.js";
import { checkArguments } from "./schema.js";
import * as sites from "./sites.js";
import * as store from "./store.js";
import { ERROR_MAX, openInBackground, runTool, tabWithTool, waitForTool } from "./tabs.js";

const RESULT_BYTES_MAX = 256 * 1024;
const TICK_MS = 5_000; // approvals and heartbeat between polls; each tick also resets the worker's idle timer
const BACKOFF_MAX_S = 30;

let loop = null; // {controller, promise}: at most one loop per worker
let healthy = true; // the last exchange with the server worked (the tick stays quiet while the loop backs off)
const inFlight = new Set(); // ids of the calls this worker is running

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** What went wrong, in words for the popup (never the token). */
export function describe(error) {
  if (error instanceof NetworkError) return error.message;
  if (error instanceof ApiError) return `the server answered ${error.status}${error.detail ? `: ${error.detail}` : ""}`;
  return error?.message ?? String(error);
}

export async function setBadge(count) {
  await chrome.action.setBadgeText({ text: count > 0 ? (count > 99 ? "99+" : String(count)) : "" });
  if (count > 0) await chrome.action.setBadgeBackgroundColor({ color: "#c5221f" });
}

/** The server refused the token: stop everything until the human signs in again. */
export async function refuse(error) {
  stop();
  await store.setStatus(store.STATES.refused, { error: `the server refused the token; sign in again (${describe(error)})` });
  await store.setPending([]);
  await setBadge(0);
}

/** The calls waiting for the human's decision, into the session store and the badge (unless the human signed out
 * while the request was on its way: the badge must not come back). */
export async function refreshPending(api, signal = null) {
  const { calls } = await api.pending();
  if (signal?.aborted || (await store.auth())?.token !== api.token) return calls;
  await store.setPending(calls);
  await setBadge(calls.length);
  return calls;
}

/** Start the loop unless it runs (or nobody is signed in, or the token was refused). Safe to call often. */
export function ensureRunning() {
  if (!loop) {
    const controller = new AbortController();
    const promise = runLoop(controller.signal).finally(() => {
      if (loop?.controller === controller) loop = null;
    });
    loop = { controller, promise };
  }
  return loop.promise;
}

/** Stop the loop: its long-poll is aborted at once (the server then claims nothing for it). */
export function stop() {
  loop?.controller.abort();
  loop = null;
}

async function tick(api, signal) {
  await chrome.runtime.getPlatformInfo(); // an extension API call: Chrome's idle timer starts again
  if (signal.aborted || !healthy) return;
  try {
    await sites.reportIfDue(api);
    await refreshPending(api, signal);
    await store.setContact();
  } catch (error) {
    if (error?.status === 401 && !signal.aborted) await refuse(error);
    // anything else: the loop's next poll finds out and backs off
  }
}

async function runLoop(signal) {
  const auth = await store.auth();
  if (!auth || (await store.status()).state === store.STATES.refused || signal.aborted) return;
  const api = new Api(auth.server, auth.token);
  healthy = true;
  const ticker = setInterval(() => tick(api, signal).catch(() => {}), TICK_MS);
  let failures = 0;
  try {
    while (!signal.aborted) {
      try {
        // After a failure, a report first: it answers at once (a poll may hold 20 s), so the popup shows the
        // connection back as soon as it is. A report refused for its content is shown there; polling goes on.
        await (healthy ? sites.reportIfDue(api) : sites.report(api)).catch((error) => {
          if (error instanceof NetworkError || [401, 429].includes(error?.status) || error?.status >= 500) throw error;
        });
        if (!healthy) {
          await store.setContact();
          healthy = true;
        }
        const { calls } = await api.poll(signal);
        await store.noteWorker((w) => ({ ...w, polls: w.polls + 1, lastPollAt: Date.now() }));
        await store.setContact();
        healthy = true;
        failures = 0;
        for (const call of calls) start(api, call);
        refreshPending(api, signal).catch(() => {});
      } catch (error) {
        if (signal.aborted) break;
        if (error?.status === 401) {
          await refuse(error);
          break;
        }
        healthy = false;
        failures += 1;
        const waitS = Math.min(error?.retryAfterS ?? 2 ** (failures - 1), BACKOFF_MAX_S);
        await store.setStatus(store.STATES.offline, { error: describe(error), retryAt: Date.now() + waitS * 1000 });
        await sleep(waitS * 1000, signal);
      }
    }
  } finally {
    clearInterval(ticker);
  }
}

// -- one call ---------------------------------------------------------------------------------------------------------

function start(api, call) {
  if (inFlight.has(call.id)) return;
  inFlight.add(call.id);
  run(api, call)
    .catch((error) => console.warn(`Agent Workspace: call ${call.id} of ${call.tool}: ${describe(error)}`))
    .finally(() => inFlight.delete(call.id));
}

/** The call's deadline on this computer's clock (ms): the server's deadline, corrected for a skewed clock. */
function localDeadline(call) {
  const deadline = Date.parse(call.deadline);
  return Number.isNaN(deadline) ? Date.now() + 60_000 : deadline - (serverNow() - Date.now());
}

async function run(api, call) {
  const untilMs = localDeadline(call);
  let timer;
  const timedOut = new Promise((resolve) => {
    timer = setTimeout(() => resolve(null), Math.max(0, untilMs - Date.now()));
  });
  const outcome = await Promise.race([execute(call, untilMs), timedOut]);
  clearTimeout(timer);
  await store.noteWorker((w) => ({ ...w, calls: w.calls + 1, lastCall: { id: call.id, tool: call.tool, at: Date.now(), ok: !!outcome && !outcome.error } }));
  // Past the deadline the server has failed the call itself; a late post would only be refused.
  while (outcome && Date.now() < untilMs) {
    try {
      await api.postOutcome(call.id, outcome);
      return;
    } catch (error) {
      if (!(error instanceof NetworkError) && !(error?.status >= 500)) return; // 409 late, 422 too large: the server decided
      await sleep(1000);
    }
  }
}

/** Run the call in a tab of its site: {resultJson} or {error}. */
async function execute(call, untilMs) {
  try {
    const site = (await store.shared())[call.site];
    if (!site) return { error: `${call.site} is no longer shared from this browser` };
    const page = site.tools.find((tool) => tool.name === call.tool)?.url ?? site.url;
    let found = await tabWithTool(call.site, call.tool, page, untilMs);
    if (!found) {
      const tab = await openInBackground(page, untilMs); // no tab offers the tool: open its page, not focused
      const tool = await waitForTool(tab.id, call.tool, untilMs);
      if (!tool) return { error: `the page ${page} does not offer the tool ${call.tool} now` };
      found = { tab, tool };
    }
    const mismatch = checkArguments(call.tool, found.tool.inputSchema, call.arguments);
    if (mismatch) return { error: mismatch };
    const ran = await runTool(found.tab.id, call.tool, call.arguments);
    if (!ran.ok) return { error: ran.error.slice(0, ERROR_MAX) };
    const bytes = new TextEncoder().encode(ran.json).length;
    if (bytes > RESULT_BYTES_MAX) {
      return { error: `the result is ${bytes.toLocaleString("en-US")} bytes, over the ${RESULT_BYTES_MAX / 1024} KiB limit` };
    }
    return { resultJson: ran.json };
  } catch (error) {
    return { error: String(error?.message ?? error).slice(0, ERROR_MAX) };
  }
}
