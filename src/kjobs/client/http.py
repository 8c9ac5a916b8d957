"""`HttpClient`: the `Client` interface over Kubernetes' REST protocol (aiohttp), for any API server.

Errors come back as the server's `Status` and are raised as `ApiError`; watch streams are parsed line by
line, and an ERROR event carrying a 410 Status is raised as `ApiError` so informers relist.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
from multidict import CIMultiDict

from kjobs.api.errors import ApiError, raise_failure_status
from kjobs.api.types import Obj
from kjobs.client.base import PATCH_CONTENT_TYPES, WatchEvent
from kjobs.client.kubeconfig import Connection
from kjobs.client.resources import ResourceRef


class HttpClient:
    """A Kubernetes API client over HTTP(S); create it inside the event loop that uses it."""

    completes_inline = False  # every call is a request: concurrent calls overlap their round trips

    def __init__(self, connection: Connection, *, user_agent: str = "kjobs", max_connections: int = 64) -> None:
        self.connection = connection
        headers = CIMultiDict({"User-Agent": user_agent, "Accept": "application/json"})
        if connection.token:
            headers["Authorization"] = f"Bearer {connection.token}"
        for name, value in connection.impersonate:  # Impersonate-Group may come more than once
            headers.add(name, value)
        # Requests take turns through a FIFO semaphore instead of aiohttp's own limit: a freed connection goes to
        # whichever request asks first in that turn of the loop there, so callers that send their next request as
        # soon as one ends (the node agent's status-patch workers) starved one made by another task (its Lease
        # renewal, for 50 s). Watches hold a connection each beside these, as client-go's do beside its requests.
        self._slots = asyncio.Semaphore(max_connections)
        connector = aiohttp.TCPConnector(limit=0, ssl=connection.ssl_context or False)
        self._session = aiohttp.ClientSession(
            base_url=connection.server, headers=headers, connector=connector, json_serialize=_dumps
        )

    async def close(self) -> None:
        """Close the connection pool."""
        await self._session.close()

    async def _request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        decode: bool = True,
    ) -> Obj:
        """The response's object; with `decode` False an empty dict for any success (the body is read, so the
        connection is reused, but not parsed); an error is raised alike either way."""
        data = None if body is None else orjson.dumps(body)
        headers = {"Content-Type": content_type} if data is not None else None
        try:
            async with (
                self._slots,
                self._session.request(method, path, params=params, data=data, headers=headers) as resp,
            ):
                raw = await resp.read()
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            if isinstance(exc, OSError):
                raise
            # The server went away mid-request (`ServerDisconnectedError`, a cut-off body): unreachable, as a
            # refused connection is, which the node agent and the controllers handle as an `OSError` (a retry,
            # logged in a line; chaos seed 135 in docs/chaos.md).
            raise ConnectionError(f"{method} {path}: {exc}") from exc
        if resp.status >= 400:
            raise _error(resp.status, raw)
        result: Obj = orjson.loads(raw) if raw and decode else {}
        if isinstance(result, dict):
            raise_failure_status(result)
        return result

    async def get(self, resource: ResourceRef, namespace: str | None, name: str) -> Obj:
        """GET one object."""
        return await self._request("GET", resource.path(namespace, name))

    async def list(
        self,
        resource: ResourceRef,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> tuple[list[Obj], str]:
        """LIST, following `continue` tokens."""
        params = _selectors(label_selector, field_selector)
        items: list[Obj] = []
        while True:
            body = await self._request("GET", resource.path(namespace), params=params)
            for item in body.get("items") or ():
                item.setdefault("apiVersion", resource.api_version)
                item.setdefault("kind", resource.kind)
                items.append(item)
            meta = body.get("metadata") or {}
            if not meta.get("continue"):
                return items, str(meta.get("resourceVersion") or "")
            params = {**params, "continue": meta["continue"]}

    async def watch(
        self,
        resource: ResourceRef,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int | None = None,
    ) -> AsyncIterator[WatchEvent]:
        """Stream watch events until the server closes the stream."""
        params = {**_selectors(label_selector, field_selector), "watch": "true", "allowWatchBookmarks": "true"}
        if resource_version:
            params["resourceVersion"] = resource_version
        if timeout_seconds is not None:
            params["timeoutSeconds"] = str(timeout_seconds)
        timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
        async with self._session.get(resource.path(namespace), params=params, timeout=timeout) as resp:
            if resp.status >= 400:
                raise _error(resp.status, await resp.read())
            async for line in resp.content:
                if not line.strip():
                    continue
                event = orjson.loads(line)
                if event.get("type") == "ERROR":
                    status = event.get("object") or {}
                    raise ApiError.from_status(status)
                yield WatchEvent(str(event.get("type")), event.get("object") or {})

    async def create(self, resource: ResourceRef, namespace: str | None, obj: Obj, *, handover: bool = False) -> Obj:
        """POST (`handover` changes nothing: the body is serialized anyway)."""
        return await self._request("POST", resource.path(namespace), body=obj)

    async def update(
        self,
        resource: ResourceRef,
        namespace: str | None,
        obj: Obj,
        *,
        subresource: str | None = None,
        handover: bool = False,
    ) -> Obj:
        """PUT (`handover` changes nothing: the body is serialized anyway)."""
        name = str(obj["metadata"]["name"])
        return await self._request("PUT", resource.path(namespace, name, subresource), body=obj)

    async def patch(
        self,
        resource: ResourceRef,
        namespace: str | None,
        name: str,
        patch: Any,
        *,
        patch_type: str = "strategic",
        subresource: str | None = None,
        handover: bool = False,
        discard: bool = False,
    ) -> Obj:
        """PATCH with the given patch type (`handover` changes nothing: the body is serialized; `discard`: the
        caller reads no result, so the response is not decoded and `{}` is returned; errors are raised alike)."""
        return await self._request(
            "PATCH",
            resource.path(namespace, name, subresource),
            body=patch,
            content_type=PATCH_CONTENT_TYPES[patch_type],
            decode=not discard,
        )

    async def delete(
        self,
        resource: ResourceRef,
        namespace: str | None,
        name: str,
        *,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
        preconditions: Obj | None = None,
        known: Obj | None = None,
    ) -> Obj:
        """DELETE with DeleteOptions in the body (as kubectl sends them); `known` is the server's to read."""
        options: Obj = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        if propagation_policy is not None:
            options["propagationPolicy"] = propagation_policy
        if preconditions is not None:
            options["preconditions"] = preconditions
        return await self._request("DELETE", resource.path(namespace, name), body=options)

    async def post_subresource(
        self,
        resource: ResourceRef,
        namespace: str | None,
        name: str,
        subresource: str,
        body: Obj,
        *,
        handover: bool = False,
    ) -> Obj:
        """POST to a subresource (`handover` changes nothing: the body is serialized)."""
        return await self._request("POST", resource.path(namespace, name, subresource), body=body)


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def _selectors(label_selector: str | None, field_selector: str | None) -> dict[str, str]:
    params: dict[str, str] = {}
    if label_selector:
        params["labelSelector"] = label_selector
    if field_selector:
        params["fieldSelector"] = field_selector
    return params


def _error(code: int, raw: bytes) -> ApiError:
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        body = None
    if isinstance(body, dict) and body.get("kind") == "Status":
        return ApiError.from_status(body)
    text = raw.decode("utf-8", "replace").strip()
    return ApiError(code, "Unknown", text or f"the server responded with HTTP {code}")
