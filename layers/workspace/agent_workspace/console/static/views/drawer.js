// The task drawer: one task, beside the board on a wide screen, a full-screen sheet on a phone. `#/task/<WS-12
// or id>` opens it (the shell calls open and close); Esc, the Close button or Back close it, and focus returns
// to what opened it. Top to bottom, the decision first: the header, what the task asks of the human and its
// other moves, the description, one timeline (conversation, comments, activity) with the composer under it,
// then the details, links, files and suggestions (views/task/*.js, one module per part).
//
// Each round reads the board's side (GET …/board/tasks/{ref}: criteria, links, comments, activity) and the
// conversation (GET …/tasks/{ref}, paged by cursor). Opening another task, closing, or a workspace switch
// bumps a generation: answers read for what was open before are dropped. Every part updates in place, so a
// reply being typed, a half-filled answer, a selection in the timeline and focus all survive the rounds.

import * as store from "../core/store.js";
import * as router from "../core/router.js";
import { ApiError, seg } from "../core/api.js";
import { el, typing } from "../core/dom.js";
import { showError } from "../core/feedback.js";
import { bind } from "../core/shortcuts.js";
import { currentView } from "../shell.js";
import { focusHeading, headingId, mountHeader, renderHeader, showLoading } from "./drawer/header.js";
import { clearDecision, mountDecision, renderDecision } from "./drawer/decision.js";
import { renderActions } from "./drawer/actions.js";
import { clearDescription, mountDescription, renderDescription } from "./drawer/description.js";
import { clearTimeline, mountTimeline, namedTasks, renderTimeline } from "./drawer/timeline.js";
import { clearComposer, focusReply, mountComposer, showComposer } from "./drawer/composer.js";
import { clearDetails, mountDetails, mountFiles, renderDetails } from "./drawer/details.js";
import { clearLinks, linkedTasks, mountLinks, renderLinks } from "./drawer/links.js";
import { clearSuggestions, mountSuggestionNote, mountSuggestions, renderSuggestions } from "./drawer/suggestions.js";

const PAGE = 200; // messages per conversation read: the most the API gives
// A phone (css/shell.css): the drawer is a full-screen sheet over the top bar, the view and the navigation.
const PHONE = window.matchMedia("(max-width: 700px)");
const TASK_ID = /^[0-9A-Za-z]{11}$/;

let root = null;
let body = null;

const state = {
  ref: null, // what the address names (WS-12 or the id); null while closed
  taskId: null, // the task's id, once known
  identifier: null,
  detail: null, // the board's side as last shown, merged with what a move returned
  generation: 0, // bumped by each open, close and reset: a read for what was open before is dropped
  openedFrom: null, // the control that opened the drawer, where focus goes back on closing
};

function sameTask(ref) {
  return ref === state.ref || (ref !== null && (ref === state.taskId || ref === state.identifier));
}

export const drawer = {
  mount(node) {
    root = node;
    body = el("div", { className: "drawer-body" });
    body.append(
      mountDecision(),
      mountSuggestionNote(),
      mountDescription(),
      mountTimeline(),
      mountComposer(),
      mountDetails(),
      mountLinks(),
      mountFiles(),
      mountSuggestions(),
    );
    root.append(mountHeader(dismiss), body);
    root.setAttribute("aria-labelledby", headingId());
    store.on("needs", () => {
      if (state.ref !== null && state.taskId) renderDecision(state.taskId);
    });
    store.on("taskChanged", showChanged);
    // Esc closes, unless the human is typing or a dialog is open (its own Esc closes it). Listening here, ahead
    // of the shortcuts, lets the drawer on top take Esc before a view's binding under it.
    document.addEventListener("keydown", (event) => {
      if (event.key !== "Escape" || state.ref === null || event.defaultPrevented) return;
      if (typing(event.target) || (event.target.closest && event.target.closest("dialog"))) return;
      event.preventDefault();
      dismiss();
    });
    const isOpen = () => state.ref !== null;
    bind("Escape", "Close the open task", dismiss, isOpen);
    bind("r", "Reply in the open task", focusReply, isOpen);
    PHONE.addEventListener("change", coverUnder); // a phone turned, a window resized: modal only when it covers
  },

  open(ref) {
    if (state.ref !== null && sameTask(ref)) return;
    const active = document.activeElement;
    if (active && active !== document.body && !root.contains(active)) state.openedFrom = active;
    state.generation += 1;
    state.ref = ref;
    state.taskId = TASK_ID.test(ref) ? ref : null;
    state.identifier = null;
    state.detail = null;
    clearParts();
    showLoading(state.taskId ? store.taskTitle(state.taskId) : "", ref);
    root.setAttribute("aria-busy", "true");
    root.hidden = false;
    coverUnder();
    body.scrollTop = 0;
    focusHeading();
  },

  close() {
    if (state.ref === null) return;
    const hadFocus = root.contains(document.activeElement) || document.activeElement === document.body;
    const { taskId, identifier, openedFrom } = state;
    forget();
    if (hadFocus) returnFocus(openedFrom, taskId, identifier);
  },

  isOpen: () => state.ref !== null,

  /** Whether a pushed change concerns the open task (any, while its id is not known yet). */
  hears: (change) => state.ref !== null && (state.taskId === null || change.taskId === state.taskId),

  async refresh(current) {
    const { ref, generation } = state;
    if (ref === null) return;
    const still = () => current() && state.generation === generation;
    let task;
    try {
      task = seg(ref);
    } catch (error) {
      if (still()) leave(error); // "." or "..": no address can name it, so no task is open there
      return;
    }
    let detail;
    let first;
    try {
      [detail, first] = await Promise.all([
        store.api("GET", store.ws(`/board/tasks/${task}`)),
        store.api("GET", store.ws(`/tasks/${task}?limit=${PAGE}`)),
      ]);
    } catch (error) {
      if (still() && gone(error)) return;
      throw error;
    }
    const messages = [...first.conversation.messages];
    let cursor = first.conversation.nextCursor;
    while (cursor && still()) {
      const more = await store.api("GET", store.ws(`/tasks/${seg(detail.id)}?limit=${PAGE}&cursor=${seg(cursor)}`));
      messages.push(...more.conversation.messages);
      cursor = more.conversation.nextCursor;
    }
    if (!still()) return;
    await store.learnTitles([...linkedTasks(detail), ...namedTasks(detail), detail.parentId], current);
    if (!still()) return;
    show(detail, messages);
  },

  /** The workspace switched or the human signed out: forget the task, without moving focus. */
  reset() {
    if (state.ref !== null) forget();
    state.openedFrom = null;
  },
};

