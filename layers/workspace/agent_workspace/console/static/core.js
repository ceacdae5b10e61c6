// What the console's pages share (the console, app.js, and the consent page, consent.js): where the human token
// is kept, the API client, and the one way to build elements.
//
// The API client turns every refusal into an ApiError carrying the problem JSON's `detail` (api/errors.py), so a
// page shows the server's own words; `el` sets text with textContent and attributes one by one, never innerHTML,
// since what the server sends (written by agents, or by an app that signs in) is untrusted.

// The human token lives in the tab's sessionStorage under this key: a reload keeps it, a new tab does not.
export const TOKEN_KEY = "agentWorkspace.humanToken";

export class ApiError extends Error {
  constructor(status, title, detail) {
    super(detail);
    this.status = status;
    this.title = title;
    this.detail = detail;
  }
}

/** One REST call with the human token; the parsed JSON, or an ApiError (status 0 when the server was not reached). */
export async function request(method, path, body, token) {
  const headers = { Accept: "application/json, application/problem+json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const init = { method, headers, cache: "no-store", credentials: "omit", redirect: "error" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    throw new ApiError(0, "Network error", `the server could not be reached (${error.message})`);
  }
  const text = response.status === 204 ? "" : await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const detail =
      data && typeof data.detail === "string" ? data.detail : text.trim().slice(0, 500) || response.statusText;
    const title = data && typeof data.title === "string" ? data.title : response.statusText;
    throw new ApiError(response.status, title, detail);
  }
  return data;
}

/** An element with properties (text, className, dataset, DOM properties, other attributes) and children. */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null) continue;
    if (key === "text") node.textContent = value;
    else if (key === "className") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key in node) node[key] = value; // a property: htmlFor, href, type, value, rows, ...
    else node.setAttribute(key, String(value)); // aria-* and other plain attributes
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// The sign-in form both pages show (#signin-form, #token-input): an empty field is refused in place; the button
// stays disabled while `signIn(token)` runs, so a double click signs in once.
export function wireSignIn(signIn, showError) {
  const form = document.getElementById("signin-form");
  const input = document.getElementById("token-input");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (!token) {
      showError(new Error("paste a human token first"), "Sign-in");
      input.focus();
      return;
    }
    const button = form.querySelector("button");
    button.disabled = true;
    try {
      await signIn(token);
    } finally {
      button.disabled = false;
    }
  });
}
