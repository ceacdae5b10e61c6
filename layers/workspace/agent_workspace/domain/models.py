"""The entities every layer passes around."""

from dataclasses import dataclass, field

from agent_workspace.domain.tokens import TokenKind


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request acts for, resolved from its bearer token."""

    kind: TokenKind
    account_id: str
    token_id: str
    workspace_id: str | None = None  # set for agent tokens only
    # What a signed-in app was granted (`domain.oauth` scopes); None for a token minted in the console: everything.
    scopes: frozenset[str] | None = None
    expires_at: int | None = None  # epoch seconds: a signed-in app's access token ends; None for a minted token


@dataclass(frozen=True, slots=True)
class Workspace:
    id: str
    account_id: str
    title: str
    mission: str
    created_at: str
    task_counts: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict:
        return {"id": self.id, "title": self.title, "mission": self.mission, "createdAt": self.created_at}


@dataclass(frozen=True, slots=True)
class TokenRecord:
    id: str
    kind: TokenKind
    account_id: str
    workspace_id: str | None
    created_at: str


@dataclass(frozen=True)
class Actor:
    """Who acts on a task: the agent behind a token, or the workspace's human."""

    kind: str  # "agent" or "human"
    account_id: str
    workspace_id: str
    token_id: str

    @classmethod
    def of(cls, principal: Principal, workspace_id: str | None = None) -> "Actor":
        workspace = workspace_id or principal.workspace_id
        assert workspace is not None
        return cls(principal.kind.value, principal.account_id, workspace, principal.token_id)
