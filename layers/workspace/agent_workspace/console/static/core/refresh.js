// The refresh loop: one round of reads at a time, on a timer, or at once when something changed (`kick`: a
// filter, a switch, a decision, a push). Jobs register with a condition (the view on screen, a workspace chosen);
// a round that cannot reach the server marks the page offline, the next that can marks it online again.
//
// The timer's cadence depends on push (core/push.js): without a live socket a round runs every POLL_MS; while the
// socket is open the pushes say what changed, and the timer only runs a rare safety round (SAFETY_MS) in case one
// was lost, and none while the tab is hidden (push.js reads everything when it shows again): an open tab in the
// background costs its socket alone. A push kicks a round of the jobs that hear its change (`hears`: the inbox for
// "needs", the board and the drawer of that task for a task); anything else reads everything shown.
//
// A round started by the timer does the costly reads (`full`: the board's columns and context) every
// FULL_EVERY rounds; one started by a kick does them at once.
// Rounds carry a generation: a round started before a sign-out or a workspace switch throws its answers away.

import * as store from "./store.js";
import { ApiError } from "./api.js";
import { freshTimes } from "./format.js";

const POLL_MS = 3000;
const SAFETY_MS = 15 * 60_000; // a few reads four times an hour: an idle open tab stays near its socket's cost
const FULL_EVERY = 3;
const ALL = "all"; // a round of every job (the timer's, or a kick naming no change)

const jobs = [];
// `pending`: what the next round must read, asked while one ran or before it started: null (nothing), ALL, or the
// changes pushed ({what, taskId}); `kicked` whether someone asked (a timer round alone is not kicked).
const loop = { generation: 0, timer: null, running: false, pending: null, kicked: false, rounds: 0, live: false };
let onFailure = () => {};

/** A job: `run(current, full)` where `current()` says whether its answers still count; `when()` whether it runs;
 * `hears(change)` whether a pushed change ({what: "needs"|"task", taskId}) concerns it (else it waits for a round
 * of everything). */
export function register(run, when = () => true, hears = () => false) {
  jobs.push({ run, when, hears });
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
  loop.pending = null;
  loop.kicked = false;
}

/** Refresh now: at once if idle, else right after the round in flight (rounds never overlap). With `change` (a
 * push's {what, taskId}), only the jobs that hear it; without, everything shown. */
export function kick(change) {
  if (!store.get("token")) return;
  loop.kicked = true;
  ask(change && loop.pending !== ALL ? [...(loop.pending || []), change] : ALL);
}

/** Whether pushes arrive (core/push.js): the timer slows to a safety round while they do, and polls again at once
 * when they stop. */
export function setLive(live) {
  if (loop.live === live) return;
  loop.live = live;
  if (loop.timer !== null) {
    clearTimeout(loop.timer);
    loop.timer = setTimeout(timerRound, live ? SAFETY_MS : 0); // no push since the socket went: read now
  }
}

function ask(scope) {
  loop.pending = scope;
  if (scope === ALL) {
    // This round reads everything: the timer's round is due again after it. A round of a push's change leaves the
    // timer as it is, so pushes never put off the safety round.
    clearTimeout(loop.timer);
    loop.timer = null;
  }
  if (!loop.running) round();
}

function timerRound() {
  loop.timer = null;
  if (loop.live && document.visibilityState === "hidden") loop.timer = setTimeout(timerRound, SAFETY_MS);
  else ask(ALL);
}

async function round() {
  const generation = loop.generation;
  loop.running = true;
  const scope = loop.pending || ALL;
  const full = loop.kicked || loop.rounds % FULL_EVERY === 0;
  loop.pending = null;
  loop.kicked = false;
  const current = () => generation === loop.generation && store.get("token") !== null;
  const due = jobs.filter((j) => j.when() && (scope === ALL || scope.some((change) => j.hears(change))));
  document.body.dataset.refreshing = "true"; // while a round runs, for tests
  try {
    const results = await Promise.allSettled(due.map((j) => j.run(current, full)));
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
    delete document.body.dataset.refreshing;
    if (store.get("token")) {
      if (loop.pending !== null || generation !== loop.generation) round();
      else if (loop.timer === null) loop.timer = setTimeout(timerRound, loop.live ? SAFETY_MS : POLL_MS);
    }
  }
}
