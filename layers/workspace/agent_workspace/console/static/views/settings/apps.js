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
import { askFirst } from "../../core/confirm.js";
import { revocable } from "./common.js";

const MARKUP = `
  <p class="hint">Apps you allowed to sign in to this workspace. Each acts as its agent until you revoke it.</p>
  <p class="empty apps-empty" hidden>No app has signed in to this workspace.</p>
  <ul class="list apps-list"></ul>`;

let root = null;
let list = null;
let apps = null; // the list's items, less those revoked from this page (common.js)

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
  askFirst(button, {
    under: button.parentElement,
    question: `Revoke ${nameOf(app)}? It is signed out at once and must ask you again to connect.`,
    yes: "Revoke app",
    act: (sure) =>
      apps.revoke(app.id, li, sure, {
        call: () => store.api("DELETE", store.ws(`/connected-apps/${seg(app.id)}`)),
        said: `${nameOf(app)} is revoked: it is signed out, and must ask you again to connect.`,
        failed: `Revoking ${nameOf(app)} failed`,
        refused: (error) => {
          if (error instanceof ApiError && error.status === 404) kick(); // revoked elsewhere
        },
      }),
  });
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
    apps = revocable(box, list, box.querySelector(".apps-empty"));
  },
  async refresh(current, full) {
    if (!full) return;
    const data = await store.api("GET", store.ws("/connected-apps"));
    if (!current()) return;
    const shown = apps.kept(Array.isArray(data && data.items) ? data.items : []);
    reconcile(list, shown, (app) => app.id, appItem, updateAppItem);
    root.querySelector(".apps-empty").hidden = shown.length > 0;
  },
  switched() {
    this.reset();
  },
  reset() {
    apps.reset();
  },
};
