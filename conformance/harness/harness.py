"""The harness: every call goes to the backend *and* to the model, and must agree.

A clause test or a state machine never calls the backend directly.  It calls
``harness.call("memcpy_to_symbol_async", symbol=..., ...)``; the harness

1. makes the call on the backend (in the calling thread's own worker thread,
   with a time limit, so a hanging backend yields TIMEOUT instead of a hung
   run; each logical host thread keeps its own OS thread because ACL contexts
   are per thread: ``backend_calls.BackendCalls``, ``workers.py``; the limit
   adapts to the backend, ``hangs.CallLimit``), unless a call in the same
   situation hung earlier in the run: then the call is declined (``hangs.py``);
   a call that hangs is charged to the requirement its success stands for,
2. reads back what a read wrote, and
3. then, once the backend has answered, has the model judge the call's record
   (``reference_impl.step.judge``: what the profile allows, the answer, and the
   asynchronous reads the call completed, read back; the state the profile reads
   is the one before the call: only gates move concurrently, and the model is
   first told of those a timer opened meanwhile); any disagreement raises
   :class:`ConformanceFailure` (after a second look, ``second_look.py``), whose
   message is written for a vendor who has never read this code; ``triage.py``
   decides what the failure is for the test at hand.

The model is consulted before the call only where requirements are masked, to
decline a call that must be rejected for a masked reason.

Device variables are read once before their first use on each device, so the
model knows what they held (contents are taken from the backend, never
assumed: ``variables.Baselines``).

The harness owns the parts and wires them together: each part keeps its own state
(``stream_gates.StreamGates``, ``ledger.Ledger`` of what the test made, ``variables.Baselines``
and ``Scratch``, ``second_look.SecondLook``, ``triage.Triage``) and is given only what it
needs; none of them knows the harness.
"""

from __future__ import annotations

import threading
import time
import unittest
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from acl_conformance.adapters.base import Adapter
from acl_conformance.adapters.base import Capabilities
from acl_conformance.adapters.base import FixtureVariable
from acl_conformance.adapters.traced import Traced
from acl_conformance.reference_impl import Judgement
from acl_conformance.reference_impl import Model
from acl_conformance.reference_impl import Step
from acl_conformance.reference_impl import Violation
from acl_conformance.reference_impl import charging
from acl_conformance.reference_impl import judge
from acl_conformance.reference_impl.calls import CALLS
from acl_conformance.reference_impl.constants import D2H
from acl_conformance.reference_impl.constants import error_name
from acl_conformance.reference_impl.evidence import Tally
from acl_conformance.reference_impl.record import CallRecord
from acl_conformance.reference_impl.requirement_ids import STREAM_NULL_DEFAULT

from . import teardown
from .backend_calls import CALL_TIMEOUT_SECONDS
from .backend_calls import BackendCalls
from .backend_calls import check_c_ranges
from .failure import BackendCrash
from .failure import BackendTimeout
from .failure import ConformanceFailure
from .failure import Declined
from .failure import FailureSnapshot
from .failure_snapshot import snapshot
from .hangs import CallLimit
from .hangs import situation
from .host_memory import HostBuffer
from .host_memory import pattern
from .ledger import Ledger
from .runstate import RunState
from .second_look import SecondLook
from .stream_gates import StreamGates
from .triage import Triage
from .variables import BASELINE_LIMIT
from .variables import Baselines
from .variables import Scratch

__all__ = ["BASELINE_LIMIT", "D2H", "Harness", "HostBuffer"]

RELEASE_AFTER = 0.25
"""Seconds a call may take while a gate of the suite is closed before the suite opens its
gates: a backend may legally wait for more than it must (a pageable copy that waits for
every stream of its device, a read that waits for the device); the call is then released
and judged knowing the gates opened, instead of timing out."""

_SYMBOL_CALLS = {
    "memcpy_to_symbol_async",
    "memcpy_to_symbol",
    "memcpy_from_symbol",
    "memcpy_from_symbol_async",
}


