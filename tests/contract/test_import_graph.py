"""The import rules of docs/architecture.md, read from the import statements of the package.

Reads every module's imports (including those inside functions) with `ast`, so a rule broken anywhere in a
module fails here, naming the module, the line and the rule: the layer rules (who may not import whom, who
may touch the AWS SDK), and that imports run one way: no circle of modules, and no two top-level folders
(or modules) of the package that import each other, however long the loop.
"""

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

import agent_workspace

PACKAGE = Path(agent_workspace.__file__).parent
OURS = "agent_workspace"
AWS_SDK = ("boto3", "botocore")


def modules_of(package: Path) -> dict[str, Path]:
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = modules_of(PACKAGE)


@dataclass(frozen=True)
class Import:
    line: int
    module: str  # as written: `from a.b import c` names `a.b`
    names: tuple[str, ...]  # what a `from` import takes; empty for `import a.b`
    text: str  # the statement, for a message


def imports_of(path: Path) -> list[Import]:
    """Every import of a module, at its top or inside a function, in the order written."""
    source = path.read_text()
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source, str(path))):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        end = node.end_lineno or node.lineno
        text = " ".join(" ".join(lines[node.lineno - 1 : end]).split())
        if isinstance(node, ast.Import):
            found += [Import(node.lineno, alias.name, (), text) for alias in node.names]
            continue
        assert node.level == 0, f"{path}:{node.lineno}: relative import; the package uses absolute ones"
        if node.module:
            found.append(Import(node.lineno, node.module, tuple(alias.name for alias in node.names), text))
    return sorted(found, key=lambda i: i.line)


def layer(module: str) -> str:
    """`agent_workspace.store.tasks` -> `store`; a top-level module is its own layer."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else OURS


def _ours(imported: str) -> str | None:
    return layer(imported) if imported == OURS or imported.startswith(OURS + ".") else None


def targets(imported: Import, modules: Iterable[str]) -> set[str]:
    """The modules of ours an import names: `from a.b import c` is `a.b.c` when that is a module, else `a.b`.
    The packages above the module named are not counted: every submodule would tie to its package's face."""
    known = set(modules)
    if _ours(imported.module) is None:
        return set()
    named = {f"{imported.module}.{name}" for name in imported.names}
    module = imported.module
    while module not in known and "." in module:
        module = module.rpartition(".")[0]  # `import a.b.c` of a name that is no module: its package
    holder = {module} if module in known and (not named or named - known) else set()
    return (named & known) | holder


Edges = dict[str, dict[str, list[str]]]  # importer -> imported -> where: "path:line  statement"


def module_graph(modules: Mapping[str, Path]) -> Edges:
    root = modules[OURS].parent.parent  # paths are shown from here: agent_workspace/...
    graph: Edges = {module: {} for module in modules}
    for module, path in modules.items():
        for imported in imports_of(path):
            for target in targets(imported, modules) - {module}:
                where = f"{path.relative_to(root)}:{imported.line}  {imported.text}"
                graph[module].setdefault(target, []).append(where)
    return graph


def folder_graph(graph: Edges) -> Edges:
    """The same arrows between the package's top-level folders (and top-level modules), each kept with its lines."""
    folders: Edges = {}
    for importer, arrows in graph.items():
        for imported, where in arrows.items():
            if layer(importer) != layer(imported):
                folders.setdefault(layer(importer), {}).setdefault(layer(imported), []).extend(where)
    return folders


def knots(graph: Edges) -> list[list[str]]:
    """The knots of the graph: each set of two or more nodes that reach one another (a strongly connected part,
    found with Tarjan's algorithm), sorted; [] when every import runs one way."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            knot = []
            while True:
                member = stack.pop()
                knot.append(member)
                if member == node:
                    break
            if len(knot) > 1:
                found.append(sorted(knot))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def loop_within(graph: Edges, knot: list[str]) -> list[str]:
    """The shortest loop from the knot's first member back to it, staying inside the knot."""
    start, inside = knot[0], set(knot)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph.get(node, {})):
                if target == start:
                    loop = [node]
                    while loop[-1] != start:
                        loop.append(came_from[loop[-1]])
                    return [*reversed(loop), start]
                if target in inside and target not in came_from:
                    came_from[target] = node
                    following.append(target)
        frontier = following
    raise AssertionError(f"no loop within {knot}")  # pragma: no cover: a knot always holds one


