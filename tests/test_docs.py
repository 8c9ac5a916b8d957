"""What the README tells a user holds: the resources it lists are the ones served, its kubectl lines are ones
kubectl accepts; and the LICENSE that pyproject names is the Apache License 2.0, unaltered."""

from __future__ import annotations

import hashlib
import re
import shlex
import tomllib
from pathlib import Path

from kjobs.api.features import KNOWN, Stage
from kjobs.server.registry import RESOURCES

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
# sha256 of https://www.apache.org/licenses/LICENSE-2.0.txt (also Debian's /usr/share/common-licenses/Apache-2.0)
APACHE_2_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"


def _section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else len(README)]


def _shell_lines() -> list[str]:
    blocks = re.findall(r"```(?:sh|console)\n(.*?)```", README, flags=re.S)
    return [line.split("#")[0].strip() for block in blocks for line in block.splitlines()]


def test_served_resources_table_is_the_registry() -> None:
    listed: dict[str, set[str]] = {}
    for row in re.findall(r"^\| `([^`]+)` \| (.+) \|$", _section("What the API serves"), flags=re.M):
        group_version, cells = row
        for plural, subs in re.findall(r"`([a-z]+)`(?: \(([^)]*)\))?", cells):
            names = {plural} | {f"{plural}/{s.strip('` ')}" for s in subs.split(",") if s.strip()}
            listed.setdefault(group_version, set()).update(names)
    served: dict[str, set[str]] = {}
    for r in RESOURCES:
        names = {r.plural} | {f"{r.plural}/{s}" for s in r.subresources}
        served.setdefault(r.api_version, set()).update(names)
    assert listed == served


def test_kubectl_watches_name_one_resource_type() -> None:
    """kubectl refuses `get a,b -w` ("you may only specify a single resource type")."""
    gets = [line for line in _shell_lines() if line.startswith("kubectl get")]
    watches = [line for line in gets if re.search(r"\s(-w|--watch)\b", line)]
    assert watches
    for line in watches:
        types = [word for word in shlex.split(line)[2:] if not word.startswith("-")][:1]
        assert types and "," not in types[0], line


def test_license_is_the_apache_license_2_0() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["license"] == "Apache-2.0"
    assert hashlib.sha256((ROOT / "LICENSE").read_bytes()).hexdigest() == APACHE_2_SHA256


def test_feature_gates_table_is_the_gate_list() -> None:
    rows = re.findall(r"^\| `([A-Za-z]+)` \| ([^|]+) \| (true|false) \|", _section("Feature gates"), flags=re.M)
    listed = {name: (stage.strip(), default == "true") for name, stage, default in rows}
    stages = {Stage.ALPHA: "alpha", Stage.BETA: "beta", Stage.GA: "GA"}
    assert set(listed) == set(KNOWN)
    for name, spec in KNOWN.items():
        assert listed[name][1] == spec.default, name
        assert listed[name][0].startswith(stages[spec.stage]), name
