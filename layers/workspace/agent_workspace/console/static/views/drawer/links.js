// How the task relates to others: its links (blocks, blocked by, relates to, duplicates), the tasks it waits
// on, and the form that adds a link. Each other task is a link that opens it in the drawer.

import * as store from "../../core/store.js";
import * as router from "../../core/router.js";
import { seg } from "../../core/api.js";
import { el, fragment, nextId, reconcile, setAttr, setText } from "../../core/dom.js";
import { clearError, done, showError } from "../../core/feedback.js";
import { LINK_NAMES } from "../../core/format.js";
import { kick } from "../../core/refresh.js";

let links = null;
let linksEmpty = null;
let waiting = null;
let waitingBox = null;
let form = null;
let taskId = null;

export function mountLinks() {
  const section = el("section", { className: "task-links" });
  section.append(
    fragment(`
      <h3>Links</h3>
      <p class="empty links-empty">No links.</p>
      <ul class="list links-list"></ul>
      <div class="task-waiting" hidden>
        <h4>Waiting on</h4>
        <ul class="list waiting-list"></ul>
      </div>
      <details class="sub link-new">
        <summary>Link to another task</summary>
        <form class="row link-form" novalidate>
          <div class="field">
            <label>This task</label>
            <select>
              <option value="blocks">blocks</option>
              <option value="relates_to">relates to</option>
              <option value="duplicate_of">is a duplicate of</option>
            </select>
          </div>
          <div class="field grow">
            <label>Other task (WS-number or id)</label>
            <input type="text" autocomplete="off" spellcheck="false">
          </div>
          <button type="submit">Add link</button>
        </form>
      </details>`),
  );
  const heading = section.querySelector("h3");
  heading.id = nextId("links-h");
  section.setAttribute("aria-labelledby", heading.id);
  links = section.querySelector(".links-list");
  links.setAttribute("aria-labelledby", heading.id);
  linksEmpty = section.querySelector(".links-empty");
  waitingBox = section.querySelector(".task-waiting");
  waiting = section.querySelector(".waiting-list");
  waiting.setAttribute("aria-label", "Waiting on");
  form = section.querySelector("form");
  for (const field of form.querySelectorAll(".field")) {
    const control = field.querySelector("select, input");
    control.id = nextId("link");
    field.querySelector("label").htmlFor = control.id;
  }
  form.addEventListener("submit", addLink);
  return section;
}

export function clearLinks() {
  links.replaceChildren();
  waiting.replaceChildren();
  waitingBox.hidden = true;
  linksEmpty.hidden = false;
  if (taskId !== null) {
    form.reset();
    form.closest("details").open = false;
    clearError(form);
  }
  taskId = null;
}

/** The ids of the tasks named here, to learn their titles before showing them. */
export function linkedTasks(detail) {
  return [...(detail.links || []).map((l) => l.taskId), ...(detail.waitingOn || [])];
}

export function renderLinks(detail) {
  if (taskId !== detail.id) clearLinks();
  taskId = detail.id;
  const list = Array.isArray(detail.links) ? detail.links : [];
  reconcile(links, list, (l) => `${l.type}:${l.taskId}`, linkItem, updateLinkItem);
  linksEmpty.hidden = list.length > 0;
  const ids = Array.isArray(detail.waitingOn) ? detail.waitingOn : [];
  reconcile(
    waiting,
    ids,
    (id) => id,
    (id) => linkItem({ taskId: id }),
    (li, id) => updateLinkItem(li, { taskId: id }),
  );
  waitingBox.hidden = ids.length === 0;
}

function linkItem(link) {
  const li = el("li", {}, el("span", { className: "link-type" }), el("a", { className: "task-link" }));
  updateLinkItem(li, link);
  return li;
}

function updateLinkItem(li, link) {
  const type = link.type ? LINK_NAMES[link.type] || link.type.replace(/_/g, " ") : "";
  setText(li.querySelector(".link-type"), type ? `${type} ` : "");
  const anchor = li.querySelector("a");
  setAttr(anchor, "href", router.href({ view: "task", id: store.taskIdentifier(link.taskId) || link.taskId }));
  setText(anchor, store.taskLabel(link.taskId));
}

async function addLink(event) {
  event.preventDefault();
  const id = taskId;
  const other = form.querySelector("input");
  const value = other.value.trim();
  if (!value) {
    showError(new Error("name the other task (WS-number or id)"), "Linking the tasks", form);
    other.focus();
    return;
  }
  const button = form.querySelector("button");
  button.disabled = true;
  try {
    const body = { type: form.querySelector("select").value, otherTaskId: value };
    const linked = await store.api("POST", store.ws(`/board/tasks/${seg(id)}/links`), body);
    if (taskId === id) {
      form.reset();
      clearError(form);
    }
    done(linked && linked.created === false ? "These tasks were linked already." : "Link added.");
    kick();
  } catch (error) {
    showError(error, "Linking the tasks failed", form);
  } finally {
    button.disabled = false;
  }
}
