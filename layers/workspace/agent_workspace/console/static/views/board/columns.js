// The board's eight columns, left to right, and how a human moves among them.
//
// Wide screen: side by side, each scrolling its own cards under a sticky header; quiet columns (Done and
// Rejected unless the human chose otherwise) fold to a narrow rail with their name and count, and the choice
// is remembered in localStorage (a layout preference, nothing secret). When the columns are wider than the
// screen, shadows on the edges and two buttons say so and scroll. Phone: one column at a time, swiped
// (scroll-snap) or picked from a row of buttons with the counts.

import * as store from "../../core/store.js";
import { ApiError } from "../../core/api.js";
import { COLUMNS, plural } from "../../core/format.js";
import { el, reconcile, setAttr, setText } from "../../core/dom.js";
import { boardCard, markAsks, markCurrent, updateBoardCard } from "./card.js";

const COLLAPSED_KEY = "agentWorkspace.board.collapsed";
const QUIET = ["done", "rejected"];
const COLUMN_READ = 100; // tasks shown per column at most
const COLUMN_PAGES = 4; // pages read per column and round at most (a page may hold fewer than asked)
const NO_CYCLE = "No cycle is active, so no task is in the active cycle.";
const phone = window.matchMedia("(max-width: 700px)");

const parts = new Map(); // column → its nodes: section, toggle, list, count, empty, more, pick
let scroller = null; // #board-columns: scrolls sideways
let frame = null; // holds the scroller and the scroll cues
const collapsed = readCollapsed();
let landed = false; // the phone's first column was chosen for this workspace

function readCollapsed() {
  try {
    const saved = JSON.parse(localStorage.getItem(COLLAPSED_KEY));
    if (Array.isArray(saved)) return new Set(saved.filter((c) => COLUMNS.some(([column]) => column === c)));
  } catch {
    // unreadable or refused storage: the defaults
  }
  return new Set(QUIET);
}

function saveCollapsed() {
  try {
    localStorage.setItem(COLLAPSED_KEY, JSON.stringify([...collapsed]));
  } catch {
    // storage refused (a private window's quota): the choice lasts until the page is left
  }
}

/** The columns' markup: the phone's column picker, then the columns inside their frame with the scroll cues.
 * `open(task)` opens a card's task. */
export function buildColumns(open) {
  const picker = el("div", { className: "board-picker", role: "group", "aria-label": "Show column" });
  scroller = el("div", { id: "board-columns", className: "board-columns" });
  for (const [column, name] of COLUMNS) {
    const headingId = `col-h-${column}`;
    const bodyId = `col-body-${column}`;
    const count = el("span", { className: "count", id: `col-count-${column}` });
    const toggle = el("button", { type: "button", className: "col-toggle ghost small", "aria-controls": bodyId });
    toggle.addEventListener("click", () => setCollapsed(column, !collapsed.has(column)));
    const list = el("ul", { id: `cards-${column}`, className: "cards", "aria-label": name });
    list.dataset.column = column;
    const empty = el("p", { className: "empty", hidden: true, text: "Nothing here." }); // until read
    const more = el("p", { className: "meta", hidden: true, text: `The newest ${COLUMN_READ} shown.` });
    const section = el("section", { id: `board-col-${column}`, className: `board-col col-${column}` },
      el("header", { className: "col-head" },
        el("h2", { id: headingId }, el("span", { className: "col-name", text: name }), " ", count),
        toggle),
      el("div", { className: "col-body", id: bodyId }, empty, list, more));
    section.setAttribute("aria-labelledby", headingId);
    section.dataset.column = column;
    scroller.append(section);
    const pickCount = el("span", { className: "count" });
    const pick = el("button", { type: "button", className: "chip" }, el("span", { text: name }), " ", pickCount);
    pick.setAttribute("aria-pressed", "false");
    pick.setAttribute("aria-controls", section.id);
    pick.addEventListener("click", () => showColumn(column, { focus: false }));
    picker.append(pick);
    parts.set(column, { section, toggle, list, count, empty, more, pick, pickCount, name });
    applyCollapsed(column);
  }
  const left = cue("left", "Scroll to the columns on the left", "←");
  const right = cue("right", "Scroll to more columns on the right", "→");
  frame = el("div", { className: "board-frame" }, scroller, left, right);
  scroller.addEventListener("scroll", onScroll, { passive: true });
  new ResizeObserver(onScroll).observe(scroller);
  phone.addEventListener("change", onScroll);
  return [picker, frame];
}

