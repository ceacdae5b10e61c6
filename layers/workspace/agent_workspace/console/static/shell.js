// The app shell: a thin top bar (workspace switcher, the inbox button with its count, the offline or Live sign,
// sign out), the views' navigation (a left rail on a wide screen, a bottom bar on a phone: one <nav>, two layouts)
// and the view on screen, with a task's drawer beside it. It signs in and out, switches workspaces and turns
// the address into the view shown (core/router.js); each view owns its markup and state (views/*.js).
//
// A view is {name, label, mount(root), enter(route), leave(), refresh(current, full), reset(), account, hears?}:
// mounted once, refreshed each round while on screen, reset when the workspace changes or the human signs
// out; `account` views (Agents, Pano) work without a workspace. `hears(change)` says whether a pushed change
// ({what: "needs"|"task", taskId}: core/push.js) concerns what the view shows; one that does not waits for a
// round of everything.

import * as store from "./core/store.js";
import * as refresh from "./core/refresh.js";
import * as router from "./core/router.js";
import { ApiError, request } from "./core/api.js";
import { $, el, fillSelect, setText } from "./core/dom.js";
import { showError, clearError, announce } from "./core/feedback.js";
import { TOKEN_KEY, WORKSPACE_KEY, wireSignIn } from "./core/session.js";
import { refreshNeeds, clearNeeds } from "./core/needs.js";
import { startPush } from "./core/push.js";
import { bind, showHelp, wireShortcuts } from "./core/shortcuts.js";

const TITLE = "Agent Workspace";

let views = []; // in the navigation's order
let drawer = null; // the task drawer (views/drawer.js)
let shown = null; // the view on screen
let lastFailure = ""; // the round failure shown last, so a failing refresh toasts once, not every 3 s

/** Start the console with its views and the task drawer. */
export function start(allViews, taskDrawer) {
  views = allViews;
  drawer = taskDrawer;
  buildNavigation();
  for (const view of views) {
    const root = el("section", { className: `view view-${view.name}`, id: `view-${view.name}`, hidden: true });
    root.setAttribute("aria-label", view.label);
    $("view").append(root);
    view.mount(root);
    refresh.register(
      (current, full) => view.refresh(current, full),
      () => shown === view && (view.account || Boolean(store.get("workspaceId"))),
      (change) => Boolean(view.hears && view.hears(change)),
    );
  }
  drawer.mount($("drawer"));
  refresh.register(
    (current, full) => drawer.refresh(current, full),
    () => drawer.isOpen() && Boolean(store.get("workspaceId")),
    (change) => drawer.hears(change),
  );
  refresh.register(refreshWorkspaces);
  refresh.register(refreshNeeds, () => Boolean(store.get("workspaceId")), (change) => change.what === "needs");
  refresh.onRoundFailure(roundFailed);

  store.on("needs", showCount);
  store.on("online", (online) => {
    $("offline").hidden = online;
    document.body.classList.toggle("is-offline", !online);
    showLive();
  });
  store.on("push", showLive);
  startPush();
  router.onRoute(show);
  wireSignIn(signIn, showError);
  $("sign-out").addEventListener("click", () => signOut());
  $("workspace-select").addEventListener("change", (event) => selectWorkspace(event.target.value || null));
  $("shortcuts-button").addEventListener("click", showHelp);
  // The skip link moves the focus itself: following its "#view" would leave the route's address behind.
  document.querySelector(".skip").addEventListener("click", (event) => {
    event.preventDefault();
    const target = $("app").hidden ? $("token-input") : $("view");
    target.focus();
  });
  wireShortcuts();
  bind("g b", "Go to the board", () => router.go({ view: "board" }));
  bind("g i", "Go to the inbox", () => router.go({ view: "inbox" }));
  bind("g s", "Go to settings", () => router.go({ view: "settings" }));

  const saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved) signIn(saved);
  else $("token-input").focus();
}

function buildNavigation() {
  const nav = $("nav-list");
  for (const view of views) {
    const link = el("a", { href: router.href({ view: view.name }), className: `nav-${view.name}` },
      el("span", { className: "nav-icon", "aria-hidden": "true", text: view.icon || view.label[0] }),
      el("span", { className: "nav-label", text: view.label }));
    if (view.name === "inbox") link.append(el("span", { className: "count nav-count", id: "nav-inbox-count" }));
    nav.append(el("li", {}, link));
  }
}

// -- signing in and out --------------------------------------------------------------------------------

async function signIn(token) {
  let workspaces;
  try {
    workspaces = await request("GET", "/api/workspaces", undefined, token);
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      sessionStorage.removeItem(TOKEN_KEY);
    }
    const context =
      error instanceof ApiError && error.status === 401
        ? "Sign-in failed, the token was refused"
        : error instanceof ApiError && error.status === 403
          ? "Sign-in failed, this is not a human token"
          : "Sign-in failed";
    showError(error, context, $("signin-form"));
    return false;
  }
  store.set("token", token);
  sessionStorage.setItem(TOKEN_KEY, token);
  clearError($("signin-form"));
  $("token-input").value = "";
  $("signin").hidden = true;
  $("app").hidden = false;
  setWorkspaces(workspaces);
  const route = router.parse();
  const remembered = sessionStorage.getItem(WORKSPACE_KEY);
  const pick =
    workspaces.find((w) => route.workspaceId && w.id === route.workspaceId) ||
    workspaces.find((w) => w.id === remembered) ||
    workspaces[0];
  selectWorkspace(pick ? pick.id : null, { keepRoute: true });
  announce(`Signed in. ${workspaces.length} workspace${workspaces.length === 1 ? "" : "s"}.`);
  show(route);
  return true;
}

