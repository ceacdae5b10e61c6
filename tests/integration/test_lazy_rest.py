"""The REST API is built when something first needs it (issue 37): an agent's MCP request never imports or builds
the human REST API's routers, a request for it does, and the OpenAPI document and the route list are whole whenever
they are read. Under SnapStart the routers are built before the snapshot, so a restored instance has them."""

import sys
import types

import anyio
import httpx

from agent_workspace.app import rest_routers
from agent_workspace.mcp_server.surfaces import SURFACES
from tests.support import TOOL_NAMES, bearer, in_fresh_interpreter, load_function, mcp_client

REST_MODULE = "agent_workspace.api.board"  # one of the routers' modules, and the heaviest
SIGN_IN_MODULE = "agent_workspace.api.oauth"


def test_creating_the_app_imports_no_rest_router_and_no_sign_in():
    code = (
        "import sys\n"
        "from agent_workspace.app import create_app\n"
        "from agent_workspace.config import Settings\n"
        "from agent_workspace.runtime import Runtime\n"
        "from agent_workspace.store.clients import AwsClients\n"
        "app = create_app(Runtime(Settings.model_construct(), AwsClients('us-east-1')))\n"
        "eager = len(app.router.routes)\n"
        f"loaded = lambda: [m in sys.modules for m in ({REST_MODULE!r}, {SIGN_IN_MODULE!r})]\n"
        "before = loaded()\n"
        "added = len(app.routes) - eager\n"
        "print(__import__('json').dumps([before, added, loaded()]))\n"
    )
    before, added, after = in_fresh_interpreter(code)
    assert before == [False, False]  # created, served nothing yet
    # asking for its routes builds both: sign-in's 10 (2 metadata, one per MCP path, 4 endpoints), a router each
    assert added == 2 + len(SURFACES) + 4 + len(rest_routers()) and after == [True, True]


def test_an_mcp_request_is_served_without_the_rest_api_and_a_rest_request_builds_it(live, seeded):
    async def tools() -> list[str]:
        async with mcp_client(live.url, seeded.agent_token) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    assert anyio.run(tools) == TOOL_NAMES
    assert live.app._rest_included is False and live.app._sign_in_included is False

    answer = httpx.get(f"{live.url}/api/workspaces", headers=bearer(seeded.human_token), timeout=30)

    assert answer.status_code == 200, answer.text
    assert live.app._rest_included is True


def test_a_sign_in_metadata_request_builds_sign_in_and_not_the_rest_api(live):
    """An MCP client's discovery (RFC 9728, then RFC 8414) is answered without building the REST API."""
    assert live.app._sign_in_included is False

    resource = httpx.get(f"{live.url}/.well-known/oauth-protected-resource/mcp", timeout=30)
    server = httpx.get(f"{live.url}/.well-known/oauth-authorization-server", timeout=30)

    assert resource.status_code == 200 and resource.json()["resource"] == f"{live.url}/mcp"
    assert server.status_code == 200 and server.json()["token_endpoint"] == f"{live.url}/token"
    assert live.app._sign_in_included is True and live.app._rest_included is False


def test_sign_in_routes_stand_before_the_rest_apis_whichever_is_built_first(live):
    routes = live.app.routes  # reading them builds both
    first_router = next(i for i, route in enumerate(routes) if not hasattr(route, "path"))  # an included router

    assert [getattr(route, "path", "") for route in routes].index("/token") < first_router


def test_the_openapi_document_lists_every_rest_router_whenever_it_is_read(live):
    document = httpx.get(f"{live.url}/openapi.json", timeout=30).json()

    tagged = {tag for operation in _operations(document) for tag in operation.get("tags", [])}
    assert {tag for router in rest_routers() for tag in router.tags} <= tagged


def test_the_lambda_builds_the_rest_api_before_its_snapstart_snapshot(runtime, monkeypatch):
    before: list = []
    fake = types.ModuleType("snapshot_restore_py")
    fake.register_before_snapshot = before.append
    fake.register_after_restore = lambda hook: None
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", fake)

    module = load_function("api", runtime, monkeypatch)
    assert module._app._rest_included is False and module._app._sign_in_included is False
    for hook in before:
        hook()

    assert module._app._rest_included is True and module._app._sign_in_included is True


def _operations(document: dict) -> list[dict]:
    return [operation for path in document["paths"].values() for operation in path.values()]
