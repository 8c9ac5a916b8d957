"""The `kjobs simulate --report` page renders in headless Chromium (Debian's `chromium`, installed by .ci/run) to a
screenshot that is more than a blank page. Without chromium the test skips, except under CI=true, where it fails."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from kjobs.api.types import Obj
from kjobs.simulate import SimulationOptions, parse_model, simulate
from kjobs.simulate.report import write_report

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1200,900",
)


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing (CI installs Debian's chromium package in .ci/run)")
        pytest.skip("chromium is not installed")
    return found


def png_rows(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and unfiltered scanlines of an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        header, idat = (body, idat) if kind == b"IHDR" else (header, idat + body if kind == b"IDAT" else idat)
        pos += 12 + length
    width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert (depth, colour_type, interlace) in ((8, 2, 0), (8, 6, 0))
    bpp = 3 if colour_type == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytes(width * bpp)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left, up = line[i - bpp] if i >= bpp else 0, prev[i]
            upleft = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - upleft
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - upleft)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else upleft)) & 0xFF
        prev = bytes(line)
        rows.append(prev)
    return width, height, rows


def test_the_report_renders_in_headless_chromium_to_a_screenshot_with_its_plots(tmp_path: Path) -> None:
    browser = chromium()
    job: Obj = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "shot", "namespace": "default"},
        "spec": {
            "completionMode": "Indexed",
            "completions": 12,
            "parallelism": 4,
            "backoffLimitPerIndex": 2,
            "podFailurePolicy": {"rules": [{"action": "Ignore", "onExitCodes": {"operator": "In", "values": [3]}}]},
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]}},
        },
    }
    codes = [{"code": 0, "weight": 0.7}, {"code": 1, "weight": 0.2}, {"code": 3, "weight": 0.1}]
    model = parse_model({"containers": {"runTime": {"constant": "30s"}, "exitCodes": codes}})
    report, shot = tmp_path / "report.html", tmp_path / "shot.png"
    write_report(report, [simulate(job, SimulationOptions(model=model, seed=seed)) for seed in range(3)])
    subprocess.run(
        [browser, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", report.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    width, height, rows = png_rows(shot.read_bytes())
    assert (width, height) == (1200, 900)
    # Not a blank page: many colours, among them the succeeded bars' green (#2f9e44) drawn from the inline SVG.
    bpp = len(rows[0]) // width
    pixels = {bytes(row[i : i + 3]) for row in rows[::4] for i in range(0, len(row), bpp * 4)}
    assert len(pixels) > 20
    assert bytes.fromhex("2f9e44") in pixels
