// Push: the console hears over a WebSocket what changed in its workspace and refreshes just that (issue 36),
// instead of reading everything every few seconds.
//
// A socket opens with a ticket (POST /api/push/tickets: topic "console", the workspace chosen, the human token;
// single use, a minute to open it). The server then says {"type":"changed","what":"needs"|"task","taskId"?}
// (the inbox, or a task on the board; with no taskId, read everything) or {"type":"fetch"} (too big to say: read
// everything). A push is a hint, never the record: after every (re)connect the page reads everything once, so what
// changed while the socket was down is not lost. As API Gateway has it, a socket idle 10 minutes is closed and any
// socket after 2 hours: the ticket says how often to ping (`pingSeconds`) and when to open a fresh socket before the
// cut (`reconnectSeconds`).
//
// Without push (503: this stack has no WebSocket API) or while the socket is down, the refresh loop polls as it
// always did (core/refresh.js `setLive`); the socket is tried again after a backoff with jitter (up to a minute),
// or when the server's Retry-After says. A workspace switch opens a new socket (a new ticket); signing out closes it.
// The store's `push` is "live" while the socket is open, else "off" (the top bar's Live sign).

import * as store from "./store.js";
import * as refresh from "./refresh.js";
import { ApiError } from "./api.js";

const PING_MS = 5 * 60_000; // unless the ticket says
const RENEW_MS = 110 * 60_000;
const BACKOFF_FIRST_MS = 1000;
const BACKOFF_CAP_MS = 60_000;
const UNAVAILABLE_MS = 60 * 60_000; // a stack without a WebSocket API will not have one in a moment
const PING = JSON.stringify({ type: "ping" });
const KINDS = new Set(["needs", "task"]);

// `generation` is bumped by each close: the events of a socket (and the answers of a mint) from before are dropped.
const link = { generation: 0, socket: null, failures: 0, retry: null, ping: null, renew: null, heard: 0 };

/** Follow the store: a socket for the workspace chosen while signed in, none otherwise; and, while it is live, a
 * round of everything when the tab comes back into view (a laptop woken, a tab switched to). */
export function startPush() {
  store.on("workspaceId", reopen);
  store.on("token", (token) => {
    if (!token) close();
  });
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") catchUp();
  });
  window.addEventListener("focus", catchUp);
}

function catchUp() {
  if (store.get("push") === "live") refresh.kick();
}

/** A new socket for the workspace chosen now (a ticket of its own), after closing the one before. */
function reopen() {
  close();
  if (store.get("token") && store.get("workspaceId")) connect(link.generation);
}

function close() {
  link.generation += 1;
  clearTimeout(link.retry);
  clearInterval(link.ping);
  clearTimeout(link.renew);
  link.retry = link.ping = link.renew = null;
  link.failures = 0;
  const socket = link.socket;
  link.socket = null;
  if (socket) socket.close(1000, "closed by the console");
  setLive(false);
}

async function connect(generation) {
  let minted;
  try {
    minted = await store.api("POST", "/api/push/tickets", { topic: "console", workspaceId: store.get("workspaceId") });
  } catch (error) {
    if (generation === link.generation) retryLater(generation, error);
    return;
  }
  if (generation !== link.generation) return;
  let socket;
  try {
    socket = new WebSocket(minted.url);
  } catch (error) {
    retryLater(generation, error); // not a WebSocket URL: nothing to open, poll meanwhile
    return;
  }
  link.socket = socket;
  socket.addEventListener("open", () => {
    if (generation !== link.generation) return;
    link.failures = 0;
    link.ping = setInterval(() => socket.send(PING), milliseconds(minted.pingSeconds, PING_MS));
    link.renew = setTimeout(reopen, milliseconds(minted.reconnectSeconds, RENEW_MS));
    setLive(true);
    refresh.kick(); // catch up: what changed before the socket opened, or while the one before was down
  });
  socket.addEventListener("message", (event) => {
    if (generation === link.generation) heard(event.data);
  });
  socket.addEventListener("close", () => {
    if (generation !== link.generation) return;
    link.socket = null;
    clearInterval(link.ping);
    clearTimeout(link.renew);
    link.ping = link.renew = null;
    setLive(false);
    retryLater(generation, null);
  });
}

/** Try again later: after the server's Retry-After (429, 503), else after a backoff that doubles with each failure
 * (with jitter, so tabs cut off together do not come back together); never for a refused token or workspace (the
 * refresh loop signs out on a 401, a switch opens another). */
function retryLater(generation, error) {
  if (error instanceof ApiError && [401, 403, 404, 422].includes(error.status)) return;
  let delay;
  if (error instanceof ApiError && (error.status === 429 || error.status === 503) && error.retryAfter !== null) {
    delay = error.retryAfter * 1000;
  } else if (error instanceof ApiError && error.status === 503) {
    delay = UNAVAILABLE_MS;
  } else {
    const backoff = Math.min(BACKOFF_CAP_MS, BACKOFF_FIRST_MS * 2 ** link.failures);
    delay = backoff / 2 + (Math.random() * backoff) / 2;
    link.failures += 1;
  }
  clearTimeout(link.retry);
  link.retry = setTimeout(() => {
    link.retry = null;
    if (generation === link.generation) connect(generation);
  }, delay);
}

/** A frame from the server: refresh what it names (anything unknown is ignored: a pong, an error). */
function heard(data) {
  let message;
  try {
    message = JSON.parse(data);
  } catch {
    return;
  }
  if (!message || (message.type !== "changed" && message.type !== "fetch")) return;
  const taskId = typeof message.taskId === "string" && message.taskId ? message.taskId : null;
  if (message.type === "changed" && taskId && KINDS.has(message.what)) refresh.kick({ what: message.what, taskId });
  else refresh.kick();
  document.body.dataset.pushes = String(++link.heard); // pushes acted on, for tests
}

function milliseconds(seconds, otherwise) {
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : otherwise;
}

function setLive(live) {
  store.set("push", live ? "live" : "off");
  refresh.setLive(live);
}
