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
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import effects as fx
from .calls import CALLS, render_call
from .constants import (
    ACL_SUCCESS,
    MALLOC_HOST_ALIGNMENT,
    MemcpyKind,
    StreamStatus,
    error_name,
)
from .evidence import (
    COMPLETE_EARLY,
    EARLIER_LAST,
    LATER_LAST,
    PENDING,
    QUERY_COMPLETE,
    QUERY_NOT_READY,
    SOURCE_AT_CALL,
    SOURCE_CHANGED,
    Evidence,
)
from .memory import INITIAL, Bytes, Candidate, Mismatch, VarMemory, Write
from .order import Clock, Gate, Order, Queue, covers
from .outcome import Alternative, Outcome, Violation
from .profiles import Profile, get_profile
from .state import Capabilities, HostBuffer, Symbol, World

_SYMBOL_COPIES = frozenset(
    {"memcpy_to_symbol_async", "memcpy_to_symbol", "memcpy_from_symbol", "memcpy_from_symbol_async"}
)

_SHOW = 32
"""Bytes shown of a value in a failure message."""


def _hex(data: bytes | Bytes | None) -> str:
    if data is None:
        return "<any value>"
    raw = bytes(data)
    more = f"... ({len(raw)} bytes)" if len(raw) > _SHOW else ""
    return (raw[:_SHOW].hex(" ") or "<empty>") + more


Cause = tuple[str, str]
"""Why tasks became known complete: (the requirement that promised it, the call)."""


@dataclass(eq=False)
class _WriteMeta:
    var: VarMemory
    device: int
    symbol: Symbol
    source: HostBuffer | None
    source_offset: int
    issued_done: Clock
    source_version: int = 0
    done_by: Cause | None = None
    """The call whose return made the write known complete, and what it promised."""


@dataclass(eq=False)
class PendingRead:
    """An aclrtMemcpyFromSymbolAsync into page-locked memory, judged once complete."""

    rid: int
    label: str
    task: Any
    device: int
    symbol: Symbol
    offset: int
    count: int
    dest: HostBuffer
    dest_offset: int
    snapshot: list[tuple[int, int, tuple[Candidate, ...]]]
    extra: list[Write] = field(default_factory=list)
    ready: bool = False
    checked: bool = False
    gates_at_completion: list[Gate] = field(default_factory=list)
    ready_by: tuple[str, str] | None = None
    """The promise (requirement, call) that made the read known complete."""

    @property
    def address(self) -> int:
        return self.dest.address + self.dest_offset


@dataclass
class _Rejected:
    label: str
    source: bytes | None
    offset: int


class Expectation:
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


