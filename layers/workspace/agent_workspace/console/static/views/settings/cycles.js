// Settings › Cycles (the active one, choosing it, making a new one) and Settings › Projects & epics (renaming
// and deleting them). Both show the board's context: GET …/board (projects, epics, the active cycle, the
// policy) and GET …/board/cycles, read here in full rounds while Settings is on screen and written to the
// store (`board`, `cycles`), where the board view reads the same; both sections render from the store.

import * as store from "../../core/store.js";
import { kick } from "../../core/refresh.js";
import { fillSelect, fragment, setText } from "../../core/dom.js";
import { clearError, done, showError } from "../../core/feedback.js";
import { askFirst } from "../../core/confirm.js";

const CYCLES_MARKUP = `
  <p class="meta" id="cycle-active">No cycle is active.</p>
  <form class="row cycle-active-form" novalidate>
    <label for="cycle-select">Active cycle</label>
    <select id="cycle-select"><option value="">None</option></select>
    <button type="submit">Set active cycle</button>
  </form>
  <details class="sub cycle-new">
    <summary>New cycle</summary>
    <form class="cycle-form" novalidate>
      <label for="cycle-title">Cycle title</label>
      <input id="cycle-title" name="title" type="text" maxlength="200" autocomplete="off">
      <label for="cycle-goal">Goal</label>
      <textarea id="cycle-goal" name="goal" rows="2" maxlength="2000"></textarea>
      <label for="cycle-end">End date</label>
      <input id="cycle-end" name="endDate" type="date">
      <div class="check">
        <input id="cycle-make-active" name="active" type="checkbox">
        <label for="cycle-make-active">Make it the active cycle</label>
      </div>
      <button type="submit">Create cycle</button>
    </form>
  </details>`;

const HEADINGS_MARKUP = `
  <p class="hint">Agents group tasks under projects and epics. Renaming keeps every task's link; a deleted one
    stays on its tasks, and no new task can name it.</p>
  <p class="empty headings-empty" hidden>No project or epic yet: agents make them as they plan.</p>
  <form class="heading-form" novalidate>
    <label for="heading-select">Project or epic</label>
    <select id="heading-select"><option value="">Choose one</option></select>
    <label for="heading-title">New title</label>
    <input id="heading-title" type="text" maxlength="500" autocomplete="off">
    <div class="actions">
      <button type="submit">Rename</button>
      <button type="button" class="danger heading-delete">Delete</button>
    </div>
  </form>`;

let cyclesRoot = null;
let headingsRoot = null;
let activeShown = null; // the active cycle's id the select was last set to (the human's choice is kept otherwise)

const cycleTitle = (cycleId) => {
  const cycle = (store.get("cycles") || []).find((c) => c.id === cycleId);
  return cycle ? cycle.title : cycleId;
};

function ofThisWorkspace(board) {
  return board && (!board.workspace || board.workspace.id === store.get("workspaceId"));
}

function renderCycles() {
  const board = store.get("board");
  if (!ofThisWorkspace(board)) return;
  const active = board.activeCycle || null;
  let text = "No cycle is active.";
  if (active) {
    text = `Active cycle: ${active.title}${active.goal ? ` (${active.goal})` : ""}`;
    if (active.endDate) text += `, ends ${active.endDate}`;
  }
  setText(cyclesRoot.querySelector("#cycle-active"), text);
  const select = cyclesRoot.querySelector("#cycle-select");
  const cycles = store.get("cycles") || [];
  const named = (c) => (c.endDate ? `${c.title} (ends ${c.endDate})` : c.title);
  fillSelect(select, [["", "None"], ...cycles.map((c) => [c.id, named(c)])]);
  const activeId = active ? active.id : "";
  if (document.activeElement !== select && activeShown !== activeId) {
    select.value = activeId;
    activeShown = activeId;
  }
}

function renderHeadings() {
  const board = store.get("board");
  if (!ofThisWorkspace(board)) return;
  const projects = board.projects || [];
  const epics = board.epics || [];
  fillSelect(headingsRoot.querySelector("#heading-select"), [
    ["", "Choose one"],
    ...projects.map((p) => [`projects/${p.id}`, `Project: ${p.title}`]),
    ...epics.map((e) => [`epics/${e.id}`, `Epic: ${e.title}`]),
  ]);
  const none = projects.length + epics.length === 0;
  headingsRoot.querySelector(".headings-empty").hidden = !none;
  headingsRoot.querySelector(".heading-form").hidden = none;
}

/** The form's submit button, disabled while its call runs (a second click is not a second call); returns the way
 * to give it back. */
function hold(event) {
  const button = event.submitter || event.target.querySelector("button[type=submit]");
  button.disabled = true;
  return () => {
    button.disabled = false;
  };
}

async function setActive(event) {
  event.preventDefault();
  const form = event.target;
  const cycleId = form.querySelector("select").value || null;
  const release = hold(event);
  try {
    await store.api("PUT", store.ws("/board/cycles/active"), { cycleId });
    activeShown = null;
    clearError(form);
    done(cycleId ? `${cycleTitle(cycleId)} is the active cycle.` : "No cycle is active now.");
    kick();
  } catch (error) {
    showError(error, "Setting the active cycle failed", form);
  } finally {
    release();
  }
}

