"""The reference model: a profile's rules plus the memory model, step by step.

Use::

    m = Model("cann", Capabilities(devices=2))
    m.add_symbol("g_u32", address, 4)
    m.set_initial(0, "g_u32", b"...")           # what the backend holds now
    exp = m.expect("memcpy_to_symbol_async", symbol=..., src=..., count=4,
                   offset=0, kind=1, stream=h)
    violations = exp.settle(code)                # the backend's return code

Every call of the contract goes through ``expect`` (the profile says what is
allowed) and ``settle`` (the backend's answer is judged, and the effect of the
alternative it chose is applied).  Reads are judged byte by byte against the
memory model.  Calls must be reported in an order consistent with real time
(or, for concurrent host threads, in any order where they commute).

This module is the model's API and the state it keeps.  The other parts:
``apply.py`` (what a successful call does: one handler per effect, the copies and
host memory in ``apply_memory.py``), ``diagnosis.py`` (which requirement wrong
bytes are charged to), ``tally.py`` (the checks made and the outcomes seen),
``records.py`` (what is remembered of writes, pending reads and rejected copies),
``queries.py`` (the public questions the suite may ask of the model).
They read and update the model's underscored members: those are private to these
modules, not to this file.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

import numpy as np

from .apply import apply
from .calls import CALLS
from .calls import render_call
from .constants import ACL_SUCCESS
from .constants import Capabilities
from .constants import error_name
from .diagnosis import diagnose
from .evidence import Evidence
from .memory import INITIAL
from .memory import VarMemory
from .memory import Write
from .order import Clock
from .order import Gate
from .order import Order
from .order import Queue
from .order import covers
from .outcome import Outcome
from .outcome import Violation
from .profiles import Profile
from .profiles import get_profile
from .queries import Queries
from .records import Cause
from .records import PendingRead
from .records import Rejected
from .records import WriteMeta
from .records import hex_bytes
from .records import some
from .requirement_ids import DEVICE_RESET_CONTENTS
from .requirement_ids import PINNED_COMPLETE_AFTER_SYNC
from .requirement_ids import SYNC_ERROR_REPORTING
from .state import CHANGE_LIMIT
from .state import HostBuffer
from .state import Symbol
from .state import World
from .tally import count_match
from .tally import hygiene
from .tally import read_checks

__all__ = ["Cause", "Judgement", "Model", "PendingRead"]


class Judgement:
    """What the profile allows for one call; ``settle`` judges the backend's answer."""

    def __init__(
        self,
        model: Model,
        name: str,
        thread: int,
        args: dict[str, Any],
        label: str,
        outcome: Outcome,
    ):
        self.model = model
        self.name = name
        self.thread = thread
        self.args = args
        self.label = label
        self.outcome = outcome
        self.settled = False

    def settle(self, code: int, **outputs: Any) -> list[Violation]:
        """Judge return ``code`` (and outputs such as ``stream=`` or ``observed=``)."""
        if self.settled:
            raise RuntimeError(f"{self.label} was already settled")
        self.settled = True
        return self.model._settle(self, int(code), outputs)

    def allowed(self) -> str:
        return self.outcome.allowed_codes()


