// What the popup asks the worker to do: sign in and out, share and unshare, decide on a call, and the overview it
// shows. The popup never holds the token or talks to the server itself: the worker is the one place that does.

import { Api, ApiError, NetworkError, describe, normaliseServer } from "./api.js";
import { refreshPending, setBadge } from "./approvals.js";
import * as bridge from "./bridge.js";
import * as sites from "./sites.js";
import * as store from "./store.js";
import { originOf, toolsOf } from "./tabs.js";

const WORKSPACES_MS = 30_000; // workspace names change rarely: asked again after this long
const SETTLE_MS = 1000; // the server notices an aborted long-poll within 0.5 s
let workspacesCache = { server: null, at: 0, list: [] };

async function client() {
  const auth = await store.auth();
  return auth ? new Api(auth.server, auth.token) : null;
}

/** A digest of server and token: the shared sites belong to that sign-in (another account starts with none). */
async function fingerprint(server, token) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${server}\n${token}`));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function workspaces(api) {
  if (workspacesCache.server !== api.server || Date.now() - workspacesCache.at > WORKSPACES_MS) {
    workspacesCache = { server: api.server, at: Date.now(), list: await api.workspaces() };
  }
  return workspacesCache.list;
}

/** Check the token with `GET /api/workspaces`, then keep it and start the bridge. */
export async function signIn(serverText, tokenText) {
  let server;
  try {
    server = normaliseServer(serverText);
  } catch (error) {
    return { ok: false, error: error.message };
  }
  const token = String(tokenText ?? "").trim();
  if (!token) return { ok: false, error: "paste your human token from the console (Settings → Tokens)" };
  const api = new Api(server, token);
  let list;
  try {
    list = await api.workspaces();
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      await store.setStatus(store.STATES.refused, { server, error: "the server refused this token (401)" });
      return { ok: false, state: store.STATES.refused, error: "The server refused this token. Check that it is a human token and not revoked." };
    }
    if (error instanceof ApiError && error.status === 403) {
      return { ok: false, error: `The server refused this token for the console's API (403): use a human token, not an agent's. ${error.detail ?? ""}`.trim() };
    }
    if (error instanceof NetworkError) return { ok: false, error: `Could not reach ${server}: ${error.message}.` };
    return { ok: false, error: `Could not sign in: ${describe(error)}` };
  }
  bridge.stop();
  const mark = await fingerprint(server, token);
  if ((await store.sharedFor()) !== mark) {
    await store.updateShared(() => ({}));
    await store.setSharedFor(mark);
  }
  await store.saveAuth(server, token);
  await store.setStatus(store.STATES.connected, { server, lastContactAt: Date.now() });
  workspacesCache = { server, at: Date.now(), list };
  sites.forgetLastReport();
  bridge.ensureRunning();
  return { ok: true, workspaces: list };
}

/** Tell the server this browser leaves (agents see it offline at once), then forget the token. */
export async function signOut() {
  const api = await client();
  bridge.stop();
  await store.clearAuth();
  await store.setStatus(store.STATES.signedOut, { server: api?.server });
  await store.setPending([]);
  await setBadge(0);
  if (!api) return { ok: true };
  // A report, or a poll the server has not yet seen aborted (it looks every 0.5 s), marks the browser online when
  // it ends: let them end first, or agents would see this browser online for another 45 s.
  await sites.idle();
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  try {
    await api.disconnect();
    return { ok: true };
  } catch (error) {
    // Signed out here all the same; the server sees the browser offline 45 s after its last poll.
    return { ok: true, warning: `the server was not told (${describe(error)}); agents see you offline within a minute` };
  }
}

async function reported(api) {
  if (!api) return { ok: true };
  try {
    const answer = await sites.report(api);
    return { ok: true, answer };
  } catch (error) {
    if (error?.status === 401) await bridge.refuse(error);
    return { ok: false, error: `Saved here, but the server did not take the list: ${describe(error)}` };
  }
}

/** The tools the tab's page offers now, for the popup to show before sharing. */
export async function inspect(tabId) {
  const tab = await chrome.tabs.get(tabId);
  const origin = originOf(tab.url ?? "");
  if (!origin) return { ok: false, error: "This page cannot be shared: only http and https sites can." };
  const shared = (await store.shared())[origin] ?? null;
  try {
    return { ok: true, origin, title: tab.title || origin, tools: await toolsOf(tabId), shared };
  } catch (error) {
    return { ok: false, origin, title: tab.title || origin, shared, error: `The page's tools could not be read: ${error.message}` };
  }
}

export async function share(tabId) {
  let site;
  try {
    site = await sites.share(tabId);
  } catch (error) {
    return { ok: false, error: `Could not share: ${error.message}` };
  }
  return { ...(await reported(await client())), site };
}

export async function unshare(origin) {
  await sites.unshare(origin);
  return reported(await client());
}

/** Everything the popup lists: the server's view of the shared sites, the workspaces, the calls to decide on. */
export async function overview() {
  const api = await client();
  const status = await store.status();
  const local = await store.shared();
  if (!api) return { signedIn: false, status, local };
  const [bridgeState, workspaceList, pending] = await Promise.allSettled([api.sharedSites(), workspaces(api), refreshPending(api)]);
  const failed = [bridgeState, workspaceList, pending].find((r) => r.status === "rejected")?.reason;
  if (failed?.status === 401) await bridge.refuse(failed);
  else if (!failed && status.state === store.STATES.offline) bridge.ensureRunning(); // it answers again
  const value = (result) => (result.status === "fulfilled" ? result.value : null);
  return {
    signedIn: true,
    status: await store.status(),
    server: api.server,
    local,
    bridge: value(bridgeState),
    workspaces: value(workspaceList),
    pending: value(pending) ?? (await store.pending()).calls,
    report: (await chrome.storage.session.get("report")).report ?? null,
    error: failed ? describe(failed) : null,
  };
}

export async function decide(workspaceId, callId, decision) {
  const api = await client();
  if (!api) return { ok: false, error: "Sign in first." };
  try {
    await api.decide(workspaceId, callId, decision);
  } catch (error) {
    if (error?.status === 401) await bridge.refuse(error);
    const reason = error?.status === 409 ? "it was decided already, or it expired" : describe(error);
    await refreshPending(api).catch(() => {});
    return { ok: false, error: `Could not record the decision: ${reason}` };
  }
  await refreshPending(api).catch(() => {});
  return { ok: true };
}
