// The Memory view. (A placeholder while the view moves here from legacy-app.js.)

import { el } from "../core/dom.js";

export const memory = {
  name: "memory",
  label: "Memory",
  icon: "M",
  account: false,
  mount(root) {
    root.append(el("h1", { text: "Memory" }));
  },
  enter() {},
  leave() {},
  async refresh() {},
  reset() {},
};
