// The popup: sign in, share the current site, see what is shared and with which workspaces, and decide on the calls
// that wait for the human. Everything it does goes through the worker (chrome.runtime messages); page and tool text
// is only ever set as textContent.

const REFRESH_MS = 2000;
const LABELS = { connected: "Connected", offline: "Offline", refused: "Token refused", signedOut: "Signed out" };
const DECISIONS = [
  ["allow_once", "Allow once", ""],
  ["always_allow", "Always allow", "secondary"],
  ["deny", "Deny", "danger"],
];

const $ = (id) => document.getElementById(id);
let target = null; // the tab "This site" is about
let view = { signedIn: false, status: { state: "signedOut" } };
let rendered = { pending: "", sites: "" }; // what the lists show, so a refresh that changes nothing keeps focus
let refreshing = false;

/** An element with attributes and children; strings become text nodes (never HTML). */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "text") node.textContent = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function ask(message) {
  return chrome.runtime.sendMessage(message);
}

function say(text, isError = false) {
  const notice = $("notice");
  notice.textContent = text ?? "";
  notice.classList.toggle("error", isError);
}

function ago(ms) {
  if (!ms) return "never";
  const seconds = Math.max(0, Math.round((Date.now() - ms) / 1000));
  return seconds < 60 ? `${seconds} s ago` : `${Math.round(seconds / 60)} min ago`;
}

function isWeb(url) {
  return typeof url === "string" && /^https?:\/\//.test(url);
}

/** The tab the popup is about: the active tab; when the popup is itself a tab, the most recently used web tab. */
async function targetTab() {
  const self = await chrome.tabs.getCurrent();
  if (!self) {
    const [active] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
    return active ?? null;
  }
  const tabs = (await chrome.tabs.query({})).filter((tab) => tab.id !== self.id && isWeb(tab.url));
  tabs.sort((a, b) => (b.lastAccessed ?? 0) - (a.lastAccessed ?? 0));
  return tabs[0] ?? null;
}

// -- rendering -------------------------------------------------------------------------------------------------------

function renderStatus() {
  const { status } = view;
  const state = status?.state ?? "signedOut";
  const pill = $("state");
  pill.dataset.state = state;
  pill.textContent = LABELS[state] ?? state;
  const signedIn = view.signedIn && state !== "refused";
  $("sign-in").hidden = signedIn;
  $("connection").hidden = !signedIn;
  $("approvals").hidden = !signedIn;
  $("this-site").hidden = !signedIn;
  $("shared").hidden = !signedIn;
  $("refused").hidden = state !== "refused";
  $("refused").textContent = state === "refused" ? "The server refused the token. Sign in again with a valid human token." : "";
  const detail = $("connection-detail");
  if (state === "connected") {
    const how = { push: ", live (push)", poll: ", polling" }[status.delivery] ?? "";
    detail.textContent = `Connected to ${view.server ?? status.server}${how}. Last contact ${ago(status.lastContactAt)}.`;
  } else if (state === "offline") {
    const retry = status.retryAt ? ` Retrying in ${Math.max(0, Math.round((status.retryAt - Date.now()) / 1000))} s.` : "";
    detail.textContent = `Cannot reach ${view.server ?? status.server}: ${status.error ?? "no answer"}.${retry}`;
  } else {
    detail.textContent = "";
  }
}

function workspaceName(id) {
  return (view.workspaces ?? []).find((w) => w.id === id)?.title ?? id;
}

