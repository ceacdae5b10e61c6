"""MCP resources: `resources/list`, `resources/templates/list` and `resources/read` over the workspace's skills
(`skill://`), memories (`memory://`), its account's pano docs (`pano://`) and its tasks' attachments (`task://`).

Thin: each scheme goes to its aggregate's service with exactly the authorization of the tool action that reads
the same thing (a token reaches its own workspace; pano docs, its account's). A refusal is a JSON-RPC error whose
message names the URI's problem, never a stack trace: INVALID_PARAMS (-32602) for a URI that is malformed, of an
unknown scheme or names nothing this token can read (SEP-2164 standardises resource-not-found on -32602; the
2026-07-28 schema retires -32002), INTERNAL_ERROR for a store that is busy, or for anything unexpected, logged
once with the ref the message gives.
"""

import base64
from collections.abc import Callable
from typing import Any, TypeVar

import mcp_types as types
from mcp.shared.exceptions import MCPError

from agent_workspace.blocking import run_blocking
from agent_workspace.domain import memory as memory_rules
from agent_workspace.domain import pano as pano_rules
from agent_workspace.domain import resources as rules
from agent_workspace.domain import tasks as task_rules
from agent_workspace.domain.errors import TooLarge, Unavailable, WorkspaceError
from agent_workspace.domain.models import Actor
from agent_workspace.domain.skills import SCHEME as SKILL_SCHEME
from agent_workspace.domain.skills import SKILL_MD
from agent_workspace.observability import logger
from agent_workspace.services import memory, pano, skills, tasks
from agent_workspace.tool_registry import Call

T = TypeVar("T")
_LISTING_READS = 4  # section reads one `resources/list` page makes at most: empty sections are passed over

TEMPLATES = (
    types.ResourceTemplate(
        uri_template=f"{SKILL_SCHEME}{{name}}/{SKILL_MD}",
        name="skill",
        title="A skill's SKILL.md",
        description=(
            "The SKILL.md of a skill this workspace can use (its own or shared into it): YAML frontmatter naming the "
            "skill and saying when to use it, then the instructions. skills/list lists them."
        ),
        mime_type="text/markdown",
    ),
    types.ResourceTemplate(
        uri_template=f"{SKILL_SCHEME}{{name}}/{{+path}}",
        name="skill-file",
        title="A file of a skill",
        description="Another file of a skill, at the relative path its SKILL.md points to (e.g. templates/entry.md).",
    ),
    types.ResourceTemplate(
        uri_template=f"{memory_rules.SCHEME}{{name}}",
        name="memory",
        title="A memory",
        description=(
            f"A note this workspace's agents keep: {memory_rules.SCHEME}{memory_rules.INDEX} is the index, linking "
            f"the others as {memory_rules.SCHEME}<name> (e.g. deploys.md)."
        ),
        mime_type="text/markdown",
    ),
    types.ResourceTemplate(
        uri_template=f"{pano_rules.SCHEME}{{docId}}",
        name="pano-doc",
        title="A pano doc",
        description="The markdown of a doc on the pano every workspace of the account shares, by its id.",
        mime_type="text/markdown",
    ),
    types.ResourceTemplate(
        uri_template=f"{task_rules.ATTACHMENT_SCHEME}{{taskId}}/attachments/{{attachmentId}}",
        name="task-attachment",
        title="An attachment of a task",
        description=(
            "A file attached to a task or one of its messages, as its content (base64, with its MIME type), by the "
            f"task's id (or short identifier such as WS-42) and the attachment's id; at most {rules.BLOB_MAX:,} bytes."
        ),
    ),
)


async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
    """One page of the workspace's resources: a page holds one kind (skills, then memories, then pano docs)."""
    call = caller(ctx)
    section, inner = await answer(call, "resources/list", rules.read_listing_cursor, params.cursor if params else None)
    page: list[dict[str, Any]] = []
    next_cursor: str | None = None
    for _ in range(_LISTING_READS):
        page, after = await answer(call, "resources/list", _SECTION_PAGES[section], call, inner, section)
        following = section if after is not None else rules.next_section(section)
        next_cursor = rules.listing_cursor(following, after) if following is not None else None
        if page or following is None:
            break
        section, inner = following, after
    listed = [types.Resource.model_validate(resource) for resource in page]
    return types.ListResourcesResult(resources=listed, next_cursor=next_cursor)


