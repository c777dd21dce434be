"""Open a report.html in headless Chromium and save a screenshot of it.

    python -m acl_conformance.reports.screenshot REPORT_HTML OUT_PNG [--width W] [--height H]

Used to check by eye (and in tests/test_report_in_browser.py, by pixels) that
the self-contained page renders in a real browser.  Needs Debian's
``chromium`` (or ``CHROMIUM=/path/to/chrome``); says so and exits 2 without it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# The browser runs as root in a sandbox with a closed network: no sandbox of its
# own, no GPU, and none of the background connections it would make at start.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def find_chromium() -> str | None:
    """The browser to use: $CHROMIUM, else chromium or chromium-browser on PATH."""
    explicit = os.environ.get("CHROMIUM")
    if explicit:
        return explicit if Path(explicit).exists() else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def screenshot(
    html: Path, png: Path, *, width: int = 1280, height: int = 1600, timeout: float = 60
) -> None:
    """Render `html` at width x height CSS pixels into `png`; raise RuntimeError on failure."""
    browser = find_chromium()
    if browser is None:
        raise RuntimeError("no Chromium found (install Debian's chromium, or set CHROMIUM)")
    png = png.resolve()
    png.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="acl-conformance-chromium-") as profile:
        cmd = [
            browser,
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            f"--screenshot={png}",
            html.resolve().as_uri(),
        ]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{browser} did not finish within {timeout:g} s") from None
    if not png.exists() or png.stat().st_size == 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise RuntimeError(
            f"{browser} exited {done.returncode} without writing {png}: " + " | ".join(tail)
        )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m acl_conformance.reports.screenshot")
    p.add_argument("html", type=Path, help="the report.html to open")
    p.add_argument("png", type=Path, help="where to save the screenshot")
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=1600)
    a = p.parse_args(argv)
    if not a.html.is_file():
        print(f"error: {a.html} is not a file", file=sys.stderr)
        return 2
    try:
        screenshot(a.html, a.png, width=a.width, height=a.height)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(a.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
