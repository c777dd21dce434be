"""The ``cann`` adapter: the contract of ``adapters/base.py`` spoken to a conformance agent.

The agent (``agent/agent.cpp``) is an executable holding the fixture device
variables; this adapter starts it, speaks the protocol of ``PROTOCOL.md`` through
:class:`~acl_conformance.adapters.cann.client.AgentProcess`, and maps every
contract call onto one request.  Codes come first and outputs follow in
``OUTPUTS`` order, as for every adapter.

Options (strings, as ``--acl-adapter-option KEY=VALUE`` gives them):

``agent=PATH``
    a prebuilt agent (e.g. built for CANN with ``agent/CMakeLists.txt``);
    environment fallback ``ACL_CONFORMANCE_AGENT``.
``lib=PATH`` [``include=DIR``]
    build the agent with the system compiler against this shared library (any
    library exporting the ACL C functions and ``aclConformanceRegisterVariable``);
    ``include`` is a directory with the vendor's ``acl/acl.h`` (default: ours).
``double=1`` | ``double=VARIANT[,VARIANT]``
    build the bundled C double and the agent against it; variants plant bugs or
    faults: ``bound-off-by-one``, ``kind-unchecked``, ``pageable-late``,
    ``segv-on:<ACL function>``, ``hang-sync``, ``stream-limit:<N>``; or stand for
    another release: ``no-symbol-apis``.
``ascend_home_path=DIR`` [``soc_version=SOC``]
    build the agent for CANN with CMake and the ASC toolchain (environment
    fallback ``ASCEND_HOME_PATH``; needs ``ASCENDC_CMAKE_DIR`` and ``SOC_VERSION``).
``timeout=SECONDS``
    the limit on every call (default 15, well below the suite's
    ``--acl-call-timeout`` of 60): past it the agent is killed and the call
    raises CallTimeout (TIMEOUT).
``sanitize=1`` [``sanitizer_log=DIR``]
    build agent and double (or agent and ``lib``) with AddressSanitizer and
    UndefinedBehaviorSanitizer; reports go to ``DIR/asan.<pid>`` and
    ``DIR/ubsan.<pid>`` (default: a directory in the build cache).
``devices=N``
    the double's device count (``ACL_DOUBLE_DEVICES``; default 2).
``spread=auto|1|0``
    under pytest-xdist, give each worker a different first device (default auto).
``isolation=example|test|run``
    how long one agent serves (default ``example``): a fresh agent for every harness
    (each Hypothesis example and shrink step), for every test, or for the whole run
    (per worker).  See "Isolation" below.
``fork=auto|1|0``
    make fresh agents as forks of a fork server rather than new executions (default
    ``auto``: for the bundled double, which starts no thread before its first call; a
    library that does must not be forked).  Only with ``isolation`` example or test.

Precedence when several are given: agent, lib, double, ascend_home_path, then the
environment (``ACL_CONFORMANCE_AGENT``, ``ASCEND_HOME_PATH``).

Devices under pytest-xdist (``spread``): worker ``gwK`` starts its agent with
``ASCEND_RT_VISIBLE_DEVICES`` set to the device list rotated by K (with devices
0,1: ``gw0`` sees ``0,1``, ``gw1`` sees ``1,0``).  Each worker's device 0 is then
a different physical device, so the single-device tests (nearly all of them) are
spread over the devices, while every worker still sees every device and the
two-device tests keep two.  An ``ASCEND_RT_VISIBLE_DEVICES`` already set is the
list rotated; otherwise the device count is asked of the agent once.

Isolation: state a backend keeps from call to call (a per-process table that fills up, a
leak, a counter) must not fail a later test.  With one agent per run, every test, example
and shrink step of a worker shares one process, and a limit reached during shrinking is
charged to whatever call meets it, with a counterexample that does not reproduce.  The
default, ``example``, makes that impossible: nothing the backend does in one example
survives into the next.  Its cost is an agent start per example, which :mod:`.pool` keeps
small: for the double, agents are forks of one agent that started once (``fork``), and
one warm spare agent per option set is started in the background when the previous one
is taken.  ``test`` starts one agent per test (state still crosses examples and shrink
steps); ``run`` is the cheapest and the least isolated, and starts no spare.

The symbol APIs: the agent looks them up at start-up (CANN has them from 9.1.0 only, with
the same ACL version number as before) and its ``hello`` says whether all six are there;
:meth:`CannAdapter.capabilities` declares ``symbol_apis`` accordingly, and the suite then
reports every requirement not supported.

Calls are never made by the harness in a worker thread of its own
(``calls_may_hang = False``): the adapter bounds every call itself.
"""

