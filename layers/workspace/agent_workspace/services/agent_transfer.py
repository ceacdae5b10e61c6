"""checkout_agent, import_agent and export_agent (issue 18): an agent into a workspace's files, and the whole
agent as one bundle, out of the repo and back in."""

from dataclasses import replace
from datetime import datetime
from typing import Any

from agent_workspace.domain import agents as rules
from agent_workspace.domain.agent_bundle import parse_memory_file, parse_subagent
from agent_workspace.domain.agent_checkout import CheckoutAgent, Snapshot, checkout
from agent_workspace.domain.agent_records import AgentMemory, Brief
from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import NotFound, PayloadError
from agent_workspace.domain.ids import new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.text import check_plain
from agent_workspace.observability import count
from agent_workspace.runtime import Runtime
from agent_workspace.services import agents
from agent_workspace.services.agents import Reach, find_loadable, profile_for, within_accepted


def check_out(
    rt: Runtime,
    actor: Actor,
    ref: str,
    harness: str | None,
    mode: str,
    pin: int | None,
    snapshot: bool,
    apply_project_settings: bool,
    server_url: str,
) -> dict[str, Any]:
    """The file operations that make a workspace load the agent at session start; a pointer, never a credential."""
    tool = rules.harness_id(harness) if harness is not None else "other"
    if pin is not None and pin < 1:
        raise PayloadError("pin must be 1 or more", field="pin")
    found = find_loadable(rt, actor, ref)
    within_accepted(found, pin, "pin")
    agent = found.agent
    if pin is not None and pin > agent.prompt_version:
        raise NotFound(f"agent {agent.id} has no prompt version {pin}")
    profile = profile_for(rt, agent.id, tool)
    copy = _snapshot(rt, found, pin) if snapshot else None
    pointer = CheckoutAgent(agent.id, agent.slug, agent.name, agent.description)
    settings = profile.settings if profile else {}
    return checkout(pointer, tool, mode, pin, server_url, settings, copy, apply_project_settings)


def _snapshot(rt: Runtime, found: Reach, pin: int | None) -> Snapshot:
    """The offline copy: the prompt run, the briefs, and the memories the caller may read."""
    version = pin or found.runs_version
    prompt = rt.agents.prompt(found.agent.id, version) if version else None
    briefs = [
        {"name": b.name, "description": b.description, "body": b.body} for b in rt.agent_briefs.of_agent(found.agent.id)
    ]
    memories = _memories(rt, found) if found.memory else []
    return Snapshot(prompt.body if prompt else "", version, memories, briefs)


def _memories(rt: Runtime, found: Reach) -> list[dict[str, Any]]:
    index = rt.agent_memory.index(found.agent.id)
    bodies = rt.agent_memory.bodies(found.agent.id, [e.name for e in index])
    return [{"name": m.name, "type": m.type, "description": m.description, "body": m.text()} for m in bodies]


def export(rt: Runtime, actor: Actor, ref: str) -> dict[str, Any]:
    """The agent in import_agent's shape: prompt, profiles, briefs and every live memory the caller may read."""
    found = agents.readable(rt, actor, ref)
    agent = found.agent
    version = found.runs_version
    prompt = rt.agents.prompt(agent.id, version) if version else None
    profiles = {p.harness: {"settings": p.settings, "addendum": p.addendum} for p in rt.agents.profiles(agent.id)}
    bundle: dict[str, Any] = {
        "name": agent.name,
        "slug": agent.slug,
        "description": agent.description,
        "prompt": prompt.body if prompt else "",
        "primaryHarness": agent.primary_harness,
        "profiles": profiles,
        "briefs": [
            {"name": b.name, "description": b.description, "body": b.body} for b in rt.agent_briefs.of_agent(agent.id)
        ],
        "memories": _memories(rt, found) if found.memory else [],
    }
    return bundle


