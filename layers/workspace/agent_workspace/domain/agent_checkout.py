"""checkout_agent's file operations: what makes a workspace load an agent at session start, in one harness.

The files hold a pointer (the agent's id and the server), never the prompt or a credential, so they do not go
stale and can be committed. The calling agent applies the operations verbatim, in order:
- `write`: create or replace `path` with `content`;
- `upsertSection`: replace what lies between the `begin` and `end` marker lines of `path`; without both,
  append `begin`, `content` and `end` at its end (creating the file), so a second checkout replaces the first;
- `mergeJson`: deep-merge `value` into the JSON object in `path` (creating it).
Paths are relative and POSIX; the output depends on nothing but the arguments.
"""

import json
from dataclasses import dataclass
from typing import Any

from agent_workspace.domain.agent_bundle import one_line, render_frontmatter, render_subagent
from agent_workspace.domain.agents import HARNESSES, check_slug, lowers_safety
from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.text import check_plain, is_segment

MODES = ("primary", "helper")
BEGIN, END = "<!-- agent-workspace:agent BEGIN -->", "<!-- agent-workspace:agent END -->"
IGNORE_BEGIN, IGNORE_END = "# agent-workspace snapshot BEGIN", "# agent-workspace snapshot END"
POINTER = ".omr/agent.json"  # the workspace's primary agent
SNAPSHOTS = ".omr/snapshot/"
SERVER = "agent-workspace"  # the name the connect notes give the MCP server
TOKEN_VARIABLE = "AGENT_WORKSPACE_TOKEN"
RULE_DESCRIPTION_MAX = 1_000

# Where each harness reads a workspace's standing instructions. A rule file's name is fixed, not the
# agent's slug, so checking out another agent replaces it: a workspace has one primary agent.
SECTION_FILES = {
    "claude-code": "CLAUDE.md",
    "codex": "AGENTS.md",
    "other": "AGENTS.md",
    "copilot": ".github/copilot-instructions.md",
    "gemini-cli": "GEMINI.md",
    "zed": ".rules",
}
RULE_FILES: dict[str, tuple[str, dict[str, Any]]] = {
    "cursor": (".cursor/rules/agent-workspace.mdc", {"alwaysApply": True}),
    "windsurf": (".windsurf/rules/agent-workspace.md", {"trigger": "always_on"}),
}


@dataclass(frozen=True)
class CheckoutAgent:
    id: str
    slug: str
    name: str
    description: str


@dataclass(frozen=True)
class Snapshot:
    """What an offline copy holds: one prompt version, the briefs and the memories the caller may read."""

    prompt: str
    prompt_version: int
    memories: list[dict[str, Any]]  # name, type, description, body
    briefs: list[dict[str, Any]]  # name, description, body


def instruction(agent: CheckoutAgent, harness: str, pin: int | None) -> str:
    """The one sentence every checked-out file exists to carry."""
    version = f", version={pin}" if pin is not None else ""
    return (
        "At the start of every session, call the `load_agent` tool (or `agent` with action `load`) with "
        f"agent={agent.id}, harness={harness}{version} and adopt what it returns as your operating instructions."
    )


