// The Skills view. (A placeholder while the view moves here from legacy-app.js.)

import { el } from "../core/dom.js";

export const skills = {
  name: "skills",
  label: "Skills",
  icon: "S",
  account: false,
  mount(root) {
    root.append(el("h1", { text: "Skills" }));
  },
  enter() {},
  leave() {},
  async refresh() {},
  reset() {},
};
