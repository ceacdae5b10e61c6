// The refresh loop: one round of reads at a time, every POLL_MS, or at once when something changed (`kick`:
// a filter, a switch, a decision). Jobs register with a condition (the view on screen, a workspace chosen);
// a round that cannot reach the server marks the page offline, the next that can marks it online again.
//
// A round started by the timer does the costly reads (`full`: the board's columns and context) every
// FULL_EVERY rounds; one started by a kick does them at once. Rounds carry a generation: a round started
// before a sign-out or a workspace switch throws its answers away.

import * as store from "./store.js";
import { ApiError } from "./api.js";
import { freshTimes } from "./format.js";

const POLL_MS = 3000;
const FULL_EVERY = 3;

const jobs = [];
const loop = { generation: 0, timer: null, running: false, again: false, rounds: 0, kicked: false };
let onFailure = () => {};

/** A job: `run(current, full)` where `current()` says whether its answers still count; `when()` whether it runs. */
export function register(run, when = () => true) {
  jobs.push({ run, when });
}

/** Who hears a round's failure (the shell: a refused token signs out, anything else is shown once). */
export function onRoundFailure(handler) {
  onFailure = handler;
}

/** Start over: rounds in flight are stale (a workspace switched); refresh at once. */
export function restart() {
  loop.generation += 1;
  clearTimeout(loop.timer);
  loop.timer = null;
  kick();
}

export function stop() {
  loop.generation += 1;
  clearTimeout(loop.timer);
  loop.timer = null;
  loop.again = false;
}

/** Refresh now: at once if idle, else right after the round in flight (rounds never overlap). */
export function kick() {
  if (!store.get("token")) return;
  loop.kicked = true;
  if (loop.running) {
    loop.again = true;
    return;
  }
  clearTimeout(loop.timer);
  loop.timer = null;
  round();
}

async function round() {
  const generation = loop.generation;
  loop.running = true;
  const current = () => generation === loop.generation && store.get("token") !== null;
  const full = loop.kicked || loop.rounds % FULL_EVERY === 0;
  loop.kicked = false;
  try {
    const results = await Promise.allSettled(jobs.filter((j) => j.when()).map((j) => j.run(current, full)));
    if (current()) {
      const failed = results.find((r) => r.status === "rejected");
      const unreachable = failed && failed.reason instanceof ApiError && failed.reason.unreachable;
      store.set("online", !unreachable);
      onFailure(failed ? failed.reason : null);
      freshTimes();
      document.body.dataset.rounds = String(++loop.rounds); // finished rounds, for tests
    }
  } finally {
    loop.running = false;
    if (store.get("token")) {
      if (loop.again || generation !== loop.generation) {
        loop.again = false;
        round();
      } else {
        loop.timer = setTimeout(round, POLL_MS);
      }
    }
  }
}
