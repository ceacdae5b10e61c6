"""The agent repo's rules (issue 18, decision 0009): names, slugs, harnesses and their profile settings, and the
limits of ../shared/reference/omr-agent-repo-tools.txt, each as written there.

Only the rules live here so far; the store, the `agent` tool and the human's REST build on them.
"""

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from agent_workspace.domain.errors import Forbidden, NotFound, PayloadError
from agent_workspace.domain.stored import STORED
from agent_workspace.domain.text import check_plain, echo

NAME_MAX = 80
SLUG_MAX = 64
DESCRIPTION_MAX = 8_000
DESCRIPTION_LISTED = 300  # list_agents shows a description up to this
PROMPT_MAX = 128_000
AGENTS_PER_ACCOUNT = 100
BUDGET_MIN, BUDGET_DEFAULT, BUDGET_MAX = 2_000, 32_000, 96_000
MEMORY_NAME_MAX = 64
MEMORY_BODY_MAX = 64_000
MEMORY_DESCRIPTION_MAX = 200
MEMORIES_PER_AGENT = 2_000
MEMORY_TYPES = ("feedback", "user", "project", "reference")
BRIEF_BYTES_MAX = 16_384  # UTF-8
BRIEFS_PER_AGENT = 20
NOTE_MAX = 500
FORGET_REASON_MAX = 500
PROMPT_VERSIONS_PER_DAY = 20  # per agent per connection
BRIEF_CHANGES_PER_DAY = 40  # per agent per connection; a rename counts as one
MEMORY_WRITES_PER_HOUR = 120  # per session
MEMORY_WRITES_PER_CONNECTION_HOUR = 240  # per agent per connection, across its sessions (opening more escapes none)
SESSION_IDLE_DAYS = 7
FORGOTTEN_KEPT_DAYS = 30
HARNESS_MAX = 40
WORKSPACE_MAX = 200
ADDENDUM_MAX = 8_000
SETTING_VALUE_MAX = 400
VERSIONS_LISTED_MAX = 50  # an agent's prompt versions, one page
RECALL_LIMIT_MAX = 100  # memories one recall answers
RECALL_QUERY_MAX = 500
MEMORY_WRITERS = ("agent", "people", "import", "collaborators")  # whose memories a recall may narrow to
ACTIVITY_LIMIT_MAX = 100  # an agent's activity, one page

KEBAB = r"[a-z0-9]+(?:-[a-z0-9]+)*"  # slugs, memory and brief names (a listing anchors it: ^…$)
_KEBAB = re.compile(KEBAB)

# The tools an agent runs in, and the spellings clients use for them.
HARNESSES = ("claude-code", "codex", "cursor", "claude-ai", "copilot", "gemini-cli", "windsurf", "zed", "other")
HARNESS_ALIASES = {
    "claude": "claude-code",
    "claudecode": "claude-code",
    "claude_code": "claude-code",
    "codex-cli": "codex",
    "openai-codex": "codex",
    "claude.ai": "claude-ai",
    "github-copilot": "copilot",
    "gemini": "gemini-cli",
    "agents-md": "other",
    "agents.md": "other",
}
DEFAULT_PROFILE = "default"  # the profile of every harness without its own

# Each harness's own settings, as its documentation names them; anything else is refused by name.
# claude-code: the subagent frontmatter fields (code.claude.com/docs/en/sub-agents, "Supported frontmatter fields").
# codex: config.toml keys (github.com/openai/codex docs/config.md). The others take a model only, as their
# agent settings do; `default` takes what every harness shares.
PROFILE_SETTINGS: dict[str, frozenset[str]] = {
    "claude-code": frozenset(
        {"model", "effort", "tools", "disallowedTools", "permissionMode", "maxTurns", "color", "skills"}
    ),
    "codex": frozenset({"model", "model_reasoning_effort", "approval_policy", "sandbox_mode", "model_provider"}),
    "cursor": frozenset({"model"}),
    "claude-ai": frozenset({"model"}),
    "copilot": frozenset({"model"}),
    "gemini-cli": frozenset({"model"}),
    "windsurf": frozenset({"model"}),
    "zed": frozenset({"model"}),
    "other": frozenset({"model", "effort"}),
    DEFAULT_PROFILE: frozenset({"model", "effort"}),
}

