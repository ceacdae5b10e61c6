// The calls waiting for the human's decision: kept in the session store for the popup, counted on the badge.

import * as store from "./store.js";

export async function setBadge(count) {
  await chrome.action.setBadgeText({ text: count > 0 ? (count > 99 ? "99+" : String(count)) : "" });
  if (count > 0) await chrome.action.setBadgeBackgroundColor({ color: "#c5221f" });
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
