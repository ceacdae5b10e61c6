"""A workspace's board (projects, epics, cycles and their count), in the workspace's partition under `BOARD#`.

One Query of that prefix reads the whole board for the context call: the headings of projects and epics (id and
title), their texts apart under `BOARDTEXT#` (read one at a time), so agent-made descriptions never weigh on it.
Creating or deleting a project or an epic is one transaction with the count, so the caps hold against concurrent
creators.
"""

from typing import Any

from boto3.dynamodb.conditions import Attr, ConditionBase
from pydantic import TypeAdapter

from agent_workspace.domain.board import Board, Cycle, Epic, Named, Policy, Project, heading_of
from agent_workspace.domain.errors import Conflict
from agent_workspace.domain.ids import is_id
from agent_workspace.store import keys
from agent_workspace.store.dynamo import (
    batch_get,
    from_item,
    get_item,
    key,
    query_prefix,
    to_item,
    transact_unless_first_refused,
    translating_errors,
)
from agent_workspace.store.expressions import EXISTS, NEW_ITEM, Update, only_if, revision_is

_PROJECT: TypeAdapter[Project] = TypeAdapter(Project)
_EPIC: TypeAdapter[Epic] = TypeAdapter(Epic)
_POLICY: TypeAdapter[Policy] = TypeAdapter(Policy)
_CYCLE: TypeAdapter[Cycle] = TypeAdapter(Cycle)
_NAMED: TypeAdapter[Named] = TypeAdapter(Named)


class CapReached(Exception):
    """The workspace holds its cap of projects or epics already."""


def _room_for(counter: str, most: int) -> ConditionBase:
    """Fewer than `most` counted so far (none yet, on a new board)."""
    return Attr(counter).not_exists() | Attr(counter).lt(most)