function cue(side, label, arrow) {
  const button = el("button", { type: "button", className: `scroll-cue ${side}`, title: label, "aria-label": label });
  button.append(el("span", { "aria-hidden": "true", text: arrow }));
  button.hidden = true;
  button.addEventListener("click", () => {
    const step = Math.max(scroller.clientWidth * 0.6, 200);
    scroller.scrollBy({ left: side === "left" ? -step : step, behavior: smooth() });
  });
  return button;
}

const smooth = () => (window.matchMedia("(prefers-reduced-motion: reduce)").matches ? "auto" : "smooth");

function setCollapsed(column, fold) {
  if (fold) collapsed.add(column);
  else collapsed.delete(column);
  saveCollapsed();
  applyCollapsed(column);
  parts.get(column).toggle.focus();
  onScroll();
}

function applyCollapsed(column) {
  const { section, toggle, name } = parts.get(column);
  const fold = collapsed.has(column);
  section.classList.toggle("collapsed", fold);
  setAttr(toggle, "aria-expanded", fold ? "false" : "true");
  setAttr(toggle, "aria-label", `${fold ? "Expand" : "Collapse"} ${name}`);
  setAttr(toggle, "title", `${fold ? "Expand" : "Collapse"} the ${name} column`);
  setText(toggle, fold ? "»" : "«");
}

// The cues follow the scroll position; on a phone, the picker follows the column swiped to.
let scrollFrame = 0;
function onScroll() {
  if (scrollFrame) return;
  scrollFrame = requestAnimationFrame(() => {
    scrollFrame = 0;
    if (!scroller || !scroller.isConnected) return;
    const max = scroller.scrollWidth - scroller.clientWidth;
    const atLeft = scroller.scrollLeft <= 2;
    const atRight = scroller.scrollLeft >= max - 2;
    frame.classList.toggle("more-left", !atLeft);
    frame.classList.toggle("more-right", !atRight);
    setAttr(frame.querySelector(".scroll-cue.left"), "hidden", atLeft || phone.matches ? "" : null);
    setAttr(frame.querySelector(".scroll-cue.right"), "hidden", atRight || phone.matches ? "" : null);
    if (phone.matches) markPicked(columnInView());
  });
}

function columnInView() {
  const left = scroller.getBoundingClientRect().left;
  let best = COLUMNS[0][0];
  let distance = Infinity;
  for (const [column, { section }] of parts) {
    const d = Math.abs(section.getBoundingClientRect().left - left);
    if (d < distance) {
      distance = d;
      best = column;
    }
  }
  return best;
}

function markPicked(column) {
  for (const [name, { pick }] of parts) setAttr(pick, "aria-pressed", name === column ? "true" : "false");
}

/** Bring a column into view (the phone shows one at a time); optionally focus its first card. */
export function showColumn(column, { focus = false } = {}) {
  const part = parts.get(column);
  if (!part) return;
  markPicked(column);
  const offset = part.section.getBoundingClientRect().left - scroller.getBoundingClientRect().left;
  // scrollTo, not scrollBy: Chrome takes a relative scroll as a swipe and stops it at the next snap point.
  scroller.scrollTo({ left: scroller.scrollLeft + offset, behavior: smooth() });
  if (focus) {
    const first = part.list.querySelector(".card-open");
    if (first) first.focus({ preventScroll: true });
  }
}

// -- reading and showing ------------------------------------------------------------------------------

async function readColumn(column, filters, current) {
  const tasks = [];
  let cursor = null;
  let pages = 0;
  do {
    const params = new URLSearchParams(filters);
    params.set("status", column);
    params.set("limit", String(COLUMN_READ - tasks.length));
    if (cursor) params.set("cursor", cursor);
    const page = await store.api("GET", store.ws(`/board/tasks?${params}`));
    tasks.push(...(page.tasks || []));
    cursor = page.nextCursor;
    pages += 1;
  } while (cursor && tasks.length < COLUMN_READ && pages < COLUMN_PAGES && current());
  return { tasks: tasks.slice(0, COLUMN_READ), more: Boolean(cursor) };
}

/** The eight listings under `filters` (a query string): [{tasks, more}] in COLUMNS' order, and a note when the
 * filter cannot match (no active cycle). The costliest read of the console: full rounds and kicks only. */
