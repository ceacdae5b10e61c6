"""The console's code stays in small modules whose imports run one way: core ← shell ← views ← app.

A module over 600 lines, a core module reaching up into the shell or a view, a view reaching into another
view (other than the answer component they share, and a view's own parts), or HTML parsed from anything
but a module's constant markup fails here before a human sees it."""

import re
from pathlib import Path

STATIC = Path(__file__).resolve().parents[2] / "layers" / "workspace" / "agent_workspace" / "console" / "static"
MAX_LINES = 600
IMPORT = re.compile(r"""^\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']""", re.MULTILINE | re.DOTALL)
# Shared by several views: the one answer component (the inbox's and the drawer's), the documents' layout
# (memory, skills, pano).
SHARED_VIEWS = {"views/answer.js", "views/answer", "views/docs"}


def modules() -> list[Path]:
    return sorted(STATIC.rglob("*.js"))


def imports_of(path: Path) -> list[str]:
    found = []
    for target in IMPORT.findall(path.read_text()):
        resolved = (path.parent / target).resolve().relative_to(STATIC.resolve())
        found.append(resolved.as_posix())
    return found


def test_no_console_module_is_over_600_lines():
    long = {
        p.relative_to(STATIC).as_posix(): n for p in modules() if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_the_page_is_a_shell_and_every_module_is_reached_from_the_entry():
    assert len((STATIC / "index.html").read_text().splitlines()) < 80
    reached, todo = set(), ["app.js", "consent.js", "sw.js"]
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached.add(name)
        todo.extend(imports_of(STATIC / name))
    every = {p.relative_to(STATIC).as_posix() for p in modules()}
    assert every - reached == set()  # no leftover module nobody loads


def test_imports_run_one_way():
    wrong = []
    for path in modules():
        name = path.relative_to(STATIC).as_posix()
        for target in imports_of(path):
            if name.startswith("core/") and not target.startswith("core/"):
                wrong.append(f"{name} → {target}: core imports only core")
            elif name == "shell.js" and target.startswith("views/"):
                wrong.append(f"{name} → {target}: the shell knows views only through app.js")
            elif name.startswith("views/") and target.startswith("views/"):
                own = name.removesuffix(".js").split("/")[1]
                theirs = target.removesuffix(".js").split("/")[1]
                if own != theirs and f"views/{theirs}.js" not in SHARED_VIEWS and f"views/{theirs}" not in SHARED_VIEWS:
                    wrong.append(f"{name} → {target}: a view does not reach into another view")
    assert wrong == []


def test_html_is_parsed_only_from_constant_markup():
    parsing = re.compile(r"\.(innerHTML|outerHTML)\s*=|insertAdjacentHTML|document\.write|\beval\(|new Function\(")
    found = [
        f"{p.relative_to(STATIC)}:{n}"
        for p in modules()
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if parsing.search(line)
    ]
    assert found == ["core/dom.js:" + str(_fragment_line())]


def _fragment_line() -> int:
    lines = (STATIC / "core" / "dom.js").read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if "template.innerHTML = markup" in line)
