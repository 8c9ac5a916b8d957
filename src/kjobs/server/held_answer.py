"""An ASGI `send` that holds an answer whole to write its body again before it goes out.

kube-apiserver decides how an answer is written (indented for `curl`, gzipped over 128 KiB) only once it has
the serialized bytes (`responsewriters.SerializeObject`); kjobs' handlers write first, so `kjobs.server.pretty`
and `kjobs.server.compression` hold the head of an answer they want, gather its body, and send both rewritten
with a `content-length` for the new body.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Send = Callable[[dict[str, Any]], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]
Rewrite = Callable[[bytes], Awaitable[tuple[bytes, Headers]]]
"""The new body of a held answer, and the headers to add to its head."""


def holding(send: Send, wants: Callable[[dict[bytes, bytes]], bool], rewrite: Rewrite) -> Send:
    """`send`, with an answer whose head `wants` (given its headers) held until its body is complete and sent as
    `rewrite` writes it; any other answer passed on as it comes."""
    held: dict[str, Any] = {}
    chunks: list[bytes] = []

    async def send_held(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            if wants(dict(message.get("headers") or [])):
                held.update(message)
                return
        elif held and message["type"] == "http.response.body":
            chunks.append(message.get("body") or b"")
            if message.get("more_body"):
                return
            body, added = await rewrite(b"".join(chunks))
            head = [(k, v) for k, v in held["headers"] if k != b"content-length"]
            head += added
            head.append((b"content-length", str(len(body)).encode()))
            await send({**held, "headers": head})
            held.clear()
            chunks.clear()
            message = {"type": "http.response.body", "body": body}
        await send(message)

    return send_held