export function signOut(message) {
  refresh.stop();
  store.set("token", null);
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(WORKSPACE_KEY);
  store.set("workspaces", []);
  store.set("workspaceId", null);
  store.forgetTasks();
  clearNeeds();
  for (const view of views) view.reset();
  drawer.reset();
  if (shown) shown.leave();
  shown = null;
  $("workspace-select").replaceChildren();
  history.replaceState(null, "", `${window.location.pathname}${window.location.search}`);
  $("app").hidden = true;
  $("signin").hidden = false;
  document.title = TITLE;
  announce(message || "Signed out. The token was removed from this tab.");
  $("token-input").focus();
}

function roundFailed(error) {
  if (!error) {
    lastFailure = "";
    return;
  }
  if (error instanceof ApiError && error.status === 401) {
    signOut("Signed out: the server no longer accepts this token.");
    showError(error, "Signed out, the token was refused", $("signin-form"));
    return;
  }
  if (error instanceof ApiError && error.unreachable) return; // the offline sign says it, once
  const text = `${error.message}`;
  if (text === lastFailure) return;
  lastFailure = text;
  showError(error, "Refreshing failed");
}

// -- workspaces ----------------------------------------------------------------------------------------

async function refreshWorkspaces(current) {
  const workspaces = await store.api("GET", "/api/workspaces");
  if (!current()) return;
  setWorkspaces(workspaces);
  if (!store.get("workspaceId") && workspaces.length) selectWorkspace(workspaces[0].id);
}

/** The account's workspaces, in the switcher (kept by id: the one chosen stays chosen). */
export function setWorkspaces(workspaces) {
  store.set("workspaces", workspaces);
  const select = $("workspace-select");
  fillSelect(select, workspaces.map((w) => [w.id, w.title]));
  if (store.get("workspaceId")) select.value = store.get("workspaceId");
  $("workspace-switch").hidden = workspaces.length === 0;
}

/** Switch workspace: every view forgets what it showed, the inbox count clears, and a round starts at once. */
export function selectWorkspace(id, { keepRoute = false } = {}) {
  const changed = store.get("workspaceId") !== id;
  if (id) sessionStorage.setItem(WORKSPACE_KEY, id);
  else sessionStorage.removeItem(WORKSPACE_KEY);
  $("workspace-select").value = id || "";
  if (changed) {
    clearNeeds();
    for (const view of views) if (!view.account) view.reset();
    const drawerWasOpen = drawer.isOpen(); // reset() closes it: the address must leave the old workspace's task
    drawer.reset();
    store.set("workspaceId", id);
    if (!keepRoute && drawerWasOpen) router.go({ view: shown ? shown.name : "board" }, { replace: true });
  }
  refresh.restart();
}

// -- the view on screen ------------------------------------------------------------------------------

/** Show what the route names: a view, or a task's drawer over the view it was opened from. */
function show(route) {
  if (!store.get("token")) return;
  if (route.workspaceId && route.workspaceId !== store.get("workspaceId")) {
    if (store.get("workspaces").some((w) => w.id === route.workspaceId)) {
      selectWorkspace(route.workspaceId, { keepRoute: true });
    } else {
      // A link into another account's workspace (followed while signed in): said, and not opened here.
      showError(new Error(`this account has no workspace ${route.workspaceId}`), "Opening the link failed");
      router.go({ view: shown ? shown.name : "board" }, { replace: true });
      return;
    }
  }
  const board = views.find((v) => v.name === "board");
  const under = route.view === "task" ? shown || board : views.find((v) => v.name === route.view);
  const view = under || views[0];
  if (shown !== view) {
    if (shown) shown.leave();
    for (const v of views) $(`view-${v.name}`).hidden = v !== view;
    shown = view;
    for (const link of document.querySelectorAll("#nav-list a")) {
      if (link.getAttribute("href") === router.href({ view: view.name })) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    view.enter(route.view === view.name ? route : { view: view.name });
  } else if (route.view === view.name) {
    view.enter(route);
  }
  if (route.view === "task") {
    if (route.workspaceId) history.replaceState(null, "", router.href({ view: "task", id: route.id }));
    drawer.open(route.id);
  } else if (drawer.isOpen()) {
    drawer.close();
  }
  refresh.kick();
}

/** The view on screen, for the drawer to return focus and the address to it. */
export function currentView() {
  return shown ? shown.name : "board";
}

/** The Live sign, where the offline one shows: changes arrive as they happen (the push socket is open). */
function showLive() {
  $("live").hidden = !(store.get("push") === "live" && store.get("online"));
}

function showCount(needs) {
  const n = needs ? needs.count : 0;
  setText($("inbox-count"), n ? String(n) : "");
  setText($("nav-inbox-count"), n ? String(n) : "");
  $("inbox-button").setAttribute("aria-label", n ? `Inbox, ${n} waiting on you` : "Inbox, nothing waiting");
  document.title = n ? `(${n}) ${TITLE}` : TITLE;
}

