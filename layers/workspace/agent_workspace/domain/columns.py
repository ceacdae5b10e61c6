"""The board's columns and the order agents take work in: AgentRQ's statuses, refined.

Each column belongs to exactly one AgentRQ status, so `updateStatus`, `taskCounts` and the queue keep meaning
what they meant; a task stores its column beside its status and every status change sets both.
"""

from typing import Literal, get_args

# (column, the AgentRQ status it belongs to, what it means); `archived` is a flag over any of them.
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("triage", "notstarted", "proposed by an agent under a supervised policy; the human accepts or declines it"),
    ("backlog", "notstarted", "accepted, not yet ready; workable once it has acceptance criteria"),
    ("ready", "notstarted", "ready to be claimed"),
    ("in_progress", "ongoing", "claimed and being worked on"),
    ("blocked", "blocked", "waiting on the human's answers"),
    ("in_review", "completed", "delivered; awaiting the human's sign-off (policy signOff)"),
    ("done", "completed", "delivered and accepted"),
    ("rejected", "rejected", "declined or abandoned"),
)
STATUS_OF: dict[str, str] = {name: status for name, status, _ in COLUMNS}
COLUMN_NAMES: tuple[str, ...] = tuple(STATUS_OF)
# The column a status change lands in when nothing says otherwise (AgentRQ's `updateStatus`).
DEFAULT_COLUMN: dict[str, str] = {
    "notstarted": "ready",
    "ongoing": "in_progress",
    "blocked": "blocked",
    "completed": "done",
    "rejected": "rejected",
}
PLANNING_COLUMNS = ("triage", "backlog", "ready")  # where `update_task` may move a task
# The columns whose tasks wait on the human: the console's inbox ("needs you") lists them, so a task moving into or
# out of one (or archived in one) changes the inbox.
NEEDS_YOU_COLUMNS = ("blocked", "triage", "in_review")
Complexity = Literal["trivial", "small", "medium", "large", "unknown"]
Priority = Literal["urgent", "high", "medium", "low", "none"]
COMPLEXITY: tuple[str, ...] = get_args(Complexity)
PRIORITIES: tuple[str, ...] = get_args(Priority)
LINK_TYPES = ("blocks", "relates_to", "duplicate_of")
# How each link reads from the other task: A blocks B shows on B as blocked_by A.
INVERSE_LINK = {"blocks": "blocked_by", "relates_to": "relates_to", "duplicate_of": "duplicated_by"}


def changes_the_inbox(before: str, after: str, archived: bool = False) -> bool:
    """Whether a task's move from column `before` to `after` changes the console's inbox: into or out of a column that
    waits on the human, or `archived` in one (the inbox lists no archived task)."""
    if archived:
        return before in NEEDS_YOU_COLUMNS
    return before != after and bool({before, after} & set(NEEDS_YOU_COLUMNS))


def column_of(status: str, stored: str | None) -> str:
    """The column of a task in `status`: the stored one while it belongs to that status (tasks written before
    the board have none)."""
    if stored is not None and STATUS_OF.get(stored) == status:
        return stored
    return DEFAULT_COLUMN[status]


def queue_rank(*, column: str, named: bool, in_active_cycle: bool, priority: str | None) -> str:
    """The prefix of a queued task's place in the queue index: pool, then active cycle, then priority.

    Pools: a task the human assigned to one agent token first ("!"), then `ready` ("0"), then `backlog` tasks
    with criteria ("B"). A ready task in no active cycle with no priority, which is every task AgentRQ makes,
    has no prefix: its place is its availability time as before the board, and the digits and "!" that begin
    the other ready ranks sort before any timestamp, "B" after every one.
    """
    cycle = "0" if in_active_cycle else "1"
    rank = str(PRIORITIES.index(priority or "none"))
    if named:
        return f"!{cycle}{rank}#"
    if column == "backlog":
        return f"B{cycle}{rank}#"
    return "" if (cycle, rank) == ("1", "4") else f"0{cycle}{rank}#"