/** Close from inside (Esc, Close): back to the view under the drawer; the shell then calls close(). */
function dismiss() {
  router.go({ view: currentView() });
}

function forget() {
  state.generation += 1;
  state.ref = null;
  state.taskId = null;
  state.identifier = null;
  state.detail = null;
  state.openedFrom = null;
  root.hidden = true;
  coverUnder();
  clearParts();
}

/** On a phone the open drawer covers the screen, so it is modal: what is under it is inert (not focusable, not
 * clickable, not read), and its own keys (the board's j/k) do not apply. Beside the view it is not modal. */
function coverUnder() {
  const covering = state.ref !== null && PHONE.matches;
  for (const node of [document.querySelector(".topbar"), document.getElementById("view"),
    document.querySelector(".views-nav")]) {
    if (node && node.inert !== covering) node.inert = covering;
  }
}

function clearParts() {
  clearDecision();
  clearDescription();
  clearTimeline();
  clearComposer();
  clearDetails();
  clearLinks();
  clearSuggestions();
}

/** A task that is gone (or never was): close and say why. */
function gone(error) {
  if (!(error instanceof ApiError) || error.status !== 404) return false;
  leave(error);
  return true;
}

/** The task cannot be opened: said, and the drawer closes (the address goes back to the view under it). */
function leave(error) {
  showError(error, "Opening the task failed");
  router.go({ view: currentView() }, { replace: true });
}

function show(detail, messages) {
  state.taskId = detail.id;
  state.identifier = detail.identifier || null;
  state.detail = detail;
  store.learnTask(detail);
  root.removeAttribute("aria-busy");
  // The address names the task by its identifier, the form people share ("WS-12"), without a history entry.
  const route = router.parse();
  if (detail.identifier && route.view === "task" && sameTask(route.id) && route.id !== detail.identifier) {
    history.replaceState(null, "", router.href({ view: "task", id: detail.identifier }));
    state.ref = detail.identifier;
  }
  renderHeader(detail);
  renderDecision(detail.id);
  renderActions(detail);
  renderDescription(detail);
  renderTimeline(detail, messages);
  showComposer(detail.id);
  renderDetails(detail);
  renderLinks(detail);
  renderSuggestions(detail);
}

/** A move answered with the task as it is now: show it at once (the next round reads the rest). */
function showChanged(task) {
  if (!state.detail || !task || task.id !== state.taskId) return;
  const merged = { ...state.detail, ...task };
  if (task.body !== undefined && task.description === undefined) merged.description = task.body;
  state.detail = merged;
  renderHeader(merged);
  renderActions(merged);
  renderDescription(merged);
  renderDetails(merged);
}

/** Focus back where it was before the drawer opened: the card (or link) that opened it, else the task's card in
 * the view under the drawer, else the view itself. */
function returnFocus(openedFrom, taskId, identifier) {
  const visible = (node) => node && node.isConnected && !node.closest("[hidden]") && node.getClientRects().length > 0;
  if (visible(openedFrom)) {
    openedFrom.focus();
    return;
  }
  const view = document.getElementById("view");
  for (const key of [taskId, identifier].filter(Boolean)) {
    const card = view.querySelector(`[data-key="${CSS.escape(key)}"]:not([hidden])`);
    const target = card && (card.matches("button, a[href]") ? card : card.querySelector("button, a[href]"));
    if (visible(target)) {
      target.focus();
      return;
    }
  }
  view.focus();
}
