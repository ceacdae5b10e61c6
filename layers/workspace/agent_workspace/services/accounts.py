"""Accounts, workspaces and their tokens."""

from dataclasses import dataclass

from agent_workspace.domain.clock import now_iso
from agent_workspace.domain.errors import NotFound, PayloadError
from agent_workspace.domain.ids import new_id
from agent_workspace.domain.models import Principal, TokenRecord, Workspace
from agent_workspace.domain.text import check_plain, echo
from agent_workspace.domain.tokens import TOKEN_CAPS, WORKSPACES_PER_ACCOUNT, TokenKind, hash_token, new_token
from agent_workspace.observability import count
from agent_workspace.store.accounts import AccountStore

TITLE_MAX = 200
MISSION_MAX = 4000


@dataclass(frozen=True)
class IssuedToken:
    """A token as shown once to its owner; only its hash is stored."""

    token: str
    record: TokenRecord


def issue_token(
    store: AccountStore,
    kind: TokenKind,
    account_id: str,
    workspace_id: str | None,
    token: str | None = None,
    beyond_cap: bool = False,
) -> IssuedToken:
    """A new token, unless its workspace (agent) or account (human) already holds its cap of live tokens (409).

    `beyond_cap` is the operator's break-glass (`admin create-human-token`): an account whose every token is
    lost must be recoverable even at the cap.
    """
    record = TokenRecord(id=new_id(), kind=kind, account_id=account_id, workspace_id=workspace_id, created_at=now_iso())
    secret = token or new_token(kind)
    store.put_token(hash_token(secret), record, cap=None if beyond_cap else TOKEN_CAPS[kind])
    return IssuedToken(secret, record)


def create_account(store: AccountStore, title: str, human_token: str | None = None) -> tuple[str, IssuedToken]:
    """A new account and the human token that administers it (`human_token` lets dev setups fix it)."""
    title = _checked_title(title)
    account_id = new_id()
    record = TokenRecord(
        id=new_id(), kind=TokenKind.HUMAN, account_id=account_id, workspace_id=None, created_at=now_iso()
    )
    secret = human_token or new_token(TokenKind.HUMAN)
    store.create_account(account_id, title, now_iso(), (hash_token(secret), record))
    count("AccountCreated")
    return account_id, IssuedToken(secret, record)


def _checked_title(title: str) -> str:
    title = title.strip()
    if not title:
        raise PayloadError("title must not be empty", field="title")
    if len(title) > TITLE_MAX:
        raise PayloadError(f"title is {len(title)} characters; at most {TITLE_MAX}", field="title")
    return check_plain(title, "title")


def create_workspace(
    store: AccountStore, account_id: str, title: str, mission: str, agent_token: str | None = None
) -> tuple[Workspace, IssuedToken]:
    """A new workspace and its first agent token, unless the account already holds its cap of workspaces (409)."""
    title = _checked_title(title)
    if len(mission) > MISSION_MAX:
        raise PayloadError(f"mission is {len(mission)} characters; at most {MISSION_MAX}", field="mission")
    workspace = Workspace(id=new_id(), account_id=account_id, title=title, mission=mission, created_at=now_iso())
    secret = agent_token or new_token(TokenKind.AGENT)
    record = TokenRecord(
        id=new_id(), kind=TokenKind.AGENT, account_id=account_id, workspace_id=workspace.id, created_at=now_iso()
    )
    store.create_workspace(workspace, (hash_token(secret), record), WORKSPACES_PER_ACCOUNT)
    count("WorkspaceCreated")
    return workspace, IssuedToken(secret, record)


def workspace_of(store: AccountStore, principal: Principal) -> Workspace:
    """The one workspace an agent token reaches."""
    assert principal.workspace_id is not None, "only agent tokens reach a workspace"
    workspace = store.get_workspace(principal.account_id, principal.workspace_id)
    if workspace is None:
        raise NotFound("this token's workspace no longer exists")
    return workspace


def owned_workspace(store: AccountStore, account_id: str, workspace_id: str) -> Workspace:
    """A workspace of the caller's account; another account's is indistinguishable from a missing one."""
    workspace = store.get_workspace(account_id, workspace_id)
    if workspace is None:
        raise NotFound(f"no workspace {echo(workspace_id)}")
    return workspace
