// The Pano view. (A placeholder while the view moves here from legacy-app.js.)

import { el } from "../core/dom.js";

export const pano = {
  name: "pano",
  label: "Pano",
  icon: "P",
  account: true,
  mount(root) {
    root.append(el("h1", { text: "Pano" }));
  },
  enter() {},
  leave() {},
  async refresh() {},
  reset() {},
};