# The values a harness takes for a setting whose documentation gives a closed set (claude-code: the subagent
# frontmatter; codex: config.toml), and the settings that take a count; other settings take any plain string.
SETTING_CHOICES: dict[tuple[str, str], tuple[str, ...]] = {
    ("claude-code", "permissionMode"): ("default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions"),
    ("codex", "approval_policy"): ("untrusted", "on-failure", "on-request", "never"),
    ("codex", "sandbox_mode"): ("read-only", "workspace-write", "danger-full-access"),
    ("codex", "model_reasoning_effort"): ("minimal", "low", "medium", "high", "xhigh"),
}
SETTING_COUNTS = frozenset({("claude-code", "maxTurns")})  # a whole number of 1 or more, written as a string

# Values that switch off a harness's approvals or sandbox. Only the agent's owner, a person (REST, console), sets
# them: an agent or a share receiver writing one would lower the safety of every human who runs the agent, and
# checkout never tells an agent to apply one (it is withheld, with why).
LOWERS_SAFETY: dict[tuple[str, str], frozenset[str]] = {
    ("claude-code", "permissionMode"): frozenset({"acceptEdits", "auto", "dontAsk", "bypassPermissions"}),
    ("codex", "approval_policy"): frozenset({"never"}),
    ("codex", "sandbox_mode"): frozenset({"danger-full-access"}),
}


def lowers_safety(harness: str, name: str, value: object) -> bool:
    return value in LOWERS_SAFETY.get((harness, name), frozenset())


DENY_LISTS = frozenset({("claude-code", "disallowedTools")})  # tools the owner denied: a list, comma-separated


def _listed(value: object) -> set[str]:
    return {part.strip() for part in value.split(",") if part.strip()} if isinstance(value, str) else set()


def check_safety(harness: str, settings: dict[str, Any], current: dict[str, Any], field: str = "settings") -> None:
    """For a writer other than the owner's person: no setting that lowers the harness's safety, unless it is the
    one already there (a profile kept as the owner set it), and no tool taken off a deny list."""
    for name in {n for h, n in DENY_LISTS if h == harness}:
        lifted = sorted(_listed(current.get(name)) - _listed(settings.get(name)))
        if lifted:
            raise Forbidden(
                f"{field}.{name} would no longer deny {', '.join(lifted)}: only the agent's owner lifts a denied tool, "
                "in the console or over REST"
            )
    for name, value in settings.items():
        if lowers_safety(harness, name, value) and current.get(name) != value:
            raise Forbidden(
                f"{field}.{name} {value!r} switches off {harness}'s approvals or sandbox: only the agent's owner sets "
                "it, in the console or over REST"
            )


_COUNT = re.compile(r"[1-9][0-9]{0,5}")


def harness_id(value: str, field: str = "harness", allow_default: bool = False) -> str:
    """The harness id `value` names (a listed id or a common spelling of one), else refused naming the ids."""
    spelled = value.lower()
    if len(value) > HARNESS_MAX:
        raise PayloadError(f"{field} is {len(value)} characters; at most {HARNESS_MAX}", field=field)
    if allow_default and spelled == DEFAULT_PROFILE:
        return DEFAULT_PROFILE
    found = spelled if spelled in HARNESSES else HARNESS_ALIASES.get(spelled)
    if found is None:
        known = ", ".join(HARNESSES + ((DEFAULT_PROFILE,) if allow_default else ()))
        raise PayloadError(f"{field} must be one of {known}", field=field)
    return found


