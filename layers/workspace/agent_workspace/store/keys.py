"""Key names and key builders of the single table.

The attribute and index names here must match the table in `template.yaml` (a contract test checks
them); `docs/data-model.md` lists the access pattern each key serves.
"""

import base64

from agent_workspace.domain.text import is_segment

PK = "PK"
SK = "SK"
GSI1 = "GSI1"
GSI1_PK = "GSI1PK"
GSI1_SK = "GSI1SK"
TTL_ATTRIBUTE = "expiresAt"


def account_pk(account_id: str) -> str:
    return f"ACCOUNT#{account_id}"


ACCOUNT_SK = "ACCOUNT"


def workspace_sk(workspace_id: str) -> str:
    return f"WORKSPACE#{workspace_id}"


WORKSPACE_SK_PREFIX = "WORKSPACE#"


def token_pk(token_hash: str) -> str:
    return f"TOKEN#{token_hash}"


TOKEN_SK = "TOKEN"


ACCOUNT_SCOPE = "ACCOUNT"  # the scope of human tokens, which reach the account rather than one workspace


def token_ref_prefix(scope: str) -> str:
    """Token references of one workspace (or, with ACCOUNT_SCOPE, the account's human tokens)."""
    return f"TOKENREF#{scope}#"


def token_ref_sk(scope: str, token_id: str) -> str:
    return f"{token_ref_prefix(scope)}{token_id}"


GSI2 = "GSI2"
GSI2_PK = "GSI2PK"
GSI2_SK = "GSI2SK"


def workspace_pk(workspace_id: str) -> str:
    return f"WS#{workspace_id}"


def task_sk(task_id: str) -> str:
    return f"TASK#{task_id}"


def message_sk(task_id: str, message_id: str) -> str:
    return f"TASK#{task_id}#MSG#{message_id}"


def attachment_sk(task_id: str, attachment_id: str) -> str:
    """An attachment record, under a key derived from its id (any string, `domain.tasks.is_attachment_id`).

    An id of URL-segment characters, as every id was before any string was accepted, is its own key, so records
    stored then are found where they are; any other id is `~` and its UTF-8 in unpadded base64url, which no such id
    can be, so no two ids share a key and no `#`, `/` or `~` of an id reaches the key's structure.
    """
    if not is_segment(attachment_id):
        attachment_id = "~" + base64.urlsafe_b64encode(attachment_id.encode()).decode("ascii").rstrip("=")
    return f"{attachment_prefix(task_id)}{attachment_id}"


def attachment_prefix(task_id: str) -> str:
    """The attachment records of one task."""
    return f"TASK#{task_id}#ATT#"


def run_sk(template_id: str, fire_at: str) -> str:
    """A cron template's link to the run of one fire time: its existence is what makes a firing happen once."""
    return f"TASK#{template_id}#RUN#{fire_at}"


def run_prefix(template_id: str) -> str:
    return f"TASK#{template_id}#RUN#"


def queue_pk(workspace_id: str, token_id: str | None = None) -> str:
    """GSI1: a work queue of one workspace, ordered by when each task becomes available: the open queue, whose
    tasks any of its agent tokens may take, or with `token_id` the tasks the human named for that token only.

    Keyed by who may take a task, so a token's dequeue reads its own queue and the open one and never pages
    through tasks named for other tokens (however many there are).
    """
    return f"QUEUE#{workspace_id}" if token_id is None else f"QUEUE#{workspace_id}#{token_id}"


def queue_sk(available_at: str, task_id: str, rank: str = "") -> str:
    """A queued task's place: its rank (`domain.columns.queue_rank`, empty for AgentRQ's plain tasks), then the
    time it becomes available (created, or a claim's lease expiry)."""
    return f"{rank}{available_at}#{task_id}"


def queue_rank_of(sk: str) -> str:
    """The rank prefix of a queue sort key (timestamps and ids hold no '#')."""
    parts = sk.split("#")
    return f"{parts[0]}#" if len(parts) == 3 else ""


def activity_sk(task_id: str, entry_id: str) -> str:
    """An entry of a task's activity feed: who changed what, when; ids sort by time. `~` sorts it after the
    conversation (`#MSG#`), which a task's read takes in one Query, and after a template's runs."""
    return f"TASK#{task_id}#~ACT#{entry_id}"


def comment_sk(task_id: str, comment_id: str) -> str:
    """A comment on the board's side of a task (the AgentRQ conversation is `#MSG#`)."""
    return f"TASK#{task_id}#~CMT#{comment_id}"


def identifier_sk(number: int) -> str:
    """Points a workspace's short identifier (WS-<number>) at its task."""
    return f"IDENT#{number}"


