"""The local stand-in for AWS must not grow without bound while `make serve` runs for days."""

from moto.dynamodb.models.table import Table

from agent_workspace.services.tasks import Actor, NewTask, create_task


def test_transactions_leave_no_copies_of_the_table_behind(runtime, seeded):
    # Every task create is a TransactWriteItems, for which moto deep-copies the whole table.
    actor = Actor("human", seeded.account_id, seeded.workspace_id, "seed")
    create_task(runtime, actor, NewTask(title="warm-up", body=""))
    for number in range(30):
        create_task(runtime, actor, NewTask(title=f"task {number}", body=""))

    assert len(Table.instances_tracked) <= 1  # at most the copy of the request in flight
    counts = runtime.accounts.get_workspace(seeded.account_id, seeded.workspace_id).task_counts
    assert counts["notstarted"] == 31  # the tracking went, the data stayed
