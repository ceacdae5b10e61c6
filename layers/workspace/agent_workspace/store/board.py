"""A workspace's board (projects, epics and their count), in the workspace's partition under `BOARD#`.

One Query of that prefix reads the whole board for the context call; creating a project or an epic is one
transaction with the count, so the caps hold against concurrent creators.
"""

from typing import Any

from boto3.dynamodb.conditions import Attr, ConditionBase
from pydantic import TypeAdapter

from agent_workspace.domain.board import Board, Cycle, Epic, Policy, Project
from agent_workspace.domain.errors import Conflict
from agent_workspace.store import keys
from agent_workspace.store.dynamo import get_item, key, query_prefix, to_item, translating_errors
from agent_workspace.store.expressions import NEW_ITEM, Update, only_if, revision_is

_PROJECT: TypeAdapter[Project] = TypeAdapter(Project)
_EPIC: TypeAdapter[Epic] = TypeAdapter(Epic)
_POLICY: TypeAdapter[Policy] = TypeAdapter(Policy)
_CYCLE: TypeAdapter[Cycle] = TypeAdapter(Cycle)


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
        found: dict[str, list[Any]] = {"PROJECT": [], "EPIC": [], "CYCLE": []}
        adapters: dict[str, TypeAdapter[Any]] = {"PROJECT": _PROJECT, "EPIC": _EPIC, "CYCLE": _CYCLE}
        policy, labels, active = Policy(), (), None
        for item in query_prefix(self._db, self._table, keys.workspace_pk(workspace_id), keys.BOARD_SK_PREFIX):
            kind = item[keys.SK].removeprefix(keys.BOARD_SK_PREFIX).split("#", 1)[0]
            if kind in adapters:
                found[kind].append(adapters[kind].validate_python(item))
            elif kind == "POLICY":
                policy = _POLICY.validate_python(item)
            elif kind == "COUNTS":
                labels, active = tuple(sorted(item.get("labels", ()))), item.get("activeCycleId")
        oldest_first = {kind: sorted(things, key=lambda t: t.created_at) for kind, things in found.items()}
        return Board(oldest_first["PROJECT"], oldest_first["EPIC"], oldest_first["CYCLE"], policy, labels, active)

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
        item = get_item(self._db, self._table, keys.workspace_pk(workspace_id), keys.project_sk(project_id), False)
        return _PROJECT.validate_python(item) if item else None

    def create_project(self, project: Project, most: int) -> None:
        self._create(
            project.workspace_id,
            keys.project_sk(project.id),
            _PROJECT.dump_python(project, by_alias=True),
            "projects",
            most,
        )

    def replace_project(self, project: Project, previous_revision: int) -> None:
        """The project as edited, only if it is still at the revision it was read at (else `Conflict`)."""
        item = {keys.PK: keys.workspace_pk(project.workspace_id), keys.SK: keys.project_sk(project.id)}
        with translating_errors(f"project {project.id} changed meanwhile; read it again"):
            self._db.put_item(
                TableName=self._table,
                Item=to_item({**item, **_PROJECT.dump_python(project, by_alias=True)}),
                **only_if(revision_is(previous_revision)),
            )

    def create_epic(self, epic: Epic, most: int) -> None:
        self._create(epic.workspace_id, keys.epic_sk(epic.id), _EPIC.dump_python(epic, by_alias=True), "epics", most)

    def _create(
        self, workspace_id: str, sk: str, values: dict[str, Any], counter: str, most: int, active: str | None = None
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
        try:
            with translating_errors():
                self._db.transact_write_items(TransactItems=items)
        except Conflict as conflict:
            if conflict.reasons[1:2] == ("ConditionalCheckFailed",):
                raise CapReached(counter) from None
            raise
