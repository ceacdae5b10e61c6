// The shared sites: sharing and unsharing, keeping each site's tools current, and reporting them all to the server.
//
// A site is an origin. Its tools are the union of what its pages offer (WebMCP tools are often per page): each tool
// remembers the page it was seen on, which is the page reopened when a call finds no tab offering it. When a page
// loads again, its own tools are replaced by what it offers now; tools seen on other pages are kept.

import * as store from "./store.js";
import { originOf, pageUrl, toolsOf } from "./tabs.js";

// The server's limits (docs/bridge-protocol.md): a report past them is refused whole, so they are applied here.
const SITES_MAX = 50;
const TOOLS_MAX = 100;
const TITLE_MAX = 200;
const TOOL_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;
const HEARTBEAT_MS = 20_000; // the server wants a report at least every 30 s
const RETRIES_422 = 10;

let lastReportAt = 0;
let chain = Promise.resolve();

function pathOf(url) {
  return new URL(url).pathname;
}

/** `existing` tools with the page `url`'s own replaced by `found` (what the page offers now), order kept. */
export function mergeTools(existing, found, url) {
  const fresh = new Map(found.map((tool) => [tool.name, tool]));
  const merged = [];
  for (const tool of existing) {
    if (fresh.has(tool.name)) {
      merged.push({ ...fresh.get(tool.name), url });
      fresh.delete(tool.name);
    } else if (pathOf(tool.url) !== pathOf(url)) {
      merged.push(tool);
    }
  }
  for (const tool of fresh.values()) merged.push({ ...tool, url });
  return merged;
}

function sameTools(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Share the tab's site (or refresh it): its page's tools are read now. Returns the site as stored. */
export async function share(tabId) {
  const tab = await chrome.tabs.get(tabId);
  const origin = originOf(tab.url ?? "");
  if (!origin) throw new Error("only http and https pages can be shared");
  const url = pageUrl(tab.url);
  const found = await toolsOf(tabId);
  const sites = await store.updateShared((sites) => {
    const before = sites[origin];
    if (!before && Object.keys(sites).length >= SITES_MAX) {
      throw new Error(`at most ${SITES_MAX} sites can be shared; stop sharing one first`);
    }
    sites[origin] = {
      origin,
      title: (tab.title || origin).slice(0, TITLE_MAX),
      url,
      tools: mergeTools(before?.tools ?? [], found, url),
      sharedAt: before?.sharedAt ?? Date.now(),
      updatedAt: Date.now(),
    };
    return sites;
  });
  return sites[origin];
}

export async function unshare(origin) {
  await store.updateShared((sites) => {
    delete sites[origin];
    return sites;
  });
}

/** A tab of a shared site finished loading: read its tools again; true when they changed (report them then). */
export async function refreshFromTab(tabId, tab) {
  const origin = originOf(tab.url ?? "");
  if (!origin || !(await store.shared())[origin]) return false;
  let found;
  try {
    found = await toolsOf(tabId);
  } catch {
    return false; // an error page, a page that left meanwhile: keep what was known
  }
  const url = pageUrl(tab.url);
  let changed = false;
  await store.updateShared((sites) => {
    const site = sites[origin];
    if (!site) return sites;
    const tools = mergeTools(site.tools, found, url);
    if (!sameTools(tools, site.tools)) {
      sites[origin] = { ...site, tools, updatedAt: Date.now() };
      changed = true;
    }
    return sites;
  });
  return changed;
}

/** The report's body: every shared site, oldest share first, with the tools the server can take. */
function reportBody(sites, skip) {
  const body = [];
  const skipped = [];
  for (const site of Object.values(sites).sort((a, b) => a.sharedAt - b.sharedAt)) {
    const tools = [];
    const names = new Set();
    for (const tool of site.tools) {
      const reason = !TOOL_NAME.test(tool.name)
        ? "its name is not 1-128 letters, digits and _ . : -"
        : names.has(tool.name)
          ? "another tool has its name"
          : tools.length >= TOOLS_MAX
            ? `a site shares at most ${TOOLS_MAX} tools`
            : skip.get(`${site.origin} ${tool.name}`);
      if (reason) {
        skipped.push({ site: site.origin, tool: tool.name, reason });
        continue;
      }
      names.add(tool.name);
      tools.push({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema, annotations: tool.annotations });
    }
    body.push({ origin: site.origin, title: site.title, tools });
  }
  return { body, skipped };
}

async function reportNow(api) {
  const skip = new Map();
  for (let attempt = 0; ; attempt += 1) {
    const { body, skipped } = reportBody(await store.shared(), skip);
    try {
      const answer = await api.reportSites(body);
      lastReportAt = Date.now();
      await chrome.storage.session.set({ report: { at: lastReportAt, skipped, error: null } });
      await store.noteWorker((w) => ({ ...w, reports: w.reports + 1, lastReportAt }));
      return answer;
    } catch (error) {
      // A tool the server refuses (a schema it cannot apply safely, say) must not unshare every other tool.
      const where = error?.status === 422 && /sites\[(\d+)\]\.tools\[(\d+)\]/.exec(error.detail ?? "");
      if (!where || attempt >= RETRIES_422) {
        await chrome.storage.session.set({ report: { at: Date.now(), skipped, error: error?.message ?? String(error) } });
        // A refusal the same report would meet again waits for the next heartbeat, not the next tick.
        if (error?.status >= 400 && error.status < 500 && ![401, 408, 429].includes(error.status)) lastReportAt = Date.now();
        throw error;
      }
      const site = body[Number(where[1])];
      const tool = site?.tools[Number(where[2])];
      if (!tool) throw error;
      skip.set(`${site.origin} ${tool.name}`, `the server refused it: ${error.detail}`);
    }
  }
}

/** Report every shared site to the server now; reports never overlap, so the last one sent is the newest. */
export function report(api) {
  const run = chain.then(() => reportNow(api));
  chain = run.catch(() => {});
  return run;
}

/** Resolves once no report is on its way (sign-out must not be overtaken by a report, which marks the browser online). */
export function idle() {
  return chain;
}

/** The heartbeat: report when the last report is older than HEARTBEAT_MS (from the cache: no tab needs to be open). */
export function reportIfDue(api) {
  return Date.now() - lastReportAt >= HEARTBEAT_MS ? report(api) : Promise.resolve(null);
}

/** The next heartbeat is due at once (a new sign-in, another account). */
export function forgetLastReport() {
  lastReportAt = 0;
}
