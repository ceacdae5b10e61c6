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

from agent_workspace.mcp_server.deferred import deferred

EXTENSION = "io.modelcontextprotocol/skills"
LIST_METHOD = "skills/list"
GET_METHOD = "skills/get"
READS = "agent_workspace.mcp_server.skill_reads"  # the two methods' answers, imported by the first


class GetSkillParams(types.RequestParams):
    uri: str
    """The skill's own URI: skill://<name>/SKILL.md."""


def register(server: Server[Any]) -> None:
    """Declare the extension on `server` (in every protocol era) and serve its two methods."""
    server.extensions[EXTENSION] = {}
    server.middleware.append(_declared_at_initialize)
    server.add_request_handler(LIST_METHOD, types.PaginatedRequestParams, deferred(READS, "list_skills"))
    server.add_request_handler(GET_METHOD, GetSkillParams, deferred(READS, "get_skill"))


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