async def list_resource_templates(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(resource_templates=list(TEMPLATES))


async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    call = caller(ctx)
    uri = params.uri
    contents = await answer(call, "resources/read", _read, call, uri)
    return types.ReadResourceResult(contents=[contents])


# -- the kinds ---------------------------------------------------------------------------------------


def _read(call: Call, uri: str) -> types.TextResourceContents | types.BlobResourceContents:
    """The contents at `uri`, read as the tool action that reads the same thing reads it."""
    rules.check_uri(uri)
    rt, workspace_id = call.runtime, Actor.of(call.principal).workspace_id
    if uri.startswith(SKILL_SCHEME):  # skills load
        served = skills.served_file(rt, workspace_id, uri)
        return types.TextResourceContents(uri=uri, mime_type=served.mime_type, text=served.text)
    if uri.startswith(memory_rules.SCHEME):  # memory load
        saved = memory.get(rt, workspace_id, memory_rules.name_of_uri(uri))
        return types.TextResourceContents(uri=uri, mime_type="text/markdown", text=saved.content)
    if uri.startswith(pano_rules.SCHEME):  # pano read: the token's account
        doc = pano.get_doc(rt, call.principal.account_id, pano_rules.doc_id_of_uri(uri))
        return types.TextResourceContents(uri=uri, mime_type="text/markdown", text=doc.markdown)
    if uri.startswith(task_rules.ATTACHMENT_SCHEME):  # task getAttachment, format base64
        ref, content = tasks.attachment_content(rt, workspace_id, *task_rules.attachment_of_uri(uri))
        return types.BlobResourceContents(
            uri=uri, mime_type=ref.mime_type, blob=base64.b64encode(content).decode("ascii")
        )
    raise rules.unknown_scheme(uri)


def _skills_page(call: Call, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    workspace_id = Actor.of(call.principal).workspace_id
    return skills.resource_page(call.runtime, workspace_id, cursor, call.runtime.settings.page_bytes)


def _memory_page(call: Call, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    workspace_id = Actor.of(call.principal).workspace_id
    return memory.resource_page(call.runtime, workspace_id, cursor, call.runtime.settings.page_bytes)


def _pano_page(call: Call, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    return pano.resource_page(call.runtime, call.principal.account_id, cursor, call.runtime.settings.page_bytes)


def _section(read: Callable[[Call, str | None], T]) -> Callable[[Call, str | None, str], T]:
    """A section's page reader; a lone item too large for any page is refused with the listing's own cursor past
    it (the section's cursor inside it), so the rest of the listing can still be read."""

    def page(call: Call, cursor: str | None, section: str) -> T:
        try:
            return read(call, cursor)
        except TooLarge as error:
            outer = rules.listing_cursor(section, error.cursor)
            raise TooLarge(error.message.replace(error.cursor, outer), cursor=outer) from None

    return page


_SECTION_PAGES = {"skills": _section(_skills_page), "memory": _section(_memory_page), "pano": _section(_pano_page)}
assert set(_SECTION_PAGES) == set(rules.SECTIONS)


# -- errors ------------------------------------------------------------------------------------------


def caller(ctx: Any) -> Call:
    """The authenticated caller the endpoint put on the request (`server.REQUEST_STATE_KEY`)."""
    return ctx.request.state.workspace_call


async def answer(call: Call, method: str, fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` off the event loop, its refusals as the JSON-RPC errors of `method` (see the module's docstring)."""
    try:
        return await run_blocking(fn, *args)
    except Unavailable as error:
        raise MCPError(types.INTERNAL_ERROR, f"{method}: {error.message}") from None
    except WorkspaceError as error:
        raise MCPError(types.INVALID_PARAMS, f"{method}: {error.message}") from None
    except Exception:
        ref = call.request_id or "unknown"
        logger.exception("resource request failed", extra={"method": method, "ref": ref})
        raise MCPError(
            types.INTERNAL_ERROR, f"{method}: internal error; retry shortly, and report ref {ref} if it persists"
        ) from None
