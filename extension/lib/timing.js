// Waiting: a sleep that a sign-out cuts short, and the jittered back-off that spreads reconnecting browsers apart.

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Milliseconds before try number `failures` + 1: 1, 2, 4 … `maxS` seconds, each cut by a random part of up to half,
 * so browsers the server dropped at the same moment do not all come back at the same moment. */
export function backoffMs(failures, maxS) {
  const seconds = Math.min(2 ** Math.max(0, failures - 1), maxS);
  return Math.round((seconds / 2 + (Math.random() * seconds) / 2) * 1000);
}
