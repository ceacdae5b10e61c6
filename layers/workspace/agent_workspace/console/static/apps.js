// The console's Connected apps (issue 33): the apps the human allowed to sign in to the workspace in view over
// OAuth (claude.ai, Cursor, an MCP client), each acting as the workspace's agent, with a Revoke button.
//
// They change rarely, so they are read in full polling rounds only (every third timer round, or at once after a
// click). An app's name and host are its own words, so untrusted: textContent only, never innerHTML. Revoking
// asks first, in the page, as the agents view does before deleting.

/** The section, wired to the console's helpers (`ui`): its API client, DOM helpers, messages and polling. */
export function createConnectedApps(ui) {
  const { api, ApiError, el, seg, ws, timeEl, reconcile } = ui;
  const { announce, showError, clearError, handleAuthFailure, kick } = ui;
  const $ = (id) => document.getElementById(id);

  const revoked = new Set(); // revoked from this page: a listing read before the revocation must not bring it back

  async function refresh(current) {
    const data = await api("GET", ws("/connected-apps"));
    if (!current()) return;
    const all = Array.isArray(data && data.items) ? data.items : [];
    for (const id of [...revoked]) if (!all.some((app) => app.id === id)) revoked.delete(id);
    const apps = all.filter((app) => !revoked.has(app.id));
    reconcile($("connected-apps-list"), apps, (app) => app.id, appItem, updateAppItem);
    $("connected-apps-empty").hidden = apps.length > 0;
    $("connected-apps").hidden = false;
  }

  const nameOf = (app) => app.clientName || app.clientId || "An app";

  function appItem(app) {
    const li = el("li", { className: "connected-app" });
    const name = el("strong", { className: "app-name", text: nameOf(app) });
    li.append(name);
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
    const used = app.lastUsedAt ? timeEl(app.lastUsedAt) : "never";
    li.querySelector(".app-when").replaceChildren("Connected ", timeEl(app.connectedAt), " · last used ", used);
  }

  /** The question in the page, under the button: revoke, or keep the app. */
  function ask(app, li, button) {
    if (li.querySelector(".confirm")) return;
    const question = `Revoke ${nameOf(app)}? It is signed out at once and must ask you again to connect.`;
    const box = el("div", { className: "confirm", role: "group", "aria-label": question });
    const sure = el("button", { type: "button", className: "danger", text: "Revoke app" });
    const keep = el("button", { type: "button", className: "secondary", text: "Cancel" });
    const close = () => {
      box.remove();
      button.hidden = false;
    };
    sure.addEventListener("click", () => revoke(app, li, sure));
    keep.addEventListener("click", () => {
      close();
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
      await api("DELETE", ws(`/connected-apps/${seg(app.id)}`));
      revoked.add(app.id);
      const hadFocus = li.contains(document.activeElement);
      li.remove();
      const left = $("connected-apps-list").children.length;
      $("connected-apps-empty").hidden = left > 0;
      if (hadFocus) $("connected-apps-h").focus();
      clearError();
      announce(`${nameOf(app)} is revoked: it is signed out, and must ask you again to connect.`);
      kick();
    } catch (error) {
      button.disabled = false;
      if (!handleAuthFailure(error)) showError(error, `Revoking ${nameOf(app)} failed`);
      if (error instanceof ApiError && error.status === 404) kick(); // revoked elsewhere
    }
  }

  /** Forget what was shown: a sign-out or another workspace. */
  function reset() {
    revoked.clear();
    $("connected-apps-list").replaceChildren();
    $("connected-apps-empty").hidden = false;
    $("connected-apps").hidden = true;
  }

  return { refresh, reset };
}
