"""Catching a server that reaches out: local servers that count every connection made to them, and a guard that
records (and refuses) any URL the process tries to open, for schemas whose `$ref` names something outside them."""

import base64
import json
import socket
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

SECRET = "LEAKED-SECRET-7f3a"  # in every document these servers and files hand out: an error text must never echo it
LEAK_SCHEMA = {"type": "string", "enum": [SECRET]}


class CountingServer:
    """An HTTP server on 127.0.0.1 answering any GET with a schema that holds `SECRET`; it counts connections, so
    an https attempt (a TLS hello, no request) is counted too."""

    def __init__(self) -> None:
        self.connections = 0
        self.requests: list[str] = []
        counter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                counter.requests.append(self.path)
                body = json.dumps(LEAK_SCHEMA).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def verify_request(self, request: Any, client_address: Any) -> bool:
                counter.connections += 1
                return True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class SilentServer:
    """A socket on 127.0.0.1 that accepts connections and never answers: fetching from it would wait forever."""

    def __init__(self) -> None:
        self.connections = 0
        self._held: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:  # closed
                return
            self.connections += 1
            self._held.append(connection)

    def close(self) -> None:
        self._listener.close()
        for connection in self._held:
            connection.close()


class Outbound:
    """Everything a schema could make the server reach, and what was reached: `touched` must stay 0."""

    def __init__(self, tmp: Path) -> None:
        self.http = CountingServer()
        self.silent = SilentServer()
        self.secret_file = tmp / "secret.json"
        self.secret_file.write_text(json.dumps(LEAK_SCHEMA))
        self.opened: list[str] = []  # URLs given to urllib: file: and data: never touch a socket

    @property
    def touched(self) -> int:
        return self.http.connections + self.silent.connections + len(self.opened)

    def refs(self) -> dict[str, str]:
        """Every form of reference to something outside the schema, by name."""
        data = base64.b64encode(json.dumps(LEAK_SCHEMA).encode()).decode()
        return {
            "http": f"http://127.0.0.1:{self.http.port}/leak.json",
            "https": f"https://127.0.0.1:{self.http.port}/leak.json",
            "never answers": f"http://127.0.0.1:{self.silent.port}/leak.json",
            "file": self.secret_file.as_uri(),
            "data": f"data:application/json;base64,{data}",
            "urn": "urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66",
            "relative": "other.json#/$defs/x",
            "relative path": "./leak.json",
            "scheme-relative": f"//127.0.0.1:{self.http.port}/leak.json",
            "http with fragment": f"http://127.0.0.1:{self.http.port}/leak.json#/enum",
        }

    def close(self) -> None:
        self.http.close()
        self.silent.close()


@contextmanager
def outbound(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Outbound]:
    """The servers and file above, with urllib's openers recording (and refusing) every URL: jsonschema's remote
    retrieval goes through `urllib.request.urlopen`, which is how file: and data: would be read."""
    reached = Outbound(tmp)

    def refuse(url: Any, *args: Any, **kwargs: Any) -> Any:
        reached.opened.append(getattr(url, "full_url", url))
        raise OSError("outbound access refused by the test")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    monkeypatch.setattr(urllib.request.OpenerDirector, "open", lambda self, url, *a, **k: refuse(url))
    try:
        yield reached
    finally:
        reached.close()


def within(seconds: float, call: Any, *args: Any) -> Any:
    """`call(*args)` in a thread, failing the test if it has not returned after `seconds`: a call held by a socket
    that never answers, or by a catastrophic pattern, must fail the test instead of hanging the run."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call(*args)
        except BaseException as error:  # handed back to the test below
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the call still runs after {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
