"""The plugin is loaded into every pytest run where kjobs is installed: loading it must import nothing heavy."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("yaml", "orjson", "uvloop", "uvicorn", "kubernetes", "starlette", "cryptography")


def test_loading_the_plugin_imports_only_kjobs_itself_and_the_plugin() -> None:
    code = (
        "import sys, json, pytest; before = set(sys.modules); import kjobs.pytest_plugin; "
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    added = json.loads(out)
    assert [m for m in added if m.startswith("kjobs")] == ["kjobs", "kjobs.pytest_plugin"]
    assert [m for m in added if m.split(".")[0] in HEAVY] == []


def test_kjobs_public_names_still_import_on_first_use() -> None:
    import kjobs

    assert kjobs.validate_manifest({"apiVersion": "v1", "kind": "Pod"}) != []
    assert callable(kjobs.explain) and callable(kjobs.load_manifests)


def test_the_public_explain_is_the_function_even_after_its_module_was_imported() -> None:
    """`kjobs.explain(job, pod)` (README: Python API) stays the function whatever was imported before it."""
    code = (
        "import kjobs.explanation, kjobs.cli.explain, kjobs, types; "
        "assert not isinstance(kjobs.explain, types.ModuleType); print(kjobs.explain.__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out == "explain\n"
