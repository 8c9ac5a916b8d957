"""`--feature-gates` on the commands that take it, as a user types it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kjobs.cli import main

LIMITED = """\
apiVersion: batch/v1
kind: Job
metadata: {name: limited}
spec:
  podFailurePolicy:
    rules:
    - {name: fatal, action: FailJob, onExitCodes: {operator: In, valueRanges: [{from: 40, to: 49}]}}
  template:
    spec:
      restartPolicy: OnFailure
      maxRestartTimes: 2
      containers: [{name: main, image: busybox, command: ["true"]}]
"""


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_validate_rejects_gated_fields_by_default_and_accepts_them_with_the_gates(tmp_path: Path) -> None:
    manifest = tmp_path / "job.yaml"
    manifest.write_text(LIMITED)
    code, out, _ = _invoke("validate", str(manifest))
    assert code == 1
    assert 'strict decoding error: unknown field "spec.podFailurePolicy.rules[0].name"' in out
    code, out, _ = _invoke("validate", "--feature-gates", "AllAlpha=true", str(manifest))
    assert (code, out.strip()) == (0, f'{manifest}: Job "limited" is valid')
    code, out, _ = _invoke("validate", "--feature-gates", "AllAlpha=true,JobPodRestartLimit=false", str(manifest))
    assert code == 1 and 'unknown field "spec.template.spec.maxRestartTimes"' in out


def test_a_bad_gate_is_a_usage_error_with_kubernetes_words() -> None:
    code, _, err = _invoke("validate", "--feature-gates", "Nope=true", "x.yaml")
    assert code == 2
    assert 'invalid argument "Nope=true" for "--feature-gates" flag: unrecognized feature gate: Nope' in err


def test_setting_a_ga_gate_is_allowed_with_kubernetes_warning(tmp_path: Path) -> None:
    manifest = tmp_path / "job.yaml"
    manifest.write_text(LIMITED.replace("maxRestartTimes: 2", "").replace("OnFailure", "Never"))
    code, _, err = _invoke("validate", "--feature-gates", "JobSuccessPolicy=true,AllAlpha=true", str(manifest))
    assert code == 0
    assert "Warning: Setting GA feature gate JobSuccessPolicy=true. It will be removed in a future release." in err


@pytest.mark.parametrize("command", [["up"], ["run"], ["validate"], ["controller"]])
def test_every_component_command_takes_the_option(command: list[str]) -> None:
    code, out, _ = _invoke(*command, "--help")
    assert code == 0 and "--feature-gates" in out and "JobPodRestartLimit=false" in out
