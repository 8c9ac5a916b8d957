"""`kjobs validate` as a user runs it: examples are valid, errors print as kubectl prints them."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from kjobs.api.manifest import load_manifests
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


GATED_EXAMPLES = {"onfailure-failjob.yaml", "restart-rules.yaml"}
"""Examples that use fields of kjobs' own alpha gates (README: Feature gates)."""


def test_examples_are_valid() -> None:
    """Every example is valid with every gate on, and every one without kjobs' fields at the default gates."""
    files = sorted(EXAMPLES.glob("*.yaml"))
    code, out, _ = run("validate", "--feature-gates", "AllAlpha=true", *map(str, files))
    assert code == 0, out
    assert out.count(" is valid") == sum(len(load_manifests(p)) for p in files)
    plain = [p for p in files if p.name not in GATED_EXAMPLES]
    code, out, _ = run("validate", *map(str, plain))
    assert code == 0, out
    assert out.count(" is valid") == sum(len(load_manifests(p)) for p in plain)


def test_each_document_of_a_manifest_is_validated(tmp_path: Path) -> None:
    code, out, _ = run("validate", str(EXAMPLES / "settings-from-configmap.yaml"))
    assert code == 0, out
    assert 'ConfigMap "app-settings" is valid' in out
    assert 'Secret "app-credentials" is valid' in out
    assert 'Job "settings-from-configmap" is valid' in out
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {'a b': x}\n---\n"
        "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ntype: kubernetes.io/tls\n"
    )
    code, out, _ = run("validate", str(bad))
    assert code == 1, out
    assert 'The ConfigMap "c" is invalid: data[a b]: Invalid value: "a b": a valid config key must' in out
    assert 'The Secret "s" is invalid: \n* data[tls.crt]: Required value\n* data[tls.key]: Required value' in out


def test_a_secret_whose_string_data_yaml_reads_as_a_bool_is_refused(tmp_path: Path) -> None:
    # `on: yes` is {"on": true} to YAML 1.1 (kubectl's reader too): the API server cannot decode it
    bad = tmp_path / "bool.yaml"
    bad.write_text("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {on: yes}\n")
    code, out, _ = run("validate", str(bad))
    assert code == 1, out
    assert (
        'Secret in version "v1" cannot be handled as a Secret: '
        "json: cannot unmarshal bool into Go struct field Secret.stringData of type string"
    ) in out


@pytest.mark.parametrize("name", sorted(GATED_EXAMPLES))
def test_gated_examples_are_refused_at_the_default_gates(name: str) -> None:
    code, out, _ = run("validate", str(EXAMPLES / name))
    assert code == 1, out
    assert "strict decoding error: unknown field" in out


@pytest.mark.parametrize(
    ("name", "gates"),
    [
        ("restart-rules.yaml", "ExitCodeRanges=true"),
        # the podFailurePolicy under OnFailure needs a gate of its own: named in the same hint, so that one try
        # gets past both refusals (the user of this trial was sent from one to the next: docs/beyond-trial.md)
        (
            "onfailure-failjob.yaml",
            "JobPodRestartLimit=true,PodFailurePolicyRuleName=true,JobPodFailurePolicyOnFailure=true",
        ),
    ],
)
def test_a_field_behind_a_gate_that_is_off_names_the_gate(name: str, gates: str) -> None:
    code, out, err = run("validate", str(EXAMPLES / name))
    assert code == 1
    assert "strict decoding error: unknown field" in out  # Kubernetes' message, unchanged
    assert err == f"hint: feature gates that are off serve some of these fields: try --feature-gates {gates}\n"
    code, out, err = run("validate", "--feature-gates", gates, str(EXAMPLES / name))
    assert code == 0, out
    assert "hint" not in err


POLICY_UNDER_ON_FAILURE = """\
apiVersion: batch/v1
kind: Job
metadata: {name: limited}
spec:
  podFailurePolicy:
    rules: [{action: FailJob, onExitCodes: {operator: In, values: [42]}}]
  template:
    spec:
      restartPolicy: OnFailure
      maxRestartTimes: 2
      containers: [{name: main, image: busybox}]
"""


