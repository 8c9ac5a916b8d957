"""`--controllers` of `kjobs up` and `kjobs controller`, read as kube-controller-manager reads its flag."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kjobs.cli.up import _assemble, up
from kjobs.controllers import CONTROLLER_NAMES, select_controllers
from kjobs.controllers.job import JobController
from kjobs.store import MemoryStore


@pytest.mark.parametrize(
    ("flag", "selected"),
    [
        ("*", CONTROLLER_NAMES),
        ("all", CONTROLLER_NAMES),
        ("*,-job", CONTROLLER_NAMES[1:]),
        ("-job,*", CONTROLLER_NAMES[1:]),
        ("job", ("job",)),
        ("ttl, job", ("job", "ttl")),
        ("job,-job", ()),
    ],
)
def test_select_controllers(flag: str, selected: tuple[str, ...]) -> None:
    assert select_controllers(flag) == selected


def test_an_unknown_controller_is_named_in_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(up, ["--controllers", "*,-jobs", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 2
    assert "unknown controller(s) -jobs; choose from job, scheduler" in result.output
    assert not (tmp_path / "data").exists()  # refused before anything was created


def test_up_without_the_job_controller_runs_the_others(tmp_path: Path) -> None:
    cluster, _ = _assemble(
        MemoryStore(), authenticator=None, nodes=0, data=tmp_path, controllers=select_controllers("*,-job")
    )
    assert cluster.job_controller is None
    assert not any(isinstance(c, JobController) for c in cluster.controllers)
    assert len(cluster.controllers) == len(CONTROLLER_NAMES) - 1


@pytest.mark.parametrize(("flag", "threshold"), [(None, 12500), ("100", 100), ("0", 0), ("-1", 0)])
def test_controller_terminated_pod_gc_threshold_reaches_the_pod_gc(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str | None, threshold: int
) -> None:
    """`kjobs controller --terminated-pod-gc-threshold`, as kube-controller-manager's (12500; <= 0 disables)."""
    import kjobs.cli.controller as command
    from kjobs.server import kubeconfig

    seen: dict[str, object] = {}

    async def run(connection: object, names: tuple[str, ...], *, settings: object, **_: object) -> None:
        seen["settings"] = settings

    monkeypatch.setattr(command, "_run", run)
    config = tmp_path / "kc.yaml"
    kubeconfig.write(config, "http://127.0.0.1:1")
    args = ["--kubeconfig", str(config), "--controllers", "podgc"]
    result = CliRunner().invoke(
        command.controller_command, args + ([] if flag is None else [f"--terminated-pod-gc-threshold={flag}"])
    )
    assert result.exit_code == 0, result.output
    assert seen["settings"].pod_gc.terminated_pod_threshold == threshold  # type: ignore[attr-defined]
