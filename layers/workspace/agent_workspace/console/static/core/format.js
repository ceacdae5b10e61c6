// How the console says things: names of statuses and columns, relative dates with the exact one on hover,
// sizes, people. One home, so the board, the drawer and the inbox say them alike.

import { el } from "./dom.js";

export const STATUS_NAMES = {
  notstarted: "Not started",
  ongoing: "Ongoing",
  blocked: "Blocked",
  completed: "Completed",
  rejected: "Rejected",
};
export const STATUSES = Object.keys(STATUS_NAMES);

// The board's columns, left to right (GET /board lists the same, with what each means).
export const COLUMNS = [
  ["triage", "Triage"],
  ["backlog", "Backlog"],
  ["ready", "Ready"],
  ["in_progress", "In progress"],
  ["blocked", "Blocked"],
  ["in_review", "In review"],
  ["done", "Done"],
  ["rejected", "Rejected"],
];
export const COLUMN_NAMES = Object.fromEntries(COLUMNS);
export const PRIORITY_NAMES = { urgent: "Urgent", high: "High", medium: "Medium", low: "Low", none: "No priority" };
export const LINK_NAMES = {
  blocks: "Blocks",
  blocked_by: "Blocked by",
  relates_to: "Relates to",
  duplicate_of: "Duplicate of",
  duplicated_by: "Duplicated by",
};

export const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The exact local date and time, as the hover title shows it. */
export function exact(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : date.toLocaleString();
}

const UNITS = [
  ["year", 365 * 24 * 3600],
  ["month", 30 * 24 * 3600],
  ["week", 7 * 24 * 3600],
  ["day", 24 * 3600],
  ["hour", 3600],
  ["minute", 60],
];
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto", style: "short" });

/** "3 min. ago", "in 2 hr.", "now": relative to `now` (ms), the exact date kept for the title. */
export function ago(iso, now = Date.now()) {
  if (!iso) return "";
  const time = new Date(iso).getTime();
  if (Number.isNaN(time)) return String(iso);
  const seconds = Math.round((time - now) / 1000);
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return relative.format(Math.trunc(seconds / size), unit);
  }
  return "now";
}

/** A <time> saying the relative date, the exact one on hover and in `dateTime`. `fresh()` keeps it current. */
export function timeEl(iso) {
  const node = el("time", { dateTime: iso || "", text: ago(iso), title: exact(iso) });
  node.dataset.relative = "";
  return node;
}

/** Bring every relative date on the page up to date (the refresh loop calls it; unchanged text is left alone). */
export function freshTimes(root = document) {
  const now = Date.now();
  for (const node of root.querySelectorAll("time[data-relative]")) {
    const text = ago(node.dateTime, now);
    if (node.textContent !== text) node.textContent = text;
  }
}

export function formatSize(bytes) {
  if (typeof bytes !== "number") return "";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

export const json = (value) => JSON.stringify(value, null, 2);

/** Who did something, in a sentence: "you", "the agent", or the name the server gave. */
export function who(by) {
  return by === "human" ? "you" : by === "agent" ? "the agent" : String(by);
}

/** Who did something, at the head of a line: "You", "Agent", or the name. */
export function whoTitle(by) {
  return by === "human" ? "You" : by === "agent" ? "Agent" : String(by);
}

/** Who a task is for: "You" (human), "Agent", or "Agent ·abcd" when it names one agent token. */
export function assigneeName(task) {
  if (task.assignee === "human") return "You";
  const token = task.assignedTo || (task.claim && task.claim.tokenId);
  return token ? `Agent ·${String(token).slice(-4)}` : "Any agent";
}
