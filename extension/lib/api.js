// The Agent Workspace REST API as the extension speaks it: the human's bearer token, problem JSON errors.
// Only the routes the extension needs; docs/bridge-protocol.md describes them.

const REQUEST_MS = 15_000; // any request but a long-poll
export const POLL_WAIT_S = 20;
// Chrome stops a worker whose fetch() waits over 30 s for a response; the server answers a poll within its wait.
const POLL_MS = 28_000;

/** The server answered with an error status: `status` (401 = token refused), the problem's `detail`. */
export class ApiError extends Error {
  constructor(status, detail, retryAfterS = null) {
    super(detail ? `${detail} (HTTP ${status})` : `HTTP ${status}`);
    this.name = "ApiError";
    this.status = status;
    this.detail = detail;
    this.retryAfterS = retryAfterS;
  }
}

/** The server could not be reached (no answer, DNS, refused connection, timeout). */
export class NetworkError extends Error {
  constructor(message) {
    super(message);
    this.name = "NetworkError";
  }
}

/** What went wrong, in words for the popup (never the token). */
export function describe(error) {
  if (error instanceof NetworkError) return error.message;
  if (error instanceof ApiError) return `the server answered ${error.status}${error.detail ? `: ${error.detail}` : ""}`;
  return error?.message ?? String(error);
}

/** `https://host[:port][/base]` with no trailing slash; throws on anything but an http(s) URL. */
export function normaliseServer(text) {
  let url;
  try {
    url = new URL(String(text).trim());
  } catch {
    throw new Error("the server URL is not a URL, e.g. https://workspace.example.com");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error("the server URL must start with https://");
  if (url.username || url.password || url.search || url.hash) throw new Error("the server URL takes no user, query or fragment");
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

let skewMs = 0; // the server's clock minus ours, when they differ by more than the Date header's 1 s resolution

/** Now on the server's clock (ms): a call's deadline is the server's time. */
export function serverNow() {
  return Date.now() + skewMs;
}

function noteServerDate(response) {
  const date = Date.parse(response.headers.get("date") ?? "");
  if (Number.isNaN(date)) return;
  const skew = date - Date.now();
  skewMs = Math.abs(skew) > 2000 ? skew : 0;
}

async function errorOf(response) {
  let detail = "";
  try {
    const text = await response.text();
    try {
      const problem = JSON.parse(text);
      detail = typeof problem?.detail === "string" ? problem.detail : JSON.stringify(problem?.detail ?? "");
    } catch {
      detail = text.slice(0, 300); // 413 is plain text
    }
  } catch {
    // the body could not be read: the status says enough
  }
  const retry = Number.parseFloat(response.headers.get("retry-after") ?? "");
  return new ApiError(response.status, detail, Number.isFinite(retry) ? retry : null);
}

/** A client for one server and token. */
export class Api {
  constructor(server, token) {
    this.server = server;
    this.token = token;
  }

  async request(method, path, { body, signal, timeoutMs = REQUEST_MS, rawBody } = {}) {
    const signals = [AbortSignal.timeout(timeoutMs)];
    if (signal) signals.push(signal);
    const headers = { Authorization: `Bearer ${this.token}`, Accept: "application/json" };
    let payload;
    if (rawBody !== undefined || body !== undefined) {
      headers["Content-Type"] = "application/json";
      payload = rawBody ?? JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(`${this.server}${path}`, {
        method,
        headers,
        body: payload,
        signal: AbortSignal.any(signals),
        credentials: "omit", // the token is the only credential; never the server's cookies
        cache: "no-store",
      });
    } catch (error) {
      if (signal?.aborted) throw error; // our own abort (sign-out): not a network problem
      const timedOut = error?.name === "TimeoutError";
      throw new NetworkError(timedOut ? `no answer within ${Math.round(timeoutMs / 1000)} s` : "the connection failed");
    }
    noteServerDate(response);
    if (!response.ok) throw await errorOf(response);
    if (response.status === 204) return null;
    return response.json();
  }

  workspaces() {
    return this.request("GET", "/api/workspaces");
  }

  reportSites(sites) {
    return this.request("PUT", "/api/bridge/sites", { body: { sites } });
  }

  sharedSites() {
    return this.request("GET", "/api/bridge/sites");
  }

  disconnect() {
    return this.request("DELETE", "/api/bridge/online", { timeoutMs: 5000 });
  }

  pending() {
    return this.request("GET", "/api/bridge/pending");
  }

  poll(signal) {
    return this.request("GET", `/api/bridge/calls?wait=${POLL_WAIT_S}`, { signal, timeoutMs: POLL_MS });
  }

  /** The calls to run now, answered at once (a push said one is queued): no Lambda is held waiting. */
  readyCalls(signal) {
    return this.request("GET", "/api/bridge/calls?wait=0", { signal });
  }

  /** A single-use ticket (a minute) to open a push socket on `topic`: {ticket, url, expiresAt}; 503 = no push here. */
  pushTicket(topic) {
    return this.request("POST", "/api/push/tickets", { body: { topic } });
  }

  /** Post a call's outcome; `resultJson` is the result already serialised (so its size was measured once). */
  postOutcome(callId, { resultJson, error }) {
    const rawBody = error !== undefined ? JSON.stringify({ error }) : `{"result":${resultJson}}`;
    return this.request("POST", `/api/bridge/calls/${encodeURIComponent(callId)}/result`, { rawBody });
  }

  decide(workspaceId, callId, decision) {
    const path = `/api/workspaces/${encodeURIComponent(workspaceId)}/site-calls/${encodeURIComponent(callId)}/decision`;
    return this.request("POST", path, { body: { decision } });
  }
}
