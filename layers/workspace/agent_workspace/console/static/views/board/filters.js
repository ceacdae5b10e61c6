// The board's filter bar (search, label, project, epic, cycle, archived) and the board's context it offers as
// choices (GET …/board and …/board/cycles, kept in the store as `board` and `cycles`: Settings and the drawer
// read them too). A change applies at once (the refresh loop is kicked); typing in the search waits for a
// short pause first, Enter does not.

import * as store from "../../core/store.js";
import { kick } from "../../core/refresh.js";
import { announce } from "../../core/feedback.js";
import { fillSelect, fragment, setText } from "../../core/dom.js";

const TYPING_MS = 250; // the pause after the last key before a search applies

const MARKUP = `
<form class="board-filters" role="search" aria-label="Board filters" novalidate>
  <div class="field grow">
    <label for="filter-query">Search the board</label>
    <input id="filter-query" type="search" maxlength="200" autocomplete="off" placeholder="Title, text, WS-12…">
  </div>
  <button type="button" class="filter-more-toggle secondary small" aria-expanded="false"
          aria-controls="filter-more">Filters</button>
  <div id="filter-more" class="filter-more">
    <div class="field">
      <label for="filter-label">With label</label>
      <select id="filter-label"></select>
    </div>
    <div class="field">
      <label for="filter-project">In project</label>
      <select id="filter-project"></select>
    </div>
    <div class="field">
      <label for="filter-epic">In epic</label>
      <select id="filter-epic"></select>
    </div>
    <div class="field">
      <label for="filter-cycle">In cycle</label>
      <select id="filter-cycle"></select>
    </div>
    <div class="field check">
      <input id="filter-archived" type="checkbox">
      <label for="filter-archived">Include archived</label>
    </div>
    <button type="button" class="filter-clear secondary small">Clear filters</button>
  </div>
</form>`;

const SELECTS = [
  ["filter-label", "label"],
  ["filter-project", "projectId"],
  ["filter-epic", "epicId"],
  ["filter-cycle", "cycleId"],
];

let form = null;
let key = ""; // the filters the columns are read with, as a query string
let typingTimer = null;

/** The filter bar. */
export function buildFilters() {
  form = fragment(MARKUP).firstElementChild;
  const query = form.querySelector("#filter-query");
  query.addEventListener("input", () => {
    clearTimeout(typingTimer);
    typingTimer = setTimeout(apply, TYPING_MS);
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    apply();
  });
  for (const [id] of SELECTS) form.querySelector(`#${id}`).addEventListener("change", apply);
  form.querySelector("#filter-archived").addEventListener("change", apply);
  form.querySelector(".filter-clear").addEventListener("click", () => {
    clearFilters();
    apply();
    query.focus();
  });
  const toggle = form.querySelector(".filter-more-toggle");
  toggle.addEventListener("click", () => {
    const open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", String(open));
    form.querySelector("#filter-more").classList.toggle("open", open);
  });
  fillChoices();
  store.on("board", fillChoices);
  store.on("cycles", fillChoices);
  return form;
}

/** The filters as the board's listing takes them (a query string; "" for none). */
export function filterKey() {
  return key;
}

export function searchField() {
  return form.querySelector("#filter-query");
}

function current() {
  const params = new URLSearchParams();
  const query = form.querySelector("#filter-query").value.trim();
  if (query) params.set("query", query);
  for (const [id, name] of SELECTS) {
    const value = form.querySelector(`#${id}`).value;
    if (value) params.set(name, value);
  }
  if (form.querySelector("#filter-archived").checked) params.set("includeArchived", "true");
  return params.toString();
}

/** Apply what the bar says now: a change reads the board at once. */
function apply() {
  clearTimeout(typingTimer);
  typingTimer = null;
  const wanted = current();
  if (wanted === key) return;
  key = wanted;
  // Folded away on a phone, the filters say on their button how many are set.
  const set = [...new URLSearchParams(wanted).keys()].filter((name) => name !== "query").length;
  setText(form.querySelector(".filter-more-toggle"), set ? `Filters (${set})` : "Filters");
  announce(wanted ? "Filtering the board…" : "Showing the whole board…");
  kick();
}

function clearFilters() {
  clearTimeout(typingTimer);
  typingTimer = null;
  form.reset();
}

/** Forget the filters and their choices (another workspace has other labels, projects and cycles). */
export function resetFilters() {
  clearFilters();
  key = "";
  setText(form.querySelector(".filter-more-toggle"), "Filters");
  fillChoices();
}

// -- the board's context ------------------------------------------------------------------------------

/** Read the board's context and cycles into the store (full rounds: they change rarely). */
export async function readContext(current) {
  const [board, cycles] = await Promise.all([
    store.api("GET", store.ws("/board")),
    store.api("GET", store.ws("/board/cycles")),
  ]);
  if (!current()) return;
  store.set("cycles", Array.isArray(cycles) ? cycles : []);
  store.set("board", board);
}

/** The selects' options from the board's context, kept by value (the one chosen stays chosen). */
function fillChoices() {
  const board = store.get("board") || {};
  const cycles = store.get("cycles") || [];
  fill("filter-label", [["", "Any label"], ...(board.labels || []).map((l) => [l, l])]);
  fill("filter-project", [["", "Any project"], ...(board.projects || []).map((p) => [p.id, p.title])]);
  fill("filter-epic", [["", "Any epic"], ...(board.epics || []).map((e) => [e.id, e.title])]);
  fill("filter-cycle", [["", "Any cycle"], ["active", "The active cycle"], ...cycles.map((c) => [c.id, c.title])]);
}

function fill(id, options) {
  const select = form.querySelector(`#${id}`);
  const before = select.value;
  fillSelect(select, options);
  if (select.value !== before) apply(); // what it named is gone (deleted, or another workspace's)
}

/** What the header says about the active cycle. */
export function cycleText() {
  const board = store.get("board");
  const active = board ? board.activeCycle : null;
  if (!board) return "";
  if (!active) return "No cycle is active.";
  let text = `Active cycle: ${active.title}${active.goal ? ` (${active.goal})` : ""}`;
  if (active.endDate) text += `, ends ${active.endDate}`;
  return text;
}