def _connect(harness: str, url: str, load: str) -> str:
    """How to add the server to `harness`, with a token the person mints and keeps out of the repository."""
    env = f"put a workspace token you mint in the console into the environment variable {TOKEN_VARIABLE}"
    bearer = {"Authorization": f"Bearer ${{env:{TOKEN_VARIABLE}}}"}
    prompt = {"type": "promptString", "id": "token", "description": "Workspace token", "password": True}
    sign_in = (
        "the browser opens this server's sign-in: paste a human token from the console, pick this workspace and "
        "Allow (no token is written anywhere; revoke the app under the workspace's connected apps)"
    )
    if harness == "cursor":
        return (
            f"Add the server to Cursor in ~/.cursor/mcp.json: {json.dumps({'mcpServers': {SERVER: {'url': url}}})}; "
            f"then click Connect beside it in Cursor's MCP settings: {sign_in}. A tool that wants a header instead: "
            f'add "headers": {json.dumps(bearer)} and {env}.'
        )
    if harness == "copilot":
        server = {"servers": {SERVER: {"type": "http", "url": url}}}
        return (
            f"Add the server to VS Code in .vscode/mcp.json: {json.dumps(server)}; then Start it (the MCP view, or "
            f"the code lens in the file) and allow the sign-in: {sign_in}. With a token instead, add "
            f'"headers": {{"Authorization": "Bearer ${{input:token}}"}} and "inputs": {json.dumps([prompt])}: VS Code '
            "asks for a workspace token you mint in the console and keeps it out of the file."
        )
    json_files = {  # where, then the file's content (the token left out), then what to do after
        "gemini-cli": (
            "Gemini CLI in ~/.gemini/settings.json",
            {"mcpServers": {SERVER: {"httpUrl": url, "headers": {"Authorization": f"Bearer ${TOKEN_VARIABLE}"}}}},
            env,
        ),
        "windsurf": (
            "Windsurf in ~/.codeium/windsurf/mcp_config.json",
            {"mcpServers": {SERVER: {"serverUrl": url, "headers": bearer}}},
            env,
        ),
        "zed": (
            "Zed in your user settings.json (never the project's .zed/settings.json)",
            {"context_servers": {SERVER: {"url": url, "headers": {"Authorization": "Bearer <workspace token>"}}}},
            "put a workspace token you mint in the console in place of <workspace token>",
        ),
    }
    if harness in json_files:
        where, content, then = json_files[harness]
        return f"Add the server to {where}: {json.dumps(content, ensure_ascii=False)}; then {then}."
    if harness == "claude-code":
        return (
            f"Add the server to Claude Code once: `claude mcp add --transport http {SERVER} {url}`, then type /mcp, "
            f"pick {SERVER} and Authenticate: {sign_in}. Or with a token: {env}, then add it with "
            f'`--header "Authorization: Bearer ${TOKEN_VARIABLE}"` (the token goes into your own Claude Code '
            "settings, not this repository)."
        )
    if harness == "codex":
        return (
            f"Add the server to Codex once, in ~/.codex/config.toml: `[mcp_servers.{SERVER}]` with "
            f'`url = {json.dumps(url)}` and `bearer_token_env_var = "{TOKEN_VARIABLE}"`; then {env}.'
        )
    if harness == "claude-ai":
        return (
            f"claude.ai reads no workspace files: add {url} as a custom connector (Settings, Connectors, Add custom "
            f"connector; leave the OAuth client fields empty), then Connect: {sign_in}. A connector sends no header, "
            "so a workspace token from the console has no place there, nor in the instructions. Then put this into "
            f"the Project's instructions: {load}"
        )
    return (
        f"Add the server to your tool as a Streamable HTTP MCP server at {url}, sending the header "
        "`Authorization: Bearer <workspace token>` with a token you mint in the console; keep the token in an "
        "environment variable or your tool's own secret settings, never in this repository."
    )


