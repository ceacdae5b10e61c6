"""The answers of the skills extension's two methods (`mcp_server.skills_extension` declares them): one page of the
workspace's skills, and one skill's entry."""

from typing import Any

import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from agent_workspace.domain import resources as rules
from agent_workspace.domain.models import Actor
from agent_workspace.mcp_server.resources import answer, caller
from agent_workspace.mcp_server.skills_extension import GET_METHOD, LIST_METHOD, GetSkillParams
from agent_workspace.services import skills
from agent_workspace.tool_registry import Call


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
