"""An agent's memory (decision 0009): each memory with its body (`MEM#<name>`), its entry in the body-less index
(`MEMIDX#<name>`, so load_agent's index of 2,000 memories is one Query), its id's pointer (`MEMID#<id>`), and
forgotten ones kept for a person to restore (`FORGOT#<id>`, expiring by TTL). The record counts them by type.

Every write is one `AgentWrite` transaction that also carries the caller's checks (session, rate, cap).
"""

from typing import Any

from boto3.dynamodb.conditions import Attr
from pydantic import TypeAdapter

from agent_workspace.domain.agent_records import AgentMemory, Brief, MemoryIndexEntry
from agent_workspace.store import keys
from agent_workspace.store.agent_briefs import brief_item
from agent_workspace.store.agent_writes import AgentWrite
from agent_workspace.store.dynamo import batch_get, batch_write, from_item, get_item, key, query_prefix, to_item
from agent_workspace.store.expressions import EXISTS, NEW_ITEM, Update, revision_is

_MEMORY: TypeAdapter[AgentMemory] = TypeAdapter(AgentMemory)
_INDEX: TypeAdapter[MemoryIndexEntry] = TypeAdapter(MemoryIndexEntry)


def count_attribute(memory_type: str) -> str:
    """The record's count of one type of memory (list_agents shows them)."""
    return f"memories{memory_type.capitalize()}"