function renderPending() {
  const calls = view.pending ?? [];
  const key = JSON.stringify([calls.map((c) => c.id), (view.workspaces ?? []).map((w) => w.title)]);
  $("approvals-count").textContent = calls.length ? String(calls.length) : "";
  $("no-pending").hidden = calls.length > 0;
  if (key === rendered.pending) return;
  rendered.pending = key;
  const list = $("pending-list");
  list.replaceChildren(
    ...calls.map((call) => {
      const titleId = `call-${call.id}`;
      const buttons = DECISIONS.map(([decision, label, style]) =>
        el("button", { type: "button", class: style || null, "data-decision": decision, "data-call": call.id, "data-workspace": call.workspaceId, text: label }),
      );
      return el(
        "li",
        { "aria-labelledby": titleId },
        el("p", { id: titleId, class: "card-title" }, el("span", { text: call.tool }), " on ", el("span", { text: call.site })),
        el("p", { class: "meta", text: `Workspace: ${workspaceName(call.workspaceId)} · Task: ${call.taskId}` }),
        el("pre", { class: "args", "aria-label": "Arguments", text: JSON.stringify(call.arguments, null, 2) }),
        el("div", { class: "actions", role: "group", "aria-label": `Decision on ${call.tool}` }, ...buttons),
      );
    }),
  );
}

function renderSites() {
  const bridge = view.bridge;
  const local = view.local ?? {};
  const serverSites = bridge?.sites ?? [];
  const listed = new Set(serverSites.map((s) => s.origin));
  // Sites shared here that the server does not list yet (a report that failed) are shown too, marked.
  const sites = [
    ...serverSites.map((s) => ({ ...s, reported: true })),
    ...Object.values(local)
      .filter((s) => !listed.has(s.origin))
      .map((s) => ({ origin: s.origin, title: s.title, tools: s.tools.map((t) => ({ name: t.name, readOnly: t.annotations?.readOnlyHint === true })), reported: false })),
  ];
  const names = (view.workspaces ?? []).map((w) => w.title);
  $("reach").textContent = names.length
    ? `Shared with every workspace of this account: ${names.join(", ")}.`
    : "Shared with every workspace of this account.";
  const key = JSON.stringify([sites, bridge?.online]);
  $("no-sites").hidden = sites.length > 0;
  const skipped = view.report?.skipped ?? [];
  $("skipped").hidden = skipped.length === 0 && !view.report?.error;
  $("skipped").textContent = [
    ...skipped.map((s) => `Not shared: ${s.tool} on ${s.site} (${s.reason}).`),
    view.report?.error ? `Last report failed: ${view.report.error}` : "",
  ].join(" ");
  if (key === rendered.sites) return;
  rendered.sites = key;
  $("site-list").replaceChildren(
    ...sites.map((site) => {
      const titleId = `site-${site.origin}`;
      const state = !site.reported ? ["offline", "not reported yet"] : bridge?.online ? ["online", "online"] : ["offline", "offline"];
      return el(
        "li",
        { "aria-labelledby": titleId },
        el("p", { id: titleId, class: "card-title", text: site.title && site.title !== site.origin ? `${site.title} — ${site.origin}` : site.origin }),
        el("p", { class: "meta" }, `${site.tools.length} tool${site.tools.length === 1 ? "" : "s"} · `, el("span", { class: state[0], text: state[1] })),
        el(
          "ul",
          { class: "tools", "aria-label": `Tools of ${site.origin}` },
          ...site.tools.map((tool) => el("li", {}, el("span", { text: tool.name }), tool.readOnly ? " " : null, tool.readOnly ? el("span", { class: "tag", text: "read-only" }) : null)),
        ),
        el(
          "div",
          { class: "actions" },
          el("button", { type: "button", class: "secondary", "data-unshare": site.origin, "aria-label": `Stop sharing ${site.origin}`, text: "Stop sharing" }),
        ),
      );
    }),
  );
}

async function renderThisSite() {
  if (!target) {
    $("tab-origin").textContent = "No web page is open.";
    $("tab-tools").textContent = "";
    $("share").hidden = true;
    $("stop-this").hidden = true;
    return;
  }
  const answer = await ask({ type: "inspect", tabId: target.id });
  $("tab-origin").textContent = answer.origin ?? "This page";
  const shared = !!answer.shared;
  if (answer.ok) {
    const count = answer.tools.length;
    $("tab-tools").textContent =
      count === 0
        ? "This page offers no WebMCP tools (yet)."
        : `This page offers ${count} tool${count === 1 ? "" : "s"}: ${answer.tools.map((t) => t.name).join(", ")}.`;
  } else {
    $("tab-tools").textContent = answer.error;
  }
  $("share").hidden = !answer.origin;
  $("share").textContent = shared ? "Refresh its tools" : "Share this site";
  $("stop-this").hidden = !shared;
  $("stop-this").dataset.unshare = answer.origin ?? "";
}

