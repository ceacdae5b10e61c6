"""Skills: each workspace's references to them, and each skill's own partition.

A workspace sees a skill through a reference, `WS#<wid> / SKILLREF#<name>`: one for each of its own
skills and each skill shared into it, holding the description so `search` is one Query. The skill
lives in `SKILL#<skillId>`: its record `SKILL` (the SKILL.md, the paths of its other files, the
workspaces that use it) and one item `FILE#<path>` per other file. A skill created in a workspace
gets the id `<wid>.<name>` (`keys.skill_home_id`), so that workspace reads its own skills with one
BatchGetItem of the reference and the item wanted; see docs/data-model.md.
"""

from dataclasses import dataclass
from typing import Any

from boto3.dynamodb.conditions import Attr, ConditionBase

from agent_workspace.domain.skills import MAX_FILES, SKILL_MD, Skill, SkillFile, SkillRef
from agent_workspace.store import keys
from agent_workspace.store.cursor import cursor_after
from agent_workspace.store.dynamo import (
    batch_delete,
    batch_get,
    from_item,
    key,
    query_all,
    query_prefix,
    query_prefix_page,
    to_item,
    translating_errors,
)
from agent_workspace.store.expressions import NEW_ITEM, Update, only_if, revision_is


@dataclass(frozen=True)
class Found:
    """What one workspace finds under a skill name: its reference, and the skill or file asked for."""

    ref: SkillRef | None
    skill: Skill | None = None
    file: SkillFile | None = None
    home_taken: bool = False  # a skill still lives at this workspace's home id for the name (shared on, then left)


