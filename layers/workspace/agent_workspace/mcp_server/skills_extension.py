"""The Agent Skills extension for MCP (SEP-2640): `skills/list` and `skills/get`, declared under
`capabilities.extensions["io.modelcontextprotocol/skills"]`.

An entry lists a skill's SKILL.md URI, its frontmatter and every file of it (the SKILL.md too) with the sha256
digest and size of exactly the bytes `resources/read` serves (services.skills.catalog_page and catalog_entry; how
a SKILL.md names its skill: domain.skill_manifest). Files are read with `resources/read` (mcp_server.resources).
`resources/directory/read` is not served, so `directoryRead` is not declared. Errors are those of
mcp_server.resources: INVALID_PARAMS naming the problem, INTERNAL_ERROR with a ref.
"""

from typing import Any

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult
from mcp.server.lowlevel import Server
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from agent_workspace.domain import resources as rules
from agent_workspace.domain.models import Actor
from agent_workspace.mcp_server.resources import answer, caller
from agent_workspace.services import skills
from agent_workspace.tool_registry import Call

EXTENSION = "io.modelcontextprotocol/skills"
LIST_METHOD = "skills/list"
GET_METHOD = "skills/get"


class GetSkillParams(types.RequestParams):
    uri: str
    """The skill's own URI: skill://<name>/SKILL.md."""


def register(server: Server[Any]) -> None:
    """Declare the extension on `server` (in every protocol era) and serve its two methods."""
    server.extensions[EXTENSION] = {}
    server.middleware.append(_declared_at_initialize)
    server.add_request_handler(LIST_METHOD, types.PaginatedRequestParams, list_skills)
    server.add_request_handler(GET_METHOD, GetSkillParams, get_skill)


async def _declared_at_initialize(ctx: Any, call_next: CallNext) -> HandlerResult:
    """The extension in the capabilities of `initialize` too, not only of 2026-07-28's `server/discover`.

    The SDK keeps `capabilities.extensions` out of a handshake-era (2025-11-25 and older) `initialize`: the field
    came with 2026-07-28. But clients look for the skills extension there in either era (the MCP Inspector does,
    and calls `skills/*` only when it finds it), `skills/*` are no spec methods in either era, and the 2025-11-25
    schema leaves capabilities open ("not a closed set: any server can define its own").
    """
    result = await call_next(ctx)
    if ctx.method != "initialize" or not isinstance(result, dict) or not isinstance(result.get("capabilities"), dict):
        return result
    capabilities = result["capabilities"]
    extensions = {**capabilities.get("extensions", {}), EXTENSION: {}}
    return {**result, "capabilities": {**capabilities, "extensions": extensions}}


async def list_skills(ctx: Any, params: types.PaginatedRequestParams) -> dict[str, Any]:
    """One page of the workspace's skills, its own and those shared into it, by name."""
    call = caller(ctx)
    entries, next_cursor = await answer(call, LIST_METHOD, _page, call, params.cursor)
    listed: dict[str, Any] = {"skills": entries}
    if next_cursor is not None:
        listed["nextCursor"] = next_cursor
    return _cacheable(ctx, listed)


async def get_skill(ctx: Any, params: GetSkillParams) -> dict[str, Any]:
    call = caller(ctx)
    entry = await answer(call, GET_METHOD, _entry, call, params.uri)
    return _cacheable(ctx, {"skill": entry})


def _page(call: Call, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    return skills.catalog_page(call.runtime, Actor.of(call.principal).workspace_id, cursor)


def _entry(call: Call, uri: str) -> dict[str, Any]:
    return skills.catalog_entry(call.runtime, Actor.of(call.principal).workspace_id, rules.check_uri(uri))


def _cacheable(ctx: Any, result: dict[str, Any]) -> dict[str, Any]:
    """The 2026-07-28 revision requires `ttlMs` and `cacheScope` on these results, as on `resources/list`: never
    cached (a skill changes with any save), and private to the token that read it."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return {**result, "ttlMs": 0, "cacheScope": "private"}
    return result
