// The Board view. (A placeholder while the view moves here from legacy-app.js.)

import { el } from "../core/dom.js";

export const board = {
  name: "board",
  label: "Board",
  icon: "▦",
  account: false,
  mount(root) {
    root.append(el("h1", { text: "Board" }));
  },
  enter() {},
  leave() {},
  async refresh() {},
  reset() {},
};
