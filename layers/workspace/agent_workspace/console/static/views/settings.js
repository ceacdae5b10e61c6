// The Settings view. (A placeholder while the view moves here from legacy-app.js.)

import { el } from "../core/dom.js";

export const settings = {
  name: "settings",
  label: "Settings",
  icon: "⚙",
  account: false,
  mount(root) {
    root.append(el("h1", { text: "Settings" }));
  },
  enter() {},
  leave() {},
  async refresh() {},
  reset() {},
};