def test_a_refusal_that_a_gate_that_is_off_would_lift_names_the_gate(tmp_path: Path) -> None:
    """The field is served (JobPodRestartLimit on) but the policy under OnFailure is refused with Kubernetes'
    message, which does not say that kjobs' JobPodFailurePolicyOnFailure allows it."""
    job = tmp_path / "job.yaml"
    job.write_text(POLICY_UNDER_ON_FAILURE)
    code, out, err = run("validate", "--feature-gates", "JobPodRestartLimit=true", str(job))
    assert code == 1
    assert 'only "Never" is supported when podFailurePolicy is specified' in out  # Kubernetes' message, unchanged
    assert err == "hint: feature gates that are off would change this answer: try --feature-gates " + (
        "JobPodFailurePolicyOnFailure=true\n"
    )
    code, out, err = run("run", "--feature-gates", "JobPodRestartLimit=true", str(job))
    assert code == 2
    assert err.splitlines()[-1] == (
        "hint: feature gates that are off would change this answer: try --feature-gates "
        "JobPodFailurePolicyOnFailure=true"
    )
    code, out, err = run(
        "validate", "--feature-gates", "JobPodRestartLimit=true,JobPodFailurePolicyOnFailure=true", str(job)
    )
    assert code == 0, out


def test_a_misspelt_field_gets_no_gate_hint(tmp_path: Path) -> None:
    typo = tmp_path / "typo.yaml"
    text = (EXAMPLES / "failjob-exit-42.yaml").read_text().replace("backoffLimit:", "backofLimit:")
    assert "backofLimit" in text
    typo.write_text(text)
    code, out, err = run("validate", str(typo))
    assert code == 1
    assert 'unknown field "spec.backofLimit"' in out
    assert "hint" not in err


def test_invalid_job_lists_every_error_like_kubectl(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD)
    code, out, _ = run("validate", str(bad))
    assert code == 1
    assert out.splitlines() == [
        f'{bad}: The Job "bad" is invalid: ',
        '* spec.podFailurePolicy.rules[0].action: Unsupported value: "Foo": supported values: '
        '"Count", "FailIndex", "FailJob", "Ignore"',
        "* spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator",
        "* spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: [0,2,1]: must be ordered",
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


@pytest.mark.parametrize("text", ["", "# nothing yet\n---\n"], ids=["empty", "comments-only"])
def test_a_file_without_objects_is_an_error_not_a_silent_pass(tmp_path: Path, text: str) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text(text)
    code, out, err = run("validate", str(empty))
    assert code == 2
    assert err == f"error: {empty}: no objects to validate\n"
    assert out == ""


def test_a_service_is_validated_as_kjobs_up_validates_it(tmp_path: Path) -> None:
    """Once refused as an unsupported kind; now what `kubectl create --dry-run=server` says to `kjobs up`."""
    svc = tmp_path / "svc.yaml"
    svc.write_text("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n")
    code, out, _ = run("validate", str(svc))
    assert code == 1
    assert out == f'{svc}: The Service "s" is invalid: spec.ports: Required value\n'


def test_a_cronjob_is_validated_as_the_api_server_validates_it(tmp_path: Path) -> None:
    manifest = tmp_path / "cron.yaml"
    manifest.write_text(
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n  schedule: '*/5 * * *'\n"
        "  jobTemplate:\n    spec:\n      template:\n        spec:\n"
        "          containers: [{name: c, image: busybox, command: [sh]}]\n"
    )
    code, out, _ = run("validate", str(manifest))
    assert code == 1
    assert out.splitlines() == [
        f'{manifest}: The CronJob "nightly" is invalid: ',
        '* spec.schedule: Invalid value: "*/5 * * *": expected exactly 5 fields, found 4: [*/5 * * *]',
        '* spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
    ]
    text = manifest.read_text().replace("'*/5 * * *'", "'*/5 * * * *'")
    manifest.write_text(
        text.replace("spec:\n          containers", "spec:\n          restartPolicy: Never\n          containers")
    )
    assert run("validate", str(manifest))[:2] == (0, f'{manifest}: CronJob "nightly" is valid\n')


TYPO = """\
apiVersion: batch/v1
kind: Job
metadata: {name: typo}
spec:
  backofLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, cmmand: ["true"]}]
"""
STRICT_MESSAGE = (
    'Job in version "v1" cannot be handled as a Job: strict decoding error: '
    'unknown field "spec.backofLimit", unknown field "spec.template.spec.containers[0].cmmand"'
)


def server_answer(body: str) -> str:
    """What the API server of `kjobs up` answers `kubectl apply` (fieldValidation=Strict) for this manifest."""
    import asyncio

    import yaml

    from kjobs.api.errors import ApiError
    from kjobs.server.app import create_app
    from kjobs.server.registry import lookup
    from kjobs.store import MemoryStore

    async def create() -> str:
        service = create_app(MemoryStore()).service
        await service.ensure_namespaces()
        try:
            jobs = lookup("batch", "v1", "jobs")
            assert jobs is not None
            await service.create(jobs, "default", yaml.safe_load(body), field_validation="Strict")
        except ApiError as exc:
            return exc.message
        return "created"

    return asyncio.run(create())


def test_unknown_fields_are_rejected_by_default_with_the_servers_message(tmp_path: Path) -> None:
    typo = tmp_path / "typo.yaml"
    typo.write_text(TYPO)
    assert server_answer(TYPO) == STRICT_MESSAGE
    for args in ((), ("--validate=strict",), ("--validate", "true")):
        code, out, _ = run("validate", *args, str(typo))
        assert (code, out) == (1, f"{typo}: {STRICT_MESSAGE}\n")
    code, out, _ = run("validate", "-o", "json", str(typo))
    assert code == 1
    assert orjson.loads(out) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": STRICT_MESSAGE,
        "reason": "BadRequest",
        "code": 400,
    }