def _withheld(harness: str, settings: dict[str, Any], apply: bool) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The project settings to merge (Claude Code's model only) and every other setting with why it is left out."""
    merged: dict[str, Any] = {}
    withheld = []
    place = SECTION_FILES.get(harness) or (RULE_FILES[harness][0] if harness in RULE_FILES else "a Project")
    for name, value in settings.items():
        if harness == "claude-code" and name == "model" and apply:
            merged["model"] = value
            continue
        if harness == "claude-code" and name == "model":
            reason = (
                "CLAUDE.md cannot set the model; pass applyProjectSettings to merge it into .claude/settings.json, "
                "which is committed for everyone"
            )
        elif harness == "claude-code":
            reason = (
                f"{name} is a subagent field: neither CLAUDE.md nor .claude/settings.json sets it for the main "
                "session; check out in helper mode to apply it"
            )
        elif harness == "codex":
            reason = (
                f"AGENTS.md cannot set {name}; Codex reads it from .codex/config.toml, which is TOML and not merged "
                f"by this checkout: add `{name} = {json.dumps(value)}` there yourself"
            )
        else:
            reason = f"{place} cannot set {name}, and {harness} has no project settings file this checkout writes"
        withheld.append({"setting": name, "reason": reason})
    return merged, withheld


def _unsafe(harness: str, name: str, value: Any) -> dict[str, str]:
    """A setting that switches off the harness's approvals or sandbox: never written, never advised."""
    return {
        "setting": name,
        "reason": f"{name} {json.dumps(value)} switches off {harness}'s approvals or sandbox: a checkout never "
        "applies it, and no agent should; the person decides it in their own tool's settings",
    }


def _pointer(agent: CheckoutAgent, url: str, harness: str, mode: str, pin: int | None) -> str:
    held: dict[str, Any] = {"agent": agent.id, "slug": agent.slug, "name": agent.name, "server": url}
    held |= {"harness": harness, "mode": mode} | ({"version": pin} if pin is not None else {})
    return json.dumps(held, indent=2, ensure_ascii=False) + "\n"


def _section(agent: CheckoutAgent, url: str, load: str, pointer: str, snapshot: str | None) -> str:
    lines = [
        f"## Agent: {agent.name} (@{agent.slug})",
        "",
        f"This workspace runs the agent {agent.name} (@{agent.slug}, id {agent.id}) from the Agent Repo of the "
        f"MCP server at {url}; `{pointer}` holds the same pointer.",
        "",
        load,
    ]
    if snapshot:
        lines.append(f"If that server cannot be reached, read `{snapshot}`, an offline copy that goes stale.")
    return "\n".join(lines) + "\n"


def _snapshot(agent: CheckoutAgent, snapshot: Snapshot) -> str:
    """The prompt, briefs and memories as one Markdown file, in an order that does not depend on the store's."""
    parts = [
        f"# {agent.name} (@{agent.slug}): offline snapshot",
        f"Agent {agent.id} at prompt version {snapshot.prompt_version}. It goes stale: load_agent gives the live "
        "agent. It holds private memory, so .gitignore keeps it out of version control.",
        f"## Prompt (version {snapshot.prompt_version})",
        snapshot.prompt.strip("\n"),
    ]
    if snapshot.briefs:
        parts.append("## Briefs")
    for brief in sorted(snapshot.briefs, key=lambda brief: brief["name"]):
        parts += [f"### {brief['name']}", brief["description"], brief["body"].strip("\n")]
    if snapshot.memories:
        parts.append("## Memories")
    for memory in sorted(snapshot.memories, key=lambda memory: (memory["type"], memory["name"])):
        parts += [f"### {memory['name']} ({memory['type']})", memory["description"], memory["body"].strip("\n")]
    return "\n\n".join(parts) + "\n"


def _check(agent: CheckoutAgent, harness: str, mode: str, pin: int | None, url: str) -> None:
    if harness not in HARNESSES:
        raise PayloadError(f"harness must be one of {', '.join(HARNESSES)}", field="harness")
    if mode not in MODES:
        raise PayloadError("mode must be primary or helper", field="mode")
    if pin is not None and pin < 1:
        raise PayloadError("pin must be a prompt version, 1 or more", field="pin")
    if not is_segment(agent.id):
        raise PayloadError("agent id must be one path segment", field="agent")
    check_slug(agent.slug)
    check_plain(agent.name, "name")
    check_plain(url, "serverUrl")


def _helper(
    agent: CheckoutAgent, url: str, load: str, settings: dict[str, Any], copy: str | None
) -> tuple[dict[str, Any], list[str]]:
    """Claude Code's subagent file, which carries the profile's settings, and what the caller should know."""
    body = f"You are {agent.name} (@{agent.slug}), an agent of the Agent Repo on the MCP server at {url}.\n\n{load}"
    if copy:
        body += f"\nIf that server cannot be reached, read `{copy}`, an offline copy that goes stale."
    content = render_subagent(agent.slug, _description(agent), body, settings)
    notes = []
    if "tools" in settings:
        notes.append(
            f"The profile's tools limit this subagent: list mcp__{SERVER}__agent among them (with the server added "
            f"as {SERVER}), or it cannot load itself."
        )
    return _write(f".claude/agents/{agent.slug}.md", content), notes


def _primary(agent: CheckoutAgent, harness: str, text: str) -> list[dict[str, Any]]:
    """The harness's instructions file with the pointer; claude.ai has none."""
    if harness in SECTION_FILES:
        path = SECTION_FILES[harness]
        return [{"op": "upsertSection", "path": path, "begin": BEGIN, "end": END, "content": text}]
    if harness in RULE_FILES:
        path, head = RULE_FILES[harness]
        return [_write(path, f"{render_frontmatter({'description': _description(agent), **head})}\n{text}")]
    return []


def _write(path: str, content: str) -> dict[str, Any]:
    return {"op": "write", "path": path, "content": content}


def _description(agent: CheckoutAgent) -> str:
    return one_line(agent.description)[:RULE_DESCRIPTION_MAX] or f"{agent.name} from the Agent Repo"


def checkout(
    agent: CheckoutAgent,
    harness: str,
    mode: str,
    pin: int | None,
    server_url: str,
    settings: dict[str, Any],
    snapshot: Snapshot | None,
    apply_project_settings: bool,
) -> dict[str, Any]:
    """The operations, connect note and withheld settings checkout_agent returns (see the module's docstring)."""
    _check(agent, harness, mode, pin, server_url)
    notes = []
    if mode == "helper" and harness != "claude-code":
        notes.append(f"{harness} has no subagent files, so the agent is checked out as the workspace's primary agent.")
        mode = "primary"
    live = {name: settings[name] for name in sorted(settings) if settings[name] is not None}
    unsafe = [_unsafe(harness, name, live.pop(name)) for name in list(live) if lowers_safety(harness, name, live[name])]
    pointer = POINTER if mode == "primary" else f".omr/helpers/{agent.slug}.json"  # leaves the primary's pointer
    copy = f"{SNAPSHOTS}{agent.slug}.md" if snapshot else None
    load = instruction(agent, harness, pin)
    operations = [_write(pointer, _pointer(agent, server_url, harness, mode, pin))]
    withheld: list[dict[str, str]] = []
    if mode == "helper":
        subagent, more = _helper(agent, server_url, load, live, copy)
        operations.append(subagent)
        notes += more
        if apply_project_settings:
            notes.append("applyProjectSettings does nothing in helper mode: the subagent file carries the settings.")
    else:
        operations += _primary(agent, harness, _section(agent, server_url, load, pointer, copy))
        merged, withheld = _withheld(harness, live, apply_project_settings)
        if merged:
            operations.append({"op": "mergeJson", "path": ".claude/settings.json", "value": merged})
    if snapshot and copy:
        ignore = {"op": "upsertSection", "path": ".gitignore", "begin": IGNORE_BEGIN, "end": IGNORE_END}
        operations += [{**ignore, "content": SNAPSHOTS + "\n"}, _write(copy, _snapshot(agent, snapshot))]
    result = {"agent": agent.id, "harness": harness, "mode": mode, "operations": operations}
    paths = (
        f" The same server lists On My Radar's 21 tools by their own names (load_agent, agent_remember, ...) at "
        f"{server_url.rstrip('/')}/omr, Masaro's task board at /masaro and AgentRQ's tools at /agentrq: connect the "
        "one your tool's instructions were written for."
    )
    result |= {"connect": _connect(harness, server_url, load) + paths, "withheld": unsafe + withheld}
    return result | ({"note": " ".join(notes)} if notes else {})
