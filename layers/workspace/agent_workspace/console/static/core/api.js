// The REST client every page shares (the console and the consent page): one call, a timeout, and typed errors
// carrying the server's own words (api/errors.py's problem JSON `detail`), so a page shows what the server said.

const TIMEOUT_MS = 20000; // a call the server has not answered by then is given up and said so

/** A refused or failed call. `kind` tells why: "http" (the server answered, `status` set), "network" (not
 * reached) or "timeout" (reached, no answer in time); status 0 for the last two. */
export class ApiError extends Error {
  constructor(status, title, detail, kind = "http", retryAfter = null) {
    super(detail);
    this.status = status;
    this.title = title;
    this.detail = detail;
    this.kind = kind;
    this.retryAfter = retryAfter; // seconds, when the server said when to try again (429, 503)
  }

  /** Whether the server could not be reached at all (the page is offline, or the server down). */
  get unreachable() {
    return this.kind !== "http";
  }
}

/** One REST call with the given bearer token: the parsed JSON (null for 204), or an ApiError. */
export async function request(method, path, body, token, { timeoutMs = TIMEOUT_MS } = {}) {
  const headers = { Accept: "application/json, application/problem+json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const { signal } = controller;
  const init = { method, headers, cache: "no-store", credentials: "omit", redirect: "error", signal };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  let text;
  try {
    response = await fetch(path, init);
    text = response.status === 204 ? "" : await response.text();
  } catch (error) {
    if (controller.signal.aborted) {
      throw new ApiError(0, "Timeout", `the server did not answer within ${timeoutMs / 1000} s`, "timeout");
    }
    throw new ApiError(0, "Network error", `the server could not be reached (${error.message})`, "network");
  } finally {
    clearTimeout(timer);
  }
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const detail =
      data && typeof data.detail === "string" ? data.detail : text.trim().slice(0, 500) || response.statusText;
    const title = data && typeof data.title === "string" ? data.title : response.statusText;
    const after = Number.parseInt(response.headers.get("Retry-After") || "", 10);
    throw new ApiError(response.status, title, detail, "http", Number.isFinite(after) && after >= 0 ? after : null);
  }
  return data;
}

/** A path segment, percent-encoded. "." and ".." cannot be one: browsers read them, even as "%2E", as the
 * current and the parent folder (a tool named ".." would turn a DELETE of it into a DELETE of the folder above),
 * so they throw, and the caller shows the reason where the human acted. */
export function seg(value) {
  const text = String(value);
  if (text === "." || text === "..") throw new Error(`'${text}' cannot be named in a URL`);
  return encodeURIComponent(text);
}
