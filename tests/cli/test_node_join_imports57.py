"""`kjobs node join` tunes its collector from `kjobs.gctuning`, so it imports none of the controllers: it
imported `kjobs.cluster` (131 modules, about 200 ms of CPU) only for `tune_gc`."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from kjobs.server import kubeconfig


def test_node_join_imports_no_cluster_nor_controller(tmp_path: Path) -> None:
    config = tmp_path / "kubeconfig.yaml"
    kubeconfig.write(config, "http://127.0.0.1:1")
    script = textwrap.dedent(
        f"""
        import gc, sys
        import kjobs.cli.node as node_cli
        from kjobs.cli import main

        tuned = []

        async def joined(*args):
            tuned.append(gc.get_threshold())
            print(sorted(m for m in sys.modules if m == "kjobs.cluster" or m.startswith("kjobs.controllers.")))

        node_cli._join = joined
        gc.set_threshold(700, 10, 10)
        main(["node", "join", "--kubeconfig", {str(config)!r}, "--name", "n"], standalone_mode=False)
        from kjobs.gctuning import SERVER_GC_THRESHOLDS
        assert tuned == [SERVER_GC_THRESHOLDS], tuned
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
