"""The server's WebSocket protocol (wsproto, h11) is imported at the first upgrade, not with the runner: most
servers never see one, and the imports were 30 ms of CPU at every `kjobs up` start."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap

from uvicorn.server import ServerState

from kjobs.server import runner
from kjobs.server.wsprotocol import TlsWSProtocol, WSProtocol
from kjobs.store import MemoryStore


def test_the_runner_imports_no_websocket_library() -> None:
    script = textwrap.dedent(
        """
        import sys
        import kjobs.server.runner
        print(sorted(m for m in ("wsproto", "h11", "kjobs.server.wsprotocol") if m in sys.modules))
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_an_upgrade_gets_the_protocol_the_server_was_configured_with() -> None:
    """uvicorn calls `ws_protocol_class(config=..., server_state=..., app_state=...)` for an upgrade: the plain
    server's makes the Go-refusing protocol, the TLS server's the one that reports the client certificate."""
    app = runner.create_app(MemoryStore())

    async def made(tls: bool) -> object:
        config = runner.server_config(app, pki=None, lifespan="off")
        config.load()
        factory = runner._tls_ws_protocol if tls else config.ws_protocol_class
        assert factory is not None
        return factory(config=config, server_state=ServerState(), app_state={})

    plain, secure = asyncio.run(made(False)), asyncio.run(made(True))
    assert type(plain) is WSProtocol
    assert type(secure) is TlsWSProtocol