def task_list_pk(workspace_id: str) -> str:
    """GSI2: a workspace's tasks by status, then creation time."""
    return f"TASKS#{workspace_id}"


def listing_sk(status: str, created_at: str, item_id: str) -> str:
    """GSI2 sort key of a task or a question: by status, then creation time."""
    return f"{status}#{created_at}#{item_id}"


def listing_prefix(status: str | None) -> str | None:
    """The GSI2 sort-key prefix of one status's range; None: every status."""
    return f"{status}#" if status else None


def listing_condition(partition: str, status: str | None) -> tuple[str, dict[str, str]]:
    """The GSI2 key condition (and its values) for one partition, narrowed to a status if given."""
    prefix = listing_prefix(status)
    if prefix:
        return "GSI2PK = :pk AND begins_with(GSI2SK, :status)", {":pk": partition, ":status": prefix}
    return "GSI2PK = :pk", {":pk": partition}


def elicitation_sk(elicitation_id: str) -> str:
    return f"ELICIT#{elicitation_id}"


def elicitation_list_pk(workspace_id: str) -> str:
    """GSI2: a workspace's questions to its human, by status then creation time."""
    return f"ELICITS#{workspace_id}"


def memory_sk(name: str) -> str:
    return f"MEM#{name}"


MEMORY_SK_PREFIX = "MEM#"


def memory_revision_prefix(name: str) -> str:
    """Kept revisions sort apart from the memories (`MEMREV#` does not begin with `MEM#`)."""
    return f"MEMREV#{name}#"


def memory_revision_sk(name: str, revision: int) -> str:
    return f"{memory_revision_prefix(name)}{revision:010d}"


def skill_ref_sk(name: str) -> str:
    """A skill as one workspace sees it (its own or shared into it), in the workspace's partition."""
    return f"SKILLREF#{name}"


SKILL_REF_PREFIX = "SKILLREF#"


def skill_pk(skill_id: str) -> str:
    """The skill's own partition: its record (with SKILL.md) and its other files."""
    return f"SKILL#{skill_id}"


SKILL_SK = "SKILL"


def skill_file_sk(path: str) -> str:
    return f"FILE#{path}"


def skill_home_id(workspace_id: str, name: str) -> str:
    """The id a skill gets in the workspace that creates it, so that workspace reads it without its reference first.

    Only a name re-created while the old skill still lives on in workspaces it was shared into gets
    another id (`<workspaceId>.<name>.<id>`); references always say which.
    """
    return f"{workspace_id}.{name}"


def event_sk(event_id: str) -> str:
    """An event definition, in the account's partition."""
    return f"EVENT#{event_id}"


EVENT_SK_PREFIX = "EVENT#"


def event_name_sk(name: str) -> str:
    """Claims an event name within the account, so names resolve to one definition."""
    return f"EVENTNAME#{name}"


def subscription_sk(subscription_id: str) -> str:
    return f"SUB#{subscription_id}"


def event_subscribers_pk(event_id: str) -> str:
    """GSI1 (overloaded): the subscriptions of one event, for the fan-out."""
    return f"EVENTSUBS#{event_id}"


def subscription_list_pk(workspace_id: str) -> str:
    """GSI2 (overloaded): one workspace's subscriptions, oldest first."""
    return f"SUBS#{workspace_id}"


def publication_sk(publication_id: str) -> str:
    """A published event, in the account's partition; ids sort by time, so the newest come last."""
    return f"PUB#{publication_id}"


PUBLICATION_SK_PREFIX = "PUB#"


def delivery_sk(publication_id: str, subscription_id: str) -> str:
    """Marks one publication delivered to one subscription: its conditional put makes a trigger task once.
    (`PUBSUB#` never matches the `PUB#` listing.)"""
    return f"PUBSUB#{publication_id}#{subscription_id}"


def pano_sk(doc_id: str) -> str:
    """A pano doc, in the account's partition (every workspace of the account shares it)."""
    return f"PANO#{doc_id}"


PANO_SK_PREFIX = "PANO#"


def pano_comment_prefix(doc_id: str) -> str:
    """A doc's comments; `PANOCMT#` never matches the `PANO#` listing."""
    return f"PANOCMT#{doc_id}#"


def pano_comment_sk(doc_id: str, comment_id: str) -> str:
    return f"{pano_comment_prefix(doc_id)}{comment_id}"


BRIDGE_SK = "BRIDGE"  # when the human's browser was last seen, in the account's partition


def site_sk(origin: str) -> str:
    """A site the human shared from the browser, with its tools."""
    return f"SITE#{origin}"


SITE_SK_PREFIX = "SITE#"


def site_allow_sk(workspace_id: str, origin: str, tool: str) -> str:
    """ "Always allow" for one tool of one site, in one workspace."""
    return f"SITEALLOW#{workspace_id}#{origin}#{tool}"


