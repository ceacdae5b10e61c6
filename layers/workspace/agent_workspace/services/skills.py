"""The skills a workspace can use: its own, and those its human shared into it (read-only there).

A skill is used by the workspace that created it and by each workspace it is shared into. Deleting
a whole skill takes it out of one workspace; the skill itself (record and files) is deleted only
when that workspace was the last one using it. So the owner deleting a skill that is still shared
leaves it, read-only, where it is shared; and when the last of those deletes it (or the human
unshares it there), it is gone.
"""

from typing import Any

from agent_workspace.backoff import back_off
from agent_workspace.domain import paging
from agent_workspace.domain import skill_manifest as manifest
from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import Conflict, Forbidden, NotFound, PayloadError, Unavailable
from agent_workspace.domain.ids import new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.resources import ResourceInfo
from agent_workspace.domain.skill_manifest import ServedFile
from agent_workspace.domain.skills import (
    MAX_FILES,
    MAX_WORKSPACES,
    SKILL_MD,
    Skill,
    SkillFile,
    SkillRef,
    check_content,
    check_name,
    check_query,
    file_uri,
    matches,
    parse_uri,
)
from agent_workspace.domain.text import echo, utf8_text
from agent_workspace.observability import count
from agent_workspace.runtime import Runtime
from agent_workspace.store import keys
from agent_workspace.store.skills import Found

_RACE_ROUNDS = 6  # a lost conditional write re-reads and tries again, this often at most


# -- the agent's actions ----------------------------------------------------------------------


def search(rt: Runtime, workspace_id: str, q: str | None) -> dict[str, Any]:
    """The workspace's skills whose name or description contains `q` (any case); no `q`, all of them."""
    q = check_query(q)
    return {"skills": [_hit(ref) for ref in rt.skills.list_refs(workspace_id) if matches(q, ref.name, ref.description)]}


def load(rt: Runtime, workspace_id: str, uri: str) -> dict[str, Any] | str:
    """One file; `skill://<name>` (or its SKILL.md) with the URIs of the skill's other files."""
    target = parse_uri(uri)
    found = rt.skills.find(workspace_id, target.name, target.path)
    shown = file_uri(target.name, target.file)
    if found.ref is None:
        return f"nothing at {shown}: this workspace has no skill {target.name}. skills search lists the ones it has."
    if target.file == SKILL_MD:
        if found.skill is None:
            return f"nothing at {shown}: this workspace has no skill {target.name}"
        answer: dict[str, Any] = {"uri": shown, "content": found.skill.content, "files": found.skill.file_uris()}
    else:
        if found.file is None:
            return (
                f"nothing at {shown}: skill {target.name} has no file {target.path}. "
                f"Load skill://{target.name} for the list of its files."
            )
        answer = {"uri": shown, "content": found.file.content}
    if found.ref.read_only:
        answer["readOnly"] = True
    return answer


def save(rt: Runtime, actor: Actor, uri: str, content: str) -> str:
    """Replace one file. Writing SKILL.md creates the skill; every other file needs the skill first."""
    target = parse_uri(uri)
    if target.path is None:
        raise PayloadError(
            f"uri {uri!r} names the whole skill; save writes one file: {uri}/{SKILL_MD} to create or change the "
            f"skill, {uri}/<path> for another of its files",
            field="uri",
        )
    description = check_content(target.path, content)
    shown = file_uri(target.name, target.path)
    for attempt in range(_RACE_ROUNDS):
        found = rt.skills.find(actor.workspace_id, target.name)
        try:
            if target.path == SKILL_MD:
                assert description is not None
                if _save_skill_md(rt, actor, target.name, found, content, description):
                    count("SkillCreated")
                    return f"{shown} saved: skill {target.name} created"
            else:
                _save_file(rt, actor, target.name, found, target.path, content)
        except Conflict:
            back_off(attempt)  # another write came first: read again and apply on top
            continue
        count("SkillFileSaved")
        return f"{shown} saved"
    raise Unavailable(f"skill {target.name} is being changed by others; retry shortly")


def delete(rt: Runtime, workspace_id: str, uri: str) -> str:
    """A whole skill out of this workspace (deleted when no other uses it), or one file that is not SKILL.md."""
    target = parse_uri(uri)
    if target.path == SKILL_MD:
        raise PayloadError(
            f"{SKILL_MD} cannot be deleted on its own: it is what makes the skill. Delete the whole skill with "
            f"skill://{target.name}, or save a new {SKILL_MD}",
            field="uri",
        )
    for attempt in range(_RACE_ROUNDS):
        found = rt.skills.find(workspace_id, target.name)
        if found.ref is None:
            return f"this workspace has no skill {target.name}; nothing deleted"
        try:
            skill = _skill_of(found)
            if target.path is None:
                return _leave(rt, skill, workspace_id)
            if found.ref.read_only:
                raise _read_only(found.ref)
            if target.path not in skill.files:
                return f"nothing at {uri}; nothing deleted"
            rt.skills.delete_file(skill, workspace_id, target.path)
        except Conflict:
            back_off(attempt)
            continue
        count("SkillFileDeleted")
        return f"{uri} deleted"
    raise Unavailable(f"skill {target.name} is being changed by others; retry shortly")


