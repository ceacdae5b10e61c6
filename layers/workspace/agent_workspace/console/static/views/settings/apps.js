// Settings › Connected apps (issue 33): the apps the human allowed to sign in to the workspace in view over
// OAuth (claude.ai, Cursor, an MCP client), each acting as the workspace's agent, with a Revoke button.
//
// They change rarely, so they are read in full rounds only (every third timer round, or at once after a click).
// An app's name and host are its own words, so untrusted: textContent only. Revoking asks first, in the page.

import * as store from "../../core/store.js";
import { kick } from "../../core/refresh.js";
import { ApiError, seg } from "../../core/api.js";
import { el, fragment, reconcile } from "../../core/dom.js";
import { timeEl } from "../../core/format.js";
import { clearError, done, showError } from "../../core/feedback.js";

const MARKUP = `
  <p class="hint">Apps you allowed to sign in to this workspace. Each acts as its agent until you revoke it.</p>
  <p class="empty apps-empty" hidden>No app has signed in to this workspace.</p>
  <ul class="list apps-list"></ul>`;

let root = null;
let list = null;
const revoked = new Set(); // revoked from this page: a listing read before the revocation must not bring it back

const nameOf = (app) => app.clientName || app.clientId || "An app";

function appItem(app) {
  const li = el("li", { className: "connected-app" });
  li.append(el("strong", { className: "app-name", text: nameOf(app) }));
  if (app.verified === false) {
    const why = "The app gave this name itself: nothing proves it is the app it says.";
    li.append(" ", el("span", { className: "badge unverified", text: "unverified", title: why }));
  }
  const scopes = Array.isArray(app.scopes) && app.scopes.length ? app.scopes.join(", ") : "no scope";
  li.append(
    el("p", { className: "meta app-where", text: `${app.redirectHost || ""} · ${scopes}` }),
    el("p", { className: "meta app-when" }),
  );
  const revoke = el("button", { type: "button", className: "secondary small", text: "Revoke" });
  revoke.setAttribute("aria-label", `Revoke ${nameOf(app)}`);
  revoke.addEventListener("click", () => ask(app, li, revoke));
  li.append(el("div", { className: "actions" }, revoke));
  updateAppItem(li, app);
  return li;
}

function updateAppItem(li, app) {
  const when = li.querySelector(".app-when");
  const signature = `${app.connectedAt}|${app.lastUsedAt || ""}`;
  if (when.dataset.sig === signature) return; // the relative dates move on by themselves (freshTimes)
  when.dataset.sig = signature;
  const used = app.lastUsedAt ? timeEl(app.lastUsedAt) : "never";
  when.replaceChildren("Connected ", timeEl(app.connectedAt), " · last used ", used);
}

/** The question in the page, under the button: revoke, or keep the app. */
function ask(app, li, button) {
  if (li.querySelector(".confirm")) return;
  const question = `Revoke ${nameOf(app)}? It is signed out at once and must ask you again to connect.`;
  const box = el("div", { className: "confirm", role: "group", "aria-label": question });
  const sure = el("button", { type: "button", className: "danger", text: "Revoke app" });
  const keep = el("button", { type: "button", className: "secondary", text: "Cancel" });
  sure.addEventListener("click", () => revoke(app, li, sure));
  keep.addEventListener("click", () => {
    box.remove();
    button.hidden = false;
    button.focus();
  });
  box.append(el("p", { text: question }), el("div", { className: "actions" }, sure, keep));
  button.hidden = true;
  button.parentElement.after(box);
  keep.focus();
}

async function revoke(app, li, button) {
  button.disabled = true;
  try {
    await store.api("DELETE", store.ws(`/connected-apps/${seg(app.id)}`));
    revoked.add(app.id);
    const hadFocus = li.contains(document.activeElement);
    li.remove();
    root.querySelector(".apps-empty").hidden = list.children.length > 0;
    if (hadFocus) root.querySelector("h2").focus();
    clearError(root);
    done(`${nameOf(app)} is revoked: it is signed out, and must ask you again to connect.`);
    kick();
  } catch (error) {
    button.disabled = false;
    showError(error, `Revoking ${nameOf(app)} failed`, li);
    if (error instanceof ApiError && error.status === 404) kick(); // revoked elsewhere
  }
}

export const appsSection = {
  id: "apps",
  title: "Connected apps",
  workspace: true,
  mount(box) {
    root = box;
    box.append(fragment(MARKUP));
    list = box.querySelector(".apps-list");
    list.setAttribute("aria-labelledby", box.querySelector("h2").id);
  },
  async refresh(current, full) {
    if (!full) return;
    const data = await store.api("GET", store.ws("/connected-apps"));
    if (!current()) return;
    const all = Array.isArray(data && data.items) ? data.items : [];
    for (const id of [...revoked]) if (!all.some((app) => app.id === id)) revoked.delete(id);
    const apps = all.filter((app) => !revoked.has(app.id));
    reconcile(list, apps, (app) => app.id, appItem, updateAppItem);
    root.querySelector(".apps-empty").hidden = apps.length > 0;
  },
  switched() {
    this.reset();
  },
  reset() {
    revoked.clear();
    list.replaceChildren();
    root.querySelector(".apps-empty").hidden = true; // said once read, not before
    clearError(root);
  },
};