from __future__ import annotations

import functools
import itertools
import os
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from acl_conformance.adapters.base import Adapter, Capabilities, FixtureVariable
from acl_conformance.reference_impl.calls import render_call
from acl_conformance.reference_impl.constants import ACL_HOST_REG_PINNED, ACL_SUCCESS

from . import build
from .client import PROTOCOL_VERSION, AgentDied, AgentProcess, Reply, environment
from .pool import SPARES, AgentSpec

_U64 = (1 << 64) - 1
_U32 = (1 << 32) - 1

DEFAULT_TIMEOUT = 15.0
ISOLATIONS = ("example", "test", "run")
"""The values of ``isolation``, most isolated first; the first is the default."""
VOLATILE_ENVIRONMENT = ("PYTEST_CURRENT_TEST",)
"""Not passed to the agent: pytest changes it for every test and phase, and an agent
started for one test must be as good for the next (a warm spare)."""


def _ptr(value: int) -> int:
    """``(uintptr_t)value`` / ``(size_t)value`` on a 64-bit platform."""
    return int(value) & _U64


def _i32(value: int) -> int:
    v = int(value) & _U32
    return v - (1 << 32) if v & (1 << 31) else v


def _u32(value: int) -> int:
    return int(value) & _U32


def _flag(name: str, value: str) -> bool:
    v = value.strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"cann option {name}={value!r}: expected 1 or 0")


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
    spread: str = "auto"
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
        try:
            timeout = float(s.get("timeout", DEFAULT_TIMEOUT))
        except ValueError:
            raise ValueError(f"cann option timeout={s['timeout']!r}: expected seconds") from None
        if not timeout > 0:
            raise ValueError(f"cann option timeout={timeout:g}: must be > 0")
        devices: int | None = None
        if "devices" in s:
            try:
                devices = int(s["devices"])
            except ValueError:
                raise ValueError(
                    f"cann option devices={s['devices']!r}: expected an integer"
                ) from None
            if not 1 <= devices <= 64:
                raise ValueError(f"cann option devices={devices}: 1 to 64")
        spread = s.get("spread", "auto").lower()
        if spread not in ("auto", "1", "0", "on", "off", "true", "false"):
            raise ValueError(f"cann option spread={spread!r}: expected auto, 1 or 0")
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
            isolation=isolation,
            fork=fork,
        )


@dataclass(frozen=True)
class Backend:
    """Which agent to run, and how to describe it."""

    agent: Path
    source: str
    """``double``, ``lib``, ``agent`` or ``cann``."""
    ascend_home: Path | None = None


def resolve_backend(opts: Options) -> Backend:
    """Find or build the agent the options ask for (ValueError / BuildError: one line)."""
    if opts.agent:
        path = Path(opts.agent)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ValueError(f"cann option agent={opts.agent!r}: not an executable file")
        return Backend(path, "agent")
    if opts.lib:
        include = (Path(opts.include),) if opts.include else ()
        if opts.include and not (Path(opts.include) / "acl" / "acl.h").is_file():
            raise ValueError(f"cann option include={opts.include!r}: no acl/acl.h there")
        return Backend(build.build_agent(Path(opts.lib), include, opts.sanitize), "lib")
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


