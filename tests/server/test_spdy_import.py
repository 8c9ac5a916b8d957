"""`kjobs.server.spdy` is imported by a port-forward session, not with `kjobs.server.portforward`.

Every node agent imports the port-forward module (`kjobs.node.logsource` serves the kubelet's port-forward), and
`kjobs run` serves none without `--serve`: the SPDY framing and its frames' dataclasses are then never used. The
session's behaviour is held by tests/server/test_portforward.py and tests/server/test_spdy.py.
"""

from __future__ import annotations

import subprocess
import sys


def _loaded(code: str) -> list[str]:
    """Run `code` in a fresh interpreter; which of the SPDY and port-forward modules it imported."""
    code += "\nimport sys\nprint(' '.join(sorted(m for m in sys.modules if m.endswith(('.spdy', '.portforward')))))\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return out.splitlines()[-1].split()


def test_kjobs_run_imports_the_port_forward_module_but_not_spdy() -> None:
    assert _loaded("import kjobs.cli.run, kjobs.run, kjobs.cluster") == [
        "kjobs.node.portforward",
        "kjobs.server.portforward",
    ]


def test_a_session_imports_spdy() -> None:
    code = (
        "from kjobs.server.portforward import SpdySession\n"
        "async def send(data: bytes) -> None: pass\n"
        "session = SpdySession(None, send)\n"
        "assert session._reader.__class__.__module__ == 'kjobs.server.spdy'\n"
    )
    assert "kjobs.server.spdy" in _loaded(code)
