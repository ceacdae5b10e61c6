"""What the `siteTools` tool answers."""

from typing import Any, Literal

from agent_workspace.mcp_server.registry import Answer


class SiteToolHit(Answer):
    """A site tool as search lists it."""

    name: str
    description: str


class SharedSite(Answer):
    """A shared site with its tools that match the search."""

    site: str
    title: str
    online: bool
    tools: list[SiteToolHit]


class SiteToolsSearch(Answer):
    """Every shared site, best match first, and whether the human's Chrome is connected."""

    online: bool
    sites: list[SharedSite]


class SiteToolDefinition(Answer):
    """One site tool in full, as its site declares it."""

    site: str
    name: str
    description: str
    inputSchema: dict[str, Any]
    annotations: dict[str, Any]


class SiteCallAnswer(Answer):
    """A call's outcome: the site's result (site, tool, notice, result), or status pending: call again as next says."""

    callId: str
    site: str | None = None
    tool: str | None = None
    notice: str | None = None
    result: Any = None
    status: Literal["pending"] | None = None
    waitingFor: str | None = None
    next: str | None = None