export async function readColumns(filters, current) {
  const wantsActive = new URLSearchParams(filters).get("cycleId") === "active";
  const nothing = () => ({ read: COLUMNS.map(() => ({ tasks: [], more: false })), note: NO_CYCLE });
  const board = store.get("board");
  if (wantsActive && board && !board.activeCycle) return nothing();
  try {
    const read = await Promise.all(COLUMNS.map(([column]) => readColumn(column, filters, current)));
    return { read, note: "" };
  } catch (error) {
    // The active cycle ended since the board was last read: the filter matches nothing, which is no failure.
    if (wantsActive && error instanceof ApiError && error.status === 422) return nothing();
    throw error;
  }
}

/** Show what readColumns read (cards reconciled by task id: unchanged cards are left as they are); the number
 * of cards shown. `ref` names the open task (its card is marked). */
export function showColumns(read, open, ref) {
  let shown = 0;
  COLUMNS.forEach(([column], index) => {
    const { tasks, more } = read[index];
    const part = parts.get(column);
    shown += tasks.length;
    reconcile(part.list, tasks, (t) => t.id, (task) => boardCard(task, open), updateBoardCard);
    setAttr(part.empty, "hidden", tasks.length > 0 ? "" : null);
    setAttr(part.more, "hidden", more ? null : "");
    const n = `${tasks.length}${more ? "+" : ""}`;
    setText(part.count, n);
    setText(part.pickCount, n);
    setAttr(part.count, "title", more ? `The newest ${COLUMN_READ} tasks` : plural(tasks.length, "task"));
  });
  const opened = markOpen(ref);
  onScroll();
  if (!landed && phone.matches) {
    landed = true;
    if (opened) return shown; // the open task's column is the one shown
    const first = COLUMNS.find((_, index) => read[index].tasks.length > 0);
    if (first) showColumn(first[0]);
    else markPicked(COLUMNS[0][0]);
  }
  return shown;
}

/** Every card shown, in reading order (down a column, then the next column): what j/k move through. Folded
 * columns are skipped on a wide screen (their cards are not on screen). */
export function cardButtons() {
  const found = [];
  for (const { section, list } of parts.values()) {
    if (!phone.matches && section.classList.contains("collapsed")) continue;
    found.push(...list.querySelectorAll(".card-open"));
  }
  return found;
}

/** Focus a card's button, bringing its column into view on a phone; false when it is not shown. */
export function focusCard(button) {
  if (!button) return false;
  const column = button.closest(".cards").dataset.column;
  if (phone.matches) showColumn(column);
  button.focus({ preventScroll: phone.matches });
  if (!phone.matches) button.scrollIntoView({ block: "nearest", inline: "nearest" });
  return true;
}

/** The card of a task, by id. */
export function cardOf(taskId) {
  for (const { list } of parts.values()) {
    for (const li of list.children) if (li.dataset.key === taskId) return li;
  }
  return null;
}

let revealed = null; // the open task whose card was brought into view

/** Mark the open task's card (and no other), the first time it shows bringing it into view; whether it shows. */
export function markOpen(ref) {
  let found = false;
  for (const { list } of parts.values()) {
    for (const li of list.children) found = markCurrent(li, ref) || found;
  }
  if (!ref) revealed = null;
  if (!found || revealed === ref) return found;
  revealed = ref;
  // Into view once the drawer beside the board has taken its place (the next frame).
  requestAnimationFrame(() => {
    const current = scroller && scroller.querySelector('.card-open[aria-current="true"]');
    if (!current) return;
    const li = current.closest("li");
    if (phone.matches) showColumn(li.closest(".cards").dataset.column);
    else li.scrollIntoView({ block: "nearest", inline: "nearest" });
  });
  return found;
}

/** The "Asks you" markers, after the inbox was read again. */
export function markAllAsks() {
  for (const { list } of parts.values()) for (const li of list.children) markAsks(li);
}

/** Forget every card (a workspace switched, the human signed out). */
export function clearColumns() {
  landed = false;
  revealed = null;
  for (const part of parts.values()) {
    part.list.replaceChildren();
    part.empty.hidden = true;
    part.more.hidden = true;
    setText(part.count, "");
    setText(part.pickCount, "");
  }
  if (scroller) scroller.scrollLeft = 0;
}
