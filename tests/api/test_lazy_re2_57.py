"""RE2 is imported by the first custom-resource value checked against a schema `pattern`, not with the schema
module, which every `kjobs up` imports (with the app) and most never use for a pattern."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_re2_comes_with_the_first_pattern_and_decides_as_before() -> None:
    script = textwrap.dedent(
        """
        import sys
        import kjobs.server.app
        from kjobs.api import crschema
        print("re2" in sys.modules)
        schema = {"type": "object", "properties": {"tag": {"type": "string", "pattern": "^v[0-9]+$"}}}
        print([str(e) for e in crschema.validate({"tag": "v12"}, schema)])
        print([str(e) for e in crschema.validate({"tag": "latest"}, schema)])
        print("re2" in sys.modules)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "False",
        "[]",
        """['tag: Invalid value: "latest": tag in body should match \\'^v[0-9]+$\\'']""",
        "True",
    ]
