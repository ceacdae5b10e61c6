"""The `skills` tool: the skills this workspace can use, its own and those shared into it."""

from pydantic import Field

from agent_workspace.domain.models import Actor
from agent_workspace.domain.skills import DESCRIPTION_MAX, MAX_FILES, NAME_RULE, PATH_RULE, QUERY_MIN, SKILL_MD
from agent_workspace.services import skills
from agent_workspace.tool_registry import Action, Call, Payload, Tool
from agent_workspace.tools.answers.skills import SkillFileAnswer, SkillSearch

_LIMITS = f"{SKILL_MD} at most 96 KiB, other files 64 KiB, UTF-8 text only, {MAX_FILES} files per skill."


class SearchPayload(Payload):
    q: str | None = Field(
        None,
        description=(
            f"Part of a skill's name or description, any case, at least {QUERY_MIN} characters. "
            "Leave out to list every skill."
        ),
    )


class LoadPayload(Payload):
    uri: str = Field(
        description=(
            f"skill://<name> (or skill://<name>/{SKILL_MD}) for the skill's {SKILL_MD} with the URIs of its other "
            "files; skill://<name>/<path> for one of those."
        )
    )


class SavePayload(Payload):
    uri: str = Field(
        description=(
            f"The file: skill://<name>/{SKILL_MD} creates or changes the skill, skill://<name>/<path> writes another "
            f"file of it. Names are {NAME_RULE}; a path is {PATH_RULE}."
        )
    )
    content: str = Field(
        description=(
            f"The whole new content, replacing the file. A {SKILL_MD} starts with YAML frontmatter holding a "
            f"description of at most {DESCRIPTION_MAX:,} characters: '---\\ndescription: ...\\n---\\n'. {_LIMITS}"
        )
    )


class DeletePayload(Payload):
    uri: str = Field(
        description=(
            "skill://<name> for the whole skill (deleted once no other workspace uses it), or "
            f"skill://<name>/<path> for one file; {SKILL_MD} alone cannot be deleted."
        )
    )


def search(call: Call, payload: SearchPayload) -> dict:
    return skills.search(call.runtime, Actor.of(call.principal).workspace_id, payload.q)


def load(call: Call, payload: LoadPayload) -> dict | str:
    return skills.load(call.runtime, Actor.of(call.principal).workspace_id, payload.uri)


def save(call: Call, payload: SavePayload) -> str:
    return skills.save(call.runtime, Actor.of(call.principal), payload.uri, payload.content)


def delete(call: Call, payload: DeletePayload) -> str:
    return skills.delete(call.runtime, Actor.of(call.principal).workspace_id, payload.uri)


TOOL = Tool(
    name="skills",
    title="Skills",
    summary="The skills this workspace can use.",
    actions=(
        Action(
            name="search",
            summary=(
                f"Find skills by name or description (q, at least {QUERY_MIN} characters; leave it out to list all), "
                f"with the skill:// URI of each {SKILL_MD}."
            ),
            payload=SearchPayload,
            handler=search,
            read_only=True,
            result=SkillSearch,
            example={"q": "release"},
        ),
        Action(
            name="load",
            summary=(
                f"Read one file of a skill; skill://<name> alone reads its {SKILL_MD} and lists the URIs of the "
                "skill's other files."
            ),
            payload=LoadPayload,
            handler=load,
            read_only=True,
            result=SkillFileAnswer,
            text_too=True,
            example={"uri": "skill://release-notes"},
        ),
        Action(
            name="save",
            summary=f"Write one file of a skill, replacing it completely; writing its {SKILL_MD} creates the skill.",
            payload=SavePayload,
            handler=save,
            idempotent=True,
            example={
                "uri": f"skill://release-notes/{SKILL_MD}",
                "content": "---\ndescription: Write release notes from merged PRs.\n---\n# Release notes\n...",
            },
        ),
        Action(
            name="delete",
            summary="Delete a whole skill (skill://<name>) or one of its files.",
            payload=DeletePayload,
            handler=delete,
            destructive=True,
            idempotent=True,
            example={"uri": "skill://release-notes/templates/entry.md"},
        ),
    ),
)
