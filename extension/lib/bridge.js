// The bridge: hear the site-tool calls for this browser and run each (calls.js), keep the approvals badge current, and
// keep the browser online for agents.
//
// Where the server has push, the worker hears its calls on a socket (push.js): a frame says a call is queued or
// decided, and the worker reads it over REST without waiting. While the socket is open it makes no periodic request
// (an idle browser then costs the server nearly nothing, and the open socket keeps it online). Where the server has
// no push (the ticket mint answers 503), or the socket cannot open a few times in a row, it long-polls
// GET /api/bridge/calls instead, with a heartbeat, and tries the socket again later.
//
// Chrome stops an extension's service worker after 30 s without events or extension API calls. While signed in, the
// worker makes a local extension API call every KEEP_ALIVE_MS (it costs the server nothing), which keeps it alive; if
// Chrome stops it anyway (an update, memory pressure), the 30-second alarm in background.js starts it again, and it
// reconnects and catches up.

import { Api, ApiError, NetworkError, describe } from "./api.js";
import { refreshPending, setBadge } from "./approvals.js";
import { start } from "./calls.js";
import { pollFor } from "./longpoll.js";
import * as push from "./push.js";
import * as sites from "./sites.js";
import * as store from "./store.js";
import { backoffMs, sleep } from "./timing.js";

const KEEP_ALIVE_MS = 5_000; // an extension API call this often resets the worker's idle timer (Chrome's is 30 s)
const BACKOFF_MAX_S = 30;
const RECONNECT_MAX_S = 60;
const SOCKET_TRIES = 3; // sockets in a row that do not open (or drop at once) before long-polling for a while
const STEADY_MS = 60_000; // a socket that lived this long dropped by chance: the next one comes within a second
const PUSH_RETRY_MS = 5 * 60_000; // long-poll this long before trying the socket again
const NO_PUSH_S = 3600; // the most a 503 or a 429 from the ticket mint keeps the worker long-polling

let loop = null; // {controller, promise}: at most one loop per worker
let delivery = null; // how calls are heard now: store.DELIVERIES.push or .poll, null between the two

/** The server refused the token: stop everything until the human signs in again. */
export async function refuse(error) {
  stop();
  await store.setStatus(store.STATES.refused, { error: `the server refused the token; sign in again (${describe(error)})` });
  await store.setPending([]);
  await setBadge(0);
}

/** True while calls are heard on an open push socket: nothing is to be asked of the server on a timer then. */
export function pushed() {
  return delivery === store.DELIVERIES.push;
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

/** Stop the loop: its socket is closed and its long-poll aborted at once (the server then claims nothing for it). */
export function stop() {
  loop?.controller.abort();
  loop = null;
}

async function runLoop(signal) {
  const auth = await store.auth();
  if (!auth || (await store.status()).state === store.STATES.refused || signal.aborted) return;
  const api = new Api(auth.server, auth.token);
  const keepAlive = setInterval(() => chrome.runtime.getPlatformInfo().catch(() => {}), KEEP_ALIVE_MS); // local only
  let pollUntil = 0; // long-poll instead of opening the socket until then (ms)
  let failures = 0; // sockets in a row that did not open or dropped at once
  let unreachable = 0; // ticket mints in a row that found no server
  try {
    while (!signal.aborted) {
      if (Date.now() < pollUntil) {
        delivery = store.DELIVERIES.poll;
        await pollFor(api, signal, pollUntil, refuse);
        delivery = null;
        continue;
      }
      const ended = await listen(api, signal);
      if (signal.aborted) break;
      const error = ended.error;
      if (error?.status === 401) {
        await refuse(error);
        break;
      }
      if (error instanceof ApiError && [429, 503].includes(error.status)) {
        // 503: this server has no push (Retry-After says for how long); 429: too many tickets this minute.
        pollUntil = Date.now() + Math.min(error.retryAfterS ?? NO_PUSH_S, NO_PUSH_S) * 1000;
        failures = 0;
        continue;
      }
      if (error instanceof NetworkError) {
        // The server is out of reach: a long-poll would fare no better. Offline, then the socket again.
        unreachable += 1;
        const waitMs = backoffMs(unreachable, BACKOFF_MAX_S);
        await store.setStatus(store.STATES.offline, { error: describe(error), retryAt: Date.now() + waitMs });
        await sleep(waitMs, signal);
        continue;
      }
      unreachable = 0;
      if (ended.renew) continue; // a fresh socket before API Gateway cuts this one: at once
      // Any other refusal of the ticket, a socket that did not open, or one that dropped soon after it did.
      failures = ended.lastedMs >= STEADY_MS ? 1 : failures + 1;
      if (failures >= SOCKET_TRIES) {
        pollUntil = Date.now() + PUSH_RETRY_MS;
        failures = 0;
        continue;
      }
      await sleep(backoffMs(failures, RECONNECT_MAX_S), signal);
    }
  } finally {
    clearInterval(keepAlive);
    delivery = null;
  }
}

// -- push ---------------------------------------------------------------------------------------------------------------

/** At most one run of `work` at a time; asked again meanwhile, it runs once more when the run ends (a burst of
 * pushes costs two reads, not one each). */
function coalesced(work) {
  let running = null;
  let again = false;
  return () => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await work();
      } while (again);
    })().finally(() => {
      running = null;
    });
    return running;
  };
}

/** Hear calls on a push socket until it ends: {error} when it did not open, else how it ended and `lastedMs`. */
async function listen(api, signal) {
  let socket = null;
  const readCalls = coalesced(async () => {
    for (const call of (await api.readyCalls(signal)).calls) start(api, call);
  });
  const readPending = coalesced(() => refreshPending(api, signal));
  // A push not acted on is caught up after a reconnect: the server keeps the call queued meanwhile.
  const failed = (error) => {
    if (signal.aborted) return;
    if (error?.status === 401) refuse(error).catch(() => {});
    else socket?.close();
  };
  const catchUp = () => {
    readCalls().catch(failed);
    readPending().catch(failed);
    sites.reportIfDue(api).catch((error) => error?.status === 401 && failed(error));
  };
  const heard = async (message) => {
    store.setContact(store.DELIVERIES.push).catch(() => {});
    if (message?.type === "fetch") catchUp(); // too big for a frame: read it all over REST
    if (message?.type !== "siteCall") return;
    if (message.status === "queued") readCalls().catch(failed);
    // Waiting for the human, or decided (a queued one that waited leaves the badge): the approvals change.
    const waited = (await store.pending()).calls.some((call) => call.id === message.id);
    if (message.status !== "queued" || waited) readPending().catch(failed);
  };
  try {
    socket = await push.open(api, "bridge", heard);
  } catch (error) {
    return { error };
  }
  const openedAt = Date.now();
  const close = () => socket.close();
  signal.addEventListener("abort", close);
  if (signal.aborted) close();
  delivery = store.DELIVERIES.push;
  await store.setContact(store.DELIVERIES.push);
  await store.noteWorker((w) => ({ ...w, sockets: (w.sockets ?? 0) + 1, lastSocketAt: openedAt }));
  catchUp(); // whatever was queued or decided before the socket opened
  const ended = await socket.closed;
  signal.removeEventListener("abort", close);
  delivery = null;
  const how = ended.renew ? "renew" : ended.dead ? "dead" : `closed ${ended.code}`;
  await store.noteWorker((w) => ({ ...w, socketEnds: [...(w.socketEnds ?? []), how].slice(-20) }));
  return { ...ended, lastedMs: Date.now() - openedAt };
}