# -- the human's routes -----------------------------------------------------------------------


def list_skills(rt: Runtime, workspace_id: str) -> list[dict[str, Any]]:
    return [
        {
            "name": ref.name,
            "uri": file_uri(ref.name, SKILL_MD),
            "description": ref.description,
            "ownerWorkspaceId": ref.owner_workspace_id,
            "sharedIn": ref.read_only,
        }
        for ref in rt.skills.list_refs(workspace_id)
    ]


def get_skill(rt: Runtime, workspace_id: str, name: str) -> dict[str, Any]:
    check_name(name, f"skill name {echo(name)!r}", "name")
    found = rt.skills.find(workspace_id, name)
    if found.ref is None or found.skill is None:
        raise NotFound(f"no skill {name} in workspace {workspace_id}")
    skill = found.skill
    return {
        "name": skill.name,
        "uri": file_uri(skill.name, SKILL_MD),
        "description": skill.description,
        "ownerWorkspaceId": skill.owner_workspace_id,
        "sharedIn": found.ref.read_only,
        "sharedWith": sorted(skill.used_by - {skill.owner_workspace_id}),
        "content": skill.content,
        "files": skill.file_uris(),
        "createdAt": skill.created_at,
        "updatedAt": skill.updated_at,
    }


def get_file(rt: Runtime, workspace_id: str, name: str, path: str) -> dict[str, Any]:
    uri = file_uri(name, path)
    target = parse_uri(uri)
    found = rt.skills.find(workspace_id, target.name, target.path)
    if found.ref is not None and found.skill is not None:
        return {"uri": uri, "path": SKILL_MD, "content": found.skill.content, "updatedAt": found.skill.updated_at}
    if found.ref is not None and found.file is not None:
        return {"uri": uri, "path": found.file.path, "content": found.file.content, "updatedAt": found.file.updated_at}
    raise NotFound(f"nothing at {uri} in workspace {workspace_id}")


def share(rt: Runtime, workspace_id: str, name: str, target_workspace_id: str) -> tuple[dict[str, Any], bool]:
    """Share a skill of this workspace into another of the account's; (the share, whether it is new).

    Both workspaces are the caller's to check. The skill stays read-only in the target.
    """
    check_name(name, f"skill name {echo(name)!r}", "name")
    if target_workspace_id == workspace_id:
        raise PayloadError("workspaceId is the skill's own workspace; share it into another one", field="workspaceId")
    shared = {"name": name, "uri": file_uri(name, SKILL_MD), "workspaceId": target_workspace_id}
    for attempt in range(_RACE_ROUNDS):
        found = rt.skills.find(workspace_id, name)
        if found.ref is None:
            raise NotFound(f"no skill {name} in workspace {workspace_id}")
        if found.ref.read_only:
            raise Forbidden(
                f"skill {name} is shared into workspace {workspace_id} from workspace "
                f"{found.ref.owner_workspace_id}; only that workspace shares it"
            )
        if found.skill is None:  # a write in flight: read again
            back_off(attempt)
            continue
        skill = found.skill
        if target_workspace_id in skill.used_by:
            return shared, False
        if rt.skills.find(target_workspace_id, name).ref is not None:
            raise Conflict(f"workspace {target_workspace_id} already has a skill named {name}")
        if len(skill.used_by) >= MAX_WORKSPACES:
            raise Conflict(f"skill {name} is used by {len(skill.used_by)} workspaces, the most a skill can be")
        ref = SkillRef(
            workspace_id=target_workspace_id,
            name=name,
            skill_id=skill.id,
            owner_workspace_id=skill.owner_workspace_id,
            description=skill.description,
            created_at=iso(rt.clock()),
        )
        try:
            rt.skills.add_workspace(skill, ref)
        except Conflict:
            back_off(attempt)
            continue
        count("SkillShared")
        return shared, True
    raise Unavailable(f"skill {name} is being changed by others; retry shortly")


def unshare(rt: Runtime, workspace_id: str, name: str, target_workspace_id: str) -> None:
    """Take a skill of this workspace out of a workspace it is shared into, as if that one deleted it."""
    check_name(name, f"skill name {echo(name)!r}", "name")
    for attempt in range(_RACE_ROUNDS):
        found = rt.skills.find(target_workspace_id, name)
        ref = found.ref
        if ref is None or not ref.read_only or ref.owner_workspace_id != workspace_id:
            raise NotFound(
                f"skill {name} of workspace {workspace_id} is not shared into workspace {target_workspace_id}"
            )
        try:
            _leave(rt, _skill_of(found), target_workspace_id)
        except Conflict:
            back_off(attempt)
            continue
        count("SkillUnshared")
        return
    raise Unavailable(f"skill {name} is being changed by others; retry shortly")


