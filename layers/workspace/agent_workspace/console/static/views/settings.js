// The Settings view (`#/settings`, `#/settings/<section>`): one page of sections with an in-page table of
// contents, each section a module of its own (views/settings/*.js) that builds its markup once and keeps it in
// step with the server.
//
// A section is {id, title, workspace, mount(root), refresh(current, full)?, enter()?, leave()?, switched()?,
// reset()}: `workspace` sections show only while a workspace is chosen (without one the page offers a new
// workspace, the notifications and the extension); `switched()` hears a workspace change, `reset()` a sign-out.
//
// The view counts as account-wide for the shell (its refresh runs without a workspace too, for the extension),
// so it hears a workspace switch itself, from the store, and forgets what the old workspace showed.
// The table of contents links to `#/settings/<section>`: a real address (shareable, Back works), which the
// router hands back here as route.id, and the section is scrolled to and its heading focused.

import * as store from "../core/store.js";
import * as router from "../core/router.js";
import { el, setAttr } from "../core/dom.js";
import { workspaceSection } from "./settings/workspace.js";
import { tokensSection } from "./settings/tokens.js";
import { appsSection } from "./settings/apps.js";
import { extensionSection } from "./settings/extension.js";
import { notificationsSection } from "./settings/notifications.js";
import { policySection } from "./settings/policy.js";
import { cyclesSection, headingsSection } from "./settings/cycles.js";

const SECTIONS = [
  workspaceSection,
  tokensSection,
  appsSection,
  extensionSection,
  notificationsSection,
  policySection,
  cyclesSection,
  headingsSection,
];

const parts = new Map(); // section id -> {box: its <section>, link: its table-of-contents link}
let onScreen = false;

/** Sections of a workspace hide without one; their table-of-contents entries with them. */
function showWorkspaceParts() {
  const chosen = Boolean(store.get("workspaceId"));
  for (const section of SECTIONS) {
    if (!section.workspace) continue;
    const { box, link } = parts.get(section.id);
    box.hidden = !chosen;
    link.parentElement.hidden = !chosen;
  }
}

/** Scroll to the section the address names, its heading focused (a screen reader starts there). */
function goTo(id) {
  const part = parts.get(id);
  for (const [key, { link }] of parts) setAttr(link, "aria-current", key === id ? "location" : null);
  if (!part || part.box.hidden) return;
  const heading = part.box.querySelector("h2");
  part.box.scrollIntoView({ block: "start" });
  heading.focus({ preventScroll: true });
}

export const settings = {
  name: "settings",
  label: "Settings",
  icon: "⚙",
  account: true, // the extension and the notifications work without a workspace
  mount(root) {
    const toc = el("ul", { className: "settings-toc-list" });
    const body = el("div", { className: "settings-sections" });
    const nav = el("nav", { className: "settings-toc", "aria-label": "Settings sections" }, toc);
    const title = el("h1", { className: "view-title", text: "Settings" });
    root.append(title, el("div", { className: "settings" }, nav, body));
    for (const section of SECTIONS) {
      const headingId = `settings-${section.id}-h`;
      const heading = el("h2", { id: headingId, tabindex: "-1", text: section.title });
      const box = el("section", { className: "card settings-section", id: `settings-${section.id}` }, heading);
      box.setAttribute("aria-labelledby", headingId);
      body.append(box); // in the page before it is built: a section finds its fields by id
      section.mount(box);
      const link = el("a", { href: router.href({ view: "settings", id: section.id }), text: section.title });
      link.addEventListener("click", (event) => {
        if (link.getAttribute("href") !== window.location.hash) return; // the address changes: the route goes there
        event.preventDefault(); // the same address again: no hashchange, so go there from here
        goTo(section.id);
      });
      toc.append(el("li", {}, link));
      parts.set(section.id, { box, link });
    }
    showWorkspaceParts();
    store.on("workspaceId", () => {
      for (const section of SECTIONS) if (section.switched) section.switched();
      showWorkspaceParts();
    });
  },
  enter(route) {
    if (!onScreen) {
      onScreen = true;
      for (const section of SECTIONS) if (section.enter) section.enter();
    }
    if (route && route.id) goTo(route.id);
    else for (const { link } of parts.values()) setAttr(link, "aria-current", null);
  },
  leave() {
    onScreen = false;
    for (const section of SECTIONS) if (section.leave) section.leave();
  },
  async refresh(current, full) {
    const chosen = Boolean(store.get("workspaceId"));
    const reads = SECTIONS.filter((s) => s.refresh && (chosen || !s.workspace)).map((s) => s.refresh(current, full));
    const results = await Promise.allSettled(reads);
    const failed = results.find((r) => r.status === "rejected");
    if (failed) throw failed.reason; // the shell says it once (or signs out on a refused token)
  },
  reset() {
    for (const section of SECTIONS) section.reset();
    showWorkspaceParts();
  },
};
