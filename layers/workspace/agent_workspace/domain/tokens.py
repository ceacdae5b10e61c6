"""Bearer tokens: random, shown once, stored only as SHA-256 hashes."""

import hashlib
import secrets
from enum import StrEnum

TOKEN_PREFIX = "aw"


class TokenKind(StrEnum):
    AGENT = "agent"  # reaches exactly one workspace, over MCP
    HUMAN = "human"  # reaches one account, over the REST API


# Live tokens an owner may hold: each token has its own rate limit, so without a cap minting more multiplies it.
# A workspace's agents each want their own token (claims name it): room for twice the 32 concurrent agents
# `make soak` runs on one workspace. A human needs a token per browser or device.
AGENT_TOKENS_PER_WORKSPACE = 64
HUMAN_TOKENS_PER_ACCOUNT = 20
TOKEN_CAPS = {TokenKind.AGENT: AGENT_TOKENS_PER_WORKSPACE, TokenKind.HUMAN: HUMAN_TOKENS_PER_ACCOUNT}
# Workspaces an account may hold: each brings up to AGENT_TOKENS_PER_WORKSPACE tokens, each with its own rate limit,
# so without this cap the token caps would not bound what one account may send.
WORKSPACES_PER_ACCOUNT = 100
# Revoking never leaves an account without a human token: nobody could administer it any more.
FEWEST_HUMAN_TOKENS = 1


def new_token(kind: TokenKind) -> str:
    return f"{TOKEN_PREFIX}_{kind.value}_{secrets.token_urlsafe(32)}"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()