class AgentMemoryStore:
    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._db = dynamodb
        self._table = table_name

    def write(self, agent_id: str) -> AgentWrite:
        return AgentWrite(self._table, agent_id)

    def get(self, agent_id: str, name: str, consistent: bool = False) -> AgentMemory | None:
        item = get_item(self._db, self._table, keys.agent_pk(agent_id), keys.agent_memory_sk(name), consistent)
        return _MEMORY.validate_python(item) if item else None

    def name_of_id(self, agent_id: str, memory_id: str) -> str | None:
        item = get_item(self._db, self._table, keys.agent_pk(agent_id), keys.agent_memory_id_sk(memory_id), False)
        return item["name"] if item else None

    def index(self, agent_id: str) -> list[MemoryIndexEntry]:
        """Every memory's entry, by name: at most 2,000 entries of under 400 bytes, one or two Query pages."""
        found = query_prefix(self._db, self._table, keys.agent_pk(agent_id), keys.AGENT_MEMORY_INDEX_PREFIX)
        return [_INDEX.validate_python(item) for item in found]

    def bodies(self, agent_id: str, names: list[str]) -> list[AgentMemory]:
        """These memories in full, in the order asked (one BatchGetItem per 100)."""
        pk = keys.agent_pk(agent_id)
        found = batch_get(self._db, self._table, [key(pk, keys.agent_memory_sk(n)) for n in names], False)
        by_name = {m.name: m for m in (_MEMORY.validate_python(from_item(item)) for item in found)}
        return [by_name[n] for n in names if n in by_name]

    def create(self, memory: AgentMemory, write: AgentWrite, most: int) -> None:
        """A new memory, counted against the agent's `most`: rules "exists" (the name) and "cap"."""
        write.put(_item(memory), keys.agent_memory_sk(memory.name), "exists", NEW_ITEM)
        write.put(_index_item(memory), keys.agent_memory_index_sk(memory.name))
        write.put({"name": memory.name}, keys.agent_memory_id_sk(memory.id))
        room = Attr("memoryCount").not_exists() | Attr("memoryCount").lt(most)
        write.on_record(add={"memoryCount": 1, count_attribute(memory.type): 1}, condition=room, rule="cap")
        write.run(self._db)

    def replace(self, memory: AgentMemory, previous: AgentMemory, write: AgentWrite) -> None:
        """The memory rewritten, if still at the revision it was read at: rule "revision"."""
        write.put(_item(memory), keys.agent_memory_sk(memory.name), "revision", revision_is(previous.revision))
        write.put(_index_item(memory), keys.agent_memory_index_sk(memory.name))
        if memory.type != previous.type:
            write.on_record(add={count_attribute(previous.type): -1, count_attribute(memory.type): 1})
        write.run(self._db)

    def append(
        self,
        agent_id: str,
        name: str,
        paragraph: str,
        now: str,
        room: int,
        write: AgentWrite,
        session: str | None = None,
        harness: str | None = None,
    ) -> None:
        """A paragraph added with list_append, so racing appends all land: rule "append" when the memory is gone
        or would pass `room` characters with the paragraph (the caller reads it to tell which). The session and
        harness become the memory's, as an update's do: the provenance of its latest write."""
        update = (
            Update()
            .set_expr(
                "appended", "list_append(if_not_exists(#appended, :none), :paragraph)", none=[], paragraph=[paragraph]
            )
            .add("revision", 1)
            .add("chars", len(paragraph))
            .set("updatedAt", now)
            .only_if(EXISTS & Attr("chars").lte(room - len(paragraph)))
        )
        for attribute, value in (("sessionId", session), ("harness", harness)):
            update = update.set(attribute, value) if value is not None else update.remove(attribute)
        write.update(keys.agent_memory_sk(name), update, "append")
        write.update(keys.agent_memory_index_sk(name), Update().set("updatedAt", now).only_if(EXISTS), "append")
        write.run(self._db)

    def forget(self, memory: AgentMemory, reason: str, at: str, expires_at: int, write: AgentWrite) -> None:
        """Out of the memory and its index, into `FORGOT#<id>` until it expires: rule "revision" if it changed."""
        write.delete(keys.agent_memory_sk(memory.name), "revision", revision_is(memory.revision))
        write.delete(keys.agent_memory_index_sk(memory.name))
        write.delete(keys.agent_memory_id_sk(memory.id))
        kept = {**_item(memory), "reason": reason, "forgottenAt": at, keys.TTL_ATTRIBUTE: expires_at}
        write.put(kept, keys.forgotten_sk(memory.id))
        write.on_record(add={"memoryCount": -1, count_attribute(memory.type): -1})
        write.run(self._db)

    def forgotten(self, agent_id: str) -> list[dict[str, Any]]:
        """What a person may restore: forgotten memories not yet expired (DynamoDB's TTL deletes lazily)."""
        found = query_prefix(self._db, self._table, keys.agent_pk(agent_id), keys.FORGOTTEN_PREFIX)
        return found

    def restore(self, agent_id: str, memory_id: str, most: int, now: int, write: AgentWrite) -> AgentMemory:
        """A forgotten memory back under its name: rules "gone" (expired or restored), "exists" (the name is taken
        by a newer memory) and "cap". Past its expiry it is gone even before DynamoDB's TTL deletes it (lazily)."""
        kept = get_item(self._db, self._table, keys.agent_pk(agent_id), keys.forgotten_sk(memory_id), True)
        if kept is None or int(kept.get(keys.TTL_ATTRIBUTE, 0)) <= now:
            raise LookupError(memory_id)
        memory = _MEMORY.validate_python({k: v for k, v in kept.items() if k not in ("reason", "forgottenAt")})
        write.delete(keys.forgotten_sk(memory_id), "gone", Attr(keys.TTL_ATTRIBUTE).gt(now))
        self.create(memory, write, most)
        return memory

    def import_contents(self, agent_id: str, memories: list[AgentMemory], briefs: list[Brief]) -> None:
        """A new agent's memories and briefs: batches of 25 (nobody writes to an agent being imported), then the
        record's counts in one update."""
        pk = keys.agent_pk(agent_id)
        requests = []
        for memory in memories:
            requests.append(_put(pk, keys.agent_memory_sk(memory.name), _item(memory)))
            requests.append(_put(pk, keys.agent_memory_index_sk(memory.name), _index_item(memory)))
            requests.append(_put(pk, keys.agent_memory_id_sk(memory.id), {"name": memory.name}))
        for brief in briefs:
            requests.append(_put(pk, keys.brief_sk(brief.name), brief_item(brief)))
            requests.append(_put(pk, keys.brief_revision_sk(brief.brief_id, 1), brief_item(brief)))
        batch_write(self._db, self._table, requests, "part of the import is missing; delete the agent and import again")
        counts: dict[str, Any] = {"memoryCount": len(memories), "briefCount": len(briefs)}
        for memory in memories:
            counts[count_attribute(memory.type)] = counts.get(count_attribute(memory.type), 0) + 1
        if memories or briefs:
            self.write(agent_id).on_record(add=counts).run(self._db)

    def pin(self, memory: AgentMemory, pinned: bool, write: AgentWrite) -> None:
        """Pinned bodies load first; the revision moves so an update read before the pin cannot undo it."""
        update = Update().set("pinned", pinned).add("revision", 1).only_if(EXISTS)
        write.update(keys.agent_memory_sk(memory.name), update, "missing")
        write.update(keys.agent_memory_index_sk(memory.name), Update().set("pinned", pinned))
        write.run(self._db)


def _put(pk: str, sk: str, values: dict[str, Any]) -> dict[str, Any]:
    return {"PutRequest": {"Item": to_item({**values, keys.PK: pk, keys.SK: sk})}}


def _item(memory: AgentMemory) -> dict[str, Any]:
    values = _MEMORY.dump_python(memory, by_alias=True, exclude_none=True)
    return {**values, "chars": len(memory.text())}


def _index_item(memory: AgentMemory) -> dict[str, Any]:
    entry = MemoryIndexEntry(
        memory.id, memory.name, memory.type, memory.description, memory.written_by, memory.updated_at, memory.pinned
    )
    return _INDEX.dump_python(entry, by_alias=True, exclude_none=True)
