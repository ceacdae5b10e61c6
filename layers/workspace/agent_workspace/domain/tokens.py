"""Bearer tokens: random, shown once, stored only as SHA-256 hashes."""

import hashlib
import secrets
from enum import StrEnum

TOKEN_PREFIX = "aw"


class TokenKind(StrEnum):
    AGENT = "agent"  # reaches exactly one workspace, over MCP
    HUMAN = "human"  # reaches one account, over the REST API


def new_token(kind: TokenKind) -> str:
    return f"{TOKEN_PREFIX}_{kind.value}_{secrets.token_urlsafe(32)}"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()
