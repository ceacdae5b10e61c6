"""Named-task queues under random interleavings: whatever tasks are made (open, named for one token, or named and
keyed the way tasks were before named queues), and whichever tokens ask `next`, dequeue or give a task back, no
token is ever shown or handed a task named for another, and no task is held by two."""

from hypothesis import given
from hypothesis import strategies as st

from agent_workspace.domain.clock import iso
from agent_workspace.domain.ids import new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.tasks import Task
from agent_workspace.domain.tokens import TokenKind
from agent_workspace.services import accounts, task_board, tasks
from agent_workspace.store import keys
from agent_workspace.store.dynamo import key, to_item
from tests.fuzz.test_tools_fuzz import FUZZ
from tests.support import World

TOKENS = 3
# (what, token index or None): make an open / named / old-keyed named task, ask next, dequeue, give back.
STEP = st.one_of(
    st.tuples(st.just("make"), st.one_of(st.none(), st.integers(0, TOKENS - 1))),
    st.tuples(st.just("make_old"), st.integers(0, TOKENS - 1)),
    st.tuples(st.sampled_from(["next", "dequeue", "give_back"]), st.integers(0, TOKENS - 1)),
)


@FUZZ
@given(steps=st.lists(STEP, min_size=1, max_size=16))
def test_no_token_is_ever_shown_or_handed_a_task_named_for_another(world: World, steps):
    rt = world.runtime
    account, _ = accounts.create_account(rt.accounts, "Named queues fuzz")
    workspace, first = accounts.create_workspace(rt.accounts, account, "Agents", "")
    ids = [first.record.id] + [
        accounts.issue_token(rt.accounts, TokenKind.AGENT, account, workspace.id).record.id for _ in range(TOKENS - 1)
    ]
    actors = [Actor("agent", account, workspace.id, token_id) for token_id in ids]
    named_for: dict[str, str | None] = {}
    held: dict[str, str] = {}  # task id -> the token that dequeued it
    for what, who in steps:
        if what in ("make", "make_old"):
            token = ids[who] if who is not None else None
            task = Task.new(
                id=new_id(),
                workspace_id=workspace.id,
                by="human",
                now=iso(rt.clock()),
                title="t",
                body="",
                assignee="agent",
                assigned_token=token,
                column="ready",
            )
            rt.tasks.create(account, task)
            named_for[task.id] = token
            if what == "make_old":  # keyed as before named queues: in the open queue
                rt.clients.dynamodb.update_item(
                    TableName=rt.settings.table_name,
                    Key=key(keys.workspace_pk(workspace.id), keys.task_sk(task.id)),
                    UpdateExpression="SET GSI1PK = :open",
                    ExpressionAttributeValues=to_item({":open": keys.queue_pk(workspace.id)}),
                )
            continue
        actor = actors[who]
        if what == "next":
            shown = task_board.next_task(rt, actor)["task"]
            if shown is not None:
                assert named_for[shown["id"]] in (None, actor.token_id), (shown, actor.token_id)
        elif what == "dequeue":
            taken = tasks.dequeue(rt, actor)
            if taken is not None:
                assert named_for[taken.id] in (None, actor.token_id), (taken.id, actor.token_id)
                assert taken.id not in held, f"{taken.id} handed out twice"
                held[taken.id] = actor.token_id
        else:
            mine = [task_id for task_id, holder in held.items() if holder == actor.token_id]
            if mine:
                tasks.set_status(rt, actor, mine[0], "notstarted")  # given back, unstarted: queued again
                del held[mine[0]]
    for task_id, token in named_for.items():
        stored = rt.tasks.get(workspace.id, task_id, consistent=True)
        assert stored is not None
        if stored.claim is not None:
            assert token in (None, stored.claim["tokenId"]), (task_id, token, stored.claim)
