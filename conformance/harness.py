"""The harness: every call goes to the backend *and* to the model, and must agree.

A clause test or a state machine never calls the backend directly.  It calls
``harness.call("memcpy_to_symbol_async", symbol=..., ...)``; the harness

1. makes the call on the backend (in the calling thread's own worker thread,
   with a time limit, so a hanging backend yields TIMEOUT instead of a hung
   run; each logical host thread keeps its own OS thread because ACL contexts
   are per thread),
2. reads back what a read wrote, and
3. only then asks the model what the profile allows (the state the profile
   reads is the one before the call: only gates move concurrently, and the
   model is first told of those a timer opened meanwhile) and hands it the
   answer; any disagreement raises :class:`ConformanceFailure`, whose message
   is written for a vendor who has never read this code.

The model is consulted before the call only where requirements are masked, to
decline a call that must be rejected for a masked reason.

Device variables are read once before their first use on each device, so the
model knows what they held (contents are taken from the backend, never
assumed).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from acl_conformance.adapters.base import (
    OUTPUTS,
    Adapter,
    CallTimeout,
    FixtureVariable,
    Traced,
)
from acl_conformance.reference_impl import Capabilities as ModelCapabilities
from acl_conformance.reference_impl import Model, Violation
from acl_conformance.reference_impl.calls import CALLS, render_call
from acl_conformance.reference_impl.constants import (
    ACL_SUCCESS,
    SIZE_MAX,
    MemcpyKind,
    error_name,
)
from acl_conformance.reference_impl.evidence import Evidence

from .failure import (
    BackendCrash,
    BackendTimeout,
    ConformanceFailure,
    Declined,
    ExpectedFailure,
    KnownFailure,
)
from .runstate import RunState

D2H = int(MemcpyKind.ACL_MEMCPY_DEVICE_TO_HOST)
RELEASE_AFTER = 0.25
"""Seconds a call may take while a gate of the suite is closed before the suite opens its
gates: a backend may legally wait for more than it must (a pageable copy that waits for
every stream of its device, a read that waits for the device); the call is then released
and judged knowing the gates opened, instead of timing out."""
BASELINE_LIMIT = 4096
"""Variables up to this size are read as soon as a device is first used, so that a
stray write into them shows even if no test touches them on purpose; a larger one
is read when it, or the variable laid out just before it, is first used."""

_SYMBOL_CALLS = {
    "memcpy_to_symbol_async",
    "memcpy_to_symbol",
    "memcpy_from_symbol",
    "memcpy_from_symbol_async",
}


@dataclass
class Result:
    """What a call returned: the aclError code and the outputs by name."""

    code: int
    outputs: dict[str, Any]
    gates_open: frozenset[int] = frozenset()
    """The gates the suite had opened when the call returned (for timing checks)."""

    def __getitem__(self, key: str) -> Any:
        return self.outputs[key]

    @property
    def ok(self) -> bool:
        return self.code == ACL_SUCCESS


@dataclass
class HostBuffer:
    """Host memory allocated through the backend."""

    address: int
    size: int
    pinned: bool
    name: str

    def at(self, offset: int) -> int:
        return self.address + offset


class _Worker:
    """One OS thread that makes every backend call of one logical host thread."""

    def __init__(self, name: str) -> None:
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)

    def run(self, fn: Any, limit: float, /, **args: Any) -> Any:
        fut = self.pool.submit(fn, **args)
        return fut.result(timeout=limit)

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


class _Releaser:
    """Opens the suite's gates when a call made while one is closed does not return within
    ``after`` seconds (one daemon thread per harness, started when first needed)."""

    def __init__(self, release: Any, after: float) -> None:
        self._release = release
        self._after = after
        self._cv = threading.Condition()
        self._calls: dict[int, float] = {}
        self._next = 0
        self._thread: threading.Thread | None = None
        self._stop = False
        self.releases = 0

    def enter(self) -> int | None:
        with self._cv:
            if self._stop:
                return None
            self._next += 1
            self._calls[self._next] = time.monotonic() + self._after
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="acl-release", daemon=True)
                self._thread.start()
            self._cv.notify()
            return self._next

    def leave(self, token: int) -> None:
        with self._cv:
            self._calls.pop(token, None)

    def stop(self) -> None:
        with self._cv:
            self._stop = True
            self._cv.notify()

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._stop:
                    now = time.monotonic()
                    late = [k for k, d in self._calls.items() if d <= now]
                    if late:
                        for k in late:
                            del self._calls[k]
                        break
                    self._cv.wait(min(self._calls.values()) - now if self._calls else None)
                if self._stop:
                    return
                self.releases += 1
            self._release()


class Harness:
    """One backend and one model, kept in step call by call."""

    def __init__(
        self,
        adapter: Adapter,
        profile: str,
        *,
        call_timeout: float = 60.0,
        model_capabilities: ModelCapabilities | None = None,
        evidence: Evidence | None = None,
        masks: frozenset[str] = frozenset(),
        run: RunState | None = None,
        test_id: str = "",
    ) -> None:
        self.adapter = adapter if isinstance(adapter, Traced) else Traced(adapter)
        self.profile = profile
        self.caps = self.adapter.capabilities()
        self.run = run
        """The run's shared state (failed requirements, failure owners), if any."""
        self.test_id = test_id
        self._unclassified = threading.local()
        self.continue_past_masked = False
        """What a violation of a masked requirement does: a clause test ends there
        (Declined); a machine, which checks many things, sets it aside and goes on."""
        self.fixtures: dict[str, FixtureVariable] = {f.name: f for f in self.adapter.fixtures()}
        self.model = Model(
            profile,
            model_capabilities
            or ModelCapabilities(
                devices=self.caps.devices,
                default_stream=self.caps.default_stream,
                events=self.caps.events,
                host_register=self.caps.host_register,
                gate=self.caps.gate,
            ),
            evidence,
        )
        self.model.masks = frozenset(masks)
        for f in self.fixtures.values():
            self.model.add_symbol(f.name, f.address, f.size)
        self.call_timeout = call_timeout
        self.trace_start = len(self.adapter.trace)
        self.poisoned: str | None = None
        """Set when the backend hung or crashed: the harness must not be used again."""
        self.poison_error: BackendCrash | None = None
        """The failure that poisoned it (a BackendTimeout when the backend hung)."""
        self._lock = threading.RLock()
        self._workers: dict[int, _Worker] = {}
        self._threads: dict[int, int] = {}
        self._known: set[tuple[int, str]] = set()
        self.setup_labels: set[str] = set()
        """Model steps the suite made for itself (reading starting contents, scratch memory)."""
        self._in_setup: dict[int, bool] = {}
        self._scratch: dict[int, HostBuffer] = {}
        self.buffers: list[HostBuffer] = []
        self.streams: list[int] = []
        self.events: list[int] = []
        self._open_gates: set[int] = set()
        self._told: set[int] = set()
        """Gates whose opening the model has been told of."""
        self.gates: list[int] = []
        self._timed: set[int] = set()
        """Gates a test opens from a timer of its own (the releaser leaves them alone)."""
        self._releaser = _Releaser(self._release_gates, RELEASE_AFTER)
        self.registrations: list[int] = []
        """Host ranges this harness registered and has not unregistered (undone at close:
        a registration may outlive the free of its memory and reach the next test)."""
        self._any_streams: dict[int, int] = {}
        self._devices_used: set[int] = set()
        self.expected: dict[str, tuple[str, str]] = {}
        """Requirement -> (entry key, description): failures citing it are expected ones."""
        self.last_expectation: dict[int, Any] = {}
        """Per host thread: what the model allowed for its latest call (replay prints it)."""

    # -- threads ----------------------------------------------------------
    def thread_no(self) -> int:
        """The model's number for the calling host thread (0 for the first one)."""
        ident = threading.get_ident()
        with self._lock:
            return self._threads.setdefault(ident, len(self._threads))

    def _worker(self, thread: int) -> _Worker:
        with self._lock:
            w = self._workers.get(thread)
            if w is None:
                w = self._workers[thread] = _Worker(f"acl-host-{thread}")
            return w

    # -- the one way to call the backend -------------------------------------
    def call(self, name: str, **args: Any) -> Result:
        """Make ``name(**args)`` on the backend and check it against the model."""
        _check_c_ranges(name, args)
        thread = self.thread_no()
        if self.model.masks:
            self._decline_if_masked(name, thread, args)
        if name in _SYMBOL_CALLS and args.get("count"):
            self._ensure_known(thread, args.get("symbol", 0))
        result = self._raw(name, thread, args, render_call(name, args, self.model.world.name_of))
        outputs = dict(result.outputs)
        if result.ok and name == "memcpy_from_symbol":
            outputs["observed"] = self._read_back(args["dst"], args["count"], thread)
        elif result.ok and name == "memcpy_from_symbol_async":
            rng = self.model.world.host_range(args["dst"], args["count"])
            if rng.known and not self.model.profile.pinned_path(rng)[0]:
                outputs["observed"] = self._read_back(args["dst"], args["count"], thread)
        with self._lock:
            # Gates a timer opened before the call returned: the model learns of them
            # first, so a call that legitimately waited for one is judged as such.
            for g in sorted(result.gates_open - self._told):
                self._told.add(g)
                self.model.expect("open_gate", thread, gate=g).settle(ACL_SUCCESS)
            # The state the profile reads is the one before the call (only gates move
            # concurrently), so asking after the call is the same as asking before.
            exp = self.model.expect(name, thread, **args)
            self.last_expectation[thread] = exp
            if self._in_setup.get(thread):
                self.setup_labels.add(exp.label)
            violations = exp.settle(result.code, **outputs)
            violations += self._check_ready_reads(thread)
            set_aside, self.model.set_aside = self.model.set_aside, []
            unbelieved, self.model.unbelieved = self.model.unbelieved, []
        if name == "launch_gate" and result.ok:
            self.gates.append(int(result.outputs["gate"]))
        self._remember(name, args, result)
        if violations:
            raise self.failure(self._second_look(name, args, thread, violations))
        if set_aside and not self.continue_past_masked:
            v = set_aside[0]
            masked = next(r for r in (v.requirement, *v.also) if r in self.model.masks)
            raise Declined(masked, v.call or exp.label, "the backend broke it here again")
        if unbelieved and not self.continue_past_masked:
            req, call = unbelieved[0]
            self.model.evidence.declined[req] += 1
            raise Declined(req, call, "the test would rely on its promise that tasks completed")
        return result

    def _second_look(
        self, name: str, args: dict[str, Any], thread: int, violations: list[Violation]
    ) -> list[Violation]:
        """Extra calls that tell apart two readings of bytes a read got wrong, before the
        failure is charged (they are the suite's own: the counterexample leaves them out).

        A copy known complete whose bytes are missing: after a second synchronisation of
        the device, are they there?  Then it ran late (the promise of completion was
        false); else it never wrote them there (its effect is wrong).  A read of part of
        a variable that disagrees with the model: does a read of the whole variable show
        the same bytes?  If the whole read agrees with the model, the partial read is
        what is wrong."""
        if self.poisoned:
            return violations
        out = []
        for v in violations:
            try:
                if v.read is not None and "aclrtMemcpyFromSymbolAsync" in v.call:
                    # The observer under test: does a plain read agree with the model
                    # where the asynchronous one did not?
                    v = self._read_or_bytes(v, thread)
                elif v.read is not None and v.missing is not None:
                    v = self._late_or_lost(v, thread)
                elif (
                    v.read is not None
                    and name == "memcpy_from_symbol"
                    and not _whole(args, v.read[1], self)
                ):
                    v = self._read_or_bytes(v, thread)
            except BackendCrash:
                pass  # the backend cannot take a second look: the first reading stands
            out.append(v)
        return out

    def _raw_read(self, thread: int, var: str, lo: int, hi: int) -> bytes | None:
        f = self.fixtures[var]
        scratch = self._scratch_buffer(thread, f.size)
        args = dict(
            dst=scratch.address,
            dst_max=scratch.size,
            symbol=f.address,
            count=hi - lo,
            offset=lo,
            kind=D2H,
        )
        r = self._raw("memcpy_from_symbol", thread, args, f"a second look: reading {var}")
        return self._read_back(scratch.address, hi - lo, thread) if r.ok else None

    def _late_or_lost(self, v: Violation, thread: int) -> Violation:
        _device, var, lo, hi = v.read  # type: ignore[misc]
        # Every way of waiting, not only the one that may have lied: each stream the test
        # made, the default stream, then the device.
        for s in [*self.streams, *([0] if self.caps.default_stream else [])]:
            self._raw("synchronize_stream", thread, {"stream": s}, "a second look")
        self._raw("synchronize_device", thread, {}, "a second look: aclrtSynchronizeDevice()")
        again = self._raw_read(thread, var, lo, hi)
        if again is None:
            return v
        if again == v.missing:
            note = "after a second synchronisation of every stream the bytes are there: the copy ran, late"
            if v.late is None or v.late == v.requirement:
                return dataclasses.replace(v, details=[*v.details, note])
            # A copy whose own call promised completion at its return ran late: that
            # promise is broken whatever else is; a later one may be too.
            return dataclasses.replace(
                v,
                requirement=v.late,
                details=[*v.details, note],
                also=tuple(dict.fromkeys(r for r in (v.requirement, *v.also) if r and r != v.late)),
            )
        if v.older_write_shows:
            # An older copy ran after the missing one, or the missing one wrote nothing:
            # the bytes cannot tell which, so the first reading stays and both are named.
            return dataclasses.replace(
                v,
                details=[
                    *v.details,
                    f"after a second synchronisation of every stream bytes [{lo}, {hi}) still "
                    "hold the older copy's: it ran after the missing one, or the missing one "
                    "wrote nothing there",
                ],
                also=tuple(
                    dict.fromkeys(r for r in (*v.also, "EFFECT-BYTES") if r != v.requirement)
                ),
            )
        return dataclasses.replace(
            v,
            requirement="EFFECT-BYTES",
            message=v.message + "; not there after a second synchronisation either",
            details=[
                *v.details,
                f"after a second synchronisation of every stream bytes [{lo}, {hi}) still do "
                "not hold what the copy should have left: it did not write them there",
            ],
            also=tuple(
                dict.fromkeys(r for r in (v.requirement, *v.also) if r and r != "EFFECT-BYTES")
            ),
        )

    def _read_or_bytes(self, v: Violation, thread: int) -> Violation:
        device, var, lo, hi = v.read  # type: ignore[misc]
        whole = self._raw_read(thread, var, 0, self.fixtures[var].size)
        if whole is None or not self.model.allows(device, var, lo, whole[lo:hi]):
            return v  # the variable's bytes are wrong, whichever way they are read
        return dataclasses.replace(
            v,
            requirement="FROMSYMBOL-BYTES",
            message=f"the read of {var} bytes [{lo}, {hi}) is wrong: a read of the whole "
            "variable shows bytes the model allows there",
            details=[
                *v.details,
                f"a read of the whole {var} shows there: {whole[lo:hi][:32].hex(' ')}",
            ],
            also=tuple(
                dict.fromkeys(r for r in (v.requirement, *v.also) if r and r != "FROMSYMBOL-BYTES")
            ),
        )

    def _decline_if_masked(self, name: str, thread: int, args: dict[str, Any]) -> None:
        """Do not make a call that must be rejected for a masked reason: a backend known to
        get that wrong may accept it and do what the model cannot follow."""
        with self._lock:
            masked = self.model.masked_stake(self.model.preview(name, thread, **args))
        if masked is not None:
            self.model.evidence.declined[masked] += 1
            label = render_call(name, args, self.model.world.name_of)
            raise Declined(masked, label, "the call must be rejected for that reason")

    def passed(self, *requirements: str) -> None:
        """A check the test made itself (a timing it measured, an answer it compared)."""
        self.model.evidence.check(*requirements)

    def _raw(self, name: str, thread: int, args: dict[str, Any], label: str) -> Result:
        if self.poisoned:
            kind = type(self.poison_error) if self.poison_error is not None else BackendCrash
            raise kind(f"the backend is unusable after an earlier failure: {self.poisoned}", self)
        fn = getattr(self.adapter, name)

        def job(**kw: Any) -> tuple[Any, frozenset[int]]:
            out = fn(**kw)
            # Taken the moment the call returns: which gates were open by then.
            return out, frozenset(self._open_gates)

        token = self._releaser.enter() if self._gates_closed() else None
        try:
            if self.adapter.calls_may_hang:
                raw, gates_open = self._worker(thread).run(job, self.call_timeout, **args)
            else:
                raw, gates_open = job(**args)
        except concurrent.futures.TimeoutError:
            self.poisoned = f"{label} did not return within {self.call_timeout:g} s"
            self.poison_error = BackendTimeout(self.poisoned, self)
            raise self.poison_error from None
        except CallTimeout as exc:  # the adapter's own limit
            self.poisoned = f"{label} did not return: {exc}"
            self.poison_error = BackendTimeout(self.poisoned, self)
            raise self.poison_error from exc
        except Exception as exc:  # the backend raised instead of answering
            self.poisoned = f"{label} raised {type(exc).__name__}: {exc}"
            self.poison_error = BackendCrash(self.poisoned, self)
            raise self.poison_error from exc
        finally:
            if token is not None:
                self._releaser.leave(token)
        if isinstance(raw, tuple):
            names = OUTPUTS.get(name, ())
            return Result(int(raw[0]), dict(zip(names, raw[1:], strict=False)), gates_open)
        return Result(int(raw), {}, gates_open)

    def _read_back(self, address: int, count: int, thread: int) -> bytes:
        r = self._raw("read_host", thread, {"src": address, "count": count}, "read_host")
        if r.code != ACL_SUCCESS:
            raise BackendCrash(
                f"reading host memory at 0x{address:x} failed with {error_name(r.code)}", self
            )
        data: bytes = r.outputs["data"]
        return bytes(data)

    def _check_ready_reads(self, thread: int) -> list[Violation]:
        out: list[Violation] = []
        for r in self.model.ready_reads():
            data = self._read_back(r.address, r.count, thread)
            out += self.model.check_read(r, data)
        return out

    def _gates_closed(self) -> bool:
        with self._lock:
            return any(g not in self._open_gates for g in self.gates)

    def _release_gates(self) -> None:
        """From the releaser: a call waits for longer than it needs to; open every gate
        that no test timer owns."""
        for g in list(self.gates):
            if g not in self._timed:
                self._open_raw(g)

    def _remember(self, name: str, args: dict[str, Any], result: Result) -> None:
        if not result.ok:
            return
        if name == "host_register":
            self.registrations.append(int(args["ptr"]))
        elif name == "host_unregister" and args["ptr"] in self.registrations:
            self.registrations.remove(args["ptr"])
        elif name == "set_device":
            self._devices_used.add(int(args["device_id"]))
        elif name == "reset_device":
            # The device's streams died with it (the model knows which are left).
            self.streams = [s for s in self.streams if s in self.model.world.streams]
        elif name == "create_stream" and "stream" in result.outputs:
            self.streams.append(int(result.outputs["stream"]))
        elif name == "destroy_stream" and args["stream"] in self.streams:
            self.streams.remove(args["stream"])
        elif name == "create_event" and "event" in result.outputs:
            self.events.append(int(result.outputs["event"]))
        elif name == "destroy_event" and args["event"] in self.events:
            self.events.remove(args["event"])

    # -- device variables ----------------------------------------------------
    def current_device(self) -> int:
        dev = self.model.world.current_device(self.thread_no())
        return 0 if dev is None else dev

    def _ensure_known(self, thread: int, symbol: int) -> None:
        dev = self.model.world.current_device(thread)
        if dev is None:
            return
        fixture = next((f for f in self.fixtures.values() if f.address == symbol), None)
        if fixture is None:
            return
        if (dev, "*") not in self._known:
            self._known.add((dev, "*"))
            for f in self.fixtures.values():
                if f.size <= BASELINE_LIMIT:
                    self._learn(thread, dev, f)
        self._learn(thread, dev, fixture)
        # The variable laid out next (fixtures() lists them in layout order) is where a
        # copy that runs past the end would land.
        order = list(self.fixtures.values())
        i = order.index(fixture)
        if i + 1 < len(order):
            self._learn(thread, dev, order[i + 1])

    def _learn(self, thread: int, device: int, f: FixtureVariable) -> None:
        """Read a variable before the model has seen it: its contents become the starting point."""
        if (device, f.name) in self._known:
            return
        self._known.add((device, f.name))
        scratch = self._scratch_buffer(thread, f.size)
        args = dict(
            dst=scratch.address,
            dst_max=scratch.size,
            symbol=f.address,
            count=f.size,
            offset=0,
            kind=D2H,
        )
        r = self._raw("memcpy_from_symbol", thread, args, f"reading {f.name} on device {device}")
        observed = self._read_back(scratch.address, f.size, thread) if r.ok else None
        with self._lock:
            exp = self.model.expect("memcpy_from_symbol", thread, **args)
            self.setup_labels.add(exp.label)
            violations = exp.settle(
                r.code, **({"observed": observed} if observed is not None else {})
            )
        if violations:
            raise self.failure(violations)

    @contextmanager
    def setup(self) -> Iterator[None]:
        """Calls made inside are the suite's set-up, left out of counterexamples."""
        thread = self.thread_no()
        before = self._in_setup.get(thread, False)
        self._in_setup[thread] = True
        try:
            yield
        finally:
            self._in_setup[thread] = before

    def _scratch_buffer(self, thread: int, need: int = BASELINE_LIMIT) -> HostBuffer:
        """Host memory that this thread's reads land in (never a source, so never filled)."""
        buf = self._scratch.get(thread)
        if buf is None or buf.size < need:
            size = max(need, min(BASELINE_LIMIT, max(f.size for f in self.fixtures.values())))
            with self.setup():
                r = self.call("malloc_pageable", size=size)
            if not r.ok:
                raise ConformanceFailure.setup(
                    f"malloc({size}) failed in the backend: {r.code}", self
                )
            buf = self._scratch[thread] = HostBuffer(int(r["ptr"]), size, False, "scratch")
            self.buffers.append(buf)
        return buf

    def baseline(self, *names: str, device: int | None = None) -> None:
        """Read these variables now (on ``device``, default the current one)."""
        with self.on_device(device):
            thread = self.thread_no()
            dev = self.current_device()
            for n in names:
                self._learn(thread, dev, self.fixtures[n])

    def observe(
        self, name: str, device: int | None = None, offset: int = 0, count: int | None = None
    ) -> bytes:
        """Read variable ``name`` (on ``device``) through aclrtMemcpyFromSymbol; judged by the model."""
        f = self.fixtures[name]
        n = f.size - offset if count is None else count
        with self.on_device(device):
            thread = self.thread_no()
            scratch = self._scratch_buffer(thread, n)
            self.call(
                "memcpy_from_symbol",
                dst=scratch.address,
                dst_max=scratch.size,
                symbol=f.address,
                count=n,
                offset=offset,
                kind=D2H,
            )
            return self._read_back(scratch.address, n, thread)

    def watch(self, name: str, seconds: float = 0.2, device: int | None = None) -> None:
        """Observe ``name`` again and again for ``seconds``: a task that runs too early (past
        a closed gate, before an event) is caught whenever it runs, not only if it is quick."""
        deadline = time.monotonic() + seconds
        while True:
            self.observe(name, device=device)
            if time.monotonic() >= deadline:
                return
            time.sleep(0.01)

    @contextmanager
    def on_device(self, device: int | None) -> Iterator[None]:
        """Make ``device`` current for the block (if given), then restore the previous one."""
        before = self.model.world.current_device(self.thread_no())
        if device is None or device == before:
            yield
            return
        self.call("set_device", device_id=device)
        try:
            yield
        finally:
            if before is not None:
                self.call("set_device", device_id=before)

    # -- host memory -----------------------------------------------------------
    def pinned(self, size: int, fill: bytes | None = None, name_hint: str = "pinned") -> HostBuffer:
        r = self.call("malloc_host", size=size)
        if not r.ok:
            raise ConformanceFailure.setup(
                f"aclrtMallocHost({size}) failed: {error_name(r.code)} ({r.code})", self
            )
        buf = HostBuffer(int(r["host_ptr"]), size, True, name_hint)
        self.buffers.append(buf)
        self.write(buf, 0, fill if fill is not None else _pattern(len(self.buffers), size))
        return buf

    def pageable(self, size: int, fill: bytes | None = None, name_hint: str = "host") -> HostBuffer:
        r = self.call("malloc_pageable", size=size)
        if not r.ok:
            raise ConformanceFailure.setup(f"malloc({size}) failed in the backend: {r.code}", self)
        buf = HostBuffer(int(r["ptr"]), size, False, name_hint)
        self.buffers.append(buf)
        self.write(buf, 0, fill if fill is not None else _pattern(len(self.buffers), size))
        return buf

    def write(self, buf: HostBuffer, offset: int, data: bytes) -> None:
        """The host stores ``data`` into ``buf`` (a source may change while a copy is pending)."""
        self.call("write_host", dst=buf.at(offset), data=bytes(data))

    def read(self, buf: HostBuffer, offset: int = 0, count: int | None = None) -> bytes:
        n = buf.size - offset if count is None else count
        return self._read_back(buf.at(offset), n, self.thread_no())

    # -- streams -----------------------------------------------------------------
    def any_stream(self) -> int:
        """A stream for a test that does not care which: NULL (the default stream) when the
        backend has one, else a stream of the current device made for the purpose."""
        if self.caps.default_stream:
            return 0
        device = self.current_device()
        s = self._any_streams.get(device)
        if s is None or s not in self.streams:
            s = self._any_streams[device] = self.stream()
        return s

    def stream(self) -> int:
        r = self.call("create_stream")
        if not r.ok:
            raise ConformanceFailure.setup(
                f"aclrtCreateStream failed: {error_name(r.code)} ({r.code})", self
            )
        return int(r["stream"])

    def gate(self, stream: int) -> int:
        r = self.call("launch_gate", stream=stream)
        if not r.ok:
            raise ConformanceFailure.setup(
                f"the gate could not be enqueued: {error_name(r.code)}", self
            )
        return int(r["gate"])

    def _claim(self, gate: int) -> bool:
        """Mark ``gate`` open; False if someone (a timer) already did: open it only once."""
        with self._lock:
            if gate in self._open_gates:
                return False
            self._open_gates.add(gate)
            return True

    def open(self, gate: int) -> None:
        """Open ``gate`` now (nothing happens if a timer already opened it)."""
        if self._claim(gate):
            self._told.add(gate)
            self.call("open_gate", gate=gate)

    def open_later(self, gate: int, delay: float) -> threading.Timer:
        """Open ``gate`` from a timer (so a backend that wrongly waits times out, never hangs)."""
        self._timed.add(gate)
        timer = threading.Timer(delay, lambda: self._open_raw(gate))
        timer.daemon = True
        timer.start()
        return timer

    def settle_timer(self, timer: threading.Timer, gate: int) -> None:
        """Stop ``timer``; open ``gate`` now if the timer did not already."""
        timer.cancel()
        timer.join()
        self.open(gate)

    def fail(
        self,
        requirement: str,
        message: str,
        *,
        call: str = "",
        allowed: str = "",
        observed: str = "",
    ) -> None:
        """Raise a failure found by a clause test itself (timing, ordering of returns)."""
        raise self.failure(
            [Violation(requirement, message, call=call, allowed=allowed, observed=observed)]
        )

    def failure(self, violations: list[Violation]) -> BaseException:
        """The exception for ``violations`` (see ``classify``); a plain ConformanceFailure
        in a thread that classifies its failures itself (see ``unclassified``)."""
        f = ConformanceFailure(violations, self)
        return f if getattr(self._unclassified, "on", False) else self.classify(f)

    @contextmanager
    def unclassified(self) -> Iterator[None]:
        """Failures raised in this thread inside the block are plain ConformanceFailures:
        the caller decides what they are (a wrong answer with several host threads at once
        is charged to CONCURRENCY-THREADS, and only then classified)."""
        self._unclassified.on = True
        try:
            yield
        finally:
            self._unclassified.on = False

    def classify(self, f: ConformanceFailure) -> BaseException:
        """What failure ``f`` is for this test, by the requirements it cites or could
        equally be charged to: Declined when one is masked (the test ends, having said
        nothing more); an expected failure when the expectations file lists one; a known
        failure when another test of the run found the same one first; else a failure
        of its own, an exception type per identity (requirement and call)."""
        cited = [r for r in (f.requirement, *f.also) if r]
        masked = next((r for r in cited if r in self.model.masks), None)
        if masked is not None:
            self.model.evidence.set_aside[masked] += 1
            first = f.violations[0] if f.violations else None
            return Declined(masked, first.call if first else "", "the backend broke it here")
        for requirement in cited:
            entry = self.expected.get(requirement)
            if entry is not None:
                return ExpectedFailure(f, *entry)
        if f.setup_error is not None or f.requirement is None:
            return f
        if self.run is not None:
            owner = self.run.claim(f.identity, self.test_id)
            self.run.mark_failed(f.requirement, f.also)
            if owner != self.test_id:
                return KnownFailure(f, owner)
        return f.retyped()

    def _open_raw(self, gate: int) -> None:
        # From the timer thread.  Marked open *before* the backend opens it, so a call
        # that returns after the gate really opened always sees the mark (a correct
        # backend is never blamed); the model learns of it before the next settle.
        if self._claim(gate):
            self.adapter.open_gate(gate)

    def gate_is_open(self, gate: int) -> bool:
        return gate in self._open_gates

    # -- teardown -------------------------------------------------------------------
    def close(self) -> None:
        """Leave the backend clean for the next test: open gates, drain, free what we made.

        Every device the test used is drained before anything is released: a buffer
        freed under a pending copy is a use-after-free (a backend may crash on it),
        and a copy still in flight would land in the next test's variables.
        """
        self._releaser.stop()
        try:
            if not self.poisoned:
                for g in self.gates:
                    if self._claim(g):
                        self._raw("open_gate", 0, {"gate": g}, "open_gate")
                world = self.model.world
                devices = sorted(
                    {d for d in world.current.values() if d is not None} | self._devices_used
                )
                for d in devices:
                    self._raw("set_device", 0, {"device_id": d}, "set_device")
                    self._raw("synchronize_device", 0, {}, "synchronize_device")
                for s in list(self.streams):
                    # A stream is destroyed in the context it belongs to.
                    stream = world.streams.get(s)
                    if stream is not None:
                        self._raw("set_device", 0, {"device_id": stream.device}, "set_device")
                    self._raw("destroy_stream", 0, {"stream": s}, "destroy_stream")
                for e in list(self.events):
                    self._raw("destroy_event", 0, {"event": e}, "destroy_event")
                for p in self.registrations:
                    self._raw("host_unregister", 0, {"ptr": p}, "host_unregister")
                for b in self.buffers:
                    self._raw(
                        "free_host" if b.pinned else "free_pageable",
                        0,
                        {"host_ptr": b.address} if b.pinned else {"ptr": b.address},
                        "free",
                    )
                if devices:
                    self._raw("set_device", 0, {"device_id": devices[0]}, "set_device")
        except (BackendCrash, BackendTimeout):
            pass
        finally:
            for w in self._workers.values():
                w.close()
            self._workers.clear()
            # The adapter lives on into the next test: let go of this test's records (a
            # failure kept its own copy), or a session would hold every byte it wrote.
            with self.adapter.lock:
                del self.adapter.trace[self.trace_start :]

    def trace_records(self) -> list[Any]:
        return self.adapter.trace[self.trace_start :]