class Harness:
    """One backend and one model, kept in step call by call."""

    def __init__(
        self,
        adapter: Adapter,
        profile: str,
        *,
        call_timeout: float | CallLimit | None = CALL_TIMEOUT_SECONDS,
        model_capabilities: Capabilities | None = None,
        tally: Tally | None = None,
        masks: frozenset[str] = frozenset(),
        run: RunState | None = None,
        test_id: str = "",
        expected: dict[str, tuple[str, str]] | None = None,
        provisional: bool = False,
    ) -> None:
        """``expected``: requirement -> (entry key, description) of the expectations file;
        ``provisional``: the backend served an earlier harness (``triage.Triage``)."""
        self.adapter = adapter if isinstance(adapter, Traced) else Traced.around(adapter)
        self.profile = profile
        self.caps = self.adapter.capabilities()
        self.fixtures: dict[str, FixtureVariable] = {f.name: f for f in self.adapter.fixtures()}
        self.model = Model(profile, model_capabilities or self.caps, tally)
        self.model.masks = frozenset(masks)
        self.model.known_failing = frozenset(masks) | frozenset(expected or {})
        if run is not None:
            self.model.known_failing |= run.failed()
        for f in self.fixtures.values():
            self.model.add_symbol(f.name, f.address, f.size)
        self.trace_start = len(self.adapter.trace)
        self.lock = threading.RLock()
        """Held while the model moves (it is told of calls one at a time)."""
        self._threads: dict[int, int] = {}
        self._in_setup: dict[int, bool] = {}
        self._unclassified = threading.local()
        self._any_streams: dict[int, int] = {}
        self.on_failure: Callable[[ConformanceFailure], None] | None = None
        """Told of every failure of the backend this harness classifies, before triage (a
        bug hunt saves each as a find, whatever the test then makes of it)."""
        self.continue_past_masked = False
        """What a violation of a masked requirement does: a clause test ends there
        (Declined); a machine, which checks many things, sets it aside and goes on."""
        self.stream_gates = StreamGates(self.lock, self._open_on_backend)
        self.run = run
        self.test_id = test_id
        self.backend = BackendCalls(
            self.adapter,
            call_timeout,
            self.stream_gates,
            self.snapshot,
            RELEASE_AFTER,
            on_hang=self._charge_hang,
            hung=run.hang if run is not None else None,
            on_crash=self._charge_crash,
        )
        self.more_failures: list[BaseException] = []
        """Failures met besides the one a call raised: a second look that hung or crashed
        (the first reading stands and is raised; ``Suite`` reports these beside it)."""
        self.ledger = Ledger()
        """What this harness made and wrote (released at close, undone by a reset)."""
        self.triage = Triage(
            self.model, run, test_id, dict(expected or {}), provisional=provisional
        )
        self.scratch = Scratch(self.fixtures, self._allocate_scratch)
        self.baselines = Baselines(
            self.fixtures, self.model, self.lock, self.backend, self.scratch, self.failure
        )
        self.second_look = SecondLook(
            self.backend,
            self.scratch,
            self.fixtures,
            self.model,
            lambda: self.ledger.streams,
            self.null_stream_usable,
            lambda: frozenset(g for g in self.model.gate_ids() if not self.gate_is_open(g)),
            self.more_failures.append,
        )
        self.release_problems: list[str] = []
        """The clean-up calls at close that were not made or did not succeed
        (``teardown.py``)."""
        self._released = False
        self.stage: str | None = None
        """What the suite is doing when it is not running the test's own steps (its
        clean-up, its reset): said beside each call in the failure's C form."""
        self.last_steps: dict[int, Step] = {}
        """Per host thread: its latest call as the model judged it, while ``call`` had not
        yet returned or raised (replay prints what the model allowed)."""

    @property
    def poisoned(self) -> str | None:
        """Why the backend is unusable (it hung or crashed), or None."""
        return self.backend.poisoned

    @property
    def poison_error(self) -> BackendCrash | None:
        """The failure that poisoned it (a BackendTimeout when the backend hung)."""
        return self.backend.poison_error

    @property
    def first_reads(self) -> dict[tuple[int, str], bytes]:
        """(device, variable) -> the bytes the harness read there before first using it."""
        return self.baselines.first_reads

    # -- threads ----------------------------------------------------------
    def thread_no(self) -> int:
        """The number of the calling host thread (0 for the first one): the model's, and
        the one the trace records (the one numbering of host threads)."""
        ident = threading.get_ident()
        with self.lock:
            return self._threads.setdefault(ident, len(self._threads))

    # -- the one way to call the backend -------------------------------------
    def call(self, name: str, **args: Any) -> CallRecord:
        """Make ``name(**args)`` on the backend and check it against the model."""
        check_c_ranges(name, args)
        thread = self.thread_no()
        self.last_steps.pop(thread, None)
        if self.model.masks:
            self.triage.decline_if_masked(name, thread, args, self.lock)
        label = self.model.render(name, args)
        if self.stage is not None:
            label = f"{label} /* {self.stage} */"
        hung = self.backend.would_hang(name, args)
        if hung is not None:
            self._decline_hung(hung, label)  # it would hang again: not made
        if name in _SYMBOL_CALLS and args.get("count"):
            self.baselines.ensure_known(thread, args.get("symbol", 0))
        result = self.backend.raw(name, thread, args, label)
        # A synchronous read, or one from pageable memory, is complete at its return.
        observed = (
            self.backend.read_back(args["dst"], args["count"], thread)
            if result.ok and self.model.reads_at_return(name, args)
            else None
        )
        with self.lock:
            # Gates a timer opened before the call returned: the model learns of them
            # first.  The state the profile reads is the one before the call (only gates
            # move concurrently), so asking after the call is the same as asking before.
            step = judge(
                self.model,
                result,
                observed,
                read_back=lambda r: self.backend.read_back(r.address, r.count, thread),
                opened=self.stream_gates.tell_model(result.gates_open),
                setup=self._in_setup.get(thread, False),
                note=self.stage,
            )
            self.last_steps[thread] = step
            set_aside, self.model.set_aside = self.model.set_aside, []
            unbelieved, self.model.unbelieved = self.model.unbelieved, []
        self.ledger.remember(
            name, args, result, thread, lambda s: self.model.stream_device(s) is not None
        )
        if name == "launch_gate" and result.ok and "gate" in result.outputs:
            self.stream_gates.launched_one(int(result.outputs["gate"]))
        if step.violations:
            raise self.failure(self.second_look.charge(name, args, thread, step.violations))
        if set_aside and not self.continue_past_masked:
            v = set_aside[0]
            masked = next(r for r in (v.requirement, *v.also) if r in self.model.masks)
            call = v.call or step.judgement
            raise Declined(masked, call.label, "the backend broke it here again")
        if unbelieved and not self.continue_past_masked:
            req, promised_by = unbelieved[0]
            self.model.tally.declined[req] += 1
            raise Declined(
                req, promised_by.label, "the test would rely on its promise that tasks completed"
            )
        return result

    def _charge_hang(
        self, exc: BackendTimeout, name: str, thread: int, args: dict[str, Any]
    ) -> None:
        """A call did not return: charged as :meth:`_charge_no_answer` says."""
        self._charge_no_answer(exc, name, thread, args)

    def _charge_crash(
        self, exc: BackendCrash, name: str, thread: int, args: dict[str, Any]
    ) -> None:
        """A call raised instead of answering: charged as :meth:`_charge_no_answer` says."""
        self._charge_no_answer(exc, name, thread, args)

    def _charge_no_answer(
        self, exc: BackendCrash, name: str, thread: int, args: dict[str, Any]
    ) -> None:
        """A call that never returned (``exc`` a BackendTimeout) or raised instead of
        answering, wherever the suite made it (a test's step, a set-up read, its clean-up,
        its reset): charged to the requirement its success stands for under the profile,
        and told to the run, so that no later call in the same situation is made and the
        test runs again past it (one failure, the rest decided without it)."""
        where = situation(name, args)
        charge = charging.no_answer(None)
        allowed = "?"
        try:
            with self.lock:
                answers = self.model.preview(name, thread, **args)
            charge = charging.no_answer(answers)
            allowed = answers.allowed_codes()
        except Exception:
            pass  # the model cannot say: charged to no requirement
        hang = isinstance(exc, BackendTimeout)
        if isinstance(exc, BackendTimeout):
            exc.charge(charge.requirement, where, allowed, self.snapshot())
        else:
            exc.charge_to(charge.requirement, CALLS[name].c_name, self.snapshot())
        if self.run is not None and exc.identity is not None:
            # Two tests (in two workers) may meet it in the same situation at once: one owns it.
            owner = self.run.claim(exc.identity, self.test_id)
            exc.owner = owner if owner != self.test_id else None
            self.run.mark_hung(
                where,
                {
                    "requirement": charge.requirement or "",
                    "call": exc.call or name,
                    "test": self.test_id,
                    "limit": (exc.limit or "") if isinstance(exc, BackendTimeout) else "",
                    "what": "hung" if hang else "crashed",
                },
            )

    def _decline_hung(self, hung: dict[str, str], label: str) -> None:
        """Do not make a call in a situation that hung earlier in the run: decline it, citing
        the hang (Declined)."""
        requirement = hung.get("requirement") or "setup"
        self.model.tally.declined[requirement] += 1
        raise Declined(
            requirement,
            label,
            f"the backend {hung.get('what') or 'hung'} on {hung.get('call')} in "
            f"{hung.get('test') or 'an earlier test'} "
            f"(charged to {requirement}), and this call is in the same situation",
            masked=False,
        )

    def passed(self, *requirements: str) -> None:
        """A check the test made itself (a timing it measured, an answer it compared)."""
        self.model.tally.check(*requirements)

    # -- device variables ----------------------------------------------------
    def current_device(self) -> int:
        dev = self.model.current_device(self.thread_no())
        return 0 if dev is None else dev

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

    def baseline(self, *names: str, device: int | None = None) -> None:
        """Read these variables now (on ``device``, default the current one)."""
        with self.on_device(device):
            thread = self.thread_no()
            dev = self.current_device()
            for n in names:
                self.baselines.learn(thread, dev, self.fixtures[n])

    def observe(
        self, name: str, device: int | None = None, offset: int = 0, count: int | None = None
    ) -> bytes:
        """Read variable ``name`` (on ``device``) through aclrtMemcpyFromSymbol; judged by the model."""
        f = self.fixtures[name]
        n = f.size - offset if count is None else count
        with self.on_device(device):
            thread = self.thread_no()
            scratch = self.scratch.buffer(thread, n)
            self.call(
                "memcpy_from_symbol",
                dst=scratch.address,
                dst_max=scratch.size,
                symbol=f.address,
                count=n,
                offset=offset,
                kind=D2H,
            )
            return self.backend.read_back(scratch.address, n, thread)

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
        before = self.model.current_device(self.thread_no())
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
        """A new pinned buffer (aclrtMallocHost), filled with ``fill`` or a fresh pattern."""
        r = self.call("malloc_host", size=size)
        if not r.ok:
            why = f"aclrtMallocHost({size}) failed: {error_name(r.acl_error)} ({r.code})"
            raise ConformanceFailure.setup(why, self.snapshot())
        return self._filled(HostBuffer(int(r["host_ptr"]), size, True, name_hint), fill)

    def pageable(
        self, size: int, fill: bytes | None = None, name_hint: str = "pageable"
    ) -> HostBuffer:
        """A new pageable buffer (malloc in the backend), filled like ``pinned``."""
        r = self.call("malloc_pageable", size=size)
        if not r.ok:
            why = f"malloc({size}) failed in the backend: {r.code}"
            raise ConformanceFailure.setup(why, self.snapshot())
        return self._filled(HostBuffer(int(r["ptr"]), size, False, name_hint), fill)

    def _filled(self, buf: HostBuffer, fill: bytes | None) -> HostBuffer:
        self.ledger.buffers.append(buf)
        self.write(
            buf, 0, fill if fill is not None else pattern(len(self.ledger.buffers), buf.size)
        )
        return buf

    def _allocate_scratch(self, size: int) -> HostBuffer:
        """Scratch memory for the suite's own reads: a set-up call, never filled."""
        with self.setup():
            r = self.call("malloc_pageable", size=size)
        if not r.ok:
            raise ConformanceFailure.setup(
                f"malloc({size}) failed in the backend: {r.code}", self.snapshot()
            )
        buf = HostBuffer(int(r["ptr"]), size, False, "scratch")
        self.ledger.buffers.append(buf)
        return buf

    def write(self, buf: HostBuffer, offset: int, data: bytes) -> None:
        """The host stores ``data`` into ``buf`` (a source may change while a copy is pending)."""
        self.call("write_host", dst=buf.at(offset), data=bytes(data))

    def read(self, buf: HostBuffer, offset: int = 0, count: int | None = None) -> bytes:
        n = buf.size - offset if count is None else count
        return self.backend.read_back(buf.at(offset), n, self.thread_no())

    # -- streams and gates -------------------------------------------------------
    @property
    def null_stream_usable(self) -> bool:
        """May a step use NULL as a stream?  Only when the backend declares a default stream
        and the run has not found NULL broken: once STREAM-NULL-DEFAULT failed (it is
        masked), or NULL's synchronisation hung or raised, a step that does not care which
        stream it uses takes a stream of its own, so that the other requirements are decided
        on their own evidence."""
        return (
            self.caps.default_stream
            and STREAM_NULL_DEFAULT not in self.model.masks
            # (NULL's synchronisation hung or raised earlier in the run: a step that does not
            # care which stream it uses takes one it can wait for)
            and self.backend.would_hang("synchronize_stream", {"stream": 0}) is None
        )

    def any_stream(self) -> int:
        """A stream for a test that does not care which: NULL (the default stream) when the
        backend has one that works (``null_stream_usable``), else a stream of the current
        device made for the purpose."""
        if self.null_stream_usable:
            return 0
        device = self.current_device()
        s = self._any_streams.get(device)
        if s is None or s not in self.ledger.streams:
            s = self._any_streams[device] = self.stream()
        return s

    def drain_streams(self) -> CallRecord:
        """Synchronise each stream the test made on the current device, and the default
        stream when it is usable (at least one stream); the last synchronisation's record.
        What a test waits with when aclrtSynchronizeDevice is not to be called."""
        device = self.current_device()
        streams = [s for s in self.ledger.streams if self.model.stream_device(s) == device]
        if self.null_stream_usable or not streams:
            streams.append(self.any_stream())
        last = None
        for s in dict.fromkeys(streams):
            last = self.call("synchronize_stream", stream=s)
        assert last is not None
        return last

    def stream(self) -> int:
        r = self.call("create_stream")
        if not r.ok:
            raise ConformanceFailure.setup(
                f"aclrtCreateStream failed: {error_name(r.acl_error)} ({r.code})",
                self.snapshot(),
            )
        return int(r["stream"])

    def close_stream_gate(self, stream: int) -> int:
        r = self.call("launch_gate", stream=stream)
        if not r.ok:
            raise ConformanceFailure.setup(
                f"the gate could not be enqueued: {error_name(r.acl_error)}", self.snapshot()
            )
        return int(r["gate"])

    def open_stream_gate(self, gate: int) -> None:
        """Open ``gate`` now (nothing happens if a timer already opened it)."""
        if self.stream_gates.claim(gate):
            self.stream_gates.told(gate)
            self.call("open_gate", gate=gate)

    def open_later(self, gate: int, delay: float) -> threading.Timer:
        """Open ``gate`` from a timer (so a backend that wrongly waits times out, never hangs)."""
        self.stream_gates.time(gate)
        timer = threading.Timer(delay, lambda: self.stream_gates.open_past_model(gate))
        timer.daemon = True
        timer.start()
        return timer

    def settle_timer(self, timer: threading.Timer, gate: int) -> None:
        """Stop ``timer``; open ``gate`` now if the timer did not already."""
        timer.cancel()
        timer.join()
        self.open_stream_gate(gate)

    def gate_is_open(self, gate: int) -> bool:
        return self.stream_gates.is_open(gate)

    def _open_on_backend(self, gate: int) -> None:
        """Open ``gate`` on the backend past the model, as the calling host thread."""
        with self.adapter.host_thread(self.thread_no()):
            self.adapter.open_gate(gate)

    # -- failures --------------------------------------------------------------------
    def fail(
        self,
        requirement: str,
        message: str,
        *,
        call: Judgement | None = None,
        allowed: str = "",
        observed: str = "",
    ) -> None:
        """Raise a failure found by a clause test itself (timing, ordering of returns);
        ``call``: the call it is about (``model.last_call()``), if any."""
        raise self.failure(
            [Violation(requirement, message, call=call, allowed=allowed, observed=observed)],
            by_test=True,
        )

    def failure(self, violations: list[Violation], by_test: bool = False) -> BaseException:
        """The exception for ``violations`` (see ``classify``); a plain ConformanceFailure
        in a thread that classifies its failures itself (see ``unclassified``).
        ``by_test``: a check the test made itself, not the model's judgement of a call."""
        f = ConformanceFailure(violations, self.snapshot())
        f.by_test = by_test
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
        """What failure ``f`` is for this test (see ``triage.Triage.classify``)."""
        if self.on_failure is not None and f.requirement is not None:
            self.on_failure(f)
        return self.triage.classify(f)

    def snapshot(self) -> FailureSnapshot:
        """What a failure raised now keeps of this harness (``failure_snapshot.py``)."""
        return snapshot(self)

    # -- teardown -------------------------------------------------------------------
    def release(self) -> BaseException | None:
        """Leave the backend clean for the next test (``teardown.release``): open gates,
        drain, free what the test made, every call judged as a test's is.  The failure
        the clean-up met (a hang, a crash, an answer the profile does not allow), or None;
        the calls that were not made or were refused as allowed are in
        :attr:`release_problems`.  Once per harness: a second call returns None."""
        if self._released:
            return None
        self._released = True
        self.backend.stop_releasing()
        if self.backend.poisoned:
            return None  # the failure that poisoned it was raised where it happened
        # A machine sets aside a masked requirement broken again; the clean-up goes on
        # past it too (a declined clean-up call is a problem, not the test's end).
        self.continue_past_masked = True
        self.stage = "the suite's clean-up after the test"
        try:
            self.release_problems = teardown.release(
                lambda name, args: self.call(name, **args),
                self.open_stream_gate,
                self.stream_gates,
                self.ledger,
                self.model,
            )
        except Exception as exc:  # the clean-up's failure: the caller raises it
            return exc
        except unittest.SkipTest as exc:  # an expected or known failure met in clean-up
            return exc
        return None

    def close(self) -> None:
        """Let go of the harness's workers and records (after :meth:`release`, which this
        makes first if it was not made: its failure is then not raised)."""
        try:
            self.release()
        finally:
            self.backend.close()
            # The adapter lives on into the next test: let go of this test's records (a
            # failure kept its own copy), or a session would hold every byte it wrote.
            with self.adapter.lock:
                del self.adapter.trace[self.trace_start :]

    def trace_records(self) -> list[CallRecord]:
        """The calls this harness made, as recorded."""
        return self.adapter.trace[self.trace_start :]
