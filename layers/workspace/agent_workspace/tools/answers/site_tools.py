"""What the `siteTools` tool answers."""

from typing import Any, Literal

from agent_workspace.tool_registry import Answer


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


class SiteCallResult(Answer):
    """A call the site answered: its result, third-party data, with the notice saying so."""

    site: str
    tool: str
    callId: str
    notice: str
    result: Any


class SiteCallPending(Answer):
    """A call still waiting for the human's decision or the site's answer: call again as next says."""

    status: Literal["pending"]
    callId: str
    waitingFor: str
    next: str
