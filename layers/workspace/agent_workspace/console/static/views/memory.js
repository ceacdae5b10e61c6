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
import { markdown } from "../core/markdown.js";
import { docsFrame, docReader, pickList } from "./docs/layout.js";

let frame = null;
let reader = null; // the memory the address names (reader.id), and {name, revision} of the one rendered (shown)

function render(memory) {
  setText(frame.heading, memory.name);
  frame.meta.replaceChildren(`${memory.uri} · revision ${memory.revision} · saved `, timeEl(memory.updatedAt));
  frame.body.replaceChildren(markdown(memory.content));
  return { name: memory.name, revision: memory.revision };
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
    reader = docReader(frame, {
      load: (name) => store.api("GET", store.ws(`/memory/${seg(name)}`)),
      render,
      changed: (doc, shown) => shown.name !== doc.name || shown.revision !== doc.revision,
      failed: (name) => ({ heading: name, context: `Reading memory ${name} failed` }),
    });
  },
  enter(route) {
    reader.enter(route);
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
      selected: reader.id,
    });
    const { id, shown } = reader;
    const listed = id ? list.find((m) => m.name === id) : null;
    if (listed && shown && shown.name === listed.name && shown.revision !== listed.revision) {
      reader.read(id, { focus: false });
    }
  },
  reset() {
    reader.reset();
  },
};
