// The drawer's header: the task's identifier, column and title, and the Close button. Kept compact (two short
// lines) so the decision and the description start on the first screen.

import { el, fragment, nextId, setAttr, setText } from "../../core/dom.js";
import { COLUMN_NAMES } from "../../core/format.js";

let heading = null;
let identifier = null;
let column = null;
let archived = null;

/** Build the header; `onClose` runs when the human clicks Close. Returns the header element. */
export function mountHeader(onClose) {
  const id = nextId("task-h");
  const header = el("header", { className: "drawer-head" });
  header.append(
    fragment(`
      <div class="drawer-where">
        <span class="task-ident"></span>
        <span class="badge task-column"></span>
        <span class="badge task-archived" hidden>Archived</span>
        <button type="button" class="secondary small drawer-close">Close</button>
      </div>
      <h2 class="task-title" tabindex="-1"></h2>`),
  );
  heading = header.querySelector(".task-title");
  heading.id = id;
  identifier = header.querySelector(".task-ident");
  column = header.querySelector(".task-column");
  archived = header.querySelector(".task-archived");
  const close = header.querySelector(".drawer-close");
  close.setAttribute("aria-label", "Close the task");
  close.setAttribute("aria-keyshortcuts", "Escape");
  close.addEventListener("click", onClose);
  return header;
}

/** The heading's id, for the drawer's aria-labelledby. */
export const headingId = () => heading.id;

/** While the task loads: what the page knows of it already (its title from a card), or the reference. */
export function showLoading(title, ref) {
  setText(heading, title || ref);
  setText(identifier, /^[A-Za-z]+-\d+$/.test(ref) ? ref : "");
  setText(column, "");
  column.hidden = true;
  archived.hidden = true;
}

export function renderHeader(task) {
  setText(heading, task.title);
  setText(identifier, task.identifier || "");
  const name = COLUMN_NAMES[task.column] || task.column || "";
  setText(column, name);
  column.hidden = !name;
  setAttr(column, "class", `badge task-column col-${task.column || "none"}`);
  archived.hidden = !task.archived;
  setAttr(archived, "title", task.archived ? `Archived: ${task.archived.reason}` : null);
}

/** Move focus to the task's title: on opening, and after a decision took away the control that had it. */
export function focusHeading() {
  if (heading && heading.isConnected) heading.focus({ preventScroll: false });
}