def site_call_sk(call_id: str) -> str:
    return f"SITECALL#{call_id}"


def bridge_calls_pk(account_id: str) -> str:
    """GSI1 (overloaded): calls waiting for the account's browser to pick them up."""
    return f"BRIDGECALLS#{account_id}"


def bridge_pending_pk(account_id: str) -> str:
    """GSI1 (overloaded): calls waiting for the human's decision, across the account's workspaces (the extension's
    badge and popup read them in one Query)."""
    return f"BRIDGEPENDING#{account_id}"


def site_call_list_pk(workspace_id: str) -> str:
    """GSI2 (overloaded): a workspace's site-tool calls by status, for the human's decisions."""
    return f"SITECALLS#{workspace_id}"


BOARD_SK_PREFIX = "BOARD#"  # a workspace's board: headings of projects and epics, cycles, counts; one Query reads them


def project_sk(project_id: str) -> str:
    return f"{BOARD_SK_PREFIX}PROJECT#{project_id}"


def epic_sk(epic_id: str) -> str:
    return f"{BOARD_SK_PREFIX}EPIC#{epic_id}"


def project_text_sk(project_id: str) -> str:
    """A project in full (description, memory, conventions, decisions): apart from its heading under `BOARD#`, so
    the board's Query reads headings only."""
    return f"BOARDTEXT#PROJECT#{project_id}"


def epic_text_sk(epic_id: str) -> str:
    """An epic in full (its description), apart from its heading as above."""
    return f"BOARDTEXT#EPIC#{epic_id}"


def cycle_sk(cycle_id: str) -> str:
    return f"{BOARD_SK_PREFIX}CYCLE#{cycle_id}"


BOARD_COUNTS_SK = f"{BOARD_SK_PREFIX}COUNTS"  # the caps' counts, the label set and the active cycle
BOARD_POLICY_SK = f"{BOARD_SK_PREFIX}POLICY"


def agent_pk(agent_id: str) -> str:
    """An agent's own partition: its record, prompt versions, profiles, memories, briefs, sessions, activity."""
    return f"AGENT#{agent_id}"


AGENT_SK = "AGENT"
AGENT_SLUG_PREFIX = "AGENTSLUG#"


def agent_slug_sk(slug: str) -> str:
    """In the account's partition: claims an @handle for one agent of the account."""
    return f"{AGENT_SLUG_PREFIX}{slug}"


PROMPT_SK_PREFIX = "PROMPT#"


def prompt_sk(version: int) -> str:
    return f"{PROMPT_SK_PREFIX}{version:010d}"


def agent_rate_sk(kind: str, token_id: str, window: str) -> str:
    """A connection's count of one kind of write to an agent in one window (a day, an hour); expires after."""
    return f"RATE#{kind}#{token_id}#{window}"


AGENT_MEMORY_PREFIX = "MEM#"  # an agent's memory with its body
AGENT_MEMORY_INDEX_PREFIX = "MEMIDX#"  # the same memory without its body: load_agent's index is one Query


def agent_memory_sk(name: str) -> str:
    return f"{AGENT_MEMORY_PREFIX}{name}"


def agent_memory_index_sk(name: str) -> str:
    return f"{AGENT_MEMORY_INDEX_PREFIX}{name}"


def agent_memory_id_sk(memory_id: str) -> str:
    """Points a memory's id (agent_recall shows it; agent_forget takes it) at its name."""
    return f"MEMID#{memory_id}"


FORGOTTEN_PREFIX = "FORGOT#"


def forgotten_sk(memory_id: str) -> str:
    """A forgotten memory, kept for a person to restore until its expiry."""
    return f"{FORGOTTEN_PREFIX}{memory_id}"


BRIEF_PREFIX = "BRIEF#"


def brief_sk(name: str) -> str:
    return f"{BRIEF_PREFIX}{name}"


def brief_revision_sk(brief_id: str, revision: int) -> str:
    """Keyed by the brief's id, not its name, so a rename keeps every revision where it is."""
    return f"BRIEFREV#{brief_id}#{revision:06d}"


PROFILE_PREFIX = "PROFILE#"


def profile_sk(harness: str) -> str:
    return f"{PROFILE_PREFIX}{harness}"


def session_sk(session_id: str) -> str:
    return f"SESSION#{session_id}"


AGENT_ACTIVITY_PREFIX = "ACT#"


def agent_activity_sk(entry_id: str) -> str:
    """Ids are time-ordered, so the partition's ACT# items read newest first in reverse."""
    return f"{AGENT_ACTIVITY_PREFIX}{entry_id}"


MENTION_PREFIX = "MENTION#"


