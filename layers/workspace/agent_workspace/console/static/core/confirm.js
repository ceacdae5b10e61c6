// Asking before a destructive act, in the page where the human acted (not window.confirm, which blocks the page
// and stands apart from it): the question right under what they clicked, then the act, or Cancel.

import { el } from "./dom.js";

/**
 * Ask first, in the page, right after `under` (the button itself, or the row it sits in): `question`, then `yes`
 * (runs `act(sure, close, box)`: `sure` is that button, `close()` takes the question away, `box` is the question,
 * for an error said in it) or Cancel (the question goes, the button is back, focused). One question at a time;
 * `closed()` hears it go.
 */
export function askFirst(button, { question, yes, act, closed, under = button }) {
  const next = under.nextElementSibling;
  if (next && next.classList.contains("confirm")) return;
  const box = el("div", { className: "confirm", role: "group", "aria-label": question });
  const sure = el("button", { type: "button", className: "danger", text: yes });
  const keep = el("button", { type: "button", className: "secondary", text: "Cancel" });
  const close = () => {
    box.remove();
    button.hidden = false;
    if (closed) closed();
  };
  sure.addEventListener("click", () => act(sure, close, box));
  keep.addEventListener("click", () => {
    close();
    button.focus();
  });
  box.append(el("p", { text: question }), el("div", { className: "actions" }, sure, keep));
  button.hidden = true;
  under.after(box);
  keep.focus();
}
