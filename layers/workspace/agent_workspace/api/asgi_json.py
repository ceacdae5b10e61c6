"""A JSON response sent straight over ASGI, for the middleware and endpoints that sit below FastAPI."""

import json
from collections.abc import Iterable

from starlette.types import Send


async def send_json(send: Send, status: int, body: dict, headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()), *headers],
        }
    )
    await send({"type": "http.response.body", "body": data})
