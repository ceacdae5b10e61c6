"""Problem JSON (RFC 9457) sent straight over ASGI, for the middleware and endpoints below FastAPI."""

import json
from collections.abc import Iterable
from http import HTTPStatus

from starlette.types import Send

PROBLEM_JSON = "application/problem+json"


def problem(status: int, detail: str) -> dict:
    return {"type": "about:blank", "title": HTTPStatus(status).phrase, "status": status, "detail": detail}


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
