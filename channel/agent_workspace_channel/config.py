"""The bridge's settings, read once at start-up from the command line and the environment.

The token comes from the environment only: a command line is visible to every user of the machine (`ps`).
"""

import argparse
import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from agent_workspace_channel import __version__

TOKEN_ENV = "AGENT_WORKSPACE_TOKEN"
STATE_DIR = "agent-workspace-channel"


class ConfigError(ValueError):
    """A setting the bridge cannot start with; the message says which and why."""


@dataclass(frozen=True)
class Config:
    url: str  # the workspace's MCP endpoint, e.g. https://…/mcp
    token: str
    state: Path  # the cursor and what was pushed, so a restarted bridge resumes
    repush_after: float
    repush_max: int
    poll_wait: int

    @property
    def api(self) -> str:
        """The REST API's base: the MCP URL without its trailing /mcp."""
        return self.url.removesuffix("/").removesuffix("/mcp")

    def __repr__(self) -> str:  # never print the token, even by accident
        return f"Config(url={self.url!r}, state={str(self.state)!r})"


def default_state(url: str, token: str, environ: Mapping[str, str]) -> Path:
    """One file per workspace URL and token, named by a hash: neither the token nor its hash is in the path."""
    base = Path(environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    token_id = hashlib.sha256(token.encode()).hexdigest()[:16]
    name = hashlib.sha256(f"{url}\n{token_id}".encode()).hexdigest()[:24]
    return base / STATE_DIR / f"{name}.json"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent-workspace-channel",
        description=(
            "A Claude Code channel for Agent Workspace: serves the workspace's tools over stdio and pushes the "
            f"agent's tasks, replies and permission verdicts into the session. The agent token is read from "
            f"${TOKEN_ENV}, never from the command line."
        ),
    )
    parser.add_argument("--url", required=True, help="The workspace's MCP URL, e.g. http://127.0.0.1:8000/mcp")
    parser.add_argument("--state", type=Path, help="The file keeping the cursor (default: under $XDG_STATE_HOME)")
    parser.add_argument(
        "--repush-after",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="Push a task again when it is still not started this long after its push (default 120)",
    )
    parser.add_argument(
        "--repush-max", type=int, default=2, metavar="N", help="Push a task again at most N times (default 2)"
    )
    parser.add_argument(
        "--poll-wait",
        type=int,
        default=20,
        metavar="SECONDS",
        help="How long one poll of the workspace waits for news, 0-20 (default 20)",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def read(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """The settings; argparse exits with its usage on a bad argument, a `ConfigError` names any other problem."""
    args = _parser().parse_args(argv)
    environ = os.environ if environ is None else environ
    token = environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise ConfigError(f"set the agent token in ${TOKEN_ENV} (the .mcp.json entry's env)")
    url = args.url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"--url must be the workspace's http(s) MCP URL, ending in /mcp; got {url!r}")
    if parts.username or parts.password or parts.query:
        raise ConfigError("--url must carry no credentials and no query: the token goes in $" + TOKEN_ENV)
    if not 0 <= args.poll_wait <= 20:
        raise ConfigError("--poll-wait is 0-20 seconds")
    if args.repush_after <= 0 or args.repush_max < 0:
        raise ConfigError("--repush-after must be above 0 and --repush-max at least 0")
    return Config(
        url=url,
        token=token,
        state=args.state or default_state(url, token, environ),
        repush_after=args.repush_after,
        repush_max=args.repush_max,
        poll_wait=args.poll_wait,
    )