@functools.lru_cache(maxsize=8)
def _probe_device_count(agent: Path, env_items: tuple[tuple[str, str], ...]) -> int:
    """How many devices an agent sees (started once per process and agent)."""
    proc = AgentProcess([str(agent)], dict(env_items), timeout=30)
    try:
        reply = proc.call(0, "hello", label="hello (device probe)")
        code, count = int(reply.outputs[5]), int(reply.outputs[6])
        return count if code == ACL_SUCCESS else 1
    finally:
        proc.close()


def xdist_worker_index() -> int | None:
    """K of pytest-xdist worker ``gwK``, or None outside xdist."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    if name.startswith("gw") and name[2:].isdigit():
        return int(name[2:])
    return None


def spread_devices(base: list[str], worker: int) -> str:
    """The device list ``base`` rotated so that worker ``worker`` starts on its own device."""
    k = worker % len(base)
    return ",".join(base[k:] + base[:k])


class _ThreadToken:
    """Lives in a thread-local slot: the suite thread's number, and its end."""

    __slots__ = ("__weakref__", "tid")

    def __init__(self, tid: int) -> None:
        self.tid = tid


def _bye(ref: weakref.ReferenceType[AgentProcess], tid: int) -> None:
    proc = ref()
    if proc is not None:
        proc.bye(tid)


class _Label:
    """The call in C form, rendered only if an error message needs it."""

    __slots__ = ("args", "name")

    def __init__(self, name: str, args: dict[str, Any]) -> None:
        self.name = name
        self.args = args

    def __str__(self) -> str:
        try:
            return render_call(self.name, self.args)
        except Exception:
            return self.name

    __repr__ = __str__