async function createCycle(event) {
  event.preventDefault();
  const form = event.target;
  const fields = form.elements;
  const body = { title: fields.title.value, goal: fields.goal.value, active: fields.active.checked };
  if (fields.endDate.value) body.endDate = fields.endDate.value;
  const release = hold(event);
  try {
    const cycle = await store.api("POST", store.ws("/board/cycles"), body);
    form.reset();
    cyclesRoot.querySelector(".cycle-new").open = false;
    activeShown = null;
    clearError(form);
    done(`Cycle ${cycle.title} created${cycle.active ? ", and it is the active one" : ""}.`);
    cyclesRoot.querySelector(".cycle-new summary").focus(); // not the select: it follows the new active cycle
    kick();
  } catch (error) {
    showError(error, "Creating the cycle failed", form);
  } finally {
    release();
  }
}

// A project or an epic, as the select names it ("projects/<id>" or "epics/<id>"): renamed or deleted. A project's
// edit names the revision it read (PATCH refuses a stale one); an epic's last edit wins.
async function rename(event) {
  event.preventDefault();
  const form = event.target;
  const chosen = form.querySelector("select").value;
  const title = form.querySelector("#heading-title").value;
  if (!chosen) return showError(new Error("choose a project or an epic first"), "Renaming", form);
  if (!title.trim()) return showError(new Error("type the new title first"), "Renaming", form);
  const release = hold(event);
  try {
    const body = { title };
    if (chosen.startsWith("projects/")) {
      body.expectedRevision = (await store.api("GET", store.ws(`/${chosen}`))).revision;
    }
    await store.api("PATCH", store.ws(`/${chosen}`), body);
    form.reset();
    clearError(form);
    done(`Renamed to ${title}.`);
    kick();
  } catch (error) {
    showError(error, "Renaming failed", form);
  } finally {
    release();
  }
}

/** Delete asks first, in the page, under the button: the chosen project or epic, named. */
function askDelete(button) {
  const form = headingsRoot.querySelector(".heading-form");
  const select = form.querySelector("select");
  const chosen = select.value;
  if (!chosen) return showError(new Error("choose a project or an epic first"), "Deleting", form);
  if (form.querySelector(".confirm")) return;
  const name = select.options[select.selectedIndex].textContent;
  select.disabled = true; // the question names the one chosen: it stays chosen until answered
  askFirst(button, {
    under: button.parentElement,
    question: `Delete ${name}? Its tasks keep their link to it; no new task can name it.`,
    yes: `Delete ${name}`,
    closed: () => {
      select.disabled = false;
    },
    act: async (sure, close) => {
      sure.disabled = true;
      try {
        await store.api("DELETE", store.ws(`/${chosen}`));
        close();
        form.reset();
        clearError(form);
        done(`${name} deleted.`);
        select.focus();
        kick();
      } catch (error) {
        sure.disabled = false;
        showError(error, "Deleting failed", form);
      }
    },
  });
}

export const cyclesSection = {
  id: "cycles",
  title: "Cycles",
  workspace: true,
  mount(box) {
    cyclesRoot = box;
    box.append(fragment(CYCLES_MARKUP));
    box.querySelector(".cycle-active-form").addEventListener("submit", setActive);
    box.querySelector(".cycle-form").addEventListener("submit", createCycle);
    store.on("board", renderCycles);
    store.on("cycles", renderCycles);
  },
  enter() {
    renderCycles();
  },
  /** The board's context, for this section, Projects & epics and the policy (policy.js), via the store. */
  async refresh(current, full) {
    if (!full) return;
    const readAt = performance.now();
    const [board, cycles] = await Promise.all([
      store.api("GET", store.ws("/board")),
      store.api("GET", store.ws("/board/cycles")),
    ]);
    if (!current()) return;
    store.set("cycles", Array.isArray(cycles) ? cycles : []);
    store.set("board", { ...board, readAt });
  },
  switched() {
    this.reset();
  },
  reset() {
    activeShown = null;
    setText(cyclesRoot.querySelector("#cycle-active"), "No cycle is active.");
    fillSelect(cyclesRoot.querySelector("#cycle-select"), [["", "None"]]);
    for (const form of cyclesRoot.querySelectorAll("form")) {
      form.reset();
      clearError(form);
    }
    cyclesRoot.querySelector(".cycle-new").open = false;
  },
};

export const headingsSection = {
  id: "headings",
  title: "Projects & epics",
  workspace: true,
  mount(box) {
    headingsRoot = box;
    box.append(fragment(HEADINGS_MARKUP));
    const form = box.querySelector(".heading-form");
    form.addEventListener("submit", rename);
    const remove = box.querySelector(".heading-delete");
    remove.addEventListener("click", () => askDelete(remove));
    store.on("board", renderHeadings);
  },
  enter() {
    renderHeadings();
  },
  switched() {
    this.reset();
  },
  reset() {
    const form = headingsRoot.querySelector(".heading-form");
    const pending = form.querySelector(".confirm");
    if (pending) pending.remove();
    form.querySelector(".heading-delete").hidden = false;
    form.querySelector("select").disabled = false;
    fillSelect(form.querySelector("select"), [["", "Choose one"]]);
    form.hidden = false;
    headingsRoot.querySelector(".headings-empty").hidden = true; // said once read, not before
    form.reset();
    clearError(form);
  },
};
