"""The ``cann`` adapter: the contract of ``adapters/base.py`` spoken to a conformance agent.

The agent (``agent/agent.cpp``) is an executable holding the fixture device
variables; this adapter starts it (:mod:`.backend` finds or builds it, :mod:`.pool`
starts it), speaks the protocol of ``PROTOCOL.md`` through
:class:`~acl_conformance.adapters.cann.client.AgentProcess`, and forwards every
contract call as one request, encoded and decoded by :mod:`.wire` from ``CALLS``.
Codes come first and outputs follow, as for every adapter.  The options are listed in
:mod:`.options`; docs/cann-backend.md is the vendor's guide.

Isolation: state a backend keeps from call to call (a per-process table that fills up, a
leak, a counter) must not fail a later test, and on a real device an agent costs a
context and a first device query to start.  The default, ``reset``, keeps one agent per
worker and has the suite bring it back to a known state after every harness through the
ACL calls (``conformance/harness/reset.py``: what the example made released, the variables it
wrote rewritten to the bytes first read from this agent and read back, device 0
current).  A fresh agent starts after a crash, a timeout or a failed reset, for a test
that asks for a pristine backend, and for a test attempt that failed on the reused agent:
it runs again with a fresh agent per example, and if it passes there the failure was
leftover state, the test passes ("recovered by a fresh agent") and the worker takes a
fresh agent per example for the rest of the run (``conformance/session/attempts.py``).
``example`` starts a fresh agent for every harness, ``test`` one per test (state still
crosses examples and shrink steps), ``run`` one per worker with no reset (the cheapest,
the least isolated, and it starts no spare).  :mod:`.pool` keeps fresh agents cheap: for
the double they are forks of one agent that started once (``fork``), and one warm spare
agent per option set is started in the background when the previous one is taken.

The symbol APIs: the agent looks them up at start-up (CANN has them from 9.1.0 only, with
the same ACL version number as before) and its ``hello`` says whether all six are there;
:meth:`CannAdapter.capabilities` declares ``symbol_apis`` accordingly, and the suite then
reports every requirement not supported.

Calls are never made by the harness in a worker thread of its own
(``calls_may_hang = False``): the adapter bounds every call itself.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from typing import Any

from acl_conformance.adapters.base import Adapter
from acl_conformance.adapters.base import Capabilities
from acl_conformance.adapters.base import FixtureVariable
from acl_conformance.reference_impl.calls import CALLS
from acl_conformance.reference_impl.calls import render_call
from acl_conformance.reference_impl.constants import ACL_HOST_REG_PINNED
from acl_conformance.reference_impl.constants import ACL_SUCCESS

from . import wire
from .backend import agent_environment
from .backend import resolve_backend
from .client import PROTOCOL_VERSION
from .client import AgentProcess
from .devices import visible_devices
from .options import ISOLATIONS
from .options import Options
from .pool import SPARES
from .pool import AgentSpec
from .process import AgentDied
from .process import environment


class _ThreadToken:
    """Lives in a thread-local slot: the suite thread's number, and its end."""

    __slots__ = ("__weakref__", "tid")

    def __init__(self, tid: int) -> None:
        self.tid = tid


def _bye(ref: weakref.ReferenceType[AgentProcess], tid: int) -> None:
    proc = ref()
    if proc is not None:
        proc.bye(tid)