# -- MCP resources and the Agent Skills extension (SEP-2640) ----------------------------------------

RESOURCE_PAGE = 25  # skills per `resources/list` page: at most MAX_FILES resources each
CATALOG_PAGE = 20  # skills per `skills/list` page, fewer when their files together pass MAX_FILES


def served_file(rt: Runtime, workspace_id: str, uri: str) -> ServedFile:
    """One file of a skill this workspace can use, as `resources/read` serves it (`skills load` reads the same)."""
    target = parse_uri(uri)
    if target.path is None:
        raise PayloadError(
            f"uri {echo(uri)!r} names the whole skill; read {file_uri(target.name, SKILL_MD)}, or one of its "
            "files as skill://<name>/<path>",
            field="uri",
        )
    found = rt.skills.find(workspace_id, target.name, target.path)
    if found.ref is None:
        raise NotFound(f"no skill {target.name} in this workspace: skills/list and resources/list list its skills")
    if target.path == SKILL_MD:
        if found.skill is None:
            raise NotFound(f"no skill {target.name} in this workspace")
        return manifest.served_file(found.ref.name, SKILL_MD, found.skill.content)
    if found.file is None:
        raise NotFound(f"skill {target.name} has no file {target.path}")
    return manifest.served_file(found.ref.name, target.path, found.file.content)


def resource_page(rt: Runtime, workspace_id: str, cursor: str | None, budget: int) -> tuple[list[dict], str | None]:
    """A page of the files of this workspace's skills as resources (`ResourceInfo.public`), whole skills only,
    within `budget` bytes: one Query of the references and one BatchGetItem of the file lists."""
    refs, next_cursor = rt.skills.refs_page(workspace_id, RESOURCE_PAGE, cursor)
    files = rt.skills.file_lists([ref.skill_id for ref in refs]) if refs else {}
    groups, next_cursor = paging.fill(
        [ref for ref in refs if ref.skill_id in files],  # a reference without its record: a write in flight
        next_cursor,
        budget=budget,
        shown=lambda ref: [info.public() for info in _resources(ref, files[ref.skill_id])],
        cursor_after=lambda ref: rt.skills.ref_cursor(workspace_id, ref.name),
        name=lambda ref: f"skill {ref.name}",
    )
    return [resource for group in groups for resource in group], next_cursor