def test_validate_warn_prints_kubectls_warnings_and_ignore_drops_them(tmp_path: Path) -> None:
    typo = tmp_path / "typo.yaml"
    typo.write_text(TYPO)
    code, out, err = run("validate", "--validate=warn", str(typo))
    assert (code, out) == (0, f'{typo}: Job "typo" is valid\n')
    assert err.splitlines() == [
        'Warning: unknown field "spec.backofLimit"',
        'Warning: unknown field "spec.template.spec.containers[0].cmmand"',
    ]
    for mode in ("ignore", "false"):
        assert run("validate", f"--validate={mode}", str(typo)) == (0, f'{typo}: Job "typo" is valid\n', "")


def test_an_unknown_validate_mode_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = run("validate", "--validate=loose", str(EXAMPLES / "failjob-exit-42.yaml"))
    assert code == 2
    assert "'loose' is not one of 'strict', 'true', 'warn', 'ignore', 'false'" in err


def test_generate_name_is_a_name_as_on_create(tmp_path: Path) -> None:
    """The API server makes the name from generateName before it validates (`kubectl create` of such a Job
    succeeds), so validate and run accept it, and a bad prefix is refused for both fields as the server does."""
    job = tmp_path / "gen.yaml"
    job.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: nightly-}\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers: [{name: main, image: x, command: [sh]}]\n"
    )
    code, out, _ = run("validate", str(job))
    assert (code, out) == (0, f'{job}: Job "nightly-" is valid\n')
    job.write_text(job.read_text().replace("nightly-", "Nightly_"))
    code, out, _ = run("validate", str(job))
    assert code == 1
    assert '* metadata.generateName: Invalid value: "Nightly_": a lowercase RFC 1123 subdomain' in out
    assert '* metadata.name: Invalid value: "Nightly_xxxxx": a lowercase RFC 1123 subdomain' in out


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [("batch/v2", "Job"), ("batch/v1", "Pod"), ("v1", "Job"), ("batch/v1beta1", "CronJob"), ("", "Job")],
)
def test_a_kind_not_served_at_its_api_version_is_refused_as_kubectl_refuses_it(
    tmp_path: Path, api_version: str, kind: str
) -> None:
    """kubectl maps apiVersion and kind to a resource before it sends anything, so a Job at `v1`, the CronJob of
    `batch/v1beta1` (removed in 1.25) or a Job without apiVersion never reaches the API server's validation."""
    manifest = tmp_path / "m.yaml"
    manifest.write_text(f"apiVersion: '{api_version}'\nkind: {kind}\nmetadata: {{name: m, namespace: team}}\n")
    code, out, _ = run("validate", str(manifest))
    assert code == 1
    assert out == (
        f'resource mapping not found for name: "m" namespace: "team" from "{manifest}": '
        f'no matches for kind "{kind}" in version "{api_version}"\nensure CRDs are installed first\n'
    )
    code, out, _ = run("validate", "-o", "json", str(manifest))
    assert (code, orjson.loads(out)["code"], orjson.loads(out)["reason"]) == (1, 404, "NotFound")


