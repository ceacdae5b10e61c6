// The console's Chrome extension card (issue 20): whether the human's browser is connected, the sites it
// shares (with every workspace of the account), and how to install and sign in to the extension.
//
// Account-wide, so it is read in full polling rounds only (every third timer round, or at once after a click).
// Site titles and tool names come from web pages, so untrusted: textContent only, never innerHTML.

/** The card, wired to the console's helpers (`ui`): its API client, DOM helpers and copy button. */
export function createBrowserPanel(ui) {
  const { api, el, timeEl, reconcile, copyFrom } = ui;
  const $ = (id) => document.getElementById(id);
  let guided = false; // the install steps were opened once for a human whose browser never connected

  function wire() {
    $("browser-url").value = window.location.origin;
    $("copy-browser-url").addEventListener("click", () => copyFrom($("browser-url"), "The server URL"));
  }

  async function refresh(current) {
    const state = await api("GET", "/api/bridge/sites");
    if (!current()) return;
    const sites = Array.isArray(state && state.sites) ? state.sites : [];
    const status = $("browser-state");
    status.replaceChildren(
      state.online ? "Connected" : "Not connected",
      ...(state.lastSeenAt ? [" · last seen ", timeEl(state.lastSeenAt)] : []),
    );
    status.classList.toggle("online", Boolean(state.online));
    reconcile($("browser-sites"), sites, (s) => `${s.origin}:${s.updatedAt}`, siteItem);
    $("browser-sites-empty").hidden = sites.length > 0;
    // Opened once while no browser is connected: it is what the human needs next; closing it is their call.
    if (!state.online && !guided) $("browser-install").open = true;
    guided = true;
  }

  function siteItem(site) {
    const tools = Array.isArray(site.tools) ? site.tools : [];
    const asking = tools.filter((t) => !t.readOnly).length;
    return el(
      "li",
      {},
      el("span", { className: "site-title", text: site.title || site.origin }),
      " ",
      el("span", { className: "meta", text: site.origin }),
      el("p", {
        className: "meta",
        text:
          `${tools.length} tool${tools.length === 1 ? "" : "s"}` +
          (asking ? `, ${asking} asking you before each call` : ", all read-only"),
      }),
    );
  }

  return { wire, refresh };
}
