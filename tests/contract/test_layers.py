"""The layer rules of docs/architecture.md, read from the import statements of the package.

Reads every module's imports (including those inside functions) with `ast`, so a rule broken
anywhere in a module fails here, naming the module, the line and the rule.
"""

import ast
from pathlib import Path

import pytest

import agent_workspace

PACKAGE = Path(agent_workspace.__file__).parent
OURS = "agent_workspace"
AWS_SDK = ("boto3", "botocore")


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every import, relative ones resolved inside the package."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, f"{path}:{node.lineno}: relative import; the package uses absolute ones"
            found.append((node.lineno, node.module))
    return found


def layer(module: str) -> str:
    """`agent_workspace.store.tasks` -> `store`; a top-level module is its own layer."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else OURS


def _ours(imported: str) -> str | None:
    return layer(imported) if imported == OURS or imported.startswith(OURS + ".") else None


# Who may not import whom: (importing layer, forbidden layers of ours, why).
FORBIDDEN = [
    (
        "domain",
        {"api", "mcp_server", "tools", "services", "store", "workers", "local", "runtime", "config", "observability"},
        "domain is pure: it imports nothing of ours outside domain",
    ),
    ("store", {"api", "mcp_server", "tools", "services", "workers"}, "store is below services"),
    ("services", {"api", "mcp_server", "tools"}, "services never import api, tools or mcp_server"),
    ("api", {"tools"}, "api never imports tools (mcp_server.server wires the tools in)"),
    ("tools", {"api", "store"}, "tools call services, not the store or the REST API"),
]
# The AWS SDK lives in the store. The local stack runs moto and re-signs requests with botocore; the admin
# command catches botocore's errors to print them. Nothing else may touch it (tests/contract/test_iam.py reads
# store/ alone for the AWS calls the roles must allow).
AWS_SDK_ALLOWED = {"store", "local"}
AWS_SDK_ALLOWED_MODULES = {"agent_workspace.admin"}


def test_the_package_has_the_layers_the_rules_name():
    layers = {layer(module) for module in MODULES}
    assert {"domain", "store", "services", "tools", "mcp_server", "api", "workers", "local"} <= layers
    assert len(MODULES) > 80, "the walk found the package's modules"


@pytest.mark.parametrize(("importer", "forbidden", "why"), FORBIDDEN, ids=[rule[0] for rule in FORBIDDEN])
def test_no_layer_imports_what_its_rule_forbids(importer, forbidden, why):
    broken = [
        f"{MODULES[module].relative_to(PACKAGE.parent)}:{line} imports {imported}"
        for module in MODULES
        if layer(module) == importer
        for line, imported in imports_of(MODULES[module])
        if _ours(imported) in forbidden
    ]
    assert not broken, f"{why}:\n" + "\n".join(broken)


def test_only_the_store_imports_the_aws_sdk():
    broken = [
        f"{MODULES[module].relative_to(PACKAGE.parent)}:{line} imports {imported}"
        for module in MODULES
        if layer(module) not in AWS_SDK_ALLOWED and module not in AWS_SDK_ALLOWED_MODULES
        for line, imported in imports_of(MODULES[module])
        if imported.split(".")[0] in AWS_SDK
    ]
    assert not broken, "only store/ (and the local stack, the admin command) may import boto3 or botocore:\n" + (
        "\n".join(broken)
    )


def test_the_rules_catch_a_forbidden_import(tmp_path):
    """The check reads imports anywhere in a module, including inside a function."""
    module = tmp_path / "sneaky.py"
    module.write_text("def later():\n    from agent_workspace.api import app\n    import boto3\n")
    assert imports_of(module) == [(2, "agent_workspace.api"), (3, "boto3")]
    assert _ours("agent_workspace.api") == "api"
    assert _ours("agent_workspace_other") is None
