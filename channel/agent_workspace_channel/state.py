"""What the bridge remembers across restarts: the workspace's cursor, the events it pushed, the tasks it may push
again. One small JSON file, replaced atomically and readable by its owner only (it holds the pushed texts of the
tasks still waiting to be started)."""

import json
import logging
import os
import tempfile
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

PUSHED_KEPT = 1000  # event ids remembered, against a push twice when a restart replays the last page


@dataclass
class Pending:
    """A pushed task that is pushed again when it is still not started at `due` (epoch seconds), `left` more times."""

    task_id: str
    content: str
    meta: dict[str, str]
    due: float
    left: int
    pushes: int = 1


@dataclass
class State:
    path: Path
    cursor: str | None = None
    pushed: deque[str] = field(default_factory=lambda: deque(maxlen=PUSHED_KEPT))
    pending: dict[str, Pending] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> "State":
        state = cls(path)
        try:
            raw = json.loads(path.read_text())
        except FileNotFoundError:
            return state
        except (OSError, ValueError) as error:
            logger.warning("state file unreadable, starting without a cursor: %s", type(error).__name__)
            return state
        state.cursor = raw.get("cursor") or None
        state.pushed.extend(str(i) for i in raw.get("pushed", []))
        for item in raw.get("pending", []):
            try:
                pending = Pending(**item)
            except TypeError:
                continue
            state.pending[pending.task_id] = pending
        return state

    def was_pushed(self, event_id: str) -> bool:
        return event_id in self.pushed

    def save(self) -> None:
        raw: dict[str, Any] = {
            "cursor": self.cursor,
            "pushed": list(self.pushed),
            "pending": [asdict(p) for p in self.pending.values()],
        }
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".state-", suffix=".json")
        try:
            with os.fdopen(handle, "w") as file:
                json.dump(raw, file)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