class SkillStore:
    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._db = dynamodb
        self._table = table_name

    # -- reads ---------------------------------------------------------------------------------

    def list_refs(self, workspace_id: str) -> list[SkillRef]:
        """Every skill the workspace sees, by name: one Query of its references."""
        items = query_prefix(self._db, self._table, keys.workspace_pk(workspace_id), keys.SKILL_REF_PREFIX)
        return [_ref(values) for values in items]

    def find(self, workspace_id: str, name: str, path: str | None = None) -> Found:
        """The reference and, with no path (or SKILL.md), the skill's record, else the file at `path`.

        One BatchGetItem reads the reference together with the item at the workspace's home id for
        the name; only a skill shared into the workspace (or re-created under a new id) needs a
        second read, once the reference says where it lives.
        """
        home = keys.skill_home_id(workspace_id, name)
        wanted = _item_key(home, path)
        ref_key = key(keys.workspace_pk(workspace_id), keys.skill_ref_sk(name))
        items = self._batch_get([ref_key, wanted])
        ref_item = items.get(_key_id(ref_key))
        at_home = items.get(_key_id(wanted))
        ref = _ref(from_item(ref_item)) if ref_item else None
        home_taken = at_home is not None if path is None or path == SKILL_MD else False
        if ref is None:
            return Found(None, home_taken=home_taken)
        if ref.skill_id == home:
            item = at_home
        else:
            with translating_errors():
                item = self._db.get_item(
                    TableName=self._table, Key=_item_key(ref.skill_id, path), ConsistentRead=True
                ).get("Item")
        if item is None:
            return Found(ref, home_taken=home_taken)
        values = from_item(item)
        if path is None or path == SKILL_MD:
            return Found(ref, skill=_skill(values), home_taken=home_taken)
        return Found(ref, file=_file(values))

    def refs_page(self, workspace_id: str, limit: int, cursor: str | None) -> tuple[list[SkillRef], str | None]:
        """At most `limit` of the workspace's references, by name, after `cursor`: one Query."""
        pk = keys.workspace_pk(workspace_id)
        items, after = query_prefix_page(self._db, self._table, pk, keys.SKILL_REF_PREFIX, limit, cursor)
        return [_ref(values) for values in items], after

    def ref_cursor(self, workspace_id: str, name: str) -> str:
        """The cursor that resumes `refs_page` right after the skill `name`."""
        return cursor_after(key(keys.workspace_pk(workspace_id), keys.skill_ref_sk(name)))

    def file_lists(self, skill_ids: list[str]) -> dict[str, frozenset[str]]:
        """Each skill's other files than SKILL.md, by skill id, for the skills that exist: one BatchGetItem of
        their records, without their SKILL.md."""
        wanted = [key(keys.skill_pk(skill_id), keys.SKILL_SK) for skill_id in dict.fromkeys(skill_ids)]
        names = {"#id": "id", "#files": "files"}
        records = batch_get(
            self._db,
            self._table,
            wanted,
            projection={"ProjectionExpression": "#id, #files", "ExpressionAttributeNames": names},
        )
        return {values["id"]: frozenset(values.get("files", ())) for values in map(from_item, records)}

    def records(self, skill_ids: list[str]) -> dict[str, Skill]:
        """The skills' records (with their SKILL.md), by id, for those that exist: one BatchGetItem."""
        wanted = [key(keys.skill_pk(skill_id), keys.SKILL_SK) for skill_id in dict.fromkeys(skill_ids)]
        return {skill.id: skill for skill in (_skill(from_item(item)) for item in self._batch_get(wanted).values())}

    def file_contents(self, wanted: list[tuple[str, str]]) -> dict[tuple[str, str], SkillFile]:
        """The files at these (skill id, path) pairs that exist: one BatchGetItem per 100 files."""
        found = self._batch_get([key(keys.skill_pk(skill_id), keys.skill_file_sk(path)) for skill_id, path in wanted])
        by_key = {(keys.skill_pk(skill_id), keys.skill_file_sk(path)): (skill_id, path) for skill_id, path in wanted}
        return {by_key[item_key]: _file(from_item(item)) for item_key, item in found.items() if item_key in by_key}

    def get(self, skill_id: str) -> Skill | None:
        with translating_errors():
            item = self._db.get_item(
                TableName=self._table, Key=key(keys.skill_pk(skill_id), keys.SKILL_SK), ConsistentRead=True
            ).get("Item")
        return _skill(from_item(item)) if item else None

    # -- writes --------------------------------------------------------------------------------

    def create(self, ref: SkillRef, skill: Skill) -> None:
        """The skill's record (with its SKILL.md) and its owner's reference, in one transaction."""
        self._transact(
            [
                {"Put": {"TableName": self._table, "Item": to_item(_ref_item(ref)), **only_if(NEW_ITEM)}},
                {
                    "Put": {
                        "TableName": self._table,
                        "Item": to_item(_skill_item(skill)),
                        **only_if(NEW_ITEM),
                    }
                },
            ]
        )

    def save_skill_md(self, seen: Skill, workspace_id: str, content: str, description: str, now: str) -> None:
        """Replace the SKILL.md of a skill as read; a new description goes to every workspace's reference too.

        Conditional on the revision read, which every SKILL.md save and share change bumps, so the
        references updated are exactly the ones that exist, and no save undoes another's halfway.
        """
        saved = (
            _revised(seen)
            .set("content", content)
            .set("description", description)
            .set("updatedAt", now)
            .only_if(_owned_by(workspace_id))
        )
        update = {
            "Update": {"TableName": self._table, "Key": key(keys.skill_pk(seen.id), keys.SKILL_SK), **saved.params()}
        }
        if description == seen.description:
            with translating_errors():
                self._db.update_item(**update["Update"])
            return
        self._transact([update, *(self._describe_ref(wid, seen, description) for wid in sorted(seen.used_by))])

    def put_file(self, seen: Skill, workspace_id: str, path: str, content: str, now: str) -> None:
        """Write one file and list it on the record, in one transaction: never a file the record does not count.

        The record's condition keeps the skill at MAX_FILES files (its SKILL.md included) however many
        agents write at once, and refuses a skill the workspace no longer owns.
        """
        file_item = {
            keys.PK: keys.skill_pk(seen.id),
            keys.SK: keys.skill_file_sk(path),
            "path": path,
            "content": content,
            "updatedAt": now,
        }
        listed = Update().add("files", {path}).set("updatedAt", now).only_if(_owned_by(workspace_id) & _room_for(path))
        self._transact(
            [
                {
                    "Update": {
                        "TableName": self._table,
                        "Key": key(keys.skill_pk(seen.id), keys.SKILL_SK),
                        **listed.params(),
                    }
                },
                {"Put": {"TableName": self._table, "Item": to_item(file_item)}},
            ]
        )

    def delete_file(self, seen: Skill, workspace_id: str, path: str) -> None:
        self._transact(
            [
                {
                    "Update": {
                        "TableName": self._table,
                        "Key": key(keys.skill_pk(seen.id), keys.SKILL_SK),
                        **Update().delete("files", {path}).only_if(_owned_by(workspace_id)).params(),
                    }
                },
                {"Delete": {"TableName": self._table, "Key": key(keys.skill_pk(seen.id), keys.skill_file_sk(path))}},
            ]
        )

    def add_workspace(self, seen: Skill, ref: SkillRef) -> None:
        """Share: the target's reference and the record's list of workspaces, in one transaction."""
        self._transact(
            [
                {"Put": {"TableName": self._table, "Item": to_item(_ref_item(ref)), **only_if(NEW_ITEM)}},
                {
                    "Update": {
                        "TableName": self._table,
                        "Key": key(keys.skill_pk(seen.id), keys.SKILL_SK),
                        **_revised(seen).add("usedBy", {ref.workspace_id}).params(),
                    }
                },
            ]
        )

    def remove_workspace(self, seen: Skill, workspace_id: str) -> bool:
        """Take the skill out of one workspace; True if no workspace used it any more and it was deleted.

        The reference and the record change in one transaction, conditional on the revision read, so
        of two workspaces leaving at once exactly one is the last. The last one deletes the record
        with it; the files, unreachable from then on, are deleted right after.
        """
        ref_delete = {
            "Delete": {
                "TableName": self._table,
                "Key": key(keys.workspace_pk(workspace_id), keys.skill_ref_sk(seen.name)),
                **only_if(_refers_to(seen.id)),
            }
        }
        record_key = key(keys.skill_pk(seen.id), keys.SKILL_SK)
        last = seen.used_by <= {workspace_id}
        if last:
            record_change: dict[str, Any] = {
                "Delete": {
                    "TableName": self._table,
                    "Key": record_key,
                    **only_if(revision_is(seen.revision)),
                }
            }
        else:
            record_change = {
                "Update": {
                    "TableName": self._table,
                    "Key": record_key,
                    **_revised(seen).delete("usedBy", {workspace_id}).params(),
                }
            }
        self._transact([ref_delete, record_change])
        if last:
            self._purge_files(seen.id)
        return last

    # -- helpers -------------------------------------------------------------------------------

    def _describe_ref(self, workspace_id: str, seen: Skill, description: str) -> dict[str, Any]:
        return {
            "Update": {
                "TableName": self._table,
                "Key": key(keys.workspace_pk(workspace_id), keys.skill_ref_sk(seen.name)),
                **Update().set("description", description).only_if(_refers_to(seen.id)).params(),
            }
        }

    def _purge_files(self, skill_id: str) -> None:
        """Delete what is left in a deleted skill's partition: its files (Query, then BatchWriteItem)."""
        request = {
            "TableName": self._table,
            "KeyConditionExpression": "PK = :pk",
            "ExpressionAttributeValues": to_item({":pk": keys.skill_pk(skill_id)}),
            "ProjectionExpression": "PK, SK",
            "ConsistentRead": True,
        }
        doomed = [key(values[keys.PK], values[keys.SK]) for values in query_all(self._db, request)]
        batch_delete(self._db, self._table, doomed, "the skill is gone, but retry to free its files")

    def _batch_get(self, wanted: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
        """The items at these keys that exist, by (PK, SK): one BatchGetItem, consistent."""
        return {_key_id(item): item for item in batch_get(self._db, self._table, wanted)}

    def _transact(self, items: list[dict[str, Any]]) -> None:
        with translating_errors():
            self._db.transact_write_items(TransactItems=items)


def _revised(seen: Skill) -> Update:
    """The record's next revision, conditional on the one read: every SKILL.md save and share change bumps it."""
    return Update().set("revision", seen.revision + 1).only_if(revision_is(seen.revision))


# The conditions only skills use, named once.
def _owned_by(workspace_id: str) -> ConditionBase:
    """The skill is this workspace's own, and still used by it: only its owner changes its files."""
    return Attr("ownerWorkspaceId").eq(workspace_id) & Attr("usedBy").contains(workspace_id)


def _room_for(path: str) -> ConditionBase:
    """One more file fits in MAX_FILES (the SKILL.md counts, and is not in `files`), or `path` is replaced."""
    files = Attr("files")
    return files.not_exists() | files.size().lt(MAX_FILES - 1) | files.contains(path)


def _refers_to(skill_id: str) -> ConditionBase:
    """A workspace's reference still names this skill, not one re-created under the same name since."""
    return Attr("skillId").eq(skill_id)


def _item_key(skill_id: str, path: str | None) -> dict[str, Any]:
    if path is None or path == SKILL_MD:
        return key(keys.skill_pk(skill_id), keys.SKILL_SK)
    return key(keys.skill_pk(skill_id), keys.skill_file_sk(path))


def _key_id(item: dict[str, Any]) -> tuple[str, str]:
    return item[keys.PK]["S"], item[keys.SK]["S"]


def _ref_item(ref: SkillRef) -> dict[str, Any]:
    return {
        keys.PK: keys.workspace_pk(ref.workspace_id),
        keys.SK: keys.skill_ref_sk(ref.name),
        "workspaceId": ref.workspace_id,
        "name": ref.name,
        "skillId": ref.skill_id,
        "ownerWorkspaceId": ref.owner_workspace_id,
        "description": ref.description,
        "createdAt": ref.created_at,
    }


def _skill_item(skill: Skill) -> dict[str, Any]:
    return {
        keys.PK: keys.skill_pk(skill.id),
        keys.SK: keys.SKILL_SK,
        "id": skill.id,
        "accountId": skill.account_id,
        "name": skill.name,
        "ownerWorkspaceId": skill.owner_workspace_id,
        "description": skill.description,
        "content": skill.content,
        "revision": skill.revision,
        "files": set(skill.files) or None,  # DynamoDB has no empty set: no files, no attribute
        "usedBy": set(skill.used_by) or None,
        "createdAt": skill.created_at,
        "updatedAt": skill.updated_at,
    }


def _ref(values: dict[str, Any]) -> SkillRef:
    return SkillRef(
        workspace_id=values["workspaceId"],
        name=values["name"],
        skill_id=values["skillId"],
        owner_workspace_id=values["ownerWorkspaceId"],
        description=values["description"],
        created_at=values["createdAt"],
    )


def _skill(values: dict[str, Any]) -> Skill:
    return Skill(
        id=values["id"],
        account_id=values["accountId"],
        name=values["name"],
        owner_workspace_id=values["ownerWorkspaceId"],
        description=values["description"],
        content=values["content"],
        revision=int(values["revision"]),
        created_at=values["createdAt"],
        updated_at=values["updatedAt"],
        files=frozenset(values.get("files", ())),
        used_by=frozenset(values.get("usedBy", ())),
    )


def _file(values: dict[str, Any]) -> SkillFile:
    return SkillFile(path=values["path"], content=values["content"], updated_at=values["updatedAt"])