class CannAdapter(Adapter):
    """A conformance agent (real CANN, another ACL library, or the bundled double)."""

    name = "cann"
    calls_may_hang = False
    """Every call is bounded here (``timeout``), so the harness calls directly."""
    isolation = ISOLATIONS[0]
    """The default; each instance says what its ``isolation`` option chose."""

    def __init__(self, **options: Any) -> None:
        self.options = Options.parse(options)
        opts = self.options
        self.isolation = opts.isolation
        self.backend = resolve_backend(opts)
        env: dict[str, str | None] = dict.fromkeys(VOLATILE_ENVIRONMENT)
        if opts.devices is not None:
            env["ACL_DOUBLE_DEVICES"] = str(opts.devices)
        if self.backend.ascend_home is not None:
            home = self.backend.ascend_home
            env["ASCEND_HOME_PATH"] = str(home)
            paths = [str(home / "runtime" / "lib64"), str(home / "lib64")]
            old = os.environ.get("LD_LIBRARY_PATH")
            env["LD_LIBRARY_PATH"] = ":".join([*paths, *([old] if old else [])])
        if opts.sanitize:
            logs = Path(opts.sanitizer_log or build.cache_root() / "sanitizer-logs")
            logs.mkdir(parents=True, exist_ok=True)
            self.sanitizer_log: Path | None = logs
            env["ASAN_OPTIONS"] = ":".join(
                x
                for x in (
                    f"log_path={logs / 'asan'}",
                    "halt_on_error=1",
                    "detect_leaks=1",
                    "abort_on_error=0",
                    os.environ.get("ASAN_OPTIONS", ""),
                )
                if x
            )
            env["UBSAN_OPTIONS"] = ":".join(
                x
                for x in (
                    f"log_path={logs / 'ubsan'}",
                    "print_stacktrace=1",
                    "halt_on_error=1",
                    os.environ.get("UBSAN_OPTIONS", ""),
                )
                if x
            )
        else:
            self.sanitizer_log = None
        visible = self._visible_devices(env)
        if visible is not None:
            env["ASCEND_RT_VISIBLE_DEVICES"] = visible
        self.environment = environment(env)
        self.visible_devices = visible
        forked = opts.fork == "1" or (opts.fork == "auto" and self.backend.source == "double")
        self.spec = AgentSpec.of(
            [str(self.backend.agent)],
            self.environment,
            timeout=opts.timeout,
            quit_timeout=30.0 if opts.sanitize else 10.0,
            fork=forked and self.isolation != "run",
        )
        """What the agent is; a warm spare is used only for an equal spec."""
        self._agent: AgentProcess = (
            self.spec.start() if self.isolation == "run" else SPARES.take(self.spec)
        )
        self._local = threading.local()
        self._tids = itertools.count(1)
        self._closed = False
        try:
            self._hello()
        except BaseException:
            self._agent.close()
            raise

    @classmethod
    def from_options(cls, options: Mapping[str, str] | None = None) -> CannAdapter:
        return cls(**dict(options or {}))

    # -- set-up ----------------------------------------------------------------------
    def _visible_devices(self, env: Mapping[str, str | None]) -> str | None:
        opts = self.options
        if opts.spread in ("0", "off", "false"):
            return None
        worker = xdist_worker_index()
        if worker is None:
            return None
        given = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")
        if given:
            base = [d.strip() for d in given.split(",") if d.strip()]
        else:
            probe_env = environment(env)
            probe_env.pop("ASCEND_RT_VISIBLE_DEVICES", None)
            count = _probe_device_count(self.backend.agent, tuple(sorted(probe_env.items())))
            base = [str(i) for i in range(count)]
        if len(base) < 2:
            return None
        return spread_devices(base, worker)

    def _hello(self) -> None:
        reply = self._agent.call(0, "hello", label="hello")
        out = [o.decode() for o in reply.outputs]
        if reply.code != ACL_SUCCESS or len(out) < 9 or int(out[0]) != PROTOCOL_VERSION:
            raise AgentDied(
                f"the agent {self.backend.agent} does not speak protocol {PROTOCOL_VERSION}"
            )
        self.agent_version = out[1]
        self.build_mode = out[2]
        self.agent_pid = int(out[3])
        self._invalid = int(out[4])
        count_code, count = int(out[5]), int(out[6])
        self._devices = count if count_code == ACL_SUCCESS else 1
        self.symbol_apis = out[7] == "1"
        """The backend has all six symbol APIs (the agent found each with dlsym)."""
        self.missing_symbol_apis = [] if out[8] == "-" else out[8].split(",")
        """The symbol APIs the backend lacks (each answers 207000 through the agent)."""
        fx = self._agent.call(0, "fixtures", label="fixtures")
        self._fixtures = []
        for line in fx.payload.decode().splitlines():
            name, size, address = line.split()
            self._fixtures.append(FixtureVariable(name, int(size), int(address)))

    # -- identity ----------------------------------------------------------------------
    def capabilities(self) -> Capabilities:
        return Capabilities(
            devices=self._devices,
            default_stream=True,
            events=True,
            host_register=True,
            gate=True,
            threads=True,
            symbol_apis=self.symbol_apis,
        )

    def fixtures(self) -> list[FixtureVariable]:
        return list(self._fixtures)

    def invalid_handle(self) -> int:
        return self._invalid

    @property
    def pid(self) -> int:
        return self._agent.pid

    @property
    def process(self) -> AgentProcess:
        return self._agent

    def close(self) -> None:
        """Quit (or kill) the agent and reap it.  Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._agent.close()

    # -- plumbing ------------------------------------------------------------------------
    def _thread(self) -> int:
        token: _ThreadToken | None = getattr(self._local, "token", None)
        if token is None:
            token = _ThreadToken(next(self._tids))
            self._local.token = token
            weakref.finalize(token, _bye, weakref.ref(self._agent), token.tid)
        return token.tid

    def _call(
        self,
        name: str,
        args: dict[str, Any],
        wire: tuple[int | str, ...],
        payload: bytes | None = None,
    ) -> Reply:
        return self._agent.call(
            self._thread(),
            name,
            wire,
            payload,
            label=_Label(name, args),
        )

    def _code(self, name: str, args: dict[str, Any], wire: tuple[int | str, ...]) -> int:
        return self._call(name, args, wire).code

    def _code_out(
        self, name: str, args: dict[str, Any], wire: tuple[int | str, ...]
    ) -> tuple[int, int]:
        r = self._call(name, args, wire)
        return r.code, int(r.outputs[0])

    # -- process and devices ---------------------------------------------------------------
    def init(self, config_path: str | None = None) -> int:
        payload = config_path.encode() if config_path is not None else None
        r = self._call(
            "init", {"config_path": config_path}, (1 if payload is not None else 0,), payload
        )
        return r.code

    def finalize(self) -> int:
        return self._code("finalize", {}, ())

    def get_version_str(self) -> tuple[int, str]:
        r = self._call("get_version_str", {}, ())
        return r.code, r.payload.decode(errors="replace")

    def set_device(self, device_id: int) -> int:
        return self._code("set_device", {"device_id": device_id}, (_i32(device_id),))

    def get_device(self) -> tuple[int, int]:
        return self._code_out("get_device", {}, ())

    def reset_device(self, device_id: int) -> int:
        return self._code("reset_device", {"device_id": device_id}, (_i32(device_id),))

    def get_device_count(self) -> tuple[int, int]:
        return self._code_out("get_device_count", {}, ())

    def synchronize_device(self) -> int:
        return self._code("synchronize_device", {}, ())

    # -- streams ------------------------------------------------------------------------------
    def create_stream(self, null_stream: bool = False) -> tuple[int, int]:
        return self._code_out(
            "create_stream", {"null_stream": null_stream}, (int(bool(null_stream)),)
        )

    def destroy_stream(self, stream: int) -> int:
        return self._code("destroy_stream", {"stream": stream}, (_ptr(stream),))

    def synchronize_stream(self, stream: int) -> int:
        return self._code("synchronize_stream", {"stream": stream}, (_ptr(stream),))

    def synchronize_stream_with_timeout(self, stream: int, timeout: int) -> int:
        return self._code(
            "synchronize_stream_with_timeout",
            {"stream": stream, "timeout": timeout},
            (_ptr(stream), _i32(timeout)),
        )

    def stream_query(self, stream: int) -> tuple[int, int]:
        return self._code_out("stream_query", {"stream": stream}, (_ptr(stream),))

    # -- events -------------------------------------------------------------------------------
    def create_event(self, null_event: bool = False) -> tuple[int, int]:
        return self._code_out("create_event", {"null_event": null_event}, (int(bool(null_event)),))

    def record_event(self, event: int, stream: int) -> int:
        return self._code(
            "record_event", {"event": event, "stream": stream}, (_ptr(event), _ptr(stream))
        )

    def stream_wait_event(self, stream: int, event: int) -> int:
        return self._code(
            "stream_wait_event", {"stream": stream, "event": event}, (_ptr(stream), _ptr(event))
        )

    def synchronize_event(self, event: int) -> int:
        return self._code("synchronize_event", {"event": event}, (_ptr(event),))

    def destroy_event(self, event: int) -> int:
        return self._code("destroy_event", {"event": event}, (_ptr(event),))

    # -- host memory --------------------------------------------------------------------------
    def malloc_host(self, size: int, null_host_ptr: bool = False) -> tuple[int, int]:
        return self._code_out(
            "malloc_host",
            {"size": size, "null_host_ptr": null_host_ptr},
            (_ptr(size), int(bool(null_host_ptr))),
        )

    def free_host(self, host_ptr: int) -> int:
        return self._code("free_host", {"host_ptr": host_ptr}, (_ptr(host_ptr),))

    def malloc_pageable(self, size: int) -> tuple[int, int]:
        return self._code_out("malloc_pageable", {"size": size}, (_ptr(size),))

    def free_pageable(self, ptr: int) -> int:
        return self._code("free_pageable", {"ptr": ptr}, (_ptr(ptr),))

    def host_register(self, ptr: int, size: int, flag: int = ACL_HOST_REG_PINNED) -> int:
        return self._code(
            "host_register",
            {"ptr": ptr, "size": size, "flag": flag},
            (_ptr(ptr), _ptr(size), _u32(flag)),
        )

    def host_unregister(self, ptr: int) -> int:
        return self._code("host_unregister", {"ptr": ptr}, (_ptr(ptr),))

    def write_host(self, dst: int, data: bytes) -> int:
        payload = bytes(data)
        r = self._call("write_host", {"dst": dst, "data": payload}, (_ptr(dst),), payload)
        return r.code

    def read_host(self, src: int, count: int) -> tuple[int, bytes]:
        r = self._call("read_host", {"src": src, "count": count}, (_ptr(src), _ptr(count)))
        return r.code, r.payload

    # -- symbols ------------------------------------------------------------------------------
    def get_symbol_address(self, symbol: int, null_dev_ptr: bool = False) -> tuple[int, int]:
        return self._code_out(
            "get_symbol_address",
            {"symbol": symbol, "null_dev_ptr": null_dev_ptr},
            (_ptr(symbol), int(bool(null_dev_ptr))),
        )

    def get_symbol_size(self, symbol: int, null_size: bool = False) -> tuple[int, int]:
        return self._code_out(
            "get_symbol_size",
            {"symbol": symbol, "null_size": null_size},
            (_ptr(symbol), int(bool(null_size))),
        )

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        args = dict(symbol=symbol, src=src, count=count, offset=offset, kind=kind, stream=stream)
        wire = (_ptr(symbol), _ptr(src), _ptr(count), _ptr(offset), _i32(kind), _ptr(stream))
        return self._code("memcpy_to_symbol_async", args, wire)

    def memcpy_to_symbol(self, symbol: int, src: int, count: int, offset: int, kind: int) -> int:
        args = dict(symbol=symbol, src=src, count=count, offset=offset, kind=kind)
        wire = (_ptr(symbol), _ptr(src), _ptr(count), _ptr(offset), _i32(kind))
        return self._code("memcpy_to_symbol", args, wire)

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        args = dict(dst=dst, dst_max=dst_max, symbol=symbol, count=count, offset=offset, kind=kind)
        wire = (_ptr(dst), _ptr(dst_max), _ptr(symbol), _ptr(count), _ptr(offset), _i32(kind))
        return self._code("memcpy_from_symbol", args, wire)

    def memcpy_from_symbol_async(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        args = dict(
            dst=dst,
            dst_max=dst_max,
            symbol=symbol,
            count=count,
            offset=offset,
            kind=kind,
            stream=stream,
        )
        wire = (
            _ptr(dst),
            _ptr(dst_max),
            _ptr(symbol),
            _ptr(count),
            _ptr(offset),
            _i32(kind),
            _ptr(stream),
        )
        return self._code("memcpy_from_symbol_async", args, wire)

    # -- the stream gate ------------------------------------------------------------------------
    def launch_gate(self, stream: int) -> tuple[int, int]:
        return self._code_out("launch_gate", {"stream": stream}, (_ptr(stream),))

    def open_gate(self, gate: int) -> int:
        """Answered by the agent's reading thread at once, even while calls wait for the gate.

        After the agent is gone (closed, crashed) nothing can be blocked any more: 0."""
        try:
            return self._agent.call(0, "open_gate", (int(gate),), label=f"open_gate({gate})").code
        except AgentDied:
            return ACL_SUCCESS


def create(**options: str) -> CannAdapter:
    """The entry point ``cann`` of group ``acl_conformance.adapters``."""
    return CannAdapter(**options)


__all__: list[str] = ["Backend", "CannAdapter", "Options", "create", "resolve_backend"]