def check_settings(harness: str, settings: dict[str, Any]) -> dict[str, Any]:
    """Profile settings for one harness: its own fields only, each a string up to 400 characters, a boolean or null."""
    known = PROFILE_SETTINGS[harness]
    for name, value in settings.items():
        if name not in known:
            raise PayloadError(
                f"settings.{name} is not a setting {harness} knows; it takes {', '.join(sorted(known))}",
                field=f"settings.{name}",
            )
        if isinstance(value, str):
            if len(value) > SETTING_VALUE_MAX:
                raise PayloadError(
                    f"settings.{name} is {len(value)} characters; at most {SETTING_VALUE_MAX}", field=f"settings.{name}"
                )
            check_plain(value, f"settings.{name}")  # it lands in frontmatter and settings files on checkout
        elif value is not None and not isinstance(value, bool):
            raise PayloadError(f"settings.{name} must be a string, a boolean or null", field=f"settings.{name}")
        if value is not None:
            _check_setting_value(harness, name, value)
    return settings


def _check_setting_value(harness: str, name: str, value: str | bool) -> None:
    """A value the harness itself would refuse is refused here, naming the setting and what it takes."""
    choices = SETTING_CHOICES.get((harness, name))
    if choices is not None and value not in choices:
        raise PayloadError(
            f"settings.{name} must be one of {', '.join(choices)} for {harness}; got {echo(str(value))!r}",
            field=f"settings.{name}",
        )
    if (harness, name) in SETTING_COUNTS and not (isinstance(value, str) and _COUNT.fullmatch(value)):
        raise PayloadError(
            f'settings.{name} must be a whole number of 1 or more, as a string (e.g. "25"), for {harness}; '
            f"got {echo(str(value))!r}",
            field=f"settings.{name}",
        )


def check_name(name: str) -> str:
    """An agent's name: one line of plain text, 1-80 characters."""
    if not name.strip():
        raise PayloadError("name must not be empty", field="name")
    if len(name) > NAME_MAX:
        raise PayloadError(f"name is {len(name)} characters; at most {NAME_MAX}", field="name")
    return check_plain(name, "name")


def check_slug(slug: str, field: str = "slug") -> str:
    """Lowercase letters, digits and single hyphens, up to 64: the agent's @handle."""
    if len(slug) > SLUG_MAX or not _KEBAB.fullmatch(slug):
        raise PayloadError(
            f"{field} must be lowercase letters, digits and single hyphens, at most {SLUG_MAX}", field=field
        )
    return slug