def catalog_page(rt: Runtime, workspace_id: str, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """A page of `skills/list`: each skill's entry (`catalog_entry`), in name order.

    Three reads a page whatever it holds: the references (one Query), their records (one BatchGetItem) and the
    files of the skills kept (one BatchGetItem per 100 files). A page keeps whole skills while their files
    together stay within MAX_FILES (always one at least), so a page reads at most about 16 MiB.
    """
    refs, next_cursor = rt.skills.refs_page(workspace_id, CATALOG_PAGE, cursor)
    records = rt.skills.records([ref.skill_id for ref in refs]) if refs else {}
    kept: list[tuple[SkillRef, Skill]] = []
    files = 0
    for ref in refs:
        skill = records.get(ref.skill_id)
        if skill is None:  # a write in flight: not listed
            continue
        if kept and files + 1 + len(skill.files) > MAX_FILES:
            next_cursor = rt.skills.ref_cursor(workspace_id, kept[-1][0].name)
            break
        kept.append((ref, skill))
        files += 1 + len(skill.files)
    contents = rt.skills.file_contents([(skill.id, path) for _, skill in kept for path in sorted(skill.files)])
    return paging.fill(
        kept,
        next_cursor,
        budget=rt.settings.page_bytes,
        shown=lambda found: _entry(found[0].name, found[1], contents),
        cursor_after=lambda found: rt.skills.ref_cursor(workspace_id, found[0].name),
        name=lambda found: f"skill {found[0].name}",
        read_alone=lambda found: f"skills/get {file_uri(found[0].name, SKILL_MD)}",
    )


def catalog_entry(rt: Runtime, workspace_id: str, uri: str) -> dict[str, Any]:
    """`skills/get`: one skill's entry, {uri, frontmatter, resources}, each resource's digest that of the bytes
    `resources/read` serves for it (the SKILL.md included, as served: see domain.skill_manifest)."""
    target = parse_uri(uri)
    if target.file != SKILL_MD:
        raise PayloadError(
            f"uri {echo(uri)!r} is a file of a skill; skills/get takes the skill's own URI, "
            f"{file_uri(target.name, SKILL_MD)}",
            field="uri",
        )
    found = rt.skills.find(workspace_id, target.name)
    if found.ref is None or found.skill is None:
        raise NotFound(f"no skill {target.name} in this workspace: skills/list lists its skills")
    skill = found.skill
    contents = rt.skills.file_contents([(skill.id, path) for path in sorted(skill.files)])
    return _entry(found.ref.name, skill, contents)


def _entry(name: str, skill: Skill, contents: dict[tuple[str, str], SkillFile]) -> dict[str, Any]:
    """A skill's SEP-2640 entry. A file listed on the record but not read (written or deleted meanwhile) is left
    out: its digest could not be vouched for."""
    served = [manifest.served_file(name, SKILL_MD, skill.content)]
    served += [
        manifest.served_file(name, path, contents[(skill.id, path)].content)
        for path in sorted(skill.files)
        if (skill.id, path) in contents
    ]
    return {
        "uri": file_uri(name, SKILL_MD),
        "frontmatter": manifest.frontmatter(served[0].text),
        "resources": [{"uri": file_uri(name, f.path), "digest": f.digest, "size": f.size} for f in served],
    }


def _resources(ref: SkillRef, paths: frozenset[str]) -> list[ResourceInfo]:
    skill_md = ResourceInfo(
        uri=file_uri(ref.name, SKILL_MD),
        name=f"{ref.name}/{SKILL_MD}",
        title=f"Skill {ref.name}",
        description=utf8_text(ref.description),
        mime_type=manifest.SKILL_MD_MIME,
    )
    others = [
        ResourceInfo(
            uri=file_uri(ref.name, path),
            name=f"{ref.name}/{path}",
            description=f"A file of skill {ref.name}",
            mime_type=manifest.mime_type_of(path),
        )
        for path in sorted(paths)
    ]
    return [skill_md, *others]


# -- helpers ------------------------------------------------------------------------------------


def _save_skill_md(rt: Runtime, actor: Actor, name: str, found: Found, content: str, description: str) -> bool:
    """Create the skill (True) or replace its SKILL.md (False)."""
    now = iso(rt.clock())
    if found.ref is None:
        home = keys.skill_home_id(actor.workspace_id, name)
        # The home id is taken only by an old skill of this name that lives on where it was shared.
        skill_id = f"{home}.{new_id()}" if found.home_taken else home
        skill = Skill(
            id=skill_id,
            account_id=actor.account_id,
            name=name,
            owner_workspace_id=actor.workspace_id,
            description=description,
            content=content,
            revision=1,
            created_at=now,
            updated_at=now,
            used_by=frozenset({actor.workspace_id}),
        )
        rt.skills.create(SkillRef(actor.workspace_id, name, skill_id, actor.workspace_id, description, now), skill)
        return True
    if found.ref.read_only:
        raise _read_only(found.ref)
    rt.skills.save_skill_md(_skill_of(found), actor.workspace_id, content, description, now)
    return False


def _save_file(rt: Runtime, actor: Actor, name: str, found: Found, path: str, content: str) -> None:
    if found.ref is None:
        raise NotFound(f"this workspace has no skill {name}: write skill://{name}/{SKILL_MD} first to create it")
    if found.ref.read_only:
        raise _read_only(found.ref)
    skill = _skill_of(found)
    if path not in skill.files and len(skill.files) + 1 >= MAX_FILES:
        raise PayloadError(
            f"uri {file_uri(name, path)!r}: skill {name} already has {MAX_FILES} files ({SKILL_MD} included), the "
            "most a skill holds; delete one first or put more into one file",
            field="uri",
        )
    rt.skills.put_file(skill, actor.workspace_id, path, content, iso(rt.clock()))


def _leave(rt: Runtime, skill: Skill, workspace_id: str) -> str:
    others = len(skill.used_by - {workspace_id})
    if rt.skills.remove_workspace(skill, workspace_id):
        count("SkillDeleted")
        return f"skill {skill.name} deleted: no other workspace used it"
    return (
        f"skill {skill.name} removed from this workspace; it stays in the {others} other "
        f"workspace{'s' if others != 1 else ''} that use{'' if others != 1 else 's'} it"
    )


def _skill_of(found: Found) -> Skill:
    """The record a reference points to; a reference never outlives it, so a miss is a write in flight."""
    if found.skill is None:
        raise Conflict("the skill changed meanwhile; read it again")
    return found.skill


def _read_only(ref: SkillRef) -> Forbidden:
    return Forbidden(
        f"skill {ref.name} is shared into this workspace from another workspace and is read-only here; "
        "only the workspace that owns it changes it"
    )


def _hit(ref: SkillRef) -> dict[str, Any]:
    hit: dict[str, Any] = {"name": ref.name, "uri": file_uri(ref.name, SKILL_MD), "description": ref.description}
    if ref.read_only:
        hit["readOnly"] = True
    return hit