def import_agent(
    rt: Runtime,
    actor: Actor,
    name: str | None,
    slug: str | None,
    description: str | None,
    prompt: str | None,
    primary_harness: str | None,
    profiles: dict[str, Any] | None,
    memories: list[dict[str, Any]] | None,
    briefs: list[dict[str, Any]] | None,
    subagent: str | None,
) -> dict[str, Any]:
    """A whole agent in one call; a Claude Code subagent file fills what the bundle leaves out (its frontmatter's
    name, description and settings as the claude-code profile, its body as the prompt)."""
    profiles = dict(profiles or {})
    if subagent is not None:
        parsed = parse_subagent(subagent)
        name = name or parsed["name"]
        description = description if description is not None else parsed["description"]
        prompt = prompt if prompt is not None else parsed["prompt"]
        if parsed["settings"] and "claude-code" not in profiles:
            profiles["claude-code"] = {"settings": parsed["settings"]}
        primary_harness = primary_harness or "claude-code"
    if not name:
        raise PayloadError("name is required (or a subagent file whose frontmatter names it)", field="name")
    now = rt.clock()
    kept = _imported_memories(memories or [], now)
    written = _imported_briefs(briefs or [], now)
    agent = agents.create(rt, actor, name, slug, description or "", prompt, primary_harness, profiles)
    rt.agent_memory.import_contents(
        agent.id, [replace(m, agent_id=agent.id) for m in kept], [replace(b, agent_id=agent.id) for b in written]
    )
    count("AgentImported")
    made = rt.agents.get(agent.id, consistent=True)
    assert made is not None
    return {**made.public(), "imported": {"memories": len(kept), "briefs": len(written), "profiles": len(profiles)}}


def _imported_memories(given: list[dict[str, Any]], now: datetime) -> list[AgentMemory]:
    if len(given) > rules.MEMORIES_PER_AGENT:
        raise PayloadError(f"memories has {len(given):,} items; at most {rules.MEMORIES_PER_AGENT:,}", field="memories")
    made: list[AgentMemory] = []
    names: set[str] = set()
    for i, item in enumerate(given):
        where = f"memories[{i}]"
        if not isinstance(item, dict):
            raise PayloadError(f"{where} must be an object", field=where)
        if "file" in item:
            if set(item) != {"file"} or not isinstance(item["file"], str):
                raise PayloadError(f'{where}: give a memory file as {{"file": <its content>}} alone', field=where)
            item = parse_memory_file(item["file"], f"{where}.file")
        if set(item) != {"name", "type", "description", "body"} or not all(isinstance(v, str) for v in item.values()):
            raise PayloadError(f"{where} must have name, type, description and body, each a string", field=where)
        fields: dict[str, str] = item
        name = rules.check_memory_name(fields["name"], f"{where}.name")
        if fields["type"] not in rules.MEMORY_TYPES:
            raise PayloadError(f"{where}.type must be one of {', '.join(rules.MEMORY_TYPES)}", field=f"{where}.type")
        if len(fields["description"]) > rules.MEMORY_DESCRIPTION_MAX:
            raise PayloadError(
                f"{where}.description: at most {rules.MEMORY_DESCRIPTION_MAX}", field=f"{where}.description"
            )
        check_plain(fields["description"], f"{where}.description")
        if len(fields["body"]) > rules.MEMORY_BODY_MAX:
            raise PayloadError(f"{where}.body: at most {rules.MEMORY_BODY_MAX:,} characters", field=f"{where}.body")
        if name in names:
            raise PayloadError(f"{where}.name {name!r} is given twice", field=f"{where}.name")
        names.add(name)
        made.append(
            AgentMemory(
                new_id(),
                "",
                name,
                fields["type"],
                fields["description"],
                fields["body"],
                1,
                "import",
                iso(now),
                iso(now),
            )
        )
    return made


def _imported_briefs(given: list[dict[str, Any]], now: datetime) -> list[Brief]:
    if len(given) > rules.BRIEFS_PER_AGENT:
        raise PayloadError(f"briefs has {len(given)} items; at most {rules.BRIEFS_PER_AGENT}", field="briefs")
    made: list[Brief] = []
    for i, item in enumerate(given):
        where = f"briefs[{i}]"
        if (
            not isinstance(item, dict)
            or set(item) != {"name", "description", "body"}
            or not all(isinstance(v, str) for v in item.values())
        ):
            raise PayloadError(f"{where} must have name, description and body, each a string", field=where)
        name = rules.check_memory_name(item["name"], f"{where}.name")
        if name in {b.name for b in made}:
            raise PayloadError(f"{where}.name {name!r} is given twice", field=f"{where}.name")
        if len(item["description"]) > rules.MEMORY_DESCRIPTION_MAX:
            raise PayloadError(
                f"{where}.description: at most {rules.MEMORY_DESCRIPTION_MAX}", field=f"{where}.description"
            )
        check_plain(item["description"], f"{where}.description")
        size = len(item["body"].encode("utf-8"))
        if size > rules.BRIEF_BYTES_MAX:
            raise PayloadError(
                f"{where}.body is {size:,} bytes; at most {rules.BRIEF_BYTES_MAX:,}", field=f"{where}.body"
            )
        made.append(Brief(new_id(), "", name, item["description"], item["body"], 1, iso(now), "import"))
    return made