SHOWN = 4  # import lines shown per arrow


def explain(graph: Edges, knot: list[str]) -> str:
    """A knot: one loop through it, then every arrow that ties it, with the import lines that make the arrow."""
    lines = [" -> ".join(loop_within(graph, knot))]
    for importer in knot:
        for imported in sorted(set(graph.get(importer, {})) & set(knot)):
            where = graph[importer][imported]
            more = [f"    … and {len(where) - SHOWN} more"] if len(where) > SHOWN else []
            lines += [f"  {importer} -> {imported}:", *(f"    {w}" for w in where[:SHOWN]), *more]
    return "\n".join(lines)


GRAPH = module_graph(MODULES)


def test_no_modules_import_each_other_in_a_circle():
    found = knots(GRAPH)
    assert not found, "imports must run one way; these modules import each other in a circle:\n" + "\n".join(
        explain(GRAPH, knot) for knot in found
    )


def test_no_top_level_folders_import_each_other():
    folders = folder_graph(GRAPH)
    found = knots(folders)
    assert not found, "no folder may import one that imports it back (move the shared piece below both):\n" + (
        "\n".join(explain(folders, knot) for knot in found)
    )


# Who may not import whom: (importing layer, forbidden layers of ours, why).
FORBIDDEN = [
    (
        "domain",
        {"api", "mcp_server", "tools", "services", "store", "workers", "local", "runtime", "config", "observability"},
        "domain is pure: it imports nothing of ours outside domain",
    ),
    ("store", {"api", "mcp_server", "tools", "services", "workers", "web"}, "store is below services"),
    ("services", {"api", "mcp_server", "tools", "web", "app"}, "services never import api, tools or mcp_server"),
    ("api", {"tools", "mcp_server", "app"}, "api never imports tools or mcp_server (the app mounts both)"),
    ("mcp_server", {"api", "app"}, "mcp_server never imports api (the app mounts both)"),
    ("tools", {"api", "store", "mcp_server", "web", "app"}, "tools call services, not the store or the surfaces"),
    ("tool_registry", {"tools", "mcp_server", "api", "app"}, "the registry's types stand below tools and mcp_server"),
    ("web", {"api", "mcp_server", "tools", "app"}, "web (auth, problem JSON) stands below api and mcp_server"),
]
# The AWS SDK lives in the store. The local stack runs moto and re-signs requests with botocore; the admin
# command catches botocore's errors to print them. Nothing else may touch it (tests/contract/test_iam.py reads
# store/ alone for the AWS calls the roles must allow).
AWS_SDK_ALLOWED = {"store", "local"}
AWS_SDK_ALLOWED_MODULES = {"agent_workspace.admin"}


def test_the_package_has_the_layers_the_rules_name():
    layers = {layer(module) for module in MODULES}
    named = {importer for importer, _, _ in FORBIDDEN} | {f for _, forbidden, _ in FORBIDDEN for f in forbidden}
    assert named <= layers, f"a rule names a layer the package does not have: {named - layers}"
    assert len(MODULES) > 80, "the walk found the package's modules"


@pytest.mark.parametrize(("importer", "forbidden", "why"), FORBIDDEN, ids=[rule[0] for rule in FORBIDDEN])
def test_no_layer_imports_what_its_rule_forbids(importer, forbidden, why):
    broken = [
        f"{MODULES[module].relative_to(PACKAGE.parent)}:{imported.line} imports {imported.module}"
        for module in MODULES
        if layer(module) == importer
        for imported in imports_of(MODULES[module])
        if _ours(imported.module) in forbidden
    ]
    assert not broken, f"{why}:\n" + "\n".join(broken)


def test_only_the_store_imports_the_aws_sdk():
    broken = [
        f"{MODULES[module].relative_to(PACKAGE.parent)}:{imported.line} imports {imported.module}"
        for module in MODULES
        if layer(module) not in AWS_SDK_ALLOWED and module not in AWS_SDK_ALLOWED_MODULES
        for imported in imports_of(MODULES[module])
        if imported.module.split(".")[0] in AWS_SDK
    ]
    assert not broken, "only store/ (and the local stack, the admin command) may import boto3 or botocore:\n" + (
        "\n".join(broken)
    )