def mention_sk(mention_id: str) -> str:
    """An @-mention of the agent's handle in the account's task messages, comments or pano comments."""
    return f"{MENTION_PREFIX}{mention_id}"


AGENT_SHARE_PREFIX = "AGENTSHARE#"


def agent_share_sk(agent_id: str) -> str:
    """In the receiving account's partition: an agent another account shared with it, and on what terms."""
    return f"{AGENT_SHARE_PREFIX}{agent_id}"


AGENT_OFFER_PREFIX = "AGENTOFFER#"


def agent_offer_sk(agent_id: str) -> str:
    """In the receiving account's partition: an agent another account offers to transfer to it."""
    return f"{AGENT_OFFER_PREFIX}{agent_id}"


def channel_pk(workspace_id: str) -> str:
    """What the agent of a workspace should hear, in order: one Query from a bridge's cursor reads what is new."""
    return f"CHANNEL#{workspace_id}"


CHANNEL_EVENT_PREFIX = "EVT#"


def channel_event_sk(event_id: str) -> str:
    return f"{CHANNEL_EVENT_PREFIX}{event_id}"


PERMISSION_PREFIX = "PERM#"


def permission_sk(question_id: str) -> str:
    return f"{PERMISSION_PREFIX}{question_id}"


def permission_request_sk(token_id: str, request_id: str) -> str:
    """Claude Code's request id, pending for one token: a second question with it is refused while this stands."""
    return f"PERMREQ#{token_id}#{request_id}"


PERMISSION_RULE_PREFIX = "PERMRULE#"


def permission_rule_sk(tool: str) -> str:
    """A tool the human always allows in this workspace."""
    return f"{PERMISSION_RULE_PREFIX}{tool}"


def waits_pk(account_id: str) -> str:
    """The waits in flight of an account's tokens: one item, so one conditional write counts a wait in or out."""
    return f"WAITS#{account_id}"


WAITS_SK = "WAITS"


# -- OAuth sign-in (`store.oauth`): each secret is found by its hash, never stored itself ---------------------------


def oauth_client_pk(client_id: str) -> str:
    """A client registered dynamically (RFC 7591), by the id this server gave it."""
    return f"OAUTHCLIENT#{client_id}"


def oauth_document_pk(url_hash: str) -> str:
    """A client metadata document fetched from its client_id URL, cached by the URL's hash."""
    return f"OAUTHDOC#{url_hash}"


def oauth_rate_pk(scope: str) -> str:
    """A registration counter: per source address, or in all."""
    return f"OAUTHRATE#{scope}"


def oauth_request_pk(request_id: str) -> str:
    """An authorization request waiting on the human's consent."""
    return f"OAUTHREQ#{request_id}"


def oauth_code_pk(code_hash: str) -> str:
    return f"OAUTHCODE#{code_hash}"


def oauth_refresh_pk(token_hash: str) -> str:
    return f"OAUTHREFRESH#{token_hash}"


OAUTH_SK = "OAUTH"


def grant_prefix(workspace_id: str) -> str:
    """A workspace's connected apps, in its account's partition."""
    return f"GRANT#{workspace_id}#"


def grant_sk(workspace_id: str, grant_id: str) -> str:
    return f"{grant_prefix(workspace_id)}{grant_id}"


# -- WebSocket push (`store.push`, issue 36): tickets, connections and who listens to what ------------------------


def push_ticket_pk(ticket_hash: str) -> str:
    """A ticket to open one socket, by its hash: spent by the `$connect` that uses it (one conditional delete)."""
    return f"PUSHTICKET#{ticket_hash}"


PUSH_SK = "PUSH"


def push_rate_pk(token_id: str) -> str:
    """A token's count of tickets minted, one item per minute (the sort key), expiring after it."""
    return f"PUSHRATE#{token_id}"


def push_connection_pk(connection_id: str) -> str:
    """One open socket, by API Gateway's connection id: what `$disconnect` finds its listener by."""
    return f"PUSHCONN#{connection_id}"


def push_listeners_pk(topic: str, scope: str) -> str:
    """Every socket hearing one topic of one scope (`PUSH#channel#<workspaceId>`, `PUSH#bridge#<accountId>`,
    `PUSH#console#<workspaceId>`): the sender's one Query."""
    return f"PUSH#{topic}#{scope}"


def push_listener_sk(connection_id: str) -> str:
    return f"CONN#{connection_id}"


# The partitions the push function reads and writes, and nothing else (its role's dynamodb:LeadingKeys condition):
# tickets it spends, connections and listeners it records, and the minting token it checks is still live.
PUSH_FUNCTION_PARTITIONS = ("PUSHTICKET#", "PUSHCONN#", "PUSH#", "TOKEN#")
