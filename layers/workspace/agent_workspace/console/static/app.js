// The console's entry: the app shell (shell.js) with its views, in the navigation's order, and the task drawer.
// No build step: the browser loads these ES modules as they are, under the page's strict CSP.

import { start } from "./shell.js";
import { board } from "./views/board.js";
import { inbox } from "./views/inbox.js";
import { memory } from "./views/memory.js";
import { skills } from "./views/skills.js";
import { pano } from "./views/pano.js";
import { agents } from "./views/agents.js";
import { settings } from "./views/settings.js";
import { drawer } from "./views/drawer.js";

start([board, inbox, memory, skills, pano, agents, settings], drawer);
