"""`kjobs validate` as a user runs it: examples are valid, errors print as kubectl prints them."""

from __future__ import annotations

from pathlib import Path

import orjson
from click.testing import CliRunner

from kjobs.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BAD = """\
apiVersion: batch/v1
kind: Job
metadata: {name: bad}
spec:
  template:
    spec:
      restartPolicy: OnFailure
      containers: [{name: main, image: busybox}]
  podFailurePolicy:
    rules:
    - action: Foo
      onExitCodes: {operator: In, values: [0, 2, 1]}
"""


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_examples_are_valid() -> None:
    files = sorted(str(p) for p in EXAMPLES.glob("*.yaml"))
    code, out, _ = run("validate", *files)
    assert code == 0, out
    assert out.count(" is valid") == len(files)


def test_invalid_job_lists_every_error_like_kubectl(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD)
    code, out, _ = run("validate", str(bad))
    assert code == 1
    assert out.splitlines() == [
        f'{bad}: The Job "bad" is invalid:',
        '* spec.podFailurePolicy.rules[0].action: Unsupported value: "Foo": supported values: '
        '"Count", "FailIndex", "FailJob", "Ignore"',
        "* spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator",
        "* spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{0, 2, 1}: must be ordered",
        '* spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when '
        "podFailurePolicy is specified",
    ]


def test_json_output_is_the_422_status(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD)
    code, out, _ = run("validate", str(bad), "-o", "json")
    assert code == 1
    status = orjson.loads(out)
    assert (status["kind"], status["reason"], status["code"]) == ("Status", "Invalid", 422)
    assert status["details"]["kind"] == "Job"
    assert status["details"]["group"] == "batch"
    assert status["details"]["causes"][0] == {
        "reason": "FieldValueNotSupported",
        "message": 'Unsupported value: "Foo": supported values: "Count", "FailIndex", "FailJob", "Ignore"',
        "field": "spec.podFailurePolicy.rules[0].action",
    }
    assert status["message"].startswith('Job.batch "bad" is invalid: [spec.podFailurePolicy.rules[0].action: ')


def test_unparsable_yaml_exits_2_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_text("kind: Job\nspec: {template: [\n")
    code, out, err = run("validate", str(bad))
    assert code == 2
    assert "invalid YAML" in err
    assert "Traceback" not in out + err


def test_unsupported_kind(tmp_path: Path) -> None:
    svc = tmp_path / "svc.yaml"
    svc.write_text("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n")
    code, out, _ = run("validate", str(svc))
    assert code == 1
    assert '* kind: Unsupported value: "Service": supported values: "Job", "Pod"' in out
