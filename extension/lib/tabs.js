// The human's tabs: which belong to a site, what WebMCP tools a page offers, and running one of them in the page.
//
// Page code runs through chrome.scripting.executeScript in the page's own world (MAIN), where webmcp.js keeps the
// page's tools behind the hook `__agentWorkspaceWebMCP`. Whatever comes back is data: it is measured, parsed as JSON and passed on, never run.

const TOOL_WAIT_AFTER_LOAD_MS = 10_000; // how long a loaded page may take to register a tool before the call fails
export const ERROR_MAX = 2000; // the server keeps this much of an error

/** The origin of an http(s) URL as the server stores it (lower-case host, no default port), else null. */
export function originOf(url) {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.origin : null;
  } catch {
    return null;
  }
}

/** The URL without its fragment: the page to reopen. */
export function pageUrl(url) {
  const parsed = new URL(url);
  parsed.hash = "";
  return parsed.href;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// -- in the page (MAIN world): self-contained, they see only their arguments ------------------------------------------

async function pageListTools() {
  const hook = globalThis.__agentWorkspaceWebMCP;
  if (!hook) return { ok: false, error: "the page loaded before the extension could watch it; reload it" };
  try {
    return { ok: true, tools: await hook.list() };
  } catch (error) {
    return { ok: false, error: `the page's tools could not be read: ${error?.message ?? error}` };
  }
}

async function pageRunTool(name, input) {
  const hook = globalThis.__agentWorkspaceWebMCP;
  if (!hook) return { ok: false, error: "the page loaded before the extension could watch it; reload it" };
  let result;
  try {
    result = await hook.execute(name, input);
  } catch (error) {
    let message;
    try {
      message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    } catch {
      message = "the tool threw something that is not an error";
    }
    return { ok: false, error: message };
  }
  try {
    const json = JSON.stringify(result === undefined ? null : result);
    return { ok: true, json: json === undefined ? "null" : json };
  } catch (error) {
    return { ok: false, error: `the tool's result is not JSON: ${error?.message ?? error}` };
  }
}

// -- from the extension ------------------------------------------------------------------------------------------------

async function inPage(tabId, func, args = []) {
  const [frame] = await chrome.scripting.executeScript({ target: { tabId }, world: "MAIN", func, args });
  if (!frame) throw new Error("the page did not run the extension's script");
  return frame.result;
}

function text(value, max) {
  return typeof value === "string" ? value.slice(0, max) : "";
}

/** The page's tools as the server takes them: plain JSON, a name each, defaults filled in. */
function cleanTools(raw) {
  const tools = [];
  for (const tool of Array.isArray(raw) ? raw : []) {
    if (!tool || typeof tool.name !== "string" || !tool.name) continue;
    let schema = tool.inputSchema;
    if (typeof schema === "string") {
      try {
        schema = JSON.parse(schema); // some implementations hand the schema over as JSON text
      } catch {
        schema = undefined;
      }
    }
    tools.push({
      name: tool.name,
      description: text(tool.description, 2000),
      inputSchema: schema && typeof schema === "object" && !Array.isArray(schema) ? schema : { type: "object" },
      annotations: tool.annotations && typeof tool.annotations === "object" && !Array.isArray(tool.annotations) ? tool.annotations : {},
    });
  }
  return tools;
}

/** The WebMCP tools the tab's page offers now; throws with a reason the human can act on. */
export async function toolsOf(tabId) {
  const answer = await inPage(tabId, pageListTools);
  if (!answer?.ok) throw new Error(answer?.error ?? "the page's tools could not be read");
  return cleanTools(answer.tools);
}

/** Run tool `name` in the tab: {ok: true, json} (the result as JSON text) or {ok: false, error}. */
export async function runTool(tabId, name, input) {
  try {
    const answer = await inPage(tabId, pageRunTool, [name, input]);
    if (answer?.ok && typeof answer.json === "string") return answer;
    return { ok: false, error: text(answer?.error, ERROR_MAX) || "the tool gave no answer" };
  } catch (error) {
    return { ok: false, error: `the page could not run the tool: ${error?.message ?? error}` };
  }
}

/** Open tabs of `origin`, the best first: loaded, on `preferredUrl`'s path, most recently used. */
export async function tabsOf(origin, preferredUrl = null) {
  const path = preferredUrl ? new URL(preferredUrl).pathname : null;
  const tabs = (await chrome.tabs.query({})).filter((tab) => tab.url && originOf(tab.url) === origin);
  const score = (tab) => (tab.status === "complete" ? 2 : 0) + (path && new URL(tab.url).pathname === path ? 1 : 0);
  return tabs.sort((a, b) => score(b) - score(a) || (b.lastAccessed ?? 0) - (a.lastAccessed ?? 0));
}

/** Resolves with the tab once it has loaded; rejects at `untilMs` (epoch ms) or if the tab is closed. */
export function loaded(tabId, untilMs) {
  return new Promise((resolve, reject) => {
    const done = (error, tab) => {
      clearTimeout(timer);
      chrome.tabs.onUpdated.removeListener(onUpdated);
      chrome.tabs.onRemoved.removeListener(onRemoved);
      if (error) reject(error);
      else resolve(tab);
    };
    const onUpdated = (id, change, tab) => {
      if (id === tabId && change.status === "complete") done(null, tab);
    };
    const onRemoved = (id) => {
      if (id === tabId) done(new Error("the site's tab was closed while the call ran"));
    };
    const timer = setTimeout(() => done(new Error("the site's page did not finish loading in time")), Math.max(0, untilMs - Date.now()));
    chrome.tabs.onUpdated.addListener(onUpdated);
    chrome.tabs.onRemoved.addListener(onRemoved);
    chrome.tabs.get(tabId).then(
      (tab) => tab.status === "complete" && !tab.discarded && done(null, tab),
      () => done(new Error("the site's tab was closed while the call ran")),
    );
  });
}

/** Open `url` in a background tab (a new window if Chrome has none) and wait until it has loaded. */
export async function openInBackground(url, untilMs) {
  let tab;
  try {
    tab = await chrome.tabs.create({ url, active: false });
  } catch {
    const window = await chrome.windows.create({ url, focused: false, type: "normal" });
    [tab] = window.tabs ?? [];
    if (!tab) throw new Error("Chrome could not open the site");
  }
  return loaded(tab.id, untilMs);
}

/** The tool `name` of the tab's page once it is registered (pages often register after load), or null. */
export async function waitForTool(tabId, name, untilMs) {
  const giveUp = Math.min(untilMs, Date.now() + TOOL_WAIT_AFTER_LOAD_MS);
  for (;;) {
    try {
      const tool = (await toolsOf(tabId)).find((t) => t.name === name);
      if (tool) return tool;
    } catch (error) {
      if (Date.now() >= giveUp) throw error;
    }
    if (Date.now() + 200 >= giveUp) return null;
    await sleep(200);
  }
}

/** A loaded tab of `origin` whose page offers tool `name` now, with that tool; else null (none open or none has it). */
export async function tabWithTool(origin, name, preferredUrl, untilMs) {
  for (const tab of await tabsOf(origin, preferredUrl)) {
    if (Date.now() >= untilMs) return null;
    try {
      let ready = tab;
      if (tab.discarded) await chrome.tabs.reload(tab.id); // a discarded tab has no page to run in
      if (tab.discarded || tab.status !== "complete") ready = await loaded(tab.id, Math.min(untilMs, Date.now() + TOOL_WAIT_AFTER_LOAD_MS));
      const tool = (await toolsOf(ready.id)).find((t) => t.name === name);
      if (tool) return { tab: ready, tool };
    } catch {
      // this tab cannot serve the call (closed, navigated to an error page, no WebMCP): try the next
    }
  }
  return null;
}
