// Telling the human what happened, where they are looking: an error inline next to what failed when the view
// gives a place, else a toast pinned to the screen (never off-screen); successes in a short toast; everything
// also announced to screen readers through one polite live region.

import { $, el } from "./dom.js";
import { ApiError } from "./api.js";

const TOAST_MS = 5000;
const ERROR_MS = 12000;

/** Say something to screen readers without moving focus. */
export function announce(text) {
  const status = $("status");
  if (status) status.textContent = text;
}

function describe(error, context) {
  const status = error instanceof ApiError && error.status ? ` (${error.status} ${error.title})` : "";
  const detail = error instanceof ApiError ? error.detail : String(error && error.message ? error.message : error);
  return `${context ? `${context}: ` : ""}${detail}${status}`;
}

/** A short-lived message in the corner; errors stay longer and have a Dismiss button. */
export function toast(text, { tone = "ok", key } = {}) {
  const region = $("toasts");
  if (!region) return null;
  if (key) for (const old of region.querySelectorAll(`[data-toast="${CSS.escape(key)}"]`)) old.remove();
  for (const old of region.children) if (old.querySelector(".toast-text").textContent === text) old.remove();
  // An error speaks for itself (role alert); a success is announced by `done` through the live region.
  const node = el("div", { className: `toast ${tone}`, role: tone === "error" ? "alert" : null });
  if (key) node.dataset.toast = key;
  const dismiss = el("button", { type: "button", className: "ghost small", text: "Dismiss" });
  dismiss.setAttribute("aria-label", "Dismiss this message");
  dismiss.addEventListener("click", () => node.remove());
  node.append(el("p", { className: "toast-text", text }), dismiss);
  region.append(node);
  setTimeout(() => node.remove(), tone === "error" ? ERROR_MS : TOAST_MS);
  return node;
}

/**
 * An error where the human is looking: inside `where` (an element with a `.inline-error` child, or the element
 * itself gets one) when given and on screen, else as a toast. The text names what failed and the server's reason.
 */
export function showError(error, context, where) {
  const text = describe(error, context);
  const box = where ? inlineBox(where) : null;
  // (the box itself is hidden until it speaks: only a hidden ancestor sends the error to a toast)
  if (box && box.isConnected && !where.closest("[hidden]")) {
    box.textContent = text;
    box.hidden = false;
    box.scrollIntoView({ block: "nearest" });
  } else {
    toast(text, { tone: "error" });
  }
}

/** Clear an inline error shown in `where` (after a retry succeeded). */
export function clearError(where) {
  const box = where ? where.querySelector(":scope > .inline-error") : null;
  if (box) {
    box.textContent = "";
    box.hidden = true;
  }
}

function inlineBox(where) {
  let box = where.querySelector(":scope > .inline-error");
  if (!box) {
    box = el("p", { className: "inline-error", role: "alert", hidden: true });
    where.prepend(box);
  }
  return box;
}

/** Success: a brief toast and an announcement. */
export function done(text) {
  toast(text);
  announce(text);
}