class _Label(tuple[str, Any]):
    """``(name, args)``: the call, rendered in C form only if an error message needs it
    (a tuple, so that making one costs no Python frame: every call makes one).  ``args``
    maps parameter names to values, or is a tuple of every parameter in C order."""

    __slots__ = ()

    def __str__(self) -> str:
        name, args = self
        try:
            if isinstance(args, tuple):
                args = dict(zip((p.name for p in CALLS[name].params), args, strict=True))
            return render_call(name, args)
        except Exception:
            return str(name)

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
        env, self.sanitizer_log = agent_environment(opts, self.backend)
        visible = visible_devices(opts.spread, self.backend.agent, env, opts.device_ids)
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

    # -- set-up ----------------------------------------------------------------------
    def _hello(self) -> None:
        reply = self._agent.call(0, "hello", label="hello")
        out = [o.decode() for o in reply.outputs]
        if reply.code != ACL_SUCCESS or len(out) < 9 or int(out[0]) != PROTOCOL_VERSION:
            raise AgentDied(
                f"the agent {self.backend.agent} does not speak protocol {PROTOCOL_VERSION}"
            )
        self._invalid = int(out[4])
        count_code, count = int(out[5]), int(out[6])
        self._devices = count if count_code == ACL_SUCCESS else 1
        self.symbol_apis = out[7] == "1"
        """The backend has all six symbol APIs (the agent found each with dlsym)."""
        fx = self._agent.call(0, "fixtures", label="fixtures")
        self._fixtures = []
        for line in fx.payload.decode().splitlines():
            name, size, address = line.split()
            self._fixtures.append(FixtureVariable(name, int(size), int(address)))

    # -- identity ----------------------------------------------------------------------
    def capabilities(self) -> Capabilities:
        """What the options declare (``devices``: what the backend reports unless given)."""
        opts = self.options
        return Capabilities(
            # A device group: the devices the agent sees (``devices`` is the double's count).
            devices=opts.devices
            if opts.devices is not None and not opts.device_ids
            else self._devices,
            default_stream=opts.default_stream,
            events=opts.events,
            host_register=opts.host_register,
            gate=True,
            threads=opts.threads,
            symbol_apis=self.symbol_apis,
        )

    def fixtures(self) -> list[FixtureVariable]:
        return list(self._fixtures)

    def invalid_handle(self) -> int:
        return self._invalid

    @property
    def pid(self) -> int:
        return self._agent.pid

    def close(self) -> None:
        """Quit (or kill) the agent and reap it.  Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._agent.close()

    # -- forwarding ------------------------------------------------------------------------
    def _thread(self) -> int:
        token: _ThreadToken | None = getattr(self._local, "token", None)
        if token is None:
            token = _ThreadToken(next(self._tids))
            self._local.token = token
            weakref.finalize(token, _bye, weakref.ref(self._agent), token.tid)
        return token.tid

    def _forward(self, name: str, /, **args: Any) -> tuple[Any, ...]:
        """Contract call ``name`` made by the agent: ``(code, *outputs)``."""
        fields, payload = wire.ENCODE[name](args)
        reply = self._agent.call(self._thread(), name, fields, payload, _Label((name, args)))
        return wire.DECODE[name](reply)

    def _code(self, name: str, /, **args: Any) -> int:
        """``_forward`` of a call with no output: its code."""
        code: int = self._forward(name, **args)[0]
        return code

    def _code_in_c_order(self, name: str, *values: Any) -> int:
        """``_code`` of a call whose parameters are all numbers, given in C order
        (``CALLS[name].params``): the copies, the calls the suite makes most."""
        return self._agent.call(
            self._thread(), name, wire.encode_values(name, values), None, _Label((name, values))
        ).code

    # -- process and devices ---------------------------------------------------------------
    def init(self, config_path: str | None = None) -> int:
        return self._code("init", config_path=config_path)

    def finalize(self) -> int:
        return self._code("finalize")

    def get_version_str(self) -> tuple[int, str]:
        code, version = self._forward("get_version_str")
        return int(code), str(version)

    def set_device(self, device_id: int) -> int:
        return self._code("set_device", device_id=device_id)

    def get_device(self) -> tuple[int, int]:
        return self._forward("get_device")

    def reset_device(self, device_id: int) -> int:
        return self._code("reset_device", device_id=device_id)

    def get_device_count(self) -> tuple[int, int]:
        return self._forward("get_device_count")

    def synchronize_device(self) -> int:
        return self._code("synchronize_device")

    # -- streams ------------------------------------------------------------------------------
    def create_stream(self, null_stream: bool = False) -> tuple[int, int]:
        return self._forward("create_stream", null_stream=null_stream)

    def destroy_stream(self, stream: int) -> int:
        return self._code("destroy_stream", stream=stream)

    def synchronize_stream(self, stream: int) -> int:
        return self._code("synchronize_stream", stream=stream)

    def synchronize_stream_with_timeout(self, stream: int, timeout: int) -> int:
        return self._code("synchronize_stream_with_timeout", stream=stream, timeout=timeout)

    def stream_query(self, stream: int) -> tuple[int, int]:
        return self._forward("stream_query", stream=stream)

    # -- events -------------------------------------------------------------------------------
    def create_event(self, null_event: bool = False) -> tuple[int, int]:
        return self._forward("create_event", null_event=null_event)

    def record_event(self, event: int, stream: int) -> int:
        return self._code("record_event", event=event, stream=stream)

    def stream_wait_event(self, stream: int, event: int) -> int:
        return self._code("stream_wait_event", stream=stream, event=event)

    def synchronize_event(self, event: int) -> int:
        return self._code("synchronize_event", event=event)

    def destroy_event(self, event: int) -> int:
        return self._code("destroy_event", event=event)

    # -- host memory --------------------------------------------------------------------------
    def malloc_host(self, size: int, null_host_ptr: bool = False) -> tuple[int, int]:
        return self._forward("malloc_host", size=size, null_host_ptr=null_host_ptr)

    def free_host(self, host_ptr: int) -> int:
        return self._code("free_host", host_ptr=host_ptr)

    def malloc_pageable(self, size: int) -> tuple[int, int]:
        return self._forward("malloc_pageable", size=size)

    def free_pageable(self, ptr: int) -> int:
        return self._code("free_pageable", ptr=ptr)

    def host_register(self, ptr: int, size: int, flag: int = ACL_HOST_REG_PINNED) -> int:
        return self._code("host_register", ptr=ptr, size=size, flag=flag)

    def host_unregister(self, ptr: int) -> int:
        return self._code("host_unregister", ptr=ptr)

    def write_host(self, dst: int, data: bytes) -> int:
        return self._code("write_host", dst=dst, data=bytes(data))

    def read_host(self, src: int, count: int) -> tuple[int, bytes]:
        code, data = self._forward("read_host", src=src, count=count)
        return int(code), bytes(data)

    # -- symbols ------------------------------------------------------------------------------
    def get_symbol_address(self, symbol: int, null_dev_ptr: bool = False) -> tuple[int, int]:
        return self._forward("get_symbol_address", symbol=symbol, null_dev_ptr=null_dev_ptr)

    def get_symbol_size(self, symbol: int, null_size: bool = False) -> tuple[int, int]:
        return self._forward("get_symbol_size", symbol=symbol, null_size=null_size)

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        return self._code_in_c_order(
            "memcpy_to_symbol_async", symbol, src, count, offset, kind, stream
        )

    def memcpy_to_symbol(self, symbol: int, src: int, count: int, offset: int, kind: int) -> int:
        return self._code_in_c_order("memcpy_to_symbol", symbol, src, count, offset, kind)

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        return self._code_in_c_order(
            "memcpy_from_symbol", dst, dst_max, symbol, count, offset, kind
        )

    def memcpy_from_symbol_async(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        return self._code_in_c_order(
            "memcpy_from_symbol_async", dst, dst_max, symbol, count, offset, kind, stream
        )

    # -- the stream gate ------------------------------------------------------------------------
    def launch_gate(self, stream: int) -> tuple[int, int]:
        return self._forward("launch_gate", stream=stream)

    def open_gate(self, gate: int) -> int:
        """Answered by the agent's reading thread at once, even while calls wait for the gate.

        After the agent is gone (closed, crashed) nothing can be blocked any more: 0."""
        call = wire.encode("open_gate", {"gate": gate})
        try:
            return self._agent.call(0, "open_gate", call.fields, label=f"open_gate({gate})").code
        except AgentDied:
            return ACL_SUCCESS


def create(**options: str) -> CannAdapter:
    """The entry point ``cann`` of group ``acl_conformance.adapters``."""
    return CannAdapter(**options)


__all__: list[str] = ["CannAdapter", "create"]
