"""kjobs commands started as subprocesses by one test (`kjobs up`, `kjobs controller`, `kjobs node join`), each
with its output in a file of the test's directory, and stopped at the end of the test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support import free_port

__all__ = ["KjobsProcesses", "free_port"]


class KjobsProcesses:
    """The subprocesses of one test; `HOME` and `KUBECONFIG` point into its directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.kubeconfig = root / "kubeconfig"
        self.env = {**os.environ, "HOME": str(root), "KUBECONFIG": str(self.kubeconfig)}
        self.started: list[subprocess.Popen[bytes]] = []

    def spawn(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        """`python -m kjobs ARGS`, its output in `<root>/<name>-<n>.log`."""
        out = (self.root / f"{name}-{len(self.started)}.log").open("wb")
        proc = subprocess.Popen(
            [sys.executable, "-m", "kjobs", *args], stdout=out, stderr=subprocess.STDOUT, env=self.env
        )
        out.close()
        self.started.append(proc)
        return proc

    def stop_all(self, grace: float = 15) -> None:
        """SIGTERM every process still running, newest first; SIGKILL what does not stop within `grace`."""
        for proc in reversed(self.started):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(grace)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)

    def logs(self) -> str:
        """The tail of every process's output, for an assertion message."""
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in self.root.glob("*.log"))
