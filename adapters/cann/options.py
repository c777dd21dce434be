"""The options of the ``cann`` adapter, parsed and validated.

Options (strings, as ``--adapter-option KEY=VALUE`` gives them):

``agent=PATH``
    a prebuilt agent (e.g. built for CANN with ``agent/CMakeLists.txt``);
    environment fallback ``ACL_CONFORMANCE_AGENT``.
``lib=PATH`` [``include=DIR``]
    build the agent with the system compiler against this shared library (any
    library exporting the functions of :data:`.exports.REQUIRED`); ``include`` is the
    folder that holds the vendor's ``acl/acl.h`` (default: the bundled stand-in).
``double=1`` | ``double=VARIANT[,VARIANT]``
    build the bundled C double and the agent against it; variants plant bugs or
    faults: ``bound-off-by-one``, ``kind-unchecked``, ``pageable-late``,
    ``segv-on:<ACL function>``, ``hang-sync``, ``stream-limit:<N>``; or stand for
    another release: ``no-symbol-apis``; or behave, legally, like a real asynchronous
    device: ``setup-ms:<N>`` (creating a device's context sleeps N ms),
    ``frees-wait`` (aclrtFreeHost and aclrtHostUnregister wait until every stream of
    every device with a live context is idle), ``host-funcs-serial`` (the host
    functions of one device run one at a time: a blocked one holds the other streams'),
    ``pageable-staged`` (a pageable aclrtMemcpyToSymbolAsync takes its source at the
    call, copies from a staging buffer on the stream and waits for it), and
    ``device-like[:N]``, all four with ``setup-ms:N`` (default 200).
``ascend_home_path=DIR`` [``soc_version=SOC``]
    build the agent for CANN with CMake and the ASC toolchain (environment
    fallback ``ASCEND_HOME_PATH``; needs ``ASCENDC_CMAKE_DIR`` and ``SOC_VERSION``).
``timeout=SECONDS``
    the limit on every call (default 15; the suite does not bound this adapter's
    calls itself, only its start-up and shut-down): past it the agent is killed and
    the call raises CallTimeout (TIMEOUT).
``sanitize=1`` [``sanitizer_log=DIR``]
    build agent and double (or agent and ``lib``) with AddressSanitizer and
    UndefinedBehaviorSanitizer; reports go to ``DIR/asan.<pid>`` and
    ``DIR/ubsan.<pid>`` (default: a directory in the build cache).
``devices=N``
    the devices the suite may use (default: as many as the backend's
    ``aclrtGetDeviceCount`` reports); also the double's device count
    (``ACL_DOUBLE_DEVICES``).
``default_stream``, ``events``, ``host_register``, ``threads`` = true | false
    what the backend offers (default true each; also 1/0, yes/no): NULL as the
    default stream, events, ``aclrtHostRegisterV2``, calls from several host threads
    at once.  The suite skips, as not supported, the tests that need what is absent.
``spread=auto|1|0``
    under pytest-xdist, give each worker a different first device (default auto).
``device_ids=I,J,...``
    the devices this agent may see (set by ``--devices-per-worker`` for each worker:
    a device group): ``ASCEND_RT_VISIBLE_DEVICES`` is set to them (each an index into
    an ``ASCEND_RT_VISIBLE_DEVICES`` already set, else a physical device ID), so the
    agent sees them as devices 0 .. K-1; ``spread`` is then not used, and ``devices``
    stays the double's device count while the suite uses the K it sees.
``isolation=reset|example|test|run``
    how long one agent serves (default ``reset``): ``reset`` keeps one agent per worker
    and, after every harness (each Hypothesis example and shrink step), brings it back
    to a known state through the ACL calls (what the example made released, the
    variables it wrote rewritten to the bytes first read and read back, device 0
    current); a fresh agent starts only after a crash, a timeout, a failed reset, or
    a failure on the reused agent that fresh agents do not reproduce (the worker then
    takes a fresh agent per harness for the rest of the run).  ``example``: a fresh
    agent for every harness; ``test``: for every test; ``run``: one agent for the whole
    run, with no reset.
``fork=auto|1|0``
    make fresh agents as forks of a fork server rather than new executions (default
    ``auto``: for the bundled double, which starts no thread before its first call; a
    library that does must not be forked).  Not with ``isolation=run``.

Precedence when several are given: agent, lib, double, ascend_home_path, then the
environment (``ACL_CONFORMANCE_AGENT``, ``ASCEND_HOME_PATH``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import fields
from typing import Any

from . import build

DEFAULT_TIMEOUT = 15.0
ISOLATIONS = ("reset", "example", "test", "run")
"""The values of ``isolation``; the first is the default."""
CAPABILITY_FLAGS = ("default_stream", "events", "host_register", "threads")
"""The capabilities an option declares absent (``false``); each is present by default."""
_TRUE = ("true", "1", "yes")
_FALSE = ("false", "0", "no")


def _flag(name: str, value: str) -> bool:
    v = value.strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"cann option {name}={value!r}: expected 1 or 0")


def _capability(name: str, value: str) -> bool:
    v = value.strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise ValueError(f"cann option {name}={value!r}: expected true or false (or 1/0, yes/no)")


def _number(name: str, value: str, what: str, cast: type[float] | type[int]) -> Any:
    try:
        return cast(value)
    except ValueError:
        raise ValueError(f"cann option {name}={value!r}: expected {what}") from None


@dataclass(frozen=True)
class Options:
    """The adapter's options, validated."""

    agent: str | None = None
    lib: str | None = None
    include: str | None = None
    double: str | None = None
    ascend_home_path: str | None = None
    soc_version: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    sanitize: bool = False
    sanitizer_log: str | None = None
    devices: int | None = None
    default_stream: bool = True
    events: bool = True
    host_register: bool = True
    threads: bool = True
    spread: str = "auto"
    device_ids: tuple[int, ...] = ()
    isolation: str = ISOLATIONS[0]
    fork: str = "auto"

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Options:
        """From strings (or values); ValueError, one line, naming the bad option."""
        names = [f.name for f in fields(cls)]
        unknown = sorted(set(raw) - set(names))
        if unknown:
            raise ValueError(f"unknown cann option {unknown[0]!r} (known: {', '.join(names)})")
        s = {k: str(v) for k, v in raw.items() if v is not None}
        timeout = float(
            _number("timeout", s.get("timeout", str(DEFAULT_TIMEOUT)), "seconds", float)
        )
        if not timeout > 0:
            raise ValueError(f"cann option timeout={timeout:g}: must be > 0")
        devices: int | None = None
        if "devices" in s:
            devices = int(_number("devices", s["devices"], "an integer", int))
            if not 1 <= devices <= 64:
                raise ValueError(f"cann option devices={devices}: 1 to 64")
        spread = s.get("spread", "auto").lower()
        if spread not in ("auto", "1", "0", "on", "off", "true", "false"):
            raise ValueError(f"cann option spread={spread!r}: expected auto, 1 or 0")
        device_ids: tuple[int, ...] = ()
        if s.get("device_ids", "").strip():
            items = [v.strip() for v in s["device_ids"].split(",")]
            if not all(v.isdigit() for v in items) or len(set(items)) != len(items):
                raise ValueError(
                    f"cann option device_ids={s['device_ids']!r}: expected distinct device "
                    "IDs, e.g. 2,3"
                )
            device_ids = tuple(int(v) for v in items)
        isolation = s.get("isolation", ISOLATIONS[0]).strip().lower()
        if isolation not in ISOLATIONS:
            raise ValueError(
                f"cann option isolation={s['isolation']!r}: expected {', '.join(ISOLATIONS)}"
            )
        fork = s.get("fork", "auto").strip().lower()
        if fork not in ("auto", "1", "0"):
            raise ValueError(f"cann option fork={s['fork']!r}: expected auto, 1 or 0")
        double = s.get("double")
        if double is not None:
            if double.strip().lower() in ("0", "false", "no", "off"):
                double = None
            else:
                build.double_defines(double)  # ValueError for an unknown variant
        caps = {name: _capability(name, s[name]) for name in CAPABILITY_FLAGS if name in s}
        return cls(
            agent=s.get("agent") or None,
            lib=s.get("lib") or None,
            include=s.get("include") or None,
            double=double,
            ascend_home_path=s.get("ascend_home_path") or None,
            soc_version=s.get("soc_version") or None,
            timeout=timeout,
            sanitize=_flag("sanitize", s.get("sanitize", "0")),
            sanitizer_log=s.get("sanitizer_log") or None,
            devices=devices,
            spread=spread,
            device_ids=device_ids,
            isolation=isolation,
            fork=fork,
            **caps,
        )
