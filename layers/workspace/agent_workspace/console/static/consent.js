// The consent page (issue 33): an app (claude.ai, Cursor, an MCP client) asks to sign in; /authorize sends the
// human here with `?request=<id>`, and the human allows it for one workspace or denies it.
//
// The same rules as app.js: the human token stays in this tab's sessionStorage (the console's key, so a human
// signed in to the console is signed in here, and the other way round); what the server sends (the app's name and
// host are the app's own words) reaches the page through textContent only. The server's answer names where to go
// next; it is followed only when it is the app's redirect URI (an https, loopback or native app's address).

import { ApiError, request } from "./core/api.js";
import { el } from "./core/dom.js";
import { TOKEN_KEY, wireSignIn } from "./core/session.js";

// Never followed, whatever the server says: schemes that run or show something in this page's place.
const NEVER_FOLLOWED = new Set(["javascript:", "data:", "vbscript:", "blob:", "file:", "about:"]);
const UNVERIFIED =
  "The app gave this name itself: nothing proves it is the app it says. Allow it only if you started this " +
  "sign-in from it just now.";

const $ = (id) => document.getElementById(id);

const state = { requestId: null, token: null, request: null, busy: false };

// -- messages -----------------------------------------------------------------------------------

function showError(error, context) {
  const status = error instanceof ApiError && error.status ? ` (${error.status} ${error.title})` : "";
  const detail = error instanceof ApiError ? error.detail : String(error && error.message ? error.message : error);
  const alert = $("alert");
  alert.replaceChildren(el("p", { className: "alert-text", text: `${context}: ${detail}${status}` }));
  alert.classList.add("shown");
}

function clearError() {
  $("alert").replaceChildren();
  $("alert").classList.remove("shown");
}

function announce(text) {
  $("status").textContent = text;
}

/** Show one of the page's sections (missing, signin, consent), the others hidden. */
function show(id) {
  $("loading").hidden = true;
  for (const section of ["missing", "signin", "consent"]) $(section).hidden = section !== id;
}

function missing(text) {
  show("missing");
  $("missing-text").textContent = text;
  $("missing-h").focus();
}

// -- the request --------------------------------------------------------------------------------

const path = () => `/api/oauth/requests/${encodeURIComponent(state.requestId)}`;

/** Read the request with `token`: true once it is shown; on a refused token, back to the sign-in. */
async function load(token) {
  let found;
  try {
    found = await request("GET", path(), undefined, token);
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      sessionStorage.removeItem(TOKEN_KEY);
      showSignIn();
      showError(error, error.status === 401 ? "Sign-in failed, the token was refused" :
        "Sign-in failed, this is not a human token");
    } else if (error instanceof ApiError && error.status === 404) {
      missing("This sign-in request is unknown, expired or already answered.");
      showError(error, "Reading the sign-in request failed");
    } else {
      showError(error, "Reading the sign-in request failed");
    }
    return false;
  }
  state.token = token;
  sessionStorage.setItem(TOKEN_KEY, token);
  state.request = found;
  clearError();
  render(found);
  return true;
}

function render(found) {
  const client = found.client || {};
  const name = client.name || client.id || "An app";
  $("consent-h").textContent = `Connect ${name}?`;
  const nameBox = $("client-name");
  nameBox.replaceChildren(el("span", { text: name }));
  if (client.verified === false) {
    const mark = el("span", { className: "badge unverified", text: "unverified", title: UNVERIFIED });
    nameBox.append(" ", mark, el("p", { className: "hint", text: UNVERIFIED }));
  }
  $("client-host").textContent = client.redirectHost || client.redirectUri || "";
  $("client-uri").textContent = client.uri || "";
  $("client-uri").hidden = $("client-uri-label").hidden = !client.uri;

  const scopes = Array.isArray(found.scopes) ? found.scopes : [];
  $("scopes").replaceChildren(
    ...scopes.map((scope) => {
      // What each scope lets the app do, in plain words: the server's (domain/oauth.py SCOPE_TEXTS).
      const words = (found.scopeTexts && found.scopeTexts[scope]) || "a permission this page does not describe";
      return el("li", { className: "scope" }, el("code", { text: scope }), el("span", { text: `: ${words}` }));
    }),
  );
  if (!scopes.length) $("scopes").append(el("li", { className: "meta", text: "Nothing beyond signing in." }));

  const workspaces = Array.isArray(found.workspaces) ? found.workspaces : [];
  $("consent-workspace").replaceChildren(...workspaces.map((w) => el("option", { value: w.id, text: w.title })));
  $("consent-workspace").disabled = !workspaces.length;
  $("consent-no-workspace").hidden = workspaces.length > 0;
  $("consent-allow").disabled = !workspaces.length;
  const expires = new Date(found.expiresAt);
  $("consent-expires").textContent = Number.isNaN(expires.getTime())
    ? ""
    : `This request expires at ${expires.toLocaleTimeString()}.`;
  show("consent");
  announce(`${name} asks to connect. Choose a workspace, then Allow or Deny.`);
  $("consent-h").focus();
}

/** Send the human's decision; on success follow the server's redirect back to the app. */
async function decide(decision) {
  if (state.busy) return;
  const body = { decision };
  if (decision === "allow") body.workspaceId = $("consent-workspace").value;
  state.busy = true;
  for (const button of $("consent-form").querySelectorAll("button")) button.disabled = true;
  let answer;
  try {
    answer = await request("POST", path(), body, state.token);
  } catch (error) {
    state.busy = false;
    for (const button of $("consent-form").querySelectorAll("button")) button.disabled = false;
    $("consent-allow").disabled = !$("consent-workspace").options.length;
    if (error instanceof ApiError && error.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      showSignIn();
    }
    showError(error, decision === "allow" ? "Allowing the app failed" : "Denying the app failed");
    return;
  }
  const target = returnAddress(answer && answer.redirectTo, (state.request.client || {}).redirectUri);
  if (!target) {
    showError(new Error("the answer does not lead to the app's redirect address"), "Returning to the app failed");
    return;
  }
  clearError();
  announce(decision === "allow" ? "Allowed. Returning to the app…" : "Denied. Returning to the app…");
  window.location.assign(target);
}

/** `target` when it is the app's redirect URI with the answer in its query (the server builds it so), else null. */
function returnAddress(target, redirectUri) {
  try {
    const url = new URL(target);
    const bare = new URL(url.href);
    bare.search = "";
    const registered = new URL(redirectUri);
    registered.search = "";
    return !NEVER_FOLLOWED.has(url.protocol) && bare.href === registered.href ? url.href : null;
  } catch {
    return null;
  }
}

// -- signing in -----------------------------------------------------------------------------------

function showSignIn() {
  state.token = null;
  show("signin");
  $("token-input").focus();
}

async function signIn(token) {
  if (await load(token)) $("token-input").value = "";
}

// -- start ----------------------------------------------------------------------------------------

function wire() {
  wireSignIn(signIn, showError);
  $("consent-form").addEventListener("submit", (event) => {
    event.preventDefault();
    decide("allow");
  });
  $("consent-deny").addEventListener("click", () => decide("deny"));
  state.requestId = new URLSearchParams(window.location.search).get("request");
  if (!state.requestId) {
    missing("This page answers an app's sign-in, and the address names none. Open it from the app you connect.");
    return;
  }
  const saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved) load(saved);
  else showSignIn();
}

wire();
