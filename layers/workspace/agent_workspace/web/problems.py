"""Problem JSON (RFC 9457) sent straight over ASGI, for the middleware and endpoints below FastAPI."""

import json
from collections.abc import Iterable
from http import HTTPStatus

from starlette.types import Send

PROBLEM_JSON = "application/problem+json"

# RFC 9110's names, which Python took only in 3.13: pinned, so a title (and the OpenAPI document) does not
# depend on the interpreter (3.11 would say "Unprocessable Entity" where Lambda's 3.13 says "Unprocessable Content").
_RFC_9110_PHRASES = {
    413: "Content Too Large",
    414: "URI Too Long",
    416: "Range Not Satisfiable",
    422: "Unprocessable Content",
}


def reason(status: int) -> str:
    return _RFC_9110_PHRASES.get(status) or HTTPStatus(status).phrase


def problem(status: int, detail: str) -> dict:
    return {"type": "about:blank", "title": reason(status), "status": status, "detail": detail}


async def send_problem(send: Send, status: int, detail: str, headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    data = json.dumps(problem(status, detail)).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", PROBLEM_JSON.encode()),
                (b"content-length", str(len(data)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})