def test_an_object_without_apiversion_or_kind_is_refused_as_kubectl_refuses_it(tmp_path: Path) -> None:
    """kubectl checks apiVersion and kind first (kubectl pkg/validation `getObjectKind`); with --validate=false
    it decodes, and an object without kind cannot be decoded."""
    manifest = tmp_path / "m.yaml"
    manifest.write_text("metadata: {name: m}\n")
    code, out, _ = run("validate", str(manifest))
    assert (code, out) == (
        1,
        f'error validating "{manifest}": error validating data: [apiVersion not set, kind not set]; '
        "if you choose to ignore these errors, turn validation off with --validate=false\n",
    )
    code, out, _ = run("validate", "-o", "json", str(manifest))
    assert (code, orjson.loads(out)["code"], orjson.loads(out)["reason"]) == (1, 400, "BadRequest")
    result = CliRunner().invoke(main, ["validate", "-"], input="kind: Job\nmetadata: {name: m}\n")
    assert (result.exit_code, result.stdout) == (
        1,
        'error validating "STDIN": error validating data: apiVersion not set; '
        "if you choose to ignore these errors, turn validation off with --validate=false\n",
    )
    manifest.write_text("metadata: {name: m}\napiVersion: batch/v1\n")
    code, out, err = run("validate", "--validate=false", str(manifest))
    assert (code, out) == (2, "")
    assert err == (
        f"error: unable to decode \"{manifest}\": Object 'Kind' is missing in "
        """'{"apiVersion":"batch/v1","metadata":{"name":"m"}}'\n"""
    )


def test_a_directory_is_its_manifest_files_as_kubectl_reads_it(tmp_path: Path) -> None:
    """`kubectl apply -f DIR` reads DIR's .json, .yaml and .yml files, in name order, not its subdirectories."""
    for name in ("b.yml", "a.yaml", "c.json"):
        (tmp_path / name).write_text(
            orjson.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name.split(".")[0]}}).decode()
        )
    (tmp_path / "notes.txt").write_text("not a manifest")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.yaml").write_text("metadata: {}\n")
    code, out, _ = run("validate", str(tmp_path))
    assert code == 0, out
    assert [line.split(": ", 1)[1] for line in out.splitlines()] == [
        'ConfigMap "a" is valid',
        'ConfigMap "b" is valid',
        'ConfigMap "c" is valid',
    ]
    code, out, err = run("validate", str(tmp_path / "sub" / "d.yaml"), str(tmp_path / "sub"))
    assert code == 1
    assert out.count("[apiVersion not set, kind not set]") == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run("validate", str(empty))
    assert (code, err) == (2, f"error: error reading [{empty}]: recognized file extensions are [.json .yaml .yml]\n")


def test_a_job_without_metadata_is_only_missing_its_name(tmp_path: Path) -> None:
    """The namespace comes from the request (kubectl's default) even when the manifest has no metadata at all."""
    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        "apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n"
        "      containers: [{name: c, image: x}]\n"
    )
    code, out, _ = run("validate", str(manifest))
    assert (code, out) == (
        1,
        f'{manifest}: The Job "" is invalid: metadata.name: Required value: name or generateName is required\n',
    )


@pytest.mark.parametrize(("kind", "api_version"), [("Job", "batch/v1"), ("Pod", "v1"), ("Secret", "v1")])
def test_metadata_of_a_wrong_type_is_kubectls_decode_error(tmp_path: Path, kind: str, api_version: str) -> None:
    """kubectl decodes every object's metadata into ObjectMeta before it sends it (cli-runtime
    metadata_decoder.go): `metadata: x` or a number in labels is its own error, not a crash."""
    manifest = tmp_path / "m.yaml"
    manifest.write_text(f"apiVersion: {api_version}\nkind: {kind}\nmetadata: x\n")
    code, out, err = run("validate", str(manifest))
    assert (code, out, err) == (
        2,
        "",
        f'error: unable to decode "{manifest}": json: cannot unmarshal string into Go struct field '
        "metadataOnlyObject.metadata of type v1.ObjectMeta\n",
    )
    manifest.write_text(f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: m, labels: {{tier: 1}}}}\n")
    code, _, err = run("validate", str(manifest))
    assert (code, err) == (
        2,
        f'error: unable to decode "{manifest}": json: cannot unmarshal number into Go struct field '
        "ObjectMeta.metadata.labels of type string\n",
    )