class BoardStore:
    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._db = dynamodb
        self._table = table_name

    def read(self, workspace_id: str) -> Board:
        """The board's projects, epics and cycles, oldest first, its policy, labels and active cycle: one Query
        (bounded by the caps)."""
        items = query_prefix(self._db, self._table, keys.workspace_pk(workspace_id), keys.BOARD_SK_PREFIX)
        return _board(items)

    def for_task(self, workspace_id: str, project_id: str | None, epic_id: str | None, cycle_id: str | None) -> Board:
        """What a task's write checks against: the policy, labels and active cycle, and the project, epic and cycle
        it names (those that exist): one BatchGetItem, however large the board."""
        pk = keys.workspace_pk(workspace_id)
        sks = [keys.BOARD_POLICY_SK, keys.BOARD_COUNTS_SK]
        for thing, sk_of in ((project_id, keys.project_sk), (epic_id, keys.epic_sk), (cycle_id, keys.cycle_sk)):
            if thing is not None and is_id(thing):
                sks.append(sk_of(thing))
        return _board([from_item(item) for item in batch_get(self._db, self._table, [key(pk, sk) for sk in sks])])

    def policy(self, workspace_id: str) -> Policy:
        item = get_item(self._db, self._table, keys.workspace_pk(workspace_id), keys.BOARD_POLICY_SK, False)
        return _POLICY.validate_python(item) if item else Policy()

    def labels_added(self, workspace_id: str, labels: set[str], most: int) -> dict[str, Any]:
        """A transaction item adding labels to the workspace's set, refused once the set holds `most`."""
        update = Update().add("labels", labels).only_if(Attr("labels").not_exists() | Attr("labels").size().lt(most))
        return {
            "Update": {
                "TableName": self._table,
                "Key": key(keys.workspace_pk(workspace_id), keys.BOARD_COUNTS_SK),
                **update.params(),
            }
        }

    def create_cycle(self, cycle: Cycle, most: int, active: bool) -> None:
        values = _CYCLE.dump_python(cycle, by_alias=True, exclude_none=True)
        self._create(cycle.workspace_id, keys.cycle_sk(cycle.id), values, "cycles", most, cycle.id if active else None)

    def set_active_cycle(self, workspace_id: str, cycle_id: str | None) -> None:
        update = Update().set("activeCycleId", cycle_id) if cycle_id else Update().remove("activeCycleId")
        with translating_errors():
            self._db.update_item(
                TableName=self._table,
                Key=key(keys.workspace_pk(workspace_id), keys.BOARD_COUNTS_SK),
                **update.params(),
            )

    def set_policy(self, workspace_id: str, policy: Policy) -> None:
        """The human's policy, replacing the last one (the last writer wins: it is one person's setting)."""
        item = {keys.PK: keys.workspace_pk(workspace_id), keys.SK: keys.BOARD_POLICY_SK}
        with translating_errors():
            self._db.put_item(
                TableName=self._table, Item=to_item({**item, **_POLICY.dump_python(policy, by_alias=True)})
            )

    def get_project(self, workspace_id: str, project_id: str) -> Project | None:
        item = self._text(workspace_id, keys.project_text_sk(project_id), keys.project_sk(project_id))
        return _PROJECT.validate_python(item) if item else None

    def get_epic(self, workspace_id: str, epic_id: str) -> Epic | None:
        item = self._text(workspace_id, keys.epic_text_sk(epic_id), keys.epic_sk(epic_id))
        return _EPIC.validate_python(item) if item else None

    def _text(self, workspace_id: str, text_sk: str, heading_sk: str) -> dict[str, Any] | None:
        """The full item; a board written before headings and texts were apart keeps it at the heading's key."""
        pk = keys.workspace_pk(workspace_id)
        return get_item(self._db, self._table, pk, text_sk, False) or get_item(self._db, self._table, pk, heading_sk)

    def create_project(self, project: Project, most: int) -> None:
        values = _PROJECT.dump_python(project, by_alias=True)
        self._create(
            project.workspace_id,
            keys.project_sk(project.id),
            _heading(project),
            "projects",
            most,
            None,
            (keys.project_text_sk(project.id), values),
        )

    def replace_project(self, project: Project, previous_revision: int) -> None:
        """The project as edited, only if it is still at the revision it was read at (else `Conflict`); its
        heading in the same transaction."""
        text = (keys.project_text_sk(project.id), _PROJECT.dump_python(project, by_alias=True))
        # A board written before texts were apart has none yet: its first edit writes it.
        self._replace(
            project.workspace_id,
            keys.project_sk(project.id),
            _heading(project),
            text,
            revision_is(previous_revision) | NEW_ITEM,
            f"project {project.id} changed meanwhile; read it again",
        )

    def create_epic(self, epic: Epic, most: int) -> None:
        values = _EPIC.dump_python(epic, by_alias=True)
        self._create(
            epic.workspace_id,
            keys.epic_sk(epic.id),
            _heading(epic),
            "epics",
            most,
            None,
            (keys.epic_text_sk(epic.id), values),
        )

    def replace_epic(self, epic: Epic) -> None:
        """The epic as edited (the last edit wins: there is nothing to merge), if it still exists."""
        text = (keys.epic_text_sk(epic.id), _EPIC.dump_python(epic, by_alias=True))
        self._replace(epic.workspace_id, keys.epic_sk(epic.id), _heading(epic), text, None, f"no epic {epic.id}")

    def delete_project(self, workspace_id: str, project_id: str) -> bool:
        return self._delete(workspace_id, keys.project_sk(project_id), keys.project_text_sk(project_id), "projects")

    def delete_epic(self, workspace_id: str, epic_id: str) -> bool:
        return self._delete(workspace_id, keys.epic_sk(epic_id), keys.epic_text_sk(epic_id), "epics")

    def _replace(
        self,
        workspace_id: str,
        sk: str,
        heading: dict[str, Any],
        text: tuple[str, dict[str, Any]],
        condition: ConditionBase | None,
        message: str,
    ) -> None:
        pk = keys.workspace_pk(workspace_id)
        text_put: dict[str, Any] = {
            "TableName": self._table,
            "Item": to_item({keys.PK: pk, keys.SK: text[0], **text[1]}),
        }
        if condition is not None:
            text_put.update(only_if(condition))
        items = [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": to_item({keys.PK: pk, keys.SK: sk, **heading}),
                    **only_if(EXISTS),
                }
            },
            {"Put": text_put},
        ]
        with translating_errors(message):
            self._db.transact_write_items(TransactItems=items)

    def _delete(self, workspace_id: str, sk: str, text_sk: str, counter: str) -> bool:
        """The heading, its text and one off the count, in one transaction; False if there was none."""
        pk = keys.workspace_pk(workspace_id)
        items = [
            {"Delete": {"TableName": self._table, "Key": key(pk, sk), **only_if(EXISTS)}},
            {"Delete": {"TableName": self._table, "Key": key(pk, text_sk)}},
            {
                "Update": {
                    "TableName": self._table,
                    "Key": key(pk, keys.BOARD_COUNTS_SK),
                    **Update().add(counter, -1).params(),
                }
            },
        ]
        return transact_unless_first_refused(self._db, items)

    def _create(
        self,
        workspace_id: str,
        sk: str,
        values: dict[str, Any],
        counter: str,
        most: int,
        active: str | None = None,
        text: tuple[str, dict[str, Any]] | None = None,
    ) -> None:
        pk = keys.workspace_pk(workspace_id)
        count = Update().add(counter, 1).only_if(_room_for(counter, most))
        if active:
            count.set("activeCycleId", active)
        items: list[dict[str, Any]] = [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": to_item({keys.PK: pk, keys.SK: sk, **values}),
                    **only_if(NEW_ITEM),
                }
            },
            {"Update": {"TableName": self._table, "Key": key(pk, keys.BOARD_COUNTS_SK), **count.params()}},
        ]
        if text is not None:
            item = to_item({keys.PK: pk, keys.SK: text[0], **text[1]})
            items.append({"Put": {"TableName": self._table, "Item": item, **only_if(NEW_ITEM)}})
        try:
            with translating_errors():
                self._db.transact_write_items(TransactItems=items)
        except Conflict as conflict:
            if conflict.reasons[1:2] == ("ConditionalCheckFailed",):
                raise CapReached(counter) from None
            raise


def _heading(thing: Project | Epic) -> dict[str, Any]:
    return _NAMED.dump_python(heading_of(thing), by_alias=True)


def _board(items: list[dict[str, Any]]) -> Board:
    """The board of these `BOARD#` items, projects, epics and cycles oldest first."""
    found: dict[str, list[Any]] = {"PROJECT": [], "EPIC": [], "CYCLE": []}
    adapters: dict[str, TypeAdapter[Any]] = {"PROJECT": _NAMED, "EPIC": _NAMED, "CYCLE": _CYCLE}
    policy, labels, active = Policy(), (), None
    for item in items:
        kind = item[keys.SK].removeprefix(keys.BOARD_SK_PREFIX).split("#", 1)[0]
        if kind in adapters:
            found[kind].append(adapters[kind].validate_python(item))
        elif kind == "POLICY":
            policy = _POLICY.validate_python(item)
        elif kind == "COUNTS":
            labels, active = tuple(sorted(item.get("labels", ()))), item.get("activeCycleId")
    oldest_first = {kind: sorted(things, key=lambda t: t.created_at) for kind, things in found.items()}
    return Board(oldest_first["PROJECT"], oldest_first["EPIC"], oldest_first["CYCLE"], policy, labels, active)