class Model(Queries):
    """The model of what the spec allows, for one backend run."""

    def __init__(
        self,
        profile: str | Profile = "spec",
        capabilities: Capabilities | None = None,
        evidence: Evidence | None = None,
    ) -> None:
        self.profile = get_profile(profile) if isinstance(profile, str) else profile
        self.caps = capabilities or Capabilities()
        self.evidence = evidence if evidence is not None else Evidence()
        """The checks made and the outcomes seen (may be shared by several models)."""
        self.masks: frozenset[str] = frozenset()
        """Requirements known to fail (in this run, or listed as expected failures): a
        violation charged to one of them is set aside (``set_aside``) and, for a read,
        the model takes the bytes read as the truth from then on, so that the other
        requirements are still judged."""
        self.set_aside: list[Violation] = []
        """Violations of masked requirements since the caller last emptied the list."""
        self.unbelieved: list[tuple[str, str]] = []
        """Promises of completion by masked requirements that the model did not believe (a
        test that relies on them cannot go on), since the caller last emptied the list."""
        self.order = Order()
        self.world = World(self.caps, self.order)
        self.memory: dict[tuple[int, str], VarMemory] = {}
        self.history: list[str] = []
        """Every call so far, in C form with its step number."""
        self._step = 0
        self._wid = 0
        self._pending: list[Write] = []
        self._meta: dict[int, WriteMeta] = {}
        self._reads: list[PendingRead] = []
        self._host_queues: dict[int, Queue] = {}
        self._gates: dict[int, Gate] = {}
        self._rejected: dict[tuple[int, str], deque[Rejected]] = {}
        self._addresses: dict[tuple[int, str], int] = {}
        self._reset: set[tuple[int, str]] = set()
        """Variables whose contents a device reset made unspecified, not read since."""
        self._undefined: dict[int, np.ndarray] = {}
        """Per host buffer address: which bytes hold values the suite never wrote."""
        self._last_read: tuple[str, list[tuple[int, int, list[np.ndarray] | None]]] | None = None
        """The label of the last synchronous read judged, and what it allowed."""

    # -- set-up -----------------------------------------------------------
    def add_symbol(self, name: str, address: int, size: int) -> Symbol:
        """A fixture variable the backend declares: its host shadow address and size."""
        return self.world.add_symbol(name, address, size)

    def assume_initialized(self) -> None:
        """The backend was initialised (aclInit) before the model was told of its calls."""
        self.world.initialized = True

    def set_initial(self, device: int, name: str, data: bytes) -> None:
        """What variable ``name`` holds on ``device`` now, before any copy the model knows of."""
        sym = self.world.symbols_by_name[name]
        self.memory[(device, name)] = VarMemory(
            sym.size, np.frombuffer(bytes(data), dtype=np.uint8)
        )

    # -- calls ------------------------------------------------------------
    def expect(self, name: str, thread: int = 0, **args: Any) -> Judgement:
        """Announce a call; the returned judgement knows what the profile allows."""
        if name not in CALLS:
            raise KeyError(f"{name!r} is not a call of the contract")
        self._step += 1
        line = render_call(name, args, self.world.name_of)
        label = f"#{self._step} " + (f"[thread {thread}] " if thread else "") + line
        self.history.append(label)
        outcome = self.profile.outcome(self.world, name, thread, args)
        return Judgement(self, name, thread, dict(args), label, outcome)

    def call(
        self,
        name: str,
        code: int,
        thread: int = 0,
        outputs: Mapping[str, Any] | None = None,
        **args: Any,
    ) -> list[Violation]:
        """expect + settle in one step."""
        return self.expect(name, thread, **args).settle(code, **(outputs or {}))

    def _settle(self, exp: Judgement, code: int, outputs: dict[str, Any]) -> list[Violation]:
        alt = exp.outcome.match(code)
        if code != ACL_SUCCESS and exp.name in ("memcpy_to_symbol_async", "memcpy_to_symbol"):
            self._remember_rejected(exp)
        hygiene(self, exp, code)
        if alt is None:
            primary = exp.outcome.primary
            spec = CALLS[exp.name]
            requirement, also = (
                primary.requirement,
                some(*primary.also, *(primary.shadow if code else ())),
            )
            if (
                code
                and exp.name.startswith("synchronize")
                and exp.outcome.accepts_success()
                and not exp.outcome.accepts_failure()
            ):
                # No device task of the suite fails, so an error from a synchronisation
                # that had to succeed is an error reported without a failure (after a
                # rejected call: the rejection left it behind).
                requirement, also = SYNC_ERROR_REPORTING, some(primary.requirement, *also)
            return self._screen(
                [
                    Violation(
                        requirement,
                        f"{spec.c_name} returned {error_name(code)} ({code}), which the {self.profile.name} profile does not allow here",
                        call=exp.label,
                        allowed=exp.outcome.allowed_codes(),
                        observed=f"{error_name(code)} ({code})",
                        also=also,
                    )
                ]
            )
        count_match(self, exp, alt, code)
        if alt.effect is None:
            return []
        return self._screen(apply(self, alt.effect, exp, outputs))

    def preview(self, name: str, thread: int = 0, **args: Any) -> Outcome:
        """What the profile would allow for this call now (nothing is recorded)."""
        return self.profile.outcome(self.world, name, thread, args)

    def masked_stake(self, outcome: Outcome) -> str | None:
        """The masked requirement a call with this outcome puts at stake, if any: a call
        that must be rejected for a reason that is masked (the backend is known to get it
        wrong: it may accept the call and do something the model cannot follow)."""
        if not self.masks or outcome.accepts_success():
            return None
        primary = outcome.primary
        return next((r for r in (primary.requirement, *primary.also) if r in self.masks), None)

    def _screen(self, violations: list[Violation]) -> list[Violation]:
        """Set aside the violations of masked requirements."""
        if not self.masks or not violations:
            return violations
        kept = []
        for v in violations:
            hit = next((r for r in (v.requirement, *v.also) if r in self.masks), None)
            if hit is None:
                kept.append(v)
            else:
                self.evidence.set_aside[hit] += 1
                self.set_aside.append(v)
        return kept

    # -- host events ------------------------------------------------------
    def ready_reads(self) -> list[PendingRead]:
        """Asynchronous reads that a synchronisation has covered and that are not yet judged."""
        return [r for r in self._reads if r.ready and not r.checked]

    def check_read(self, read: PendingRead, observed: bytes) -> list[Violation]:
        """Judge the bytes an asynchronous read left in its destination."""
        if not read.ready:
            raise RuntimeError(f"{read.label} is not known complete yet")
        read.checked = True
        self._reads.remove(read)
        var = self._var(read.device, read.symbol)
        lo, hi = read.offset, read.offset + read.count
        tmp = VarMemory.from_segments(var.size, var.initial, read.snapshot)
        for w in read.extra:
            tmp.add(w)
        # Relative to the read, a write is complete when it happens before it.
        tmp.prune(lo, hi, lambda w: w.task.happens_before(read.task))
        gates = read.gates_at_completion

        def visible(w: Write) -> bool:
            return not any(g.task is w.task or g.task.happens_before(w.task) for g in gates)

        obs = np.frombuffer(bytes(observed), dtype=np.uint8)
        mismatches = tmp.check(lo, obs, visible)
        if mismatches and self._untouched(read, bytes(observed)):
            promise, by = read.ready_by or (PINNED_COMPLETE_AFTER_SYNC, "a synchronisation")
            return self._screen(
                [
                    Violation(
                        promise,
                        f"the asynchronous read had not written its destination, though it "
                        f"was known complete because {by} returned",
                        call=read.label,
                        allowed="the variable's bytes in the destination",
                        observed=f"the destination as it was before the read: {hex_bytes(observed)}",
                    )
                ]
            )
        read_checks(self, read.device, read.symbol, tmp, lo, obs, visible)
        self._host_write(read.dest, read.dest_offset, bytes(observed))
        return self._screen(
            [diagnose(self, read.device, read.symbol, m, read.label) for m in mismatches]
        )

    def _untouched(self, read: PendingRead, observed: bytes) -> bool:
        """Does the destination still hold what the host last wrote there (all of it known)?"""
        lo, hi = read.dest_offset, read.dest_offset + read.count
        undefined = self._undefined.get(read.dest.address)
        if undefined is not None and undefined[lo:hi].any():
            return False
        return bytes(read.dest.contents[lo:hi]) == observed

    def allows(self, device: int, name: str, offset: int, observed: bytes) -> bool:
        """Would the model accept these bytes of ``name`` read now?  Nothing is recorded
        (a second look the suite takes to tell a wrong read from wrong bytes)."""
        var = self._var(device, self.world.symbols_by_name[name])
        obs = np.frombuffer(bytes(observed), dtype=np.uint8)
        return not var.check(offset, obs, lambda w: self.order.blocked(w.task) is None)

    def observe(
        self, device: int, name: str, offset: int, observed: bytes, label: str = "observation"
    ) -> list[Violation]:
        """Judge bytes of variable ``name`` on ``device`` read now (a host-time observation)."""
        sym = self.world.symbols_by_name[name]
        return self._observe_now(device, sym, offset, bytes(observed), label)

    # -- machinery --------------------------------------------------------

    def _host_queue(self, thread: int) -> Queue:
        q = self._host_queues.get(thread)
        if q is None:
            q = self._host_queues[thread] = self.order.new_queue()
        return q

    def _var(self, device: int, sym: Symbol) -> VarMemory:
        var = self.memory.get((device, sym.name))
        if var is None:
            # Never read: its starting contents are unknown.
            var = VarMemory(sym.size, np.zeros(sym.size, dtype=np.uint8))
            var.forget(None)
            self.memory[(device, sym.name)] = var
        return var

    def _is_done(self, w: Write) -> bool:
        return self.order.is_done(w.task)

    def _all_done(self, clock: Clock) -> bool:
        return all(covers(self.order.done, q, i) for q, i in clock.items())

    def _complete(self, clock: Clock, cause: Cause) -> None:
        """A synchronisation returned: what ``clock`` covers is done; prune and close windows.
        ``cause``: the requirement that promised it and the call (a later read that shows a
        write did not run is charged to that promise).  A promise of a masked requirement
        (known to be broken) is not believed: what it covers stays as uncertain as before."""
        if cause[0] in self.masks:
            if not self._all_done(clock):
                self.unbelieved.append(cause)
            return
        self.order.complete(clock)
        still: list[Write] = []
        newly: list[Write] = []
        for w in self._pending:
            (newly if self.order.is_done(w.task) else still).append(w)
        self._pending = still
        for w in newly:
            meta = self._meta[w.wid]
            meta.done_by = cause
            if meta.source is not None:
                meta.source.open_writes = [(x, o) for x, o in meta.source.open_writes if x is not w]
            meta.var.prune(w.offset, w.end, self._is_done)
        for r in self._reads:
            if not r.ready and self.order.is_done(r.task):
                r.ready = True
                r.ready_by = cause
                r.gates_at_completion = list(self.order.gates)

    def _host_write(self, buf: HostBuffer, offset: int, data: bytes) -> None:
        """The host changed buffer bytes: pending pinned copies may see the new values."""
        end = offset + len(data)
        buf.contents[offset:end] = data
        buf.version += 1
        if len(data) <= CHANGE_LIMIT:
            buf.changes.append((buf.version, offset, bytes(data)))
        undefined = self._undefined.get(buf.address)
        if undefined is not None:
            undefined[offset:end] = False
            if not undefined.any():
                del self._undefined[buf.address]
        arr = np.frombuffer(data, dtype=np.uint8)
        for w, src_off in buf.open_writes:
            x, y = max(offset, src_off), min(end, src_off + w.count)
            if x < y and w.base is not None:
                w.alternatives.append(
                    (w.offset + (x - src_off), arr[x - offset : y - offset].copy())
                )

    def _remember_rejected(self, exp: Judgement) -> None:
        sym = self.world.symbols.get(exp.args.get("symbol") or 0)
        if sym is None:
            return
        device = self.world.current_device(exp.thread) or 0
        rng = self.world.host_range(exp.args.get("src") or 0, int(exp.args.get("count") or 0))
        data = (
            bytes(rng.buffer.contents[rng.offset : rng.offset + int(exp.args["count"])])
            if rng.buffer
            else None
        )
        q = self._rejected.setdefault((device, sym.name), deque(maxlen=8))
        q.append(Rejected(exp.label, data, int(exp.args.get("offset") or 0)))

    def _observe_now(
        self, device: int, sym: Symbol, offset: int, data: bytes, label: str
    ) -> list[Violation]:
        var = self._var(device, sym)
        obs = np.frombuffer(data, dtype=np.uint8)
        if offset == 0 and len(data) == sym.size and var.segment_count() == 1:
            ((_a, _b, cands),) = var.segments()
            if len(cands) == 1 and cands[0] is not INITIAL and not isinstance(cands[0], Write):
                # Unspecified contents (never read, or after a reset): what is read now is
                # the new start.
                if (device, sym.name) in self._reset:
                    self._reset.discard((device, sym.name))
                    self.evidence.check(DEVICE_RESET_CONTENTS)
                var.forget(obs.copy())
                self._last_read = (label, [(offset, offset + len(data), None)])
                return []

        def visible(w: Write) -> bool:
            return self.order.blocked(w.task) is None

        self._last_read = (label, var.allowed(offset, offset + len(data), visible, False))
        mismatches = var.check(offset, obs, visible)
        read_checks(self, device, sym, var, offset, obs, visible)
        out = []
        for m in mismatches:
            v = diagnose(self, device, sym, m, label)
            if self._screen([v]):
                out.append(v)
            else:
                # A known-broken requirement explains it: what was read is the truth now.
                var.resync(m.lo, np.frombuffer(m.observed, dtype=np.uint8))
        return out
