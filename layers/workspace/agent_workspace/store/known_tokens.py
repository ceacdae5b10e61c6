"""The token hashes this process has seen resolve, so that only a token it has never seen costs a read first.

A positive cache only: membership skips the existence read, never the conditional write that resolves the
token, so a token revoked elsewhere still fails on its next use here (and is forgotten). Bounded, so a
flood of tokens cannot grow it; a token pushed out merely costs one read again.
"""

import threading
from collections import OrderedDict

CAPACITY = 4096  # hashes of 64 characters: well under 1 MB


class KnownTokens:
    def __init__(self, capacity: int = CAPACITY) -> None:
        self._capacity = capacity
        self._hashes: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()  # the local server resolves tokens on several threads

    def __contains__(self, token_hash: str) -> bool:
        with self._lock:
            if token_hash not in self._hashes:
                return False
            self._hashes.move_to_end(token_hash)
            return True

    def add(self, token_hash: str) -> None:
        with self._lock:
            self._hashes[token_hash] = None
            self._hashes.move_to_end(token_hash)
            while len(self._hashes) > self._capacity:
                self._hashes.popitem(last=False)

    def forget(self, token_hash: str) -> None:
        with self._lock:
            self._hashes.pop(token_hash, None)
