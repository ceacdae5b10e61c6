// Settings › Chrome extension (issue 20): whether the human's browser is connected, the sites it shares (with
// every workspace of the account), and how to install and sign in to the extension.
//
// Account-wide, and one cheap read: every round while Settings is on screen. Site titles and tool names come
// from web pages, so untrusted: textContent only. The install guide is closed on load (the old page opened it
// on every load, pushing everything else down): it is the human's to open, and it closes again by itself once
// a browser connects, its job done.

import * as store from "../../core/store.js";
import { $, el, fragment, reconcile, copyFrom, setText } from "../../core/dom.js";
import { plural, timeEl } from "../../core/format.js";
import { announce } from "../../core/feedback.js";

const MARKUP = `
  <p class="hint">Share websites from your Chrome: agents call their WebMCP tools in your browser, signed in as
    you, and ask you before anything that changes a page.</p>
  <p class="meta browser-state"><span class="browser-online">Not connected</span><span class="browser-seen"></span></p>
  <h3 id="browser-sites-h">Shared sites</h3>
  <p class="empty browser-sites-empty">No site is shared yet.</p>
  <ul class="list browser-sites" aria-labelledby="browser-sites-h"></ul>
  <details class="sub browser-install">
    <summary>Install the extension</summary>
    <ol class="steps">
      <li>Get it from the project: <code>make extension</code> writes
        <code>dist/agent-workspace-extension-&lt;version&gt;.zip</code>; unzip it, or use the repository's
        <code>extension/</code> folder as it is.</li>
      <li>In Chrome open <code>chrome://extensions</code>, turn on Developer mode and choose Load unpacked with
        that folder.</li>
      <li>Click the extension's toolbar button and sign in with this server's URL and a human token.</li>
      <li>Open a site that registers WebMCP tools and choose Share this site. Calls that change something wait
        for you in the Inbox, under site-tool calls, and in the extension.</li>
    </ol>
    <label for="browser-url">Server URL</label>
    <div class="copy-row">
      <input id="browser-url" type="text" readonly spellcheck="false">
      <button type="button" class="browser-url-copy">Copy server URL</button>
    </div>
    <p class="meta">The guide: <code>extension/README.md</code> in the project's repository.</p>
  </details>`;

let root = null;
let online = null; // the browser's state at the last read (null: not read yet)
let seenAt = null;

function siteItem(site) {
  const li = el(
    "li",
    {},
    el("span", { className: "site-title" }),
    " ",
    el("span", { className: "meta site-origin" }),
    el("p", { className: "meta site-tools" }),
  );
  updateSiteItem(li, site);
  return li;
}

function updateSiteItem(li, site) {
  const tools = Array.isArray(site.tools) ? site.tools : [];
  const asking = tools.filter((t) => !t.readOnly).length;
  setText(li.querySelector(".site-title"), site.title || site.origin);
  setText(li.querySelector(".site-origin"), site.origin);
  const what = asking ? `, ${asking} asking you before each call` : ", all read-only";
  setText(li.querySelector(".site-tools"), `${plural(tools.length, "tool")}${what}`);
}

export const extensionSection = {
  id: "extension",
  title: "Chrome extension",
  workspace: false,
  mount(box) {
    root = box;
    box.append(fragment(MARKUP));
    const url = $("browser-url");
    url.value = window.location.origin;
    box.querySelector(".browser-url-copy").addEventListener("click", async () => {
      announce(await copyFrom(url, "The server URL"));
    });
  },
  async refresh(current) {
    const state = await store.api("GET", "/api/bridge/sites");
    if (!current()) return;
    const sites = Array.isArray(state && state.sites) ? state.sites : [];
    const now = Boolean(state && state.online);
    setText(root.querySelector(".browser-online"), now ? "Connected" : "Not connected");
    root.querySelector(".browser-state").classList.toggle("online", now);
    const last = (state && state.lastSeenAt) || null;
    if (last !== seenAt) {
      seenAt = last;
      root.querySelector(".browser-seen").replaceChildren(...(last ? [" · last seen ", timeEl(last)] : []));
    }
    reconcile(root.querySelector(".browser-sites"), sites, (site) => site.origin, siteItem, updateSiteItem);
    root.querySelector(".browser-sites-empty").hidden = sites.length > 0;
    // Connected (first seen so, or since the last read): the guide has done its job. Also on the first read, which
    // may come after the human opened the guide while the page loaded, and after the browser connected.
    if (online !== true && now) root.querySelector(".browser-install").open = false;
    online = now;
  },
  reset() {
    online = null;
    seenAt = null;
    setText(root.querySelector(".browser-online"), "Not connected");
    root.querySelector(".browser-seen").replaceChildren();
    root.querySelector(".browser-state").classList.remove("online");
    root.querySelector(".browser-sites").replaceChildren();
    root.querySelector(".browser-sites-empty").hidden = false;
    root.querySelector(".browser-install").open = false;
  },
};
