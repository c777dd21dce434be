"""Building the conformance agent (and the bundled C double) into a cache directory.

Three ways to get an agent:

- :func:`build_double` + :func:`build_agent`: the plain system compiler (``$CC`` /
  ``$CXX``, else ``cc`` / ``c++``, ``gcc`` / ``g++``, ``clang`` / ``clang++``) builds
  the C double of the ACL ABI as a shared library and the agent against it;
- :func:`build_agent` alone: the agent against any library that exports the ACL C
  functions (``lib=PATH`` of the adapter), with that vendor's headers or ours;
- :func:`build_agent_asc`: CMake with CANN's ASC toolchain (``agent/CMakeLists.txt``),
  against a CANN installation (``ASCEND_HOME_PATH``).

Every product lands in ``<cache>/<key>/`` where the key hashes the sources, the
compiler, its version and every flag, so each variant is compiled once and reused
by every process (pytest-xdist workers, later runs); a build happens in a private
directory that is renamed into place, so concurrent builders never see half a
product.  The cache is ``$ACL_CONFORMANCE_BUILD_CACHE``, else
``$XDG_CACHE_HOME/acl-conformance/cann`` (``~/.cache/...``); never the source tree.

Failures raise :class:`BuildError`, whose message is one line (what was built, the
first compiler error, and where the full log is).
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from pathlib import Path

SOURCE_DIR = Path(__file__).resolve().parent
AGENT_DIR = SOURCE_DIR / "agent"
AGENT_SOURCE = AGENT_DIR / "agent.cpp"
DOUBLE_SOURCE = SOURCE_DIR / "double" / "acl_double.c"
INCLUDE_DIR = SOURCE_DIR / "include"
"""Holds ``acl/acl.h`` (the subset of CANN's API the agent uses) and
``acl_conformance/register.h`` (the registration function)."""

AGENT_NAME = "acl_conformance_agent"
DOUBLE_NAME = "libacl_double.so"

WARNINGS = ("-Wall", "-Wextra", "-Werror")
SANITIZE = ("-fsanitize=address,undefined", "-fno-omit-frame-pointer")

BUGS: dict[str, str] = {
    "bound-off-by-one": "ACL_DOUBLE_BUG_BOUND_OFF_BY_ONE",
    "kind-unchecked": "ACL_DOUBLE_BUG_KIND_UNCHECKED",
    "pageable-late": "ACL_DOUBLE_BUG_PAGEABLE_LATE",
    "large-pageable-drops": "ACL_DOUBLE_BUG_LARGE_PAGEABLE_DROPS",
}
"""Planted bugs of the double: name -> the macro that plants it."""

FAULTS: dict[str, str] = {
    "segv-on": "ACL_DOUBLE_FAULT_SEGV_ON",
    "hang-sync": "ACL_DOUBLE_FAULT_HANG_SYNC",
    "stream-limit": "ACL_DOUBLE_FAULT_STREAM_LIMIT",
}
"""Faults of the double: ``segv-on:<ACL function>`` segfaults in that function;
``hang-sync`` makes aclrtSynchronizeStream never return; ``stream-limit:<N>`` makes
aclrtCreateStream fail (207008) once the process has created N streams, however many it
destroyed since (state that outlives a test)."""

RELEASES: dict[str, str] = {
    "no-symbol-apis": "ACL_DOUBLE_NO_SYMBOL_APIS",
}
"""Legal variants of the double that stand for other releases: ``no-symbol-apis`` exports
none of the six symbol APIs (aclrtGetSymbolAddress, aclrtGetSymbolSize,
aclrtMemcpy{To,From}Symbol[Async]), as CANN before 9.1.0."""


DEVICE: dict[str, str] = {
    "setup-ms": "ACL_DOUBLE_SETUP_MS",
    "frees-wait": "ACL_DOUBLE_FREES_WAIT",
    "host-funcs-serial": "ACL_DOUBLE_HOST_FUNCS_SERIAL",
    "pageable-staged": "ACL_DOUBLE_PAGEABLE_STAGED",
}
"""Legal behaviours of a real asynchronous device (an ACL implementation on a GPU), each
within the spec: ``setup-ms:<N>`` makes creating a device's context (an aclrtSetDevice
that finds none live) sleep N ms; ``frees-wait`` makes aclrtFreeHost and
aclrtHostUnregister wait until every stream of every device with a live context is idle,
host functions included; ``host-funcs-serial`` runs the host functions of all streams of
one device one at a time, so a blocked one holds the others; ``pageable-staged`` makes a
pageable aclrtMemcpyToSymbolAsync copy its source into a staging buffer at the call, issue
the copy from there on the stream and wait for it.  ``device-like[:N]`` is all four, with
``setup-ms:N`` (default :data:`DEVICE_LIKE_SETUP_MS`)."""

DEVICE_LIKE_SETUP_MS = 200
"""The context creation time of ``device-like`` without ``:N`` (a real device's, roughly)."""

_MAX_SETUP_MS = 60_000


class BuildError(Exception):
    """A build could not be made; the message is one line."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


def double_defines(spec: str) -> tuple[str, ...]:
    """The ``-D`` macros for a double variant named like ``kind-unchecked,segv-on:aclrtStreamQuery``
    (see :data:`BUGS`, :data:`FAULTS`, :data:`RELEASES` and :data:`DEVICE`).

    ``""``, ``"1"`` and ``"plain"`` are the correct double.  ValueError (one line)
    for an unknown name.
    """
    out: list[str] = []
    for raw in spec.split(","):
        item = raw.strip()
        if item in ("", "1", "plain", "true", "yes"):
            continue
        name, _, arg = item.partition(":")
        if name in BUGS and not arg:
            out.append(BUGS[name])
        elif name == "segv-on" and arg.isidentifier():
            out.append(f"{FAULTS['segv-on']}={arg}")
        elif name == "hang-sync" and not arg:
            out.append(FAULTS["hang-sync"])
        elif name == "stream-limit" and arg.isascii() and arg.isdigit() and len(arg) <= 9:
            out.append(f"{FAULTS['stream-limit']}={int(arg)}")
        elif name in RELEASES and not arg:
            out.append(RELEASES[name])
        elif name == "setup-ms" and _milliseconds(arg) is not None:
            out.append(f"{DEVICE['setup-ms']}={_milliseconds(arg)}")
        elif name in DEVICE and name != "setup-ms" and not arg:
            out.append(DEVICE[name])
        elif name == "device-like" and (not arg or _milliseconds(arg) is not None):
            ms = _milliseconds(arg) if arg else DEVICE_LIKE_SETUP_MS
            out += [f"{DEVICE['setup-ms']}={ms}", *(DEVICE[n] for n in DEVICE if n != "setup-ms")]
        else:
            known = [
                *BUGS,
                "segv-on:<ACL function>",
                "hang-sync",
                "stream-limit:<N>",
                *RELEASES,
                "setup-ms:<N>",
                *(n for n in DEVICE if n != "setup-ms"),
                "device-like[:<N>]",
            ]
            raise ValueError(f"unknown double variant {item!r}; known: {', '.join(known)}")
    defines = tuple(sorted(set(out)))
    valued = [d.partition("=")[0] for d in defines if "=" in d]
    twice = sorted({m for m in valued if valued.count(m) > 1})
    if twice:  # the compiler would refuse the second definition
        raise ValueError(f"double variant {spec!r} gives {twice[0]} two different values")
    return defines


def _milliseconds(arg: str) -> int | None:
    """``arg`` as a whole number of milliseconds (0 to 60000), or None."""
    if not (arg.isascii() and arg.isdigit() and len(arg) <= 9):
        return None
    ms = int(arg)
    return ms if ms <= _MAX_SETUP_MS else None


def cache_root() -> Path:
    """Where builds are kept (created on demand)."""
    env = os.environ.get("ACL_CONFORMANCE_BUILD_CACHE")
    if env:
        root = Path(env)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = Path(xdg) if xdg else Path.home() / ".cache"
        root = base / "acl-conformance" / "cann"
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe = root / f".probe-{os.getpid()}"
        probe.touch()
        probe.unlink()
    except OSError:
        root = Path(tempfile.gettempdir()) / f"acl-conformance-cann-{os.getuid()}"
        root.mkdir(parents=True, exist_ok=True)
    return root


def _tool(env_var: str, candidates: Sequence[str], what: str) -> list[str]:
    given = os.environ.get(env_var)
    if given:
        argv = shlex.split(given)
        if argv and shutil.which(argv[0]):
            return argv
        raise BuildError(f"{env_var}={given!r} is not an executable compiler")
    for name in candidates:
        path = shutil.which(name)
        if path:
            return [path]
    raise BuildError(
        f"no {what} compiler found (tried ${env_var}, {', '.join(candidates)}): "
        f"install gcc/g++ or clang, or set {env_var}"
    )


def c_compiler() -> list[str]:
    return _tool("CC", ("cc", "gcc", "clang"), "C")


def reproducer_command(cc: Sequence[str], source: Path, exe: Path, lib: Path) -> list[str]:
    """The command that compiles the C reproducer ``source`` into ``exe`` with compiler
    ``cc``, warnings as errors, against the bundled headers and the library ``lib`` (the C
    double, or a vendor's), which it finds again at run time."""
    return [
        *cc, "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror",
        "-DACL_CONFORMANCE_REGISTER_VARIABLES", f"-I{INCLUDE_DIR}", str(source),
        "-o", str(exe), str(lib), f"-Wl,-rpath,{lib.parent}", "-pthread",
    ]  # fmt: skip


def cxx_compiler() -> list[str]:
    return _tool("CXX", ("c++", "g++", "clang++"), "C++")


@functools.lru_cache(maxsize=16)
def _version(compiler: tuple[str, ...]) -> str:
    try:
        out = subprocess.run(
            [*compiler, "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except OSError as exc:
        raise BuildError(f"{compiler[0]} --version failed: {exc}") from exc
    return (out.stdout.splitlines() or [""])[0]


def _digest(parts: Iterable[str | bytes]) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else p.encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


def _sources_digest(paths: Iterable[Path]) -> list[bytes]:
    return [p.read_bytes() for p in paths]


def _headers(include_dirs: Sequence[Path]) -> list[Path]:
    out: list[Path] = []
    for d in include_dirs:
        for name in ("acl/acl.h", "acl_conformance/register.h"):
            p = d / name
            if p.is_file():
                out.append(p)
    return out


def _first_error(log: str) -> str:
    for line in log.splitlines():
        if "error" in line.lower():
            return line.strip()
    lines = [x for x in log.splitlines() if x.strip()]
    return lines[0].strip() if lines else "(no output)"


def _publish(key: str, product: str, make: Callable[[Path], None]) -> Path:
    """``<cache>/<key>/<product>``, made by ``make(private_dir)`` if it is not there yet."""
    root = cache_root()
    final = root / key
    target = final / product
    if target.exists():
        return target
    # One builder per key at a time (pytest-xdist workers ask for the same builds at once);
    # the others wait, then find the product.
    with open(root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists():
            return target
        work = Path(tempfile.mkdtemp(prefix=f"{key}.tmp-", dir=root))
        try:
            make(work)
            try:
                os.rename(work, final)
            except OSError:
                if not target.exists():  # not a concurrent builder's product: a real failure
                    raise
        finally:
            if work.exists():
                shutil.rmtree(work, ignore_errors=True)
    return target


def _run(cmd: Sequence[str], what: str, work: Path, log_name: str) -> None:
    try:
        proc = subprocess.run(
            list(cmd), capture_output=True, text=True, timeout=600, check=False, cwd=work
        )
    except OSError as exc:
        raise BuildError(f"building {what} failed: {exc}") from exc
    except subprocess.TimeoutExpired as exc:
        raise BuildError(f"building {what} timed out after 600 s") from exc
    if proc.returncode != 0:
        logs = cache_root() / "failed-builds"
        logs.mkdir(exist_ok=True)
        log = logs / f"{log_name}.log"
        log.write_text(shlex.join(cmd) + "\n" + proc.stdout + proc.stderr)
        raise BuildError(
            f"building {what} failed: {_first_error(proc.stderr + proc.stdout)} (full log: {log})"
        )


@functools.lru_cache(maxsize=32)
def build_double(defines: tuple[str, ...] = (), sanitize: bool = False) -> Path:
    """The bundled C double, as a shared library, with these ``-D`` macros (see :data:`BUGS`,
    :data:`FAULTS`, :func:`double_defines`) and, with ``sanitize``, ASan and UBSan."""
    cc = tuple(c_compiler())
    flags = [
        "-std=c11",
        "-O2",
        "-g",
        "-fPIC",
        "-shared",
        *WARNINGS,
        "-pthread",
        *(SANITIZE if sanitize else ()),
        f"-I{INCLUDE_DIR}",
        *(f"-D{d}" for d in defines),
    ]
    key = "double-" + _digest(
        [
            *_sources_digest([DOUBLE_SOURCE, *_headers([INCLUDE_DIR])]),
            *cc,
            _version(cc),
            *flags,
        ]
    )

    def make(work: Path) -> None:
        cmd = [*cc, *flags, str(DOUBLE_SOURCE), "-o", str(work / DOUBLE_NAME)]
        _run(cmd, f"the C double ({DOUBLE_NAME}, {' '.join(defines) or 'correct'})", work, key)

    return _publish(key, DOUBLE_NAME, make)


@functools.lru_cache(maxsize=32)
def build_agent(library: Path, include_dirs: tuple[Path, ...] = (), sanitize: bool = False) -> Path:
    """The agent, built with the plain C++ compiler against ``library`` (a shared library
    exporting the ACL C functions and aclConformanceRegisterVariable).

    ``include_dirs`` come first (a vendor's ``acl/acl.h``); the bundled include
    directory always comes last, for ``acl_conformance/register.h`` and as the
    fallback ``acl/acl.h``.
    """
    lib = Path(library).resolve()
    if not lib.is_file():
        raise BuildError(f"library {library} does not exist")
    cxx = tuple(cxx_compiler())
    dirs = [Path(d).resolve() for d in include_dirs] + [INCLUDE_DIR]
    flags = [
        "-std=c++17",
        "-O2",
        "-g",
        *WARNINGS,
        "-pthread",
        *(SANITIZE if sanitize else ()),
        "-DACL_CONFORMANCE_REGISTER_VARIABLES",
        *(f"-I{d}" for d in dirs),
    ]
    link = [str(lib), f"-Wl,-rpath,{lib.parent}", "-ldl"]  # -ldl: dlsym (agent.cpp)
    key = "agent-" + _digest(
        [
            *_sources_digest([AGENT_SOURCE, *_headers(dirs)]),
            *cxx,
            _version(cxx),
            *flags,
            *link,
            # the library's identity: a rebuilt library of the same path gives a new agent
            str(lib.stat().st_mtime_ns),
            str(lib.stat().st_size),
        ]
    )

    def make(work: Path) -> None:
        cmd = [*cxx, *flags, str(AGENT_SOURCE), *link, "-o", str(work / AGENT_NAME)]
        _run(cmd, f"the agent against {lib}", work, key)

    return _publish(key, AGENT_NAME, make)


def build_agent_with_double(defines: Sequence[str] = (), sanitize: bool = False) -> Path:
    """The agent linked against the bundled double (built first)."""
    lib = build_double(tuple(sorted(defines)), sanitize)
    return build_agent(lib, (), sanitize)


def build_agent_asc(ascend_home: Path, soc_version: str | None = None) -> Path:
    """The agent built for CANN with CMake and the ASC toolchain (``agent/CMakeLists.txt``).

    Needs ``cmake``, ``SOC_VERSION`` (argument or environment) and
    ``ASCENDC_CMAKE_DIR`` (environment, set by CANN's ``set_env.sh``), as CANN's own
    device-variable samples do.
    """
    home = Path(ascend_home)
    if not (home / "lib64" / "libacl_rt.so").is_file():
        raise BuildError(f"ASCEND_HOME_PATH={home}: no lib64/libacl_rt.so there")
    soc = soc_version or os.environ.get("SOC_VERSION")
    if not soc:
        raise BuildError("SOC_VERSION is not set (e.g. Ascend910B1); CANN's set_env.sh sets it")
    asc_cmake = os.environ.get("ASCENDC_CMAKE_DIR")
    if not asc_cmake:
        raise BuildError("ASCENDC_CMAKE_DIR is not set; source CANN's set_env.sh first")
    cmake = shutil.which("cmake")
    if cmake is None:
        raise BuildError("cmake not found; the ASC build needs CMake 3.16 or newer")
    key = "asc-" + _digest(
        [
            *_sources_digest([AGENT_SOURCE, AGENT_DIR / "CMakeLists.txt"]),
            str(home.resolve()),
            soc,
            asc_cmake,
        ]
    )

    def make(work: Path) -> None:
        build = work / "build"
        _run(
            [
                cmake,
                "-S",
                str(AGENT_DIR),
                "-B",
                str(build),
                f"-DASCEND_HOME_PATH={home}",
                f"-DSOC_VERSION={soc}",
                f"-DASCENDC_CMAKE_DIR={asc_cmake}",
            ],
            "the agent with CMake (ASC)",
            work,
            key + "-configure",
        )
        _run([cmake, "--build", str(build), "-j"], "the agent with CMake (ASC)", work, key)
        shutil.copy2(build / AGENT_NAME, work / AGENT_NAME)
        shutil.rmtree(build, ignore_errors=True)

    return _publish(key, AGENT_NAME, make)
