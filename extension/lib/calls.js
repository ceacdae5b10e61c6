// One site-tool call: run it in a tab of its site within its deadline, post the outcome. Each call runs once in this
// worker whichever way it arrived (a long-poll, a push, a catch-up after a reconnect): `inFlight` holds the ids.

import { NetworkError, describe, serverNow } from "./api.js";
import { checkArguments } from "./schema.js";
import * as store from "./store.js";
import { ERROR_MAX, openInBackground, runTool, tabWithTool, waitForTool } from "./tabs.js";
import { sleep } from "./timing.js";

const RESULT_BYTES_MAX = 256 * 1024;
const inFlight = new Set(); // ids of the calls this worker is running

/** Run the call unless this worker runs it already; the outcome is posted, nothing is returned. */
export function start(api, call) {
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
