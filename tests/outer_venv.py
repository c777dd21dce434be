"""A fresh venv that sees this interpreter's packages, for tests that install offline.

``--system-site-packages`` would give the base interpreter's packages, not those of the
venv the tests run in; a .pth file in the new venv adds this one's site directories."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path


def outer_venv(env_dir: Path) -> Path:
    """Make a venv at ``env_dir`` (no pip of its own) that finds this interpreter's
    packages; return its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    here = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    lines = "".join(f"import site; site.addsitedir({d!r})\n" for d in sorted(here))
    (Path(purelib) / "_outer_environment.pth").write_text(lines)
    return python
