"""What the `agent` tool's actions answer (services.agents, agent_memory, agent_sessions, agent_profiles,
agent_briefs, agent_transfer and domain.agent_checkout build them); `load` answers text blocks."""

from typing import Any, Literal

from agent_workspace.tool_registry import Answer


class MemoryCounts(Answer):
    """An agent's live memories by type."""

    feedback: int
    user: int
    project: int
    reference: int


class LastSession(Answer):
    """The agent's latest load; harness is "" when the client named none."""

    session: str
    at: str
    harness: str


class _AgentFields(Answer):
    """What every view of an agent shows (Agent.listed), its memory counts apart."""

    id: str
    slug: str
    ref: str
    name: str
    description: str
    role: Literal["owner", "shared"]
    access: Literal["read", "edit"]
    promptVersion: int
    primaryTool: str | None
    tools: list[str]
    lastSession: LastSession | None
    revision: int
    promptLocked: bool | None = None
    archived: bool | None = None


class ListedAgent(_AgentFields):
    """One agent in list's answer: description cut to 300; a shared one with its owner and the version it runs."""

    memories: MemoryCounts | None = None  # absent when the owner did not share its memory
    owner: str | None = None
    runsVersion: int | None = None
    awaitingAccept: bool | None = None


class AgentList(Answer):
    """Answers list."""

    agents: list[ListedAgent]


class AgentAnswer(_AgentFields):
    """Answers create and update: the agent in full."""

    memories: MemoryCounts
    accent: str | None
    createdAt: str
    updatedAt: str


class ImportCounts(Answer):
    """How much import wrote besides the agent."""

    memories: int
    briefs: int
    profiles: int


class ImportedAgent(AgentAnswer):
    """Answers import: the agent made, and what came with it."""

    imported: ImportCounts


class PromptWritten(Answer):
    """Answers updatePrompt."""

    agent: str
    version: int
    status: Literal["live"]


class PromptVersionListed(Answer):
    """One prompt version without its body."""

    version: int
    status: Literal["live", "superseded"]
    author: str
    tool: str | None = None
    note: str | None = None
    createdAt: str


class PromptVersionPage(Answer):
    """Answers promptVersions, newest first."""

    versions: list[PromptVersionListed]
    nextCursor: str | None


class PromptAnswer(PromptVersionListed):
    """Answers getPrompt: one version with its body."""

    agent: str
    body: str


class Memory(Answer):
    """One memory, its appended paragraphs joined to its body."""

    id: str
    name: str
    type: str
    description: str
    body: str
    revision: int
    writtenBy: str
    pinned: bool
    createdAt: str
    updatedAt: str
    harness: str | None = None  # the tool of the load session that wrote it last


class MemoryPage(Answer):
    """Answers recall."""

    agent: str
    memories: list[Memory]
    nextCursor: str | None


class MemoryWritten(Answer):
    """Answers remember: create and update give id and revision, append the dated paragraph."""

    agent: str
    name: str
    mode: Literal["create", "update", "append"]
    id: str | None = None
    revision: int | None = None
    appended: str | None = None


class MemoryForgotten(Answer):
    """Answers forget."""

    agent: str
    forgotten: str
    id: str
    restorableUntil: str


class ActivityItem(Answer):
    """One thing that happened to the agent."""

    id: str
    kind: Literal["prompt", "briefs", "memory", "sessions", "sharing", "agent"]
    summary: str
    at: str
    by: str
    session: str | None = None
    harness: str | None = None
    detail: dict[str, Any] | None = None


class ActivityPage(Answer):
    """Answers activity, newest first."""

    agent: str
    items: list[ActivityItem]
    nextCursor: str | None


class Profile(Answer):
    """One tool's profile; the default one never set has no updatedAt (revision 0)."""

    harness: str
    settings: dict[str, Any]
    addendum: str
    revision: int
    updatedAt: str | None = None


class Profiles(Answer):
    """Answers profiles: the default profile, and the others by tool id."""

    agent: str
    default: Profile
    profiles: dict[str, Profile]


class ProfileSet(Answer):
    """Answers setProfile: the profile as written."""

    agent: str
    harness: str
    settings: dict[str, Any]
    addendum: str
    revision: int
    updatedAt: str


class ProfileRemoved(Answer):
    """Answers deleteProfile: the tool id whose profile went."""

    removed: str


class BriefListed(Answer):
    """One brief without its body."""

    name: str
    description: str
    revision: int
    updatedAt: str


class BriefList(Answer):
    """Answers briefs."""

    agent: str
    briefs: list[BriefListed]


class BriefAnswer(BriefListed):
    """Answers getBrief: one revision with its body."""

    agent: str
    body: str
    updatedBy: str
    note: str | None = None
    harness: str | None = None  # the tool of the load session that wrote this revision


class BriefWritten(Answer):
    """Answers updateBrief."""

    agent: str
    name: str
    revision: int


class BriefRenamed(Answer):
    """Answers renameBrief."""

    agent: str
    name: str
    previousName: str
    revision: int


class WriteFile(Answer):
    """Create or replace path with content."""

    op: Literal["write"]
    path: str
    content: str


class UpsertSection(Answer):
    """Replace what lies between the begin and end lines of path, or append them with content."""

    op: Literal["upsertSection"]
    path: str
    begin: str
    end: str
    content: str


class MergeJson(Answer):
    """Deep-merge value into the JSON object in path."""

    op: Literal["mergeJson"]
    path: str
    value: dict[str, Any]


class Withheld(Answer):
    """A profile setting the checkout does not write, and why."""

    setting: str
    reason: str


class Checkout(Answer):
    """Answers checkout: the file operations to apply in order, and how to connect the tool."""

    agent: str
    harness: str
    mode: Literal["primary", "helper"]
    operations: list[WriteFile | UpsertSection | MergeJson]
    connect: str
    withheld: list[Withheld]
    note: str | None = None


class BundledProfile(Answer):
    """A profile in a bundle."""

    settings: dict[str, Any]
    addendum: str


class BundledBrief(Answer):
    """A brief in a bundle."""

    name: str
    description: str
    body: str


class BundledMemory(Answer):
    """A memory in a bundle."""

    name: str
    type: str
    description: str
    body: str


class AgentBundle(Answer):
    """Answers export, in import's shape."""

    name: str
    slug: str
    description: str
    prompt: str
    primaryHarness: str | None
    profiles: dict[str, BundledProfile]
    briefs: list[BundledBrief]
    memories: list[BundledMemory]
