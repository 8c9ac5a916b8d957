"""Which package may import which: the house's rooms, checked on the source's import statements.

Pure packages (`kjobs.api`, `kjobs.policy`, the Job controller's planners in `kjobs.job`) import no I/O layer;
the node agent, like a kubelet, reaches the client machinery (`kjobs.client`: informers, work queue, events)
and the API objects, never a controller.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "kjobs"

IO_LAYERS = ("kjobs.server", "kjobs.store", "kjobs.client", "kjobs.controllers", "kjobs.node", "kjobs.cluster")
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "api": (*IO_LAYERS, "kjobs.job", "asyncio"),
    "policy.py": (*IO_LAYERS, "asyncio"),
    "cronjob": (*IO_LAYERS, "asyncio"),
    # The node agent serves its logs through the API server's log seam (`kjobs.server.logs`), as a kubelet's
    # log endpoint answers the apiserver's proxy; the in-process client calls the API service itself.
    "node": ("kjobs.controllers", "kjobs.cluster"),
    "client": ("kjobs.controllers", "kjobs.node", "kjobs.cluster"),
    "store": ("kjobs.server", "kjobs.client", "kjobs.controllers", "kjobs.node", "kjobs.cluster"),
}
# The Job controller's planners are pure; `execute` is the seam that carries a plan out through a client.
PURE_JOB_MODULES = ("sync", "tracking", "pods", "context", "status", "conditions", "intervals", "backoff")


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, by absolute name (relative imports resolved against kjobs)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = ".".join(("kjobs", *path.relative_to(SRC).parts[:-1])).split(".")
                base = package[: len(package) - node.level + 1]
                names.add(".".join([*base, node.module] if node.module else base))
            elif node.module:
                names.add(node.module)
    return names


def _files(room: str) -> list[Path]:
    target = SRC / room
    return [target] if target.is_file() else sorted(target.rglob("*.py"))


def _violations(files: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{path.relative_to(SRC)} imports {name}"
        for path in files
        for name in sorted(imported_modules(path))
        if any(name == bad or name.startswith(bad + ".") for bad in forbidden)
    ]


@pytest.mark.parametrize("room", sorted(FORBIDDEN))
def test_a_room_imports_nothing_it_must_not(room: str) -> None:
    assert _violations(_files(room), FORBIDDEN[room]) == []


def test_the_job_controllers_planners_are_pure() -> None:
    files = [SRC / "job" / f"{name}.py" for name in PURE_JOB_MODULES]
    assert _violations(files, (*IO_LAYERS, "asyncio")) == []


def test_the_checker_sees_a_forbidden_import(tmp_path: Path) -> None:
    """The check itself can fail: a file that imports a controller is reported."""
    bad = SRC / "node" / "agent.py"
    assert "kjobs.client.informer" in imported_modules(bad)
    fake = tmp_path / "x.py"
    fake.write_text("from kjobs.controllers.job import JobController\n")
    assert imported_modules(fake) == {"kjobs.controllers.job"}
