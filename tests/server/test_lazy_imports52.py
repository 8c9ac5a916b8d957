"""Modules a `kjobs run` never calls into are imported by the requests that need them (docs/startup52.md).

A `kjobs run` stores no CRD, makes no token request, review or server-side apply, names no CronJob or time
zone, keeps its objects in memory and proxies to no pod: the custom resources' serving (with the CRD schemas
and the printers' tables), RE2, `zoneinfo`, the token and review endpoints, the apply merge, the CronJob
validation, the SQLite store and the pod proxy (with `html.parser`) are then never used. The paths that use
them are held by their own tests (tests/api/test_crd_validation.py, tests/server/test_reviews.py,
test_service_account_tokens.py, test_apply*.py, tests/cronjob, tests/cli, tests/store,
tests/node/test_logsource_unreachable52.py); these check that they stay out of a run and come in with their
request.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

LAZY = {
    "kjobs.server.customresources",
    "kjobs.api.crschema",
    "kjobs.api.regexps",
    "re2",
    "kjobs.server.reviews",
    "kjobs.server.tokenrest",
    "kjobs.server.applymerge",
    "kjobs.api.validation_cronjob",
    "zoneinfo",
    "kjobs.store.sqlite",
    "kjobs.store.integrity",
    "sqlite3",
    "kjobs.server.proxy",
    "html.parser",
}

_JOB = (
    "{apiVersion: batch/v1, kind: Job, metadata: {name: one}, spec: {template: {spec: {restartPolicy: Never,"
    ' containers: [{name: c, image: busybox, command: [sh, -c, "true"]}]}}}}'
)


def _loaded(code: str, *args: str) -> set[str]:
    """Run `code` in a fresh interpreter; which of the `LAZY` modules it imported (printed at its exit)."""
    prelude = (
        "import atexit, sys\n"
        f"atexit.register(lambda: print('LOADED', *sorted(set(sys.modules).intersection({sorted(LAZY)!r}))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", prelude + code, *args], capture_output=True, text=True, timeout=120, env=os.environ
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("LOADED")]
    assert done.returncode == 0 and lines, (done.returncode, done.stdout, done.stderr)
    return set(lines[-1].split()[1:])


def test_a_one_pod_kjobs_run_imports_none_of_them(tmp_path: Path) -> None:
    """The console script's `kjobs run` end to end (its cluster, the Job's create, a pod, the exit)."""
    manifest = tmp_path / "one.yaml"
    manifest.write_text(_JOB)
    code = "import runpy\nsys.argv = ['kjobs', 'run', sys.argv[1]]\nrunpy.run_module('kjobs', run_name='__main__')\n"
    assert _loaded(code, str(manifest)) == set()


def test_each_request_imports_what_it_needs() -> None:
    """A CRD stored, a zone named, a CronJob validated, the SQLite store named: each imports its modules (the
    service's review, token and apply requests import theirs in the method, held by their tests)."""
    code = (
        "from kjobs.server import crdcontroller\n"
        "from kjobs.validate import validate_manifest\n"
        "from kjobs.api.cron import load_zone\n"
        f"assert not set(sys.modules).intersection({sorted(LAZY)!r})\n"
        "crdcontroller._sync([{'metadata': {'name': 'a'}}])\n"
        "assert load_zone('Europe/Paris').key == 'Europe/Paris'\n"
        "validate_manifest({'apiVersion': 'batch/v1', 'kind': 'CronJob', 'metadata': {'name': 'c'}})\n"
        "import kjobs.store.sqlite, kjobs.store.integrity\n"
        "from kjobs.store import SCRUB_INTERVAL, SqliteStore, StoreDamaged\n"
        "assert (SCRUB_INTERVAL, SqliteStore) == (kjobs.store.sqlite.SCRUB_INTERVAL, kjobs.store.sqlite.SqliteStore)\n"
        "assert StoreDamaged is kjobs.store.integrity.StoreDamaged\n"
    )
    assert {"kjobs.server.customresources", "kjobs.api.crschema", "kjobs.api.validation_cronjob", "zoneinfo"} <= (
        _loaded(code)
    )


def test_the_store_package_names_the_sqlite_store_when_asked() -> None:
    """`kjobs.store`'s surface is as before: its lazy names come from their modules, others raise as before."""
    code = (
        "import kjobs.store\n"
        f"assert not set(sys.modules).intersection({sorted(LAZY)!r})\n"
        "assert kjobs.store.open_store(None).__class__ is kjobs.store.MemoryStore\n"
        "assert 'kjobs.store.sqlite' not in sys.modules\n"
        "assert issubclass(kjobs.store.SqliteStore, kjobs.store.Store)\n"
        "try:\n    kjobs.store.Nothing\nexcept AttributeError as exc:\n"
        "    assert str(exc) == \"module 'kjobs.store' has no attribute 'Nothing'\", exc\n"
        "else:\n    raise AssertionError\n"
    )
    assert {"kjobs.store.sqlite", "kjobs.store.integrity", "sqlite3"} <= _loaded(code)


def test_syncing_no_crds_before_any_was_served_changes_nothing() -> None:
    """The form replaced, `customresources.sync([])` at a service's start, left the served resources, the custom
    printers and the field labels as they were: skipping it while that module was never imported is the same."""
    code = (
        "import copy\n"
        "from kjobs.api import selectors\n"
        "from kjobs.server import crdcontroller, registry, tables\n"
        "def state():\n"
        "    return copy.copy((list(registry.RESOURCES), list(registry.STORED), dict(registry.BY_PATH),\n"
        "        {k: list(v) for k, v in registry.GROUPS.items()}, dict(tables.CUSTOM_PRINTERS),\n"
        "        {k: set(v) for k, v in selectors.FIELD_LABELS.items()}, dict(selectors._PLANS)))\n"
        "before = state()\n"
        "crdcontroller._sync([])\n"
        "assert 'kjobs.server.customresources' not in sys.modules\n"
        "assert state() == before\n"
        "from kjobs.server import customresources\n"
        "customresources.sync([])\n"  # the old form
        "assert state() == before\n"
    )
    assert "kjobs.server.customresources" in _loaded(code)
