// The extension's service worker. Every listener is registered here, at the top level, in the first turn of the
// script: Chrome wakes a stopped worker for an event only if the listener was registered when the worker started.

import * as account from "./lib/account.js";
import { refreshPending } from "./lib/approvals.js";
import * as bridge from "./lib/bridge.js";
import * as sites from "./lib/sites.js";
import * as store from "./lib/store.js";
import { Api } from "./lib/api.js";

const WATCHDOG = "watchdog";
const WATCHDOG_MINUTES = 0.5; // Chrome's shortest period for a packed extension
const STARTS_KEPT = 50;

// Each start of this worker (Chrome stops idle workers and starts them for the next event): for the popup and tests.
store.noteWorker((w) => ({ ...w, starts: [...w.starts, Date.now()].slice(-STARTS_KEPT) })).catch(() => {});

// Anything that escaped a handler, kept for the popup and the tests (the worker's console is rarely open).
function noteError(what) {
  store.noteWorker((w) => ({ ...w, errors: [...(w.errors ?? []), `${new Date().toISOString()} ${what}`].slice(-20) })).catch(() => {});
}
self.addEventListener("unhandledrejection", (event) => noteError(event.reason?.stack ?? String(event.reason)));
self.addEventListener("error", (event) => noteError(event.error?.stack ?? event.message));

async function ensureWatchdog() {
  // Created once: creating it again at every start would push its next firing back each time.
  if (!(await chrome.alarms.get(WATCHDOG))) await chrome.alarms.create(WATCHDOG, { periodInMinutes: WATCHDOG_MINUTES });
}

async function signedInApi() {
  const auth = await store.auth();
  return auth ? new Api(auth.server, auth.token) : null;
}

chrome.runtime.onInstalled.addListener(() => {
  ensureWatchdog().catch(() => {});
});

chrome.runtime.onStartup.addListener(() => {
  bridge.ensureRunning();
});

// The watchdog: a worker Chrome stopped is started by this alarm, and resumes the loop, heartbeat and approvals.
// While calls are heard on a push socket, the server is asked nothing: the socket is the heartbeat.
chrome.alarms.onAlarm.addListener(async (alarm) => {
  if (alarm.name !== WATCHDOG) return;
  await store.noteWorker((w) => ({ ...w, alarms: [...(w.alarms ?? []), Date.now()].slice(-STARTS_KEPT) }));
  bridge.ensureRunning();
  const api = await signedInApi();
  if (!api || bridge.pushed() || (await store.status()).state !== store.STATES.connected) return;
  await sites.reportIfDue(api).catch(() => {});
  await refreshPending(api).catch(() => {});
});

// A page of a shared site loaded: read its tools again and report them if they changed.
chrome.tabs.onUpdated.addListener(async (tabId, change, tab) => {
  if (change.status !== "complete" || !tab.url?.startsWith("http")) return;
  if (!(await sites.refreshFromTab(tabId, tab))) return;
  const api = await signedInApi();
  if (api) await sites.report(api).catch(() => {});
});

const HANDLERS = {
  signIn: (m) => account.signIn(m.server, m.token),
  signOut: () => account.signOut(),
  inspect: (m) => account.inspect(m.tabId),
  share: (m) => account.share(m.tabId),
  unshare: (m) => account.unshare(m.origin),
  overview: () => account.overview(),
  decide: (m) => account.decide(m.workspaceId, m.callId, m.decision),
};

// Only this extension's own pages (the popup) send messages; web pages cannot (no externally_connectable).
chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  const handler = HANDLERS[message?.type];
  if (sender.id !== chrome.runtime.id || !sender.url?.startsWith(chrome.runtime.getURL("")) || !handler) return false;
  handler(message).then(sendResponse, (error) => sendResponse({ ok: false, error: String(error?.message ?? error) }));
  return true; // the answer comes asynchronously
});

ensureWatchdog().catch(() => {});
bridge.ensureRunning();