_C_RANGES = {
    "size_t": (0, SIZE_MAX),
    "uint64_t": (0, SIZE_MAX),
    "uint32_t": (0, 2**32 - 1),
    "int32_t": (-(2**31), 2**31 - 1),
    "aclrtMemcpyKind": (-(2**31), 2**31 - 1),
}


def _check_c_ranges(name: str, args: dict[str, Any]) -> None:
    """A suite bug, not a backend failure: an argument C cannot represent."""
    for p in CALLS[name].params:
        lim = _C_RANGES.get(p.ctype)
        v = args.get(p.name)
        if lim is not None and isinstance(v, int) and not lim[0] <= v <= lim[1]:
            raise ValueError(f"{name}: {p.name}={v} does not fit {p.ctype}")


def _whole(args: dict[str, Any], var: str, h: Harness) -> bool:
    """Does a read with these arguments cover the whole variable?"""
    return int(args.get("offset") or 0) == 0 and int(args.get("count") or 0) == h.fixtures[var].size


def _pattern(seed: int, size: int) -> bytes:
    """A recognisable, non-repeating fill for fresh host buffers."""
    base = bytes(((seed * 59 + i * 7 + (i >> 8) * 13) & 0xFF) or 1 for i in range(min(size, 4096)))
    reps = -(-size // len(base))
    return (base * reps)[:size]


def names(items: Iterable[FixtureVariable]) -> list[str]:
    return [f.name for f in items]