def slug_of(name: str) -> str:
    """The slug a name gives when none is chosen: its letters and digits, accents dropped, lowercased, runs of
    anything else as one hyphen."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    words = re.findall(r"[a-z0-9]+", plain.lower())
    slug = "-".join(words)[:SLUG_MAX].strip("-")
    if not slug:
        raise PayloadError("name has no letters or digits to make a slug from: give a slug", field="slug")
    return slug


def check_memory_name(name: str, field: str = "name") -> str:
    """A memory's (or a brief's) name: kebab-case, up to 64."""
    if len(name) > MEMORY_NAME_MAX or not _KEBAB.fullmatch(name):
        raise PayloadError(
            f"{field} must be kebab-case (lowercase letters, digits and hyphens), at most {MEMORY_NAME_MAX}",
            field=field,
        )
    return name


def check_budget(budget: int) -> int:
    if not BUDGET_MIN <= budget <= BUDGET_MAX:
        raise PayloadError(f"budget must be {BUDGET_MIN:,} to {BUDGET_MAX:,} characters", field="budget")
    return budget


def check_brief(body: str) -> str:
    size = len(body.encode("utf-8"))
    if size > BRIEF_BYTES_MAX:
        raise PayloadError(f"body is {size:,} bytes of UTF-8; a brief holds at most {BRIEF_BYTES_MAX:,}", field="body")
    return body


@dataclass(frozen=True)
class Agent:
    """An agent of the repo: account-wide, loaded from any workspace of the account."""

    __pydantic_config__ = STORED

    id: str
    account_id: str
    name: str
    slug: str
    description: str
    created_at: str
    updated_at: str
    created_by: str  # "agent" or "human"
    accent: str | None = None
    primary_harness: str | None = None
    prompt_version: int = 0  # the live version; 0 until the agent has a prompt
    prompt_locked: bool = False
    revision: int = 1
    archived: bool = False
    memory_count: int = 0
    memories_feedback: int = 0
    memories_user: int = 0
    memories_project: int = 0
    memories_reference: int = 0
    brief_count: int = 0
    profile_tools: frozenset[str] = frozenset()
    last_session: dict[str, str] | None = None
    unread_mentions: int = 0
    offered_to: str | None = None  # the account a pending transfer is offered to; it grants that account nothing
    offered_at: str | None = None
    owned_since: str | None = None  # the last transfer: load sessions opened before it are ended

    def listed(self) -> dict[str, Any]:
        """What list_agents shows of it (this account's own agents)."""
        description = self.description
        if len(description) > DESCRIPTION_LISTED:
            description = description[: DESCRIPTION_LISTED - 1] + "…"
        shown: dict[str, Any] = {
            "id": self.id,
            "slug": self.slug,
            "ref": self.slug,
            "name": self.name,
            "description": description,
            "role": "owner",
            "access": "edit",
            "promptVersion": self.prompt_version,
            "primaryTool": self.primary_harness,
            "tools": sorted(self.profile_tools),
            "memories": {t: getattr(self, f"memories_{t}") for t in MEMORY_TYPES},
            "lastSession": self.last_session,
            "revision": self.revision,
        }
        if self.prompt_locked:
            shown["promptLocked"] = True
        if self.archived:
            shown["archived"] = True
        return shown

    def public(self) -> dict[str, Any]:
        return {
            **self.listed(),
            "description": self.description,
            "accent": self.accent,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
        }


@dataclass(frozen=True)
class PromptVersion:
    """One version of an agent's system prompt: immutable once written."""

    __pydantic_config__ = STORED

    agent_id: str
    version: int
    body: str
    created_at: str
    author: str  # "agent" or "human"
    token_id: str | None = None
    harness: str | None = None
    note: str | None = None

    def listed(self, live: int) -> dict[str, Any]:
        shown = {
            "version": self.version,
            "status": "live" if self.version == live else "superseded",
            "author": self.author,
            "tool": self.harness,
            "note": self.note,
            "createdAt": self.created_at,
        }
        return {name: value for name, value in shown.items() if value is not None}

    def public(self, live: int) -> dict[str, Any]:
        return {**self.listed(live), "body": self.body}


def check_prompt(body: str, field: str = "prompt", required: bool = False) -> str:
    if required and not body.strip():
        raise PayloadError(f"{field} must not be empty", field=field)
    if len(body) > PROMPT_MAX:
        raise PayloadError(f"{field} is {len(body):,} characters; at most {PROMPT_MAX:,}", field=field)
    return body


ACCENT_MAX = 40


def check_accent(accent: str) -> str:
    """The agent's accent colour, as the console shows it: a name or #hex, one short line."""
    if not accent.strip() or len(accent) > ACCENT_MAX:
        raise PayloadError(f"accent must be 1-{ACCENT_MAX} characters, e.g. 'teal' or '#0f766e'", field="accent")
    return check_plain(accent, "accent")


def check_description(description: str) -> str:
    if len(description) > DESCRIPTION_MAX:
        raise PayloadError(
            f"description is {len(description):,} characters; at most {DESCRIPTION_MAX:,}", field="description"
        )
    return description


def foreign_session(agent_id: str, session: str | None) -> NotFound:
    """A session this connection did not open for this agent. A session belongs to the connection (here, the token)
    that loaded the agent; one answer whether it exists or not, so another connection's sessions cannot be probed."""
    return NotFound(
        f"session {echo(session)} is not a load session of agent {agent_id} on this connection; call load_agent first"
    )
