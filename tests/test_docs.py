"""What the README tells a user holds: the resources it lists are the ones served, its kubectl lines are ones
kubectl accepts, the options it gives a `kjobs` command are ones that command takes, the offline `kjobs validate`
and `kjobs explain` sessions it shows print what kjobs prints, and every relative link of README.md and docs/*.md
reaches a file and heading that exist; and the LICENSE that pyproject names is the Apache License 2.0, unaltered."""

from __future__ import annotations

import hashlib
import re
import shlex
import tomllib
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from kjobs.api.features import KNOWN, Stage
from kjobs.cli import main
from kjobs.server.registry import BUILT_IN

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
    # the static rows: a test that served a CustomResourceDefinition earlier in this process added its own
    for r in BUILT_IN:
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


def _github_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a file's headings: lower case, punctuation but `-` and `_` dropped, spaces to `-`,
    a repeated one suffixed `-1`, `-2`, ... (headings inside code fences are not headings)."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    text = re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)
    for heading in re.findall(r"^#{1,6} (.+)$", text, flags=re.M):
        heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _broken_links(path: Path) -> list[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not checked here
            continue
        file, _, anchor = target.partition("#")
        resolved = (path.parent / file) if file else path
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in _github_anchors(resolved.read_text()):
            broken.append(f"{target}: no such heading in {file or path.name}")
    return broken


@pytest.mark.parametrize("name", ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))])
def test_relative_links_reach_an_existing_file_and_heading(name: str) -> None:
    assert _broken_links(ROOT / name) == []


def test_a_link_to_a_missing_heading_is_caught(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Title\n\n## Where it `lives`, and why\n\n```sh\n# not a heading\n```\n")
    (tmp_path / "b.md").write_text(
        "[ok](a.md#where-it-lives-and-why) [ok](a.md) [bad](a.md#not-a-heading) [gone](c.md) [web](https://x.y/#z)\n"
    )
    assert _broken_links(tmp_path / "b.md") == ["a.md#not-a-heading: no such heading in a.md", "c.md: no such file"]


def _console_sessions(section: str) -> list[tuple[str, list[str]]]:
    """The `$ kjobs ...` commands of a README section's console blocks, each with the lines shown after it."""
    sessions: list[tuple[str, list[str]]] = []
    start = README.index(f"\n### {section}\n")
    end = README.find("\n##", start + 1)
    for block in re.findall(r"```console\n(.*?)```", README[start:end], flags=re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                sessions.append((line[2:].split("  #")[0].strip(), []))
            elif sessions:
                sessions[-1][1].append(line)
    return sessions


OFFLINE_SESSIONS = [
    *_console_sessions("`kjobs validate FILE...`"),
    *(
        session
        for session in _console_sessions("`kjobs explain job NAME` and `kjobs explain --job JOB.yaml --pod POD.yaml`")
        if "--job" in session[0]  # `kjobs explain job NAME` needs a cluster
    ),
]


@pytest.mark.parametrize(("command", "shown"), OFFLINE_SESSIONS, ids=[c for c, _ in OFFLINE_SESSIONS])
def test_the_readmes_offline_sessions_print_what_it_shows(
    command: str, shown: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run from a clone's root as the README shows them, the commands need only the repository's files, and print
    exactly the lines the README shows under them (a command shown without output must still succeed or refuse,
    not crash)."""
    monkeypatch.chdir(ROOT)
    argv = shlex.split(command)
    assert argv[0] == "kjobs"
    result = CliRunner().invoke(main, argv[1:])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    if shown:
        assert result.output.splitlines() == shown
    else:
        assert result.output.strip()


def test_the_offline_sessions_are_found() -> None:
    assert len(OFFLINE_SESSIONS) >= 6, OFFLINE_SESSIONS


def _kjobs_command_lines(text: str) -> list[str]:
    """Every `kjobs ...` a text shows: in backquotes, or a line of a sh/console block (without its `$ ` or comment)."""
    lines = re.findall(r"`(kjobs [^`]+)`", text)
    for block in re.findall(r"```(?:sh|console)\n(.*?)```", text, flags=re.S):
        lines += [line.removeprefix("$ ").split("  #")[0] for line in block.splitlines()]
    return [line for line in lines if line.startswith("kjobs ")]


def _unknown_options(line: str) -> list[str]:
    """The options of a `kjobs SUBCOMMAND ...` line that the subcommand does not take (`a|b` choices are split)."""
    try:
        argv = shlex.split(line.replace("|", " "))[1:]
    except ValueError:
        return []
    command: click.Command = main
    while isinstance(command, click.Group) and argv and argv[0] in command.list_commands(click.Context(command)):
        command = command.get_command(click.Context(command), argv.pop(0)) or command
    if isinstance(command, click.Group):
        return []
    names = {name for param in command.params for name in (*param.opts, *param.secondary_opts)}
    options = [arg.split("=")[0] for arg in argv if arg.startswith("-") and arg != "-" and not arg[1:2].isdigit()]
    return [option for option in options if option not in names]


def test_every_option_the_readme_gives_a_kjobs_command_is_one_it_takes() -> None:
    lines = _kjobs_command_lines(README)
    assert len(lines) > 100
    assert [(line, _unknown_options(line)) for line in lines if _unknown_options(line)] == []


def test_an_option_a_command_does_not_take_is_caught() -> None:
    text = "`kjobs up --no-leader-elect` and\n```sh\n$ kjobs node join --name n --max-pods 3   # ok\n```\n"
    assert [_unknown_options(line) for line in _kjobs_command_lines(text)] == [["--no-leader-elect"], []]