def test_a_mis_indented_list_is_the_decoders_400_as_kubectl_shows_it(tmp_path: Path) -> None:
    """`containers:` followed by a mapping (the `- ` forgotten) or `command: sh -c ...` cannot be decoded into
    the Go structs: kube-apiserver answers 400 before it validates, and so does kjobs validate."""
    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: m}\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers:\n        name: main\n        image: busybox\n"
    )
    code, out, _ = run("validate", str(manifest))
    assert (code, out) == (
        1,
        f'{manifest}: Job in version "v1" cannot be handled as a Job: json: cannot unmarshal object into Go struct '
        "field PodSpec.spec.template.spec.containers of type []v1.Container\n",
    )
    code, out, _ = run("validate", "-o", "json", str(manifest))
    assert (orjson.loads(out)["code"], orjson.loads(out)["reason"]) == (400, "BadRequest")


def test_a_policy_under_on_failure_without_a_restart_limit_is_told_what_is_missing(tmp_path: Path) -> None:
    """With every gate on, Kubernetes' message (kept: a Kubernetes manifest reads the same with the gates on) says
    only "Never" is supported, which the gates made untrue: the hint names the missing field."""
    job = tmp_path / "job.yaml"
    job.write_text(POLICY_UNDER_ON_FAILURE.replace("      maxRestartTimes: 2\n", ""))
    code, out, err = run("validate", "--feature-gates", "AllAlpha=true", str(job))
    assert code == 1
    assert 'only "Never" is supported when podFailurePolicy is specified' in out
    assert err == (
        'hint: kjobs allows a podFailurePolicy with restartPolicy "OnFailure" together with '
        "spec.template.spec.maxRestartTimes, so that the Job counts failed pods, not container restarts\n"
    )
    code, out, err = run("validate", str(job))
    assert "(feature gates JobPodFailurePolicyOnFailure and JobPodRestartLimit, which are off)" in err


BAD_VOLUMES = """\
apiVersion: batch/v1
kind: Job
metadata: {name: vols}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
      volumes:
      - {name: data, hostPath: {path: /srv/.., type: Dir}}
      - name: info
        downwardAPI:
          items: [{path: node, fieldRef: {fieldPath: spec.nodeName}}]
      - name: token
        projected: {sources: [{serviceAccountToken: {path: token, expirationSeconds: 60}}]}
"""


def test_a_job_with_bad_volume_sources_prints_kubernetes_errors(tmp_path: Path) -> None:
    """Volume sources are validated as kube-apiserver validates them (src/kjobs/api/validation_volumes.py);
    `fieldRef.apiVersion` and a hostPath's other defaults are filled in first, as the API server does."""
    manifest = tmp_path / "vols.yaml"
    manifest.write_text(BAD_VOLUMES)
    code, out, _ = run("validate", str(manifest))
    assert code == 1, out
    at = "spec.template.spec.volumes"
    assert out == (
        f'{manifest}: The Job "vols" is invalid: \n'
        f"* {at}[0].hostPath.path: Invalid value: \"/srv/..\": must not contain '..'\n"
        f'* {at}[0].hostPath.type: Unsupported value: "Dir": supported values: "", "BlockDevice", "CharDevice", '
        '"Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"\n'
        f'* {at}[1].downwardAPI.fieldRef.fieldPath: Unsupported value: "spec.nodeName": supported values: '
        '"metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"\n'
        f"* {at}[2].projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: 60: may not specify "
        "a duration less than 10 minutes\n"
    )


def test_rbac_roles_and_bindings_are_validated_as_the_api_server_validates_them(tmp_path: Path) -> None:
    manifest = tmp_path / "rbac.yaml"
    manifest.write_text(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r}\n"
        "rules: [{verbs: [get], resources: [pods]}]\n---\n"
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: b}\n"
        "roleRef: {kind: Role, name: r}\nsubjects: [{kind: ServiceAccount, name: sa}]\n---\n"
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: ok}\n"
        "roleRef: {kind: ClusterRole, name: view}\nsubjects: [{kind: User, name: jane}]\n"
    )
    code, out, _ = run("validate", str(manifest))
    assert code == 1
    assert out.splitlines() == [
        f'{manifest}: The Role "r" is invalid: rules[0].apiGroups: Required value: resource rules must supply at '
        "least one api group",
        f'{manifest}: The ClusterRoleBinding "b" is invalid: ',
        '* roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
        "* subjects[0].namespace: Required value",
        f'{manifest}: RoleBinding "ok" is valid',
    ]