function render() {
  renderStatus();
  if (view.signedIn) {
    renderPending();
    renderSites();
  }
}

async function refresh() {
  if (refreshing) return;
  refreshing = true;
  try {
    view = await ask({ type: "overview" });
    render();
  } catch (error) {
    say(`The extension's worker did not answer: ${error.message}`, true);
  } finally {
    refreshing = false;
  }
}

// -- actions ---------------------------------------------------------------------------------------------------------

async function busy(button, work) {
  button.disabled = true;
  try {
    return await work();
  } finally {
    button.disabled = false;
  }
}

$("sign-in-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const button = $("sign-in-button");
  say("Signing in…");
  const answer = await busy(button, () => ask({ type: "signIn", server: $("server").value, token: $("token").value }));
  if (answer.ok) {
    $("token").value = "";
    say("Signed in. Share a site to let your agents use its tools.");
    await refresh();
    await renderThisSite();
  } else {
    say(answer.error, true);
    await refresh();
  }
});

$("sign-out").addEventListener("click", async (event) => {
  const answer = await busy(event.currentTarget, () => ask({ type: "signOut" }));
  say(answer.warning ?? "Signed out. Agents see your Chrome as not connected.", !!answer.warning);
  rendered = { pending: "", sites: "" };
  await refresh();
});

$("share").addEventListener("click", async (event) => {
  if (!target) return;
  const answer = await busy(event.currentTarget, () => ask({ type: "share", tabId: target.id }));
  if (answer.ok) {
    const count = answer.site?.tools.length ?? 0;
    say(`Shared ${answer.site?.origin} with ${count} tool${count === 1 ? "" : "s"}.`);
  } else {
    say(answer.error, true);
  }
  await refresh();
  await renderThisSite();
});

async function unshare(button, origin) {
  const answer = await busy(button, () => ask({ type: "unshare", origin }));
  say(answer.ok ? `Stopped sharing ${origin}.` : answer.error, !answer.ok);
  await refresh();
  await renderThisSite();
}

$("stop-this").addEventListener("click", (event) => unshare(event.currentTarget, event.currentTarget.dataset.unshare));

$("site-list").addEventListener("click", (event) => {
  const button = event.target.closest("button[data-unshare]");
  if (button) unshare(button, button.dataset.unshare);
});

$("pending-list").addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-decision]");
  if (!button) return;
  const group = button.parentElement;
  for (const other of group.querySelectorAll("button")) other.disabled = true;
  const { decision, call, workspace } = button.dataset;
  const answer = await ask({ type: "decide", workspaceId: workspace, callId: call, decision });
  const words = { allow_once: "Allowed once", always_allow: "Always allowed", deny: "Denied" }[decision];
  say(answer.ok ? `${words}.` : answer.error, !answer.ok);
  if (!answer.ok) for (const other of group.querySelectorAll("button")) other.disabled = false;
  rendered.pending = "";
  await refresh();
});

chrome.storage.onChanged.addListener((changes, area) => {
  // The status is written at every contact; only a change of state (or of the shared sites) is news at once.
  const moved = changes.status && changes.status.oldValue?.state !== changes.status.newValue?.state;
  if (area === "local" && (moved || changes.shared)) refresh();
});

async function start() {
  const { lastServer } = await chrome.storage.local.get("lastServer");
  if (lastServer) $("server").value = lastServer;
  target = await targetTab().catch(() => null);
  await refresh();
  if (view.signedIn) await renderThisSite();
  setInterval(() => {
    refresh();
  }, REFRESH_MS);
}

start();
