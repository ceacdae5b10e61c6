// The Board view (`#/board`, the console's first screen): the workspace's tasks in their eight columns under a
// compact bar (the title, the active cycle, what the filters match, "New task", the filters). A card opens its
// task in the drawer (`#/task/WS-12`); the open task's card is marked.
//
// Reads: the eight column listings and the board's context are the costly part of a round, so they are read on
// full rounds and on kicks only (a filter changed, a task made, a decision taken anywhere). Between them, the
// cards' "Asks you" markers follow the inbox (core/needs.js publishes it every round).
//
// Keys: "/" search, "c" new task, "j"/"k" next/previous card (down a column, then on to the next), Enter opens.

import * as store from "../core/store.js";
import * as router from "../core/router.js";
import { bind } from "../core/shortcuts.js";
import { announce } from "../core/feedback.js";
import { fragment, setAttr, setText } from "../core/dom.js";
import { buildFilters, cycleText, filterKey, readContext, resetFilters, searchField } from "./board/filters.js";
import { buildCreate, openCreate, resetCreate } from "./board/create.js";
import {
  buildColumns,
  cardButtons,
  cardOf,
  clearColumns,
  focusCard,
  markAllAsks,
  markOpen,
  readColumns,
  showColumns,
} from "./board/columns.js";

const MARKUP = `
<div class="board-bar">
  <h1 id="board-h">Board</h1>
  <p class="meta board-cycle" id="board-cycle"></p>
  <p class="meta board-note" id="board-note" hidden></p>
  <button type="button" class="board-new" aria-keyshortcuts="c">New task</button>
</div>
<div class="board-none" hidden>
  <h2>No workspace yet</h2>
  <p>Tasks live in a workspace. <a href="#/settings">Create one in Settings</a>, then connect an agent to it.</p>
</div>`;

let root = null;
let onScreen = false;
let pending = null; // what a shortcut asked for before the board was on screen: "search" or "create"
let focusNext = null; // a task just made: its card gets focus once it shows

function openTask(task) {
  router.go({ view: "task", id: task.identifier || task.id });
}

/** The task the address opens, by id or identifier (null when none is open). */
function openRef() {
  const route = router.parse();
  return route.view === "task" ? route.id : null;
}

function showNoWorkspace() {
  const none = !store.get("workspaceId");
  root.querySelector(".board-none").hidden = !none;
  for (const part of root.querySelectorAll(".board-filters, .board-picker, .board-frame, .board-new")) {
    part.hidden = none;
  }
}

async function refresh(current, full) {
  if (!full) return;
  const filters = filterKey();
  const [, { read, note }] = await Promise.all([readContext(current), readColumns(filters, current)]);
  if (!current() || filters !== filterKey()) return; // a later filter's read is the one to show
  const waiting = read.flatMap(({ tasks }) => tasks.flatMap((t) => (Array.isArray(t.waitingOn) ? t.waitingOn : [])));
  for (const { tasks } of read) for (const task of tasks) store.learnTask(task);
  await store.learnTitles(waiting, current); // "Waiting on WS-3" names tasks outside the filter too
  if (!current() || filters !== filterKey()) return;
  const shown = showColumns(read, openTask, openRef());
  setText(root.querySelector("#board-cycle"), cycleText());
  let said = note;
  if (!said && filters) said = `Filtered: ${shown === 1 ? "1 task matches" : `${shown} tasks match`}.`;
  const noteNode = root.querySelector("#board-note");
  if (said && said !== noteNode.textContent) announce(said); // what a filter the human set matched
  setText(noteNode, said);
  setAttr(noteNode, "hidden", said ? null : "");
  if (focusNext) {
    const li = cardOf(focusNext);
    if (li) {
      focusNext = null;
      focusCard(li.querySelector(".card-open"));
    }
  }
}

// j/k: from the focused card to the next or previous one; from anywhere else to the open task's card or the
// first (last) card.
function moveFocus(step) {
  const buttons = cardButtons();
  if (!buttons.length) return;
  let at = buttons.indexOf(document.activeElement);
  if (at === -1) at = buttons.findIndex((b) => b.getAttribute("aria-current") === "true");
  const next = at === -1 ? (step > 0 ? 0 : buttons.length - 1) : Math.min(Math.max(at + step, 0), buttons.length - 1);
  focusCard(buttons[next]);
}

function whenShown(what) {
  if (onScreen) {
    run(what);
  } else {
    pending = what;
    router.go({ view: "board" });
  }
}

function run(what) {
  if (!store.get("workspaceId")) return;
  if (what === "search") searchField().focus();
  else if (what === "create") openCreate();
}

export const board = {
  name: "board",
  label: "Board",
  icon: "▦",
  account: false,
  mount(node) {
    root = node;
    root.setAttribute("aria-labelledby", "board-h");
    root.append(fragment(MARKUP));
    const bar = root.querySelector(".board-bar");
    bar.after(buildFilters());
    const [picker, frame] = buildColumns(openTask);
    root.append(picker, frame, buildCreate((task) => {
      focusNext = task.id;
    }));
    root.querySelector(".board-new").addEventListener("click", openCreate);
    store.on("needs", markAllAsks);
    store.on("workspaceId", showNoWorkspace);
    router.onRoute(() => markOpen(openRef()));
    bind("/", "Search the board", () => whenShown("search"));
    bind("c", "Create a task", () => whenShown("create"));
    // j/k are the board's while it is on screen (the inbox binds them too: bind's `when`), and not while the task's
    // drawer covers it (a phone: views/drawer.js makes what is under it inert).
    const shown = () => onScreen && !root.closest("[inert]");
    bind("j", "Board: the next card", () => shown() && moveFocus(1), shown);
    bind("k", "Board: the previous card", () => shown() && moveFocus(-1), shown);
    showNoWorkspace();
  },
  enter() {
    onScreen = true;
    showNoWorkspace();
    markOpen(openRef());
    if (pending) {
      const what = pending;
      pending = null;
      run(what);
    }
  },
  leave() {
    onScreen = false;
  },
  refresh,
  // Every pushed change names a task the board shows: its card moved, changed, or (the inbox) asks the human now.
  hears: () => true,
  reset() {
    focusNext = null;
    resetFilters(); // before the context goes: a choice that vanishes would count as a change of filter
    store.set("board", null);
    store.set("cycles", []);
    resetCreate();
    clearColumns();
    setText(root.querySelector("#board-cycle"), "");
    const note = root.querySelector("#board-note");
    setText(note, "");
    note.hidden = true;
    showNoWorkspace();
  },
};