class Model:
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
        self._meta: dict[int, _WriteMeta] = {}
        self._reads: list[PendingRead] = []
        self._host_queues: dict[int, Queue] = {}
        self._gates: dict[int, Gate] = {}
        self._rejected: dict[tuple[int, str], deque[_Rejected]] = {}
        self._addresses: dict[tuple[int, str], int] = {}
        self._reset: set[tuple[int, str]] = set()
        """Variables whose contents a device reset made unspecified, not read since."""
        self._undefined: dict[int, np.ndarray] = {}
        """Per host buffer address: which bytes hold values the suite never wrote."""
        self.spell_out_reads = False
        """When set, every synchronous read leaves what it allowed in ``last_allowed``."""
        self.last_allowed: list[tuple[int, int, list[np.ndarray] | None]] = []

    # -- set-up -----------------------------------------------------------
    def add_symbol(self, name: str, address: int, size: int) -> Symbol:
        """A fixture variable the backend declares: its host shadow address and size."""
        return self.world.add_symbol(name, address, size)

    def set_initial(self, device: int, name: str, data: bytes) -> None:
        """What variable ``name`` holds on ``device`` now, before any copy the model knows of."""
        sym = self.world.symbols_by_name[name]
        self.memory[(device, name)] = VarMemory(
            sym.size, np.frombuffer(bytes(data), dtype=np.uint8)
        )

    # -- calls ------------------------------------------------------------
    def expect(self, name: str, thread: int = 0, **args: Any) -> Expectation:
        """Announce a call; the returned expectation knows what the profile allows."""
        if name not in CALLS:
            raise KeyError(f"{name!r} is not a call of the contract")
        self._step += 1
        line = render_call(name, args, self.world.name_of)
        label = f"#{self._step} " + (f"[thread {thread}] " if thread else "") + line
        self.history.append(label)
        outcome = self.profile.outcome(self.world, name, thread, args)
        return Expectation(self, name, thread, dict(args), label, outcome)

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

    def _settle(self, exp: Expectation, code: int, outputs: dict[str, Any]) -> list[Violation]:
        alt = exp.outcome.match(code)
        if code != ACL_SUCCESS and exp.name in ("memcpy_to_symbol_async", "memcpy_to_symbol"):
            self._remember_rejected(exp)
        self._hygiene(exp, code)
        if alt is None:
            primary = exp.outcome.primary
            spec = CALLS[exp.name]
            requirement, also = (
                primary.requirement,
                _some(*primary.also, *(primary.shadow if code else ())),
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
                requirement, also = "SYNC-ERROR-REPORTING", _some(primary.requirement, *also)
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
        self._count_match(exp, alt, code)
        if alt.effect is None:
            return []
        return self._screen(self._apply(alt.effect, exp, outputs))

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

    def _count_match(self, exp: Expectation, alt: Alternative, code: int) -> None:
        """The checks a matched answer passed, and which way an open check went."""
        ev = self.evidence
        ev.check(alt.requirement, *alt.also)
        if exp.name in _SYMBOL_COPIES:
            ev.check("RETURN-CODES")
        if code == ACL_SUCCESS:
            kind = exp.args.get("kind")
            if exp.name in ("memcpy_to_symbol_async", "memcpy_to_symbol"):
                if kind == MemcpyKind.ACL_MEMCPY_DEFAULT:
                    ev.check("KIND-DEFAULT-HOST-SOURCE")
            elif exp.name in ("memcpy_from_symbol", "memcpy_from_symbol_async") and kind:
                ev.check("FROMSYMBOL-KINDS")
        alts = exp.outcome.alternatives
        if len(alts) > 1 and exp.outcome.accepts_success():
            rejections = [a for a in alts if ACL_SUCCESS not in a.codes and a.requirement]
            if alt in rejections:
                assert alt.requirement is not None
                ev.branch(alt.requirement, accepted=False)
            elif code == ACL_SUCCESS:
                for a in rejections:
                    assert a.requirement is not None
                    ev.check(a.requirement)
                    ev.branch(a.requirement, accepted=True)

    def _hygiene(self, exp: Expectation, code: int) -> None:
        """After a rejected call on a stream, that the stream still behaves is checked."""
        if code == ACL_SUCCESS and exp.name in ("memcpy_to_symbol", "synchronize_device"):
            dev = self.world.current_device(exp.thread)
            for s in [*self.world.streams.values(), *self.world.default_streams.values()]:
                if s.device == dev:
                    s.after_sync_copy = exp.name == "memcpy_to_symbol"
        handle = exp.args.get("stream")
        if handle is None or exp.name in ("destroy_stream", "launch_gate"):
            return
        stream = self.world.streams.get(int(handle)) if handle else None
        if handle == 0 and self.caps.default_stream:
            dev = self.world.current_device(exp.thread)
            stream = self.world.default_stream(0 if dev is None else dev)
        if stream is None or not stream.alive:
            return
        if code != ACL_SUCCESS:
            stream.after_rejection = True
        elif stream.after_rejection:
            if exp.name.startswith("memcpy"):
                self.evidence.check("HYGIENE-STREAM-USABLE")
            elif exp.name == "stream_query":
                self.evidence.check("HYGIENE-NO-ENQUEUE")
            elif exp.name.startswith("synchronize"):
                self.evidence.check("SYNC-ERROR-REPORTING", "HYGIENE-NO-ENQUEUE")
                stream.after_rejection = False
        if code == ACL_SUCCESS and exp.name.startswith("synchronize"):
            stream.after_sync_copy = False

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
            promise, by = read.ready_by or ("PINNED-COMPLETE-AFTER-SYNC", "a synchronisation")
            return self._screen(
                [
                    Violation(
                        promise,
                        f"the asynchronous read had not written its destination, though it "
                        f"was known complete because {by} returned",
                        call=read.label,
                        allowed="the variable's bytes in the destination",
                        observed=f"the destination as it was before the read: {_hex(observed)}",
                    )
                ]
            )
        self._observed(read.device, read.symbol, tmp, lo, obs, visible)
        self._host_write(read.dest, read.dest_offset, bytes(observed))
        return self._screen(
            [self._diagnose(read.device, read.symbol, m, read.label) for m in mismatches]
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

    # -- effects ----------------------------------------------------------
    def _apply(self, effect: object, exp: Expectation, out: dict[str, Any]) -> list[Violation]:
        handler = getattr(self, f"_do_{type(effect).__name__}")
        result: list[Violation] = handler(effect, exp, out)
        return result

    def _do_CopyToSymbol(
        self, e: fx.CopyToSymbol, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        violations: list[Violation] = []
        var = self._var(e.device, e.symbol)
        if e.either_kind:
            # The source starts in page-locked memory and runs past it (or lies in memory
            # whose registration may not have outlived a free): either path is accepted.
            self.evidence.check("PINNED-START-POINTER")
        base: Bytes | None = None
        if e.source is not None:
            lo = e.source_offset
            undefined = self._undefined.get(e.source.address)
            if undefined is None or not undefined[lo : lo + e.count].any():
                base = np.frombuffer(bytes(e.source.contents[lo : lo + e.count]), dtype=np.uint8)
        if e.mode == "pageable":
            assert e.stream is not None
            q = e.stream.queue
            g = self.order.closed_gate_before(q.frontier)
            if g is not None:
                # From memory that was registered and is no more, the likelier reading is
                # that the unregistration did not take.
                was = e.source is not None and self.world.was_registered(
                    e.source.address + e.source_offset
                )
                violations.append(
                    Violation(
                        "PINNED-REGISTERED" if was else "PAGEABLE-BLOCKS",
                        f"the pageable copy returned while gate {g.gid} ahead of it in {e.stream.name} was still closed"
                        + (" (its source was registered once, then unregistered)" if was else ""),
                        call=exp.label,
                        allowed="return only after every earlier task of the stream and the copy are complete",
                        observed="returned before the gate opened",
                        also=("PAGEABLE-BLOCKS",) if was else (),
                    )
                )
            else:
                if not self._all_done(q.frontier):
                    self.evidence.check("PAGEABLE-DRAINS-STREAM")
                self._complete(q.frontier, ("PAGEABLE-DRAINS-STREAM", exp.label))
            task = self.order.enqueue(q, exp.label)
            self.evidence.check("PAGEABLE-BLOCKS")
            self._complete({q.key: task.index}, ("PAGEABLE-BLOCKS", exp.label))
        elif e.mode == "pinned":
            assert e.stream is not None
            task = self.order.enqueue(e.stream.queue, exp.label)
        else:
            hq = self._host_queue(exp.thread)
            task = self.order.enqueue(hq, exp.label)
            self._complete({hq.key: task.index}, ("TOSYMBOL-SYNC", exp.label))
        self._wid += 1
        w = Write(self._wid, exp.label, task, e.offset, e.count, base, e.mode)
        self._meta[w.wid] = _WriteMeta(
            var,
            e.device,
            e.symbol,
            e.source,
            e.source_offset,
            dict(self.order.done),
            e.source.version if e.source is not None else 0,
        )
        var.add(w)
        if self.order.is_done(task):
            self._meta[w.wid].done_by = (
                "PAGEABLE-BLOCKS" if e.mode == "pageable" else "TOSYMBOL-SYNC",
                exp.label,
            )
        for r in self._reads:
            if (
                not r.ready
                and r.device == e.device
                and r.symbol is e.symbol
                and w.offset < r.offset + r.count
                and r.offset < w.end
                and not r.task.happens_before(w.task)
            ):
                r.extra.append(w)
        if self.order.is_done(task):
            var.prune(w.offset, w.end, self._is_done)
        else:
            self._pending.append(w)
            if e.source is not None:
                e.source.open_writes.append((w, e.source_offset))
        return violations

    def _do_ReadSymbol(
        self, e: fx.ReadSymbol, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        if e.dest is None:
            return []
        if e.mode == "pinned":
            assert e.stream is not None
            task = self.order.enqueue(e.stream.queue, exp.label)
            var = self._var(e.device, e.symbol)
            self._wid += 1
            read = PendingRead(
                self._wid,
                exp.label,
                task,
                e.device,
                e.symbol,
                e.offset,
                e.count,
                e.dest,
                e.dest_offset,
                var.snapshot(e.offset, e.offset + e.count),
            )
            self._reads.append(read)
            if self.order.is_done(task):  # pragma: no cover - a new task is never done
                read.ready = True
            return []
        violations: list[Violation] = []
        if e.mode == "pageable":
            assert e.stream is not None
            g = self.order.closed_gate_before(e.stream.queue.frontier)
            if g is not None:
                violations.append(
                    Violation(
                        "FROMSYMBOL-BYTES",
                        f"the pageable read returned while gate {g.gid} ahead of it in {e.stream.name} was still closed",
                        call=exp.label,
                        allowed="return only after the stream's earlier tasks and the read are complete",
                    )
                )
            else:
                self._complete(e.stream.queue.frontier, ("FROMSYMBOL-BYTES", exp.label))
        if "observed" not in out:
            raise TypeError(
                f"settle() of {exp.label} needs observed=<the dst bytes after the call>"
            )
        data = bytes(out["observed"])
        if len(data) != e.count:
            raise ValueError(f"{exp.label}: observed has {len(data)} bytes, the read {e.count}")
        violations += self._observe_now(e.device, e.symbol, e.offset, data, exp.label)
        self._host_write(e.dest, e.dest_offset, data)
        return violations

    def _do_NewStream(
        self, e: fx.NewStream, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        handle = int(out.get("stream") or 0)
        if handle == 0:
            return [
                Violation(
                    "STREAM-CALLS",
                    "aclrtCreateStream returned ACL_SUCCESS but a NULL stream",
                    call=exp.label,
                )
            ]
        try:
            self.world.add_stream(handle, e.device)
        except ValueError as err:
            return [Violation("STREAM-CALLS", str(err), call=exp.label)]
        return []

    def _do_DestroyStream(
        self, e: fx.DestroyStream, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        if e.drains:
            self._complete(e.stream.queue.frontier, ("STREAM-CALLS", exp.label))
        self.world.kill_stream(e.stream)
        return []

    def _do_SyncStream(
        self, e: fx.SyncStream, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        promise = (
            "SYNC-TIMEOUT"
            if exp.name == "synchronize_stream_with_timeout"
            else "PINNED-COMPLETE-AFTER-SYNC"
        )
        self._complete(e.stream.queue.frontier, (promise, exp.label))
        return []

    def _do_QueryStream(
        self, e: fx.QueryStream, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        status = out.get("status")
        frontier = e.stream.queue.frontier
        complete, not_ready = (
            StreamStatus.ACL_STREAM_STATUS_COMPLETE,
            StreamStatus.ACL_STREAM_STATUS_NOT_READY,
        )
        open_question = False
        if self.order.closed_gate_before(frontier) is not None:
            allowed = {not_ready}
            why = "a closed gate blocks the stream"
        elif self._all_done(frontier):
            allowed = {complete}
            why = "every task of the stream is known complete"
        else:
            allowed = {complete, not_ready}
            why = "the stream's tasks may or may not have run"
            open_question = True
        if status not in allowed:
            names = " or ".join(s.name for s in sorted(allowed))
            if e.stream.after_rejection and status == not_ready:
                why += "; a call on it was rejected since it was last synchronised"
            busy = e.stream.after_rejection and status == not_ready
            # Busy with nothing of its own after a synchronous copy: the likelier reading
            # is that the copy, which belongs to no stream, was queued on this one.
            queued = e.stream.after_sync_copy and status == not_ready
            if queued:
                why += "; an aclrtMemcpyToSymbol returned since it was last known complete"
            causes = [
                *(["HYGIENE-NO-ENQUEUE"] if busy else []),
                *(["TOSYMBOL-SYNC"] if queued else []),
                "STREAM-QUERY",
            ]
            return [
                Violation(
                    causes[0],
                    f"aclrtStreamQuery reported status {status!r}",
                    call=exp.label,
                    allowed=f"{names} ({why})",
                    observed=str(status),
                    also=tuple(causes[1:]),
                )
            ]
        if open_question:
            self.evidence.saw(
                "STREAM-QUERY", QUERY_COMPLETE if status == complete else QUERY_NOT_READY
            )
        if status == complete:
            e.stream.after_sync_copy = False
            self._complete(frontier, ("STREAM-QUERY", exp.label))
        return []

    def _do_SyncDevice(
        self, e: fx.SyncDevice, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        for s in [self.world.default_stream(e.device), *self.world.streams.values()]:
            if s.alive and s.device == e.device:
                self._complete(s.queue.frontier, ("PINNED-COMPLETE-AFTER-SYNC", exp.label))
        return []

    def _do_NewEvent(
        self, e: fx.NewEvent, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        handle = int(out.get("event") or 0)
        if handle == 0:
            return [
                Violation(
                    "EVENT-CALLS",
                    "aclrtCreateEvent returned ACL_SUCCESS but a NULL event",
                    call=exp.label,
                )
            ]
        try:
            self.world.add_event(handle, e.device)
        except ValueError as err:
            return [Violation("EVENT-CALLS", str(err), call=exp.label)]
        return []

    def _do_RecordEvent(
        self, e: fx.RecordEvent, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        # The record is a task of its stream (the stream is not complete until it ran);
        # the event captures it and everything before it.
        self.order.enqueue(e.stream.queue, exp.label)
        e.event.captured = dict(e.stream.queue.frontier)
        return []

    def _do_WaitEvent(
        self, e: fx.WaitEvent, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        if e.event.captured is not None:
            self.order.import_clock(e.stream.queue, e.event.captured)
        # The wait is a task of its stream too: the stream is not complete before it ran.
        self.order.enqueue(e.stream.queue, exp.label)
        return []

    def _do_SyncEvent(
        self, e: fx.SyncEvent, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        if e.event.captured is not None:
            self._complete(e.event.captured, ("PINNED-COMPLETE-AFTER-SYNC", exp.label))
        return []

    def _do_DestroyEvent(
        self, e: fx.DestroyEvent, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        self.world.kill_event(e.event)
        return []

    def _do_NewHostBuffer(
        self, e: fx.NewHostBuffer, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        address = int(out.get("host_ptr") or out.get("ptr") or 0)
        what = "aclrtMallocHost" if e.pinned else "malloc"
        if address == 0:
            return [
                Violation(
                    "HOST-MEMORY-CALLS",
                    f"{what} returned success but a NULL pointer",
                    call=exp.label,
                )
            ]
        violations = []
        if e.pinned and self.profile.name == "cann" and address % MALLOC_HOST_ALIGNMENT:
            violations.append(
                Violation(
                    "HOST-MEMORY-CALLS",
                    f"aclrtMallocHost returned 0x{address:x}, not {MALLOC_HOST_ALIGNMENT}-byte aligned",
                    call=exp.label,
                )
            )
        contents = out.get("contents")
        name = self.world.fresh_name("pinned" if e.pinned else "host")
        try:
            buf = self.world.add_buffer(
                address,
                e.size,
                e.pinned,
                bytes(contents) if contents is not None else bytes(e.size),
                name,
            )
        except ValueError as err:
            return [*violations, Violation("HOST-MEMORY-CALLS", f"{what}: {err}", call=exp.label)]
        if contents is None:
            self._undefined[buf.address] = np.ones(e.size, dtype=bool)
        else:
            self._undefined.pop(buf.address, None)
        return violations

    def _do_FreeHostBuffer(
        self, e: fx.FreeHostBuffer, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        for w, _off in e.buffer.open_writes:
            # The copy may still read freed memory: its bytes are unspecified.
            w.base = None
            w.alternatives.clear()
        e.buffer.open_writes.clear()
        self.world.release_buffer(e.buffer)
        return []

    def _do_RegisterHost(
        self, e: fx.RegisterHost, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        self.world.register(e.address, e.size)
        return []

    def _do_UnregisterHost(
        self, e: fx.UnregisterHost, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        reg = self.world.registered.pop(e.address, None)
        if reg is not None:
            self.world.unregistered.append((reg.address, reg.size))
        return []

    def _do_WriteHost(
        self, e: fx.WriteHost, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        self._host_write(e.buffer, e.offset, e.data)
        return []

    def _do_SetDevice(
        self, e: fx.SetDevice, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        self.world.current[exp.thread] = e.device
        self.world.refcount[e.device] = self.world.refcount.get(e.device, 0) + 1
        return []

    def _do_ResetDevice(
        self, e: fx.ResetDevice, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        n = self.world.refcount.get(e.device, 0) - 1
        self.world.refcount[e.device] = n
        if n > 0:
            return []
        for s in [self.world.default_stream(e.device), *list(self.world.streams.values())]:
            if s.alive and s.device == e.device:
                self._complete(s.queue.frontier, ("DEVICE-CALLS", exp.label))
                if not s.default:
                    self.world.kill_stream(s)
        for (dev, name), var in self.memory.items():
            if dev == e.device:
                var.forget(None)  # DEVICE-RESET-CONTENTS: unspecified after a reset
                self._reset.add((dev, name))
        self._reads = [r for r in self._reads if r.device != e.device]
        for k in [k for k in self._addresses if k[0] == e.device]:
            del self._addresses[k]
        for t, d in list(self.world.current.items()):
            if d == e.device:
                self.world.current[t] = None
        return []

    def _do_ReportDevice(
        self, e: fx.ReportDevice, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        got = out.get("device_id")
        if got != e.device:
            return [
                Violation(
                    "DEVICE-CALLS",
                    f"aclrtGetDevice reported {got!r}",
                    call=exp.label,
                    allowed=str(e.device),
                    observed=str(got),
                )
            ]
        return []

    def _do_ReportDeviceCount(
        self, e: fx.ReportDeviceCount, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        got = out.get("count")
        if got != e.count:
            return [
                Violation(
                    "DEVICE-CALLS",
                    f"aclrtGetDeviceCount reported {got!r}, the backend declares {e.count}",
                    call=exp.label,
                    allowed=str(e.count),
                    observed=str(got),
                )
            ]
        return []

    def _do_ReportSymbolAddress(
        self, e: fx.ReportSymbolAddress, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        got = int(out.get("dev_ptr") or 0)
        if got == 0:
            return [
                Violation(
                    "GETSYMBOL-ADDRESS",
                    "aclrtGetSymbolAddress returned success but a NULL device address",
                    call=exp.label,
                )
            ]
        key = (e.device, e.symbol.name)
        before = self._addresses.setdefault(key, got)
        if before != got:
            return [
                Violation(
                    "GETSYMBOL-ADDRESS",
                    f"the device address of {e.symbol.name} on device {e.device} changed without a reset",
                    call=exp.label,
                    allowed=f"0x{before:x} (as reported before)",
                    observed=f"0x{got:x}",
                )
            ]
        return []

    def _do_ReportSymbolSize(
        self, e: fx.ReportSymbolSize, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        got = out.get("size")
        if got != e.symbol.size:
            return [
                Violation(
                    "SYMBOL-SIZE-AS-DECLARED",
                    f"aclrtGetSymbolSize reported {got!r} for {e.symbol.name}",
                    call=exp.label,
                    allowed=f"{e.symbol.size} (the declared size)",
                    observed=str(got),
                )
            ]
        self.evidence.check("SYMBOL-SIZE-AS-DECLARED")
        return []

    def _do_LaunchGate(
        self, e: fx.LaunchGate, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        gid = int(out["gate"])
        task = self.order.enqueue(e.stream.queue, exp.label)
        gate = Gate(gid, task)
        self._gates[gid] = gate
        self.order.add_gate(gate)
        return []

    def _do_OpenGate(
        self, e: fx.OpenGate, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        gate = self._gates.get(e.gate)
        if gate is not None and not gate.open:
            self.order.open_gate(gate)
        return []

    def _do_Init(self, e: fx.Init, exp: Expectation, out: dict[str, Any]) -> list[Violation]:
        self.world.initialized = True
        return []

    def _do_Finalize(
        self, e: fx.Finalize, exp: Expectation, out: dict[str, Any]
    ) -> list[Violation]:
        self.world.initialized = False
        self.world.finalized = True
        return []

    def _do_Nothing(self, e: fx.Nothing, exp: Expectation, out: dict[str, Any]) -> list[Violation]:
        return []

    # -- machinery --------------------------------------------------------
    def gate_ids(self) -> list[int]:
        """The gates that are closed now."""
        return [g.gid for g in self.order.gates]

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

    def _remember_rejected(self, exp: Expectation) -> None:
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
        q.append(_Rejected(exp.label, data, int(exp.args.get("offset") or 0)))

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
                    self.evidence.check("DEVICE-RESET-CONTENTS")
                var.forget(obs.copy())
                self.last_allowed = [(offset, offset + len(data), None)]
                return []

        def visible(w: Write) -> bool:
            return self.order.blocked(w.task) is None

        if self.spell_out_reads:
            self.last_allowed = var.allowed(offset, offset + len(data), visible)
        mismatches = var.check(offset, obs, visible)
        self._observed(device, sym, var, offset, obs, visible)
        out = []
        for m in mismatches:
            v = self._diagnose(device, sym, m, label)
            if self._screen([v]):
                out.append(v)
            else:
                # A known-broken requirement explains it: what was read is the truth now.
                var.resync(m.lo, np.frombuffer(m.observed, dtype=np.uint8))
        return out

    # -- evidence -----------------------------------------------------------
    def _observed(
        self,
        device: int,
        sym: Symbol,
        var: VarMemory,
        lo: int,
        obs: np.ndarray,
        visible: Any,
    ) -> None:
        """The checks a read of [lo, lo + len(obs)) made, and the outcomes it saw."""
        ev = self.evidence
        hi = lo + len(obs)
        if any(d != device and n == sym.name and v.writes for (d, n), v in self.memory.items()):
            ev.check("DEVICE-INSTANCE", "DEVICE-CURRENT")
        if not var.writes:
            ev.check("EFFECT-NEIGHBOURS")
            return
        if any(
            r.source is not None and r.offset < hi and lo < r.offset + len(r.source)
            for r in self._rejected.get((device, sym.name), ())
        ):
            ev.check("HYGIENE-NO-WRITE")
        if any(w.offset < hi and lo < w.end for w in var.retired):
            ev.check("STREAM-FIFO")
        for a, b, cands in var.segments(lo, hi):
            seg = obs[a - lo : b - lo]
            writes = [c for c in cands if isinstance(c, Write)]
            if not writes:
                ev.check("EFFECT-NO-STRAY")
                continue
            ev.check("EFFECT-BYTES")
            shown = [w for w in writes if visible(w)]
            for w in writes:
                if w not in shown:
                    gate = self.order.blocked(w.task)
                    ev.check(
                        "STREAM-EVENT-ORDER"
                        if gate is not None and gate.task.queue != w.task.queue
                        else "STREAM-FIFO"
                    )
            for w in shown:
                self._write_evidence(w, a, b, seg, cands)
            unordered = [
                (x, y)
                for i, x in enumerate(shown)
                for y in shown[i + 1 :]
                if x.task.queue != y.task.queue
                and not x.task.happens_before(y.task)
                and not y.task.happens_before(x.task)
            ]
            for x, y in unordered[:1]:
                ev.check("STREAM-UNORDERED")
                vx, vy = x.value(a, b), y.value(a, b)
                if vx is None or vy is None or np.array_equal(vx, vy):
                    continue
                later, earlier = (vx, vy) if x.wid > y.wid else (vy, vx)
                if np.array_equal(seg, later):
                    ev.saw("STREAM-UNORDERED", LATER_LAST)
                elif np.array_equal(seg, earlier):
                    ev.saw("STREAM-UNORDERED", EARLIER_LAST)

    def _write_evidence(
        self, w: Write, a: int, b: int, seg: np.ndarray, cands: tuple[Candidate, ...]
    ) -> None:
        ev = self.evidence
        meta = self._meta[w.wid]
        mine = w.value(a, b)
        if self.order.is_done(w.task):
            ev.check(meta.done_by[0] if meta.done_by else "PINNED-COMPLETE-AFTER-SYNC")
            if (
                w.mode == "pageable"
                and meta.source is not None
                and meta.source.version > meta.source_version
            ):
                ev.check("PAGEABLE-SOURCE-REUSE")
        elif w.mode == "pinned" and mine is not None:
            others = [c for c in cands if c is not w]
            other_values = [self._var_value(meta.var, c, a, b) for c in others]
            if np.array_equal(seg, mine) and all(
                v is not None and not np.array_equal(v, mine) for v in other_values
            ):
                ev.check("PINNED-ASYNC")
                ev.saw("PINNED-ASYNC", COMPLETE_EARLY)
            elif not np.array_equal(seg, mine) and any(
                v is not None and np.array_equal(seg, v) for v in other_values
            ):
                ev.check("PINNED-ASYNC")
                ev.saw("PINNED-ASYNC", PENDING)
        if w.alternatives and mine is not None:
            ev.check("PINNED-SOURCE-WINDOW")
            if np.array_equal(seg, mine):
                ev.saw("PINNED-SOURCE-WINDOW", SOURCE_AT_CALL)
            else:
                for alt_lo, alt in w.alternatives:
                    x, y = max(a, alt_lo), min(b, alt_lo + len(alt))
                    if (
                        x < y
                        and np.array_equal(seg[x - a : y - a], alt[x - alt_lo : y - alt_lo])
                        and not np.array_equal(seg[x - a : y - a], mine[x - a : y - a])
                    ):
                        ev.saw("PINNED-SOURCE-WINDOW", SOURCE_CHANGED)
                        break

    @staticmethod
    def _var_value(var: VarMemory, c: Candidate, a: int, b: int) -> np.ndarray | None:
        return var.value_of(c, a, b)

    # -- diagnosis --------------------------------------------------------
    def _explains(self, var: VarMemory, c: Candidate, m: Mismatch) -> bool:
        """Does candidate ``c`` explain every byte of mismatch ``m``?"""
        if isinstance(c, Write) and (c.offset > m.lo or c.end < m.hi):
            return False
        obs = np.frombuffer(m.observed, dtype=np.uint8)
        mask = np.zeros(len(obs), dtype=bool)
        var.mark(c, m.lo, m.hi, obs, mask)
        return bool(mask.all())

    def _blocked_write_shown(self, var: VarMemory, m: Mismatch) -> Write | None:
        """A copy that could not have run yet (behind a closed gate) whose bytes the
        mismatch shows: one that explains it all, else one that explains bytes no allowed
        candidate does, when the blocked copies and the allowed candidates together explain
        every byte (two copies behind one gate, side by side, both ran too early)."""
        one = next((w for w in m.blocked if self._explains(var, w, m)), None)
        if one is not None or not m.blocked:
            return one
        obs = np.frombuffer(m.observed, dtype=np.uint8)

        def marked(cands: list[Candidate]) -> np.ndarray:
            mask = np.zeros(len(obs), dtype=bool)
            for c in cands:
                x, y = m.lo, m.hi
                if isinstance(c, Write):
                    x, y = max(x, c.offset), min(y, c.end)
                if x < y:
                    # Views of the arrays: mark() fills in the part this candidate covers.
                    var.mark(c, x, y, obs[x - m.lo : y - m.lo], mask[x - m.lo : y - m.lo])
            return mask

        allowed = marked(m.candidates)
        if allowed.all() or not (allowed | marked(list(m.blocked))).all():
            return None
        return next((w for w in m.blocked if (marked([w]) & ~allowed).any()), None)

    def _diagnose(self, device: int, sym: Symbol, m: Mismatch, label: str) -> Violation:
        var = self._var(device, sym)
        writes = [c for c in m.candidates if isinstance(c, Write)]
        done = [w for w in writes if self.order.is_done(w.task)]
        req, why = "EFFECT-BYTES", "the bytes match no copy that may have run"
        also: tuple[str, ...] = ()
        missing: bytes | None = None
        late: str | None = None
        older = False
        rejected = [r for r in self._rejected.get((device, sym.name), ()) if r.source is not None]
        if (w := self._blocked_write_shown(var, m)) is not None:
            gate = self.order.blocked(w.task)
            if gate is not None and gate.task.queue != w.task.queue:
                req = "STREAM-EVENT-ORDER"
                why = "a copy ran before the event it waits for (recorded behind a closed gate)"
            else:
                req = "STREAM-FIFO"
                why = "a copy ran before a task ahead of it in its stream (a closed gate) had finished"
        elif (other := self._other_instance_write(device, sym, m)) is not None:
            req, why = (
                "DEVICE-INSTANCE",
                f"the bytes were written to the same variable on another device ({other.label})",
            )
            # A copy that should have been complete at its return and ran later, once
            # another device was current, lands there too.
            late = {"pageable": "PAGEABLE-BLOCKS", "sync": "TOSYMBOL-SYNC"}.get(other.mode)
            also = (late,) if late else ()
        elif any(self._explains(var, w, m) for w in var.retired):
            # The most recent overwritten write that shows through names the broken order.
            old = next(w for w in reversed(var.retired) if self._explains(var, w, m))
            req, why, also = self._overwritten(old, done)
            hider = next((d for d in done if old.task.happens_before(d.task)), None)
            if hider is not None and hider.offset <= m.lo and m.hi <= hider.end:
                # The copy that should be on top may never have run at all: a second
                # look tells (see Violation.missing).
                value = hider.value(m.lo, m.hi)
                missing = value.tobytes() if value is not None else None
                late = _OWN_PROMISE.get(hider.mode)
                # Still there after a second look: the older copy ran after the missing one
                # (one broken order), or the missing one wrote nothing (one lost copy); when
                # the older one was known complete before the other was issued, running
                # after it would take a broken promise as well: the lost copy is the reading.
                older = req in ("STREAM-FIFO", "STREAM-EVENT-ORDER")
        elif done and self._explains(var, INITIAL, m):
            w = done[-1]
            promise, by = self._meta[w.wid].done_by or ("PINNED-COMPLETE-AFTER-SYNC", "")
            req = promise
            value = w.value(m.lo, m.hi)
            missing = value.tobytes() if value is not None else None
            late = _OWN_PROMISE.get(w.mode)
            also = _some(late)
            why = f"a copy known complete ({w.label}) did not land" + (
                f": it was known complete because {by} returned" if by and by != w.label else ""
            )
        elif any(self._source_now_explains(w, m) for w in done if w.mode == "pageable"):
            req, why = (
                "PAGEABLE-SOURCE-REUSE",
                "the bytes are the pageable source as changed after the call returned",
            )
            also = ("PAGEABLE-BLOCKS",)  # a copy that read its source late ran late
        elif any(_rejected_explains(r, m) for r in rejected):
            r = next(r for r in rejected if _rejected_explains(r, m))
            req, why = "HYGIENE-NO-WRITE", f"the bytes are those of a rejected call ({r.label})"
        elif not writes:
            others = [
                v for (d, n), v in self.memory.items() if d == device and n != sym.name and v.writes
            ]
            if var.writes or not others:
                req, why = "EFFECT-NO-STRAY", "bytes outside every copy's range changed"
            else:
                req, why = "EFFECT-NEIGHBOURS", "a variable no copy targeted changed"
        allowed = []
        for c in m.candidates:
            v = var.value_of(c, m.lo, m.hi)
            if c is INITIAL:
                allowed.append(f"{_hex(v)} (initial contents)")
            elif isinstance(c, Write):
                state = "complete" if self.order.is_done(c.task) else "may have run"
                extra = (
                    " or any value its source held while the copy was pending"
                    if c.alternatives
                    else ""
                )
                allowed.append(f"{_hex(v)} from {c.label} ({state}){extra}")
            else:
                allowed.append("any value (unspecified contents)")
        details = [f"not yet possible: {w.label} (behind a closed gate)" for w in m.blocked]
        return Violation(
            req,
            f"device {device}, {sym.name} bytes [{m.lo}, {m.hi}): {why}",
            call=label,
            allowed="; or ".join(allowed) or "nothing (every candidate was blocked)",
            observed=_hex(m.observed),
            details=details,
            also=tuple(r for r in also if r != req),
            read=(device, sym.name, m.lo, m.hi),
            missing=missing,
            late=late,
            older_write_shows=older,
        )

    def _overwritten(self, old: Write, done: list[Write]) -> tuple[str, str, tuple[str, ...]]:
        """(requirement, why, other readings) of an overwritten copy that shows through.

        It ran late: after a copy that should hide it.  If it was known complete before
        that copy was issued, the promise that said so was false; else the order between
        them (stream order, an event) was broken.  Other readings: the copy's own call
        promised completion at its return (pageable, synchronous), or the hiding copy
        never ran, though a call said it had."""
        hider = next((d for d in done if old.task.happens_before(d.task)), None)
        own = _OWN_PROMISE.get(old.mode)
        if hider is None:
            return "STREAM-FIFO", f"an overwritten copy ({old.label}) shows through", _some(own)
        others = _some(own, self._promise(hider), _OWN_PROMISE.get(hider.mode))
        if covers(self._meta[hider.wid].issued_done, old.task.queue, old.task.index):
            mine = self._promise(old) or "PINNED-COMPLETE-AFTER-SYNC"
            by = (self._meta[old.wid].done_by or ("", ""))[1]
            fifo = ("STREAM-FIFO",) if hider.task.queue == old.task.queue else ()
            return (
                mine,
                f"{old.label} was known complete"
                + (f" (because {by} returned)" if by and by != old.label else "")
                + f" before {hider.label} was issued, yet its bytes are on top",
                _some(*others, *fifo),
            )
        if hider.task.queue == old.task.queue:
            return (
                "STREAM-FIFO",
                f"{old.label} ran after {hider.label}, which was issued after it on the same stream",
                others,
            )
        return (
            "STREAM-EVENT-ORDER",
            f"{old.label} ran after {hider.label}, which an event ordered after it",
            others,
        )

    def _promise(self, w: Write) -> str | None:
        """The requirement whose promise made ``w`` known complete (a synchronisation, a
        query, or its own call for a copy complete at return)."""
        cause = self._meta[w.wid].done_by
        return cause[0] if cause is not None else None

    def _other_instance_write(self, device: int, sym: Symbol, m: Mismatch) -> Write | None:
        """A write to the same variable on another device that explains the mismatch (with
        the others made there, overwritten since or not, if one alone does not)."""
        obs = np.frombuffer(m.observed, dtype=np.uint8)
        for (d, name), var in self.memory.items():
            if d == device or name != sym.name:
                continue
            there = [
                c
                for _a, _b, cands in var.segments(m.lo, m.hi)
                for c in cands
                if isinstance(c, Write)
            ] + [w for w in var.retired if w.offset < m.hi and m.lo < w.end]
            one = next((w for w in there if self._explains(var, w, m)), None)
            if one is not None:
                return one
            mask = np.zeros(len(obs), dtype=bool)
            for w in there:
                x, y = max(m.lo, w.offset), min(m.hi, w.end)
                # Views of the arrays: mark() fills in the part this write covers.
                var.mark(w, x, y, obs[x - m.lo : y - m.lo], mask[x - m.lo : y - m.lo])
            if there and mask.all():
                return there[-1]
        return None

    def _source_now_explains(self, w: Write, m: Mismatch) -> bool:
        meta = self._meta[w.wid]
        if meta.source is None or m.lo < w.offset or m.hi > w.end:
            return False
        lo = meta.source_offset + (m.lo - w.offset)
        return bytes(meta.source.contents[lo : lo + (m.hi - m.lo)]) == m.observed


_OWN_PROMISE = {"pageable": "PAGEABLE-BLOCKS", "sync": "TOSYMBOL-SYNC"}
"""What a copy's own call promises: complete at its return."""


def _some(*requirements: str | None) -> tuple[str, ...]:
    """The requirements given, each once, in order, without None."""
    return tuple(dict.fromkeys(r for r in requirements if r))


def _rejected_explains(r: _Rejected, m: Mismatch) -> bool:
    if r.source is None or m.lo < r.offset or m.hi > r.offset + len(r.source):
        return False
    return r.source[m.lo - r.offset : m.hi - r.offset] == m.observed