def test_the_rules_catch_a_forbidden_import(tmp_path):
    """The check reads imports anywhere in a module, including inside a function."""
    module = tmp_path / "sneaky.py"
    module.write_text("def later():\n    from agent_workspace.api import app\n    import boto3\n")
    assert [(i.line, i.module) for i in imports_of(module)] == [(2, "agent_workspace.api"), (3, "boto3")]
    assert _ours("agent_workspace.api") == "api"
    assert _ours("agent_workspace_other") is None


def _package(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    for name, text in files.items():
        path = tmp_path / OURS / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return modules_of(tmp_path / OURS)


def test_a_circle_through_a_function_level_import_is_found_with_its_lines(tmp_path):
    modules = _package(tmp_path, {
        "__init__.py": "",
        "services/__init__.py": "",
        "services/notify.py": "from agent_workspace.services import web_push\n",
        "services/web_push.py": "def send():\n    from agent_workspace.services.notify import keys\n",
        "services/tasks.py": "from agent_workspace.services import notify\n",
    })  # fmt: skip
    graph = module_graph(modules)
    [knot] = knots(graph)
    assert knot == ["agent_workspace.services.notify", "agent_workspace.services.web_push"]
    message = explain(graph, knot)
    assert message.splitlines()[0] == (
        "agent_workspace.services.notify -> agent_workspace.services.web_push -> agent_workspace.services.notify"
    )
    assert "agent_workspace/services/notify.py:1  from agent_workspace.services import web_push" in message
    assert "agent_workspace/services/web_push.py:2  from agent_workspace.services.notify import keys" in message
    assert "tasks" not in message, "a module that only imports into the circle is not part of it"


def test_folders_that_import_each_other_are_found_even_when_their_modules_make_no_circle(tmp_path):
    modules = _package(tmp_path, {
        "__init__.py": "",
        "app.py": "from agent_workspace.api import routes\n",
        "api/__init__.py": "",
        "api/routes.py": "import agent_workspace.mcp_server.endpoint\n",
        "api/auth.py": "",
        "mcp_server/__init__.py": "",
        "mcp_server/endpoint.py": "from agent_workspace.api.auth import authenticate\n",
    })  # fmt: skip
    graph = module_graph(modules)
    assert knots(graph) == []
    folders = folder_graph(graph)
    assert knots(folders) == [["api", "mcp_server"]]
    message = explain(folders, ["api", "mcp_server"])
    assert message.splitlines()[0] == "api -> mcp_server -> api"
    assert "agent_workspace/mcp_server/endpoint.py:1  from agent_workspace.api.auth import authenticate" in message
    assert "agent_workspace/api/routes.py:1  import agent_workspace.mcp_server.endpoint" in message
    assert "app" not in message.replace("agent_workspace", ""), "the app only imports into the knot"


def test_a_knot_of_three_shows_every_arrow_that_ties_it():
    graph = {"a": {"b": ["a.py:1"]}, "b": {"c": ["b.py:1"], "a": ["b.py:2"]}, "c": {"a": ["c.py:1"]}, "d": {"a": []}}
    assert knots(graph) == [["a", "b", "c"]]
    message = explain(graph, ["a", "b", "c"])
    assert message.splitlines()[0] == "a -> b -> a", "the shortest loop leads"
    for arrow in ("a -> b:", "b -> a:", "b -> c:", "c -> a:"):
        assert f"  {arrow}" in message
    assert "d ->" not in message


def test_an_import_is_an_arrow_to_each_module_it_names_or_else_to_the_module_that_holds_the_name():
    modules = ["agent_workspace", "agent_workspace.services", "agent_workspace.services.channel"]
    given = Import(1, "agent_workspace.services", ("channel", "RULES"), "")
    assert targets(given, modules) == {"agent_workspace.services.channel", "agent_workspace.services"}
    assert targets(Import(1, "agent_workspace.services", ("channel",), ""), modules) == {
        "agent_workspace.services.channel"
    }
    assert targets(Import(1, "agent_workspace.services.channel.push", (), ""), modules) == {
        "agent_workspace.services.channel"
    }
    assert targets(Import(1, "agent_workspace", ("__version__",), ""), modules) == {"agent_workspace"}
    assert targets(Import(1, "pydantic", ("BaseModel",), ""), modules) == set()
