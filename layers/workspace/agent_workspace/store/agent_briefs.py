"""An agent's briefs (decision 0009): the current text under its name (`BRIEF#<name>`) and every revision under
the brief's id (`BRIEFREV#<briefId>#<rev>`), so a rename moves one item and no history."""

from typing import Any

from boto3.dynamodb.conditions import Attr
from pydantic import TypeAdapter

from agent_workspace.domain.agent_records import Brief
from agent_workspace.store import keys
from agent_workspace.store.agent_writes import AgentWrite
from agent_workspace.store.dynamo import batch_delete, get_item, key, query_prefix
from agent_workspace.store.expressions import NEW_ITEM, revision_is

_BRIEF: TypeAdapter[Brief] = TypeAdapter(Brief)


class AgentBriefStore:
    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._db = dynamodb
        self._table = table_name

    def write(self, agent_id: str) -> AgentWrite:
        return AgentWrite(self._table, agent_id)

    def get(self, agent_id: str, name: str, consistent: bool = False) -> Brief | None:
        item = get_item(self._db, self._table, keys.agent_pk(agent_id), keys.brief_sk(name), consistent)
        return _BRIEF.validate_python(item) if item else None

    def revision(self, agent_id: str, brief_id: str, revision: int) -> Brief | None:
        sk = keys.brief_revision_sk(brief_id, revision)
        item = get_item(self._db, self._table, keys.agent_pk(agent_id), sk, False)
        return _BRIEF.validate_python(item) if item else None

    def of_agent(self, agent_id: str) -> list[Brief]:
        """At most 20 briefs of 16 KiB: one Query page."""
        found = query_prefix(self._db, self._table, keys.agent_pk(agent_id), keys.BRIEF_PREFIX)
        return [_BRIEF.validate_python(item) for item in found]

    def create(self, brief: Brief, write: AgentWrite, most: int) -> None:
        """Rules "exists" (the name is taken) and "cap" (the agent holds `most`)."""
        write.put(brief_item(brief), keys.brief_sk(brief.name), "exists", NEW_ITEM)
        write.put(brief_item(brief), keys.brief_revision_sk(brief.brief_id, brief.revision), "", NEW_ITEM)
        room = Attr("briefCount").not_exists() | Attr("briefCount").lt(most)
        write.on_record(add={"briefCount": 1}, condition=room, rule="cap")
        write.run(self._db)

    def replace(self, brief: Brief, write: AgentWrite) -> None:
        """The next revision, if the brief is still at the one before: rule "revision"."""
        write.put(brief_item(brief), keys.brief_sk(brief.name), "revision", revision_is(brief.revision - 1))
        write.put(brief_item(brief), keys.brief_revision_sk(brief.brief_id, brief.revision), "revision", NEW_ITEM)
        write.run(self._db)

    def rename(self, brief: Brief, new_name: str, write: AgentWrite) -> None:
        """Rules "exists" (the new name is taken) and "revision" (the brief changed or went meanwhile)."""
        write.put({**brief_item(brief), "name": new_name}, keys.brief_sk(new_name), "exists", NEW_ITEM)
        write.delete(keys.brief_sk(brief.name), "revision", revision_is(brief.revision))
        write.run(self._db)

    def delete(self, brief: Brief, write: AgentWrite) -> None:
        """The brief and, after it, every revision (a person's decision: it destroys the history)."""
        write.delete(keys.brief_sk(brief.name), "revision", revision_is(brief.revision))
        write.on_record(add={"briefCount": -1})
        write.run(self._db)
        pk = keys.agent_pk(brief.agent_id)
        revisions = query_prefix(self._db, self._table, pk, keys.brief_revision_sk(brief.brief_id, 0)[:-6])
        wanted = [key(pk, item[keys.SK]) for item in revisions]
        batch_delete(self._db, self._table, wanted, f"some revisions of brief {brief.name!r} remain; delete it again")


def brief_item(brief: Brief) -> dict[str, Any]:
    return _BRIEF.dump_python(brief, by_alias=True, exclude_none=True)
