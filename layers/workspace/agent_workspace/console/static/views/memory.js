// The Memory view (`#/memory`, `#/memory/<name>`): what the workspace's agent saved for itself (MEMORY.md, its
// index, and the files it names), listed beside the one open, rendered as markdown (core/markdown.js: agent
// text, so HTML in it stays text and only http(s) links are links).
//
// The list is read every round while the view is on screen; the open memory is read again only when the list
// says its revision moved, and re-rendered only then, so the human's place and selection in it survive.

import * as store from "../core/store.js";
import { seg } from "../core/api.js";
import { setText } from "../core/dom.js";
import { formatSize, timeEl } from "../core/format.js";
import { showError, clearError } from "../core/feedback.js";
import { markdown } from "../core/markdown.js";
import * as router from "../core/router.js";
import { docsFrame, pickList, showDoc, clearFrame } from "./docs/layout.js";

let frame = null;
let openName = null; // the memory the address names
let shown = null; // {name, revision} of the memory rendered
let reading = 0; // the latest read of the open memory: an older one that answers late is dropped

function render(memory) {
  setText(frame.heading, memory.name);
  frame.meta.replaceChildren(`${memory.uri} · revision ${memory.revision} · saved `, timeEl(memory.updatedAt));
  frame.body.replaceChildren(markdown(memory.content));
  shown = { name: memory.name, revision: memory.revision };
  frame.body.hidden = false;
  showDoc(frame, true);
}

async function read(name, { focus }) {
  const mine = ++reading;
  const workspaceId = store.get("workspaceId");
  try {
    const memory = await store.api("GET", store.ws(`/memory/${seg(name)}`));
    if (mine !== reading || openName !== name || workspaceId !== store.get("workspaceId")) return;
    if (!shown || shown.name !== memory.name || shown.revision !== memory.revision) render(memory);
    clearError(frame.article);
    if (focus) frame.heading.focus();
  } catch (error) {
    if (mine !== reading) return;
    showDoc(frame, true);
    frame.body.hidden = true; // not what an earlier doc said under this name
    shown = null; // the next good read renders it again
    setText(frame.heading, name);
    showError(error, `Reading memory ${name} failed`, frame.article);
  }
}

function close() {
  openName = null;
  shown = null;
  reading += 1;
  showDoc(frame, false);
}

export const memory = {
  name: "memory",
  label: "Memory",
  icon: "M",
  account: false,
  mount(root) {
    frame = docsFrame(root, {
      view: "memory",
      title: "Memory",
      hint: "What the agent saved for itself. MEMORY.md is its index.",
      listLabel: "Memories",
      empty: "The agent has saved no memory yet.",
      choose: "Choose a memory to read it.",
    });
  },
  enter(route) {
    if (route.id && route.id !== openName) {
      openName = route.id;
      shown = null;
      read(route.id, { focus: true });
    } else if (!route.id && openName) {
      close();
    }
  },
  leave() {},
  async refresh(current) {
    const memories = await store.api("GET", store.ws("/memory"));
    if (!current()) return;
    const list = Array.isArray(memories) ? memories : [];
    pickList(frame, "memory", list, {
      key: (m) => m.name,
      label: (m) => m.name,
      describe: (m) => ({
        sig: `${m.revision}|${m.size}|${m.updatedAt}`,
        nodes: [`revision ${m.revision} · ${formatSize(m.size)} · `, timeEl(m.updatedAt)],
      }),
      selected: openName,
    });
    const listed = openName ? list.find((m) => m.name === openName) : null;
    if (listed && shown && shown.name === listed.name && shown.revision !== listed.revision) {
      read(openName, { focus: false });
    }
  },
  reset() {
    const had = openName;
    close();
    clearFrame(frame);
    clearError(frame.article);
    // Another workspace: the address no longer names a memory there (a deep link at sign-in is kept: none was open).
    if (had && router.parse().view === "memory") router.go({ view: "memory" }, { replace: true });
  },
};
