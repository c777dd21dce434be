"""Which agent the options ask for (found or built), and the environment it runs in."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from . import build
from .exports import check_library
from .options import Options

VOLATILE_ENVIRONMENT = ("PYTEST_CURRENT_TEST",)
"""Not passed to the agent: pytest changes it for every test and phase, and an agent
started for one test must be as good for the next (a warm spare)."""


@dataclass(frozen=True)
class Backend:
    """Which agent to run, and how to describe it."""

    agent: Path
    source: str
    """``double``, ``lib``, ``agent`` or ``cann``."""
    ascend_home: Path | None = None


def include_dir(given: str) -> Path:
    """The folder ``include=`` names, which must hold ``acl/acl.h`` (ValueError, one line:
    a folder that does not exist, or the ``acl`` folder itself, would otherwise build
    silently against the bundled stand-in header)."""
    path = Path(given)
    if not path.is_dir():
        raise ValueError(f"include={given}: no such folder (give the folder that holds acl/acl.h)")
    if not (path / "acl" / "acl.h").is_file():
        what = "it is the acl folder itself: " if (path / "acl.h").is_file() else ""
        raise ValueError(
            f"include={given}: no acl/acl.h under it ({what}give the folder that holds acl/acl.h)"
        )
    return path


def resolve_backend(opts: Options) -> Backend:
    """Find or build the agent the options ask for (ValueError / BuildError: one line)."""
    if opts.include and not (opts.lib and not opts.agent):
        raise ValueError(f"include={opts.include}: only used with lib=PATH (the agent built here)")
    if opts.agent:
        path = Path(opts.agent)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ValueError(f"cann option agent={opts.agent!r}: not an executable file")
        return Backend(path, "agent")
    if opts.lib:
        include = (include_dir(opts.include),) if opts.include else ()
        lib = Path(opts.lib)
        if lib.is_file():
            check_library(lib)  # else build_agent says the library does not exist
        return Backend(build.build_agent(lib, include, opts.sanitize), "lib")
    if opts.double is not None:
        defines = build.double_defines(opts.double)
        return Backend(build.build_agent_with_double(defines, opts.sanitize), "double")
    if opts.ascend_home_path:
        home = Path(opts.ascend_home_path)
        return Backend(build.build_agent_asc(home, opts.soc_version), "cann", home)
    env_agent = os.environ.get("ACL_CONFORMANCE_AGENT")
    if env_agent:
        return resolve_backend(Options.parse({"agent": env_agent}))
    env_home = os.environ.get("ASCEND_HOME_PATH")
    if env_home:
        home = Path(env_home)
        return Backend(build.build_agent_asc(home, opts.soc_version), "cann", home)
    raise ValueError(
        "no backend: give agent=PATH (a built agent), lib=PATH (a library to build against), "
        "double=1 (the bundled C double) or ascend_home_path=DIR, "
        "or set ACL_CONFORMANCE_AGENT or ASCEND_HOME_PATH"
    )


def _joined(*parts: str) -> str:
    return ":".join(p for p in parts if p)


def agent_environment(opts: Options, backend: Backend) -> tuple[dict[str, str | None], Path | None]:
    """What the agent's environment changes from this process's (None: removed), and the
    sanitizer log folder (None without ``sanitize``)."""
    env: dict[str, str | None] = dict.fromkeys(VOLATILE_ENVIRONMENT)
    if opts.devices is not None:
        env["ACL_DOUBLE_DEVICES"] = str(opts.devices)
    if backend.ascend_home is not None:
        home = backend.ascend_home
        env["ASCEND_HOME_PATH"] = str(home)
        paths = [str(home / "runtime" / "lib64"), str(home / "lib64")]
        env["LD_LIBRARY_PATH"] = _joined(*paths, os.environ.get("LD_LIBRARY_PATH", ""))
    if not opts.sanitize:
        return env, None
    logs = Path(opts.sanitizer_log or build.cache_root() / "sanitizer-logs")
    logs.mkdir(parents=True, exist_ok=True)
    env["ASAN_OPTIONS"] = _joined(
        f"log_path={logs / 'asan'}",
        "halt_on_error=1",
        "detect_leaks=1",
        "abort_on_error=0",
        os.environ.get("ASAN_OPTIONS", ""),
    )
    env["UBSAN_OPTIONS"] = _joined(
        f"log_path={logs / 'ubsan'}",
        "print_stacktrace=1",
        "halt_on_error=1",
        os.environ.get("UBSAN_OPTIONS", ""),
    )
    return env, logs
