"""The functions the agent needs of a library, and the check that a library has them.

The agent links every function of :data:`REQUIRED` (the plain build also
``aclConformanceRegisterVariable``, :data:`REGISTER`), and looks up each of
:data:`SYMBOL_APIS` at start-up (CANN has them only from 9.1.0): a library without
them is a legal backend whose symbol requirements are reported not supported.  A
library that lacks a required function would fail at link time with the linker's
words; :func:`check_library` says which functions are missing instead, in one line,
before anything is built.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REQUIRED: tuple[str, ...] = (
    "aclInit",
    "aclFinalize",
    "aclsysGetVersionStr",
    "aclrtSetDevice",
    "aclrtResetDevice",
    "aclrtGetDevice",
    "aclrtGetDeviceCount",
    "aclrtSynchronizeDevice",
    "aclrtCreateStream",
    "aclrtDestroyStream",
    "aclrtSynchronizeStream",
    "aclrtSynchronizeStreamWithTimeout",
    "aclrtStreamQuery",
    "aclrtLaunchHostFunc",
    "aclrtCreateEvent",
    "aclrtDestroyEvent",
    "aclrtRecordEvent",
    "aclrtStreamWaitEvent",
    "aclrtSynchronizeEvent",
    "aclrtMallocHost",
    "aclrtFreeHost",
    "aclrtHostRegisterV2",
    "aclrtHostUnregister",
)
"""The ACL functions ``agent/agent.cpp`` calls directly (it links them)."""

REGISTER = "aclConformanceRegisterVariable"
"""Registers a fixture variable with a library that is not CANN (plain builds only;
``include/acl_conformance/register.h``)."""

SYMBOL_APIS: tuple[str, ...] = (
    "aclrtGetSymbolAddress",
    "aclrtGetSymbolSize",
    "aclrtMemcpyToSymbol",
    "aclrtMemcpyToSymbolAsync",
    "aclrtMemcpyFromSymbol",
    "aclrtMemcpyFromSymbolAsync",
)
"""Looked up with ``dlsym`` at start-up; each may be absent."""


def defined_functions(library: Path) -> set[str] | None:
    """The names ``library`` exports (its defined dynamic symbols), read with ``nm -D``
    without loading it; None when they cannot be read (no ``nm``, not a shared object)."""
    nm = shutil.which("nm")
    if nm is None:
        return None
    try:
        proc = subprocess.run(
            [nm, "-D", "--defined-only", str(library)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    names = set()
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            names.add(parts[-1].split("@")[0])
    return names


def missing_functions(library: Path) -> list[str]:
    """The functions of :data:`REQUIRED` and :data:`REGISTER` that ``library`` does not
    export ([] if it has them all, or if its exports cannot be read: the link then says)."""
    names = defined_functions(library)
    if names is None:
        return []
    return [f for f in (*REQUIRED, REGISTER) if f not in names]


def check_library(library: Path) -> None:
    """ValueError (one line) naming the functions the agent needs that ``library`` lacks."""
    missing = missing_functions(library)
    if missing:
        raise ValueError(
            f"lib={library}: does not export {', '.join(missing)} "
            f"(the agent needs every function listed in docs/cann-backend.md)"
        )
