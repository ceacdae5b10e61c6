// The Agents view. (A placeholder while the view moves here from legacy-app.js.)

import { el } from "../core/dom.js";

export const agents = {
  name: "agents",
  label: "Agents",
  icon: "A",
  account: true,
  mount(root) {
    root.append(el("h1", { text: "Agents" }));
  },
  enter() {},
  leave() {},
  async refresh() {},
  reset() {},
};
