// Hearing calls by long-poll, where the server has no push (or the socket cannot open): GET /api/bridge/calls holds
// up to 20 s for a call, and a tick between polls keeps the approvals current and the browser reported (heartbeat).

import { NetworkError, describe } from "./api.js";
import { refreshPending } from "./approvals.js";
import { start } from "./calls.js";
import * as sites from "./sites.js";
import * as store from "./store.js";
import { sleep } from "./timing.js";

const TICK_MS = 5_000; // approvals and heartbeat between polls
const BACKOFF_MAX_S = 30;

/** Long-poll until `untilMs` (a poll under way ends first) or the signal aborts, backing off while offline;
 * `refuse(error)` is called on a 401 (it aborts the signal). */
export async function pollFor(api, signal, untilMs, refuse) {
  let healthy = true; // the last exchange with the server worked (the tick stays quiet while the loop backs off)
  const tick = async () => {
    if (signal.aborted || !healthy) return;
    try {
      await sites.reportIfDue(api);
      await refreshPending(api, signal);
      await store.setContact(store.DELIVERIES.poll);
    } catch (error) {
      if (error?.status === 401 && !signal.aborted) await refuse(error);
      // anything else: the next poll finds out and backs off
    }
  };
  const ticker = setInterval(() => tick().catch(() => {}), TICK_MS);
  await store.setDelivery(store.DELIVERIES.poll);
  let failures = 0;
  try {
    while (!signal.aborted && Date.now() < untilMs) {
      try {
        // After a failure, a report first: it answers at once (a poll may hold 20 s), so the popup shows the
        // connection back as soon as it is. A report refused for its content is shown there; polling goes on.
        await (healthy ? sites.reportIfDue(api) : sites.report(api)).catch((error) => {
          if (error instanceof NetworkError || [401, 429].includes(error?.status) || error?.status >= 500) throw error;
        });
        if (!healthy) {
          await store.setContact(store.DELIVERIES.poll);
          healthy = true;
        }
        const { calls } = await api.poll(signal);
        await store.noteWorker((w) => ({ ...w, polls: w.polls + 1, lastPollAt: Date.now() }));
        await store.setContact(store.DELIVERIES.poll);
        healthy = true;
        failures = 0;
        for (const call of calls) start(api, call);
        refreshPending(api, signal).catch(() => {});
      } catch (error) {
        if (signal.aborted) break;
        if (error?.status === 401) {
          await refuse(error);
          break;
        }
        healthy = false;
        failures += 1;
        const waitS = Math.min(error?.retryAfterS ?? 2 ** (failures - 1), BACKOFF_MAX_S);
        await store.setStatus(store.STATES.offline, { error: describe(error), retryAt: Date.now() + waitS * 1000 });
        await sleep(waitS * 1000, signal);
      }
    }
  } finally {
    clearInterval(ticker);
  }
}
