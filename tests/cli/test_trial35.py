"""Stop 35's trial (docs/trial-stop35.md): Jobs written from kubernetes.io's pages and the KEPs, run through
`kjobs validate`, `run`, `explain` and `simulate` as a new user would, each test failing before its fix."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kjobs.cli import main

LONG = "long-name-for-the-job-that-is-more-than-sixty-three-characters-long-x"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def job(name: str, spec: str = "", restart: str = "Never") -> str:
    return f"""\
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
spec:
{spec}
  template:
    spec:
      restartPolicy: {restart}
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "exit 0"]
"""


WRONG_CONTAINER = job(
    "wrong-container",
    """  podFailurePolicy:
    rules:
    - action: FailJob
      onExitCodes: {containerName: mian, operator: In, values: [42]}""",
)
WRONG_CONTAINER_ERROR = (
    'The Job "wrong-container" is invalid: spec.podFailurePolicy.rules[0].onExitCodes.containerName: '
    'Invalid value: "mian": must be one of the container or initContainer names in the pod template'
)


def test_one_error_is_printed_on_the_line_of_its_object_as_kubectl_prints_it(tmp_path: Path) -> None:
    """kubectl's `MultilineError` puts a single cause after `The Job "x" is invalid: ` (helpers.go); it was
    printed as a `* ` list of one."""
    manifest = tmp_path / "wrong.yaml"
    manifest.write_text(WRONG_CONTAINER)
    code, out, _ = run("validate", str(manifest))
    assert (code, out) == (1, f"{manifest}: {WRONG_CONTAINER_ERROR}\n")
    code, _, err = run("run", str(manifest))
    assert (code, err) == (2, f"error: {manifest}: {WRONG_CONTAINER_ERROR}\n")
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: main}]}\n")
    code, _, err = run("explain", "--job", str(manifest), "--pod", str(pod))
    assert (code, err) == (2, f"error: {manifest}: {WRONG_CONTAINER_ERROR}\n")


def test_an_error_repeated_among_the_causes_is_printed_once(tmp_path: Path) -> None:
    """A Job name over 63 characters breaks both `job-name` labels of the pod template: two causes with the same
    field and message, which kubectl's `statusCausesToAggrError` prints once (kubernetes/kubernetes#50850 shows
    the one line)."""
    manifest = tmp_path / "long.yaml"
    manifest.write_text(job(LONG))
    code, out, _ = run("validate", str(manifest))
    assert (code, out) == (
        1,
        f'{manifest}: The Job "{LONG}" is invalid: spec.template.labels: Invalid value: "{LONG}": '
        "must be no more than 63 bytes\n",
    )


def test_several_errors_follow_the_prefix_with_its_trailing_space(tmp_path: Path) -> None:
    manifest = tmp_path / "neg.yaml"
    manifest.write_text(job("neg", "  parallelism: -1\n  completions: -2"))
    code, out, _ = run("validate", str(manifest))
    assert (code, out) == (
        1,
        f'{manifest}: The Job "neg" is invalid: \n'
        "* spec.parallelism: Invalid value: -1: must be greater than or equal to 0\n"
        "* spec.completions: Invalid value: -2: must be greater than or equal to 0\n",
    )
