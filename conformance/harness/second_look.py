"""A second look at bytes a read got wrong, before the failure is charged.

Extra calls that tell apart two readings of a wrong read (they are the suite's
own: the counterexample leaves them out).  A copy known complete whose bytes
are missing: after a second synchronisation of the device, are they there?
Then it ran late (the promise of completion was false); else it never wrote
them there (its effect is wrong).  A read of part of a variable that disagrees
with the model: does a read of the whole variable show the same bytes?  If the
whole read agrees with the model, the partial read is what is wrong.  For a partial
read whose bytes look missing that question comes first, and the same partial read
is made again after the whole one (a late copy has landed by then), so that a read
that lies is never charged to the copies or the promises before it.  An asynchronous
read whose destination still holds what it held before: synchronised again, a destination
that changes was a read that ran late; one that does not, while the variable is right, is
the read's own fault (a read of the wrong place can find there what the destination
held).  The second look reads whole variables, so a read that lies about its offset does
not mislead it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from acl_conformance.adapters.base import FixtureVariable
from acl_conformance.reference_impl import Model
from acl_conformance.reference_impl import Violation
from acl_conformance.reference_impl import charging
from acl_conformance.reference_impl.constants import D2H
from acl_conformance.reference_impl.constants import StreamStatus

from .backend_calls import BackendCalls
from .failure import BackendCrash
from .variables import Scratch


class SecondLook:
    """The second look of one harness: its own reads and synchronisations, past the model."""

    def __init__(
        self,
        backend: BackendCalls,
        scratch: Scratch,
        fixtures: Mapping[str, FixtureVariable],
        model: Model,
        streams: Callable[[], list[int]],
        default_stream: bool,
        closed_gates: Callable[[], frozenset[int]] = frozenset,
        on_lost: Callable[[BackendCrash], None] | None = None,
    ) -> None:
        """``streams``: the streams the test made and still holds; ``closed_gates``: the
        stream gates closed now."""
        self._backend = backend
        self._scratch = scratch
        self._fixtures = fixtures
        self._model = model
        self._streams = streams
        self._default_stream = default_stream
        self._closed_gates = closed_gates
        self._on_lost = on_lost

    def charge(
        self, name: str, args: dict[str, Any], thread: int, violations: list[Violation]
    ) -> list[Violation]:
        """``violations`` as charged after a second look where one tells readings apart."""
        if self._backend.poisoned:
            return violations
        return [self._one(v, name, args, thread) for v in violations]

    def _one(self, v: Violation, name: str, args: dict[str, Any], thread: int) -> Violation:
        try:
            if v.unwritten is not None:
                return self._read_late_or_wrong(v, thread)
            if v.early is not None:
                return self._drained_or_not(v, thread)
            if v.requery is not None:
                return self._busy_or_lying(v, v.requery, thread)
            if (
                v.read is not None
                and v.call is not None
                and v.call.name == "memcpy_from_symbol_async"
            ):
                # The observer under test: does a plain read agree with the model
                # where the asynchronous one did not?
                return self._read_or_bytes(v, thread)
            partial = (
                v.read is not None
                and name == "memcpy_from_symbol"
                and not self._whole(args, v.read[1])
            )
            if partial and v.missing is not None:
                # Bytes that look missing may be a partial read that reads the wrong
                # place: charged to the read, not to the copy or the promise behind it.
                whole = self._lying_read(v, args, thread)
                if whole is not None:
                    return self._charged_to_the_read(v, whole)
            if v.read is not None and v.missing is not None:
                return self._late_or_lost(v, thread)
            if partial:
                return self._read_or_bytes(v, thread)
        except BackendCrash as exc:
            # The backend cannot take a second look: the first reading stands, and the
            # hang or crash of the second look is a failure of its own (charged as a test's
            # call's would be), reported beside it.
            if self._on_lost is not None:
                self._on_lost(exc)
        return v

    def _whole(self, args: dict[str, Any], var: str) -> bool:
        """Does a read with these arguments cover the whole variable?"""
        return (
            int(args.get("offset") or 0) == 0
            and int(args.get("count") or 0) == self._fixtures[var].size
        )

    def _raw_read(self, thread: int, var: str, lo: int, hi: int) -> bytes | None:
        f = self._fixtures[var]
        scratch = self._scratch.buffer(thread, f.size)
        args = dict(
            dst=scratch.address,
            dst_max=scratch.size,
            symbol=f.address,
            count=hi - lo,
            offset=lo,
            kind=D2H,
        )
        r = self._backend.raw("memcpy_from_symbol", thread, args, f"a second look: reading {var}")
        return self._backend.read_back(scratch.address, hi - lo, thread) if r.ok else None

    def _drained_or_not(self, v: Violation, thread: int) -> Violation:
        """A pageable copy returned while a gate ahead of it was closed: with the gate
        still closed, are its bytes there?  Then it made its copy without draining its
        stream (the reading ``v`` cites); if not, it did not wait for its own copy either
        (PAGEABLE-BLOCKS).  A gate that opened meanwhile leaves both readings."""
        _device, var, lo, data = v.early  # type: ignore[misc]
        closed = self._closed_gates()
        whole = self._raw_read(thread, var, 0, self._fixtures[var].size)
        if whole is None or not closed or not closed <= self._closed_gates():
            return v
        charge = charging.drained_or_not(_cited(v), whole[lo : lo + len(data)] == data)
        return _charged(v, charge)

    def _busy_or_lying(self, v: Violation, stream: int, thread: int) -> Violation:
        """A query found ``stream`` busy after a promise said its tasks were complete:
        synchronised again and queried again, is it complete now?  Then a task was still
        running when the promise was made (the promise is broken, as ``v`` says first);
        busy still, after a synchronisation that succeeded, is the query's own answer
        (STREAM-QUERY)."""
        if self._backend.would_hang("synchronize_stream", {"stream": stream}) is not None:
            return v
        sync = self._backend.raw(
            "synchronize_stream",
            thread,
            {"stream": stream},
            "a second look: aclrtSynchronizeStream",
        )
        if not sync.ok:
            return v
        query = self._backend.raw(
            "stream_query", thread, {"stream": stream}, "a second look: aclrtStreamQuery"
        )
        if not query.ok:
            return v
        complete = int(query.outputs.get("status", -1)) == StreamStatus.ACL_STREAM_STATUS_COMPLETE
        return _charged(v, charging.busy_or_lying(_cited(v), complete))

    def _lying_read(self, v: Violation, args: dict[str, Any], thread: int) -> bytes | None:
        """A read of the whole variable, when the partial read ``v`` is wrong where the
        variable is right: the whole read shows bytes the model allows, and the same
        partial read made after it (a copy that ran late has landed by then) still
        disagrees with it.  None otherwise."""
        device, var, lo, hi = v.read  # type: ignore[misc]
        whole = self._raw_read(thread, var, 0, self._fixtures[var].size)
        if whole is None or not self._model.allows(device, var, lo, whole[lo:hi]):
            return None
        offset, count = int(args.get("offset") or 0), int(args.get("count") or 0)
        again = self._raw_read(thread, var, offset, offset + count)
        if again is None or again[lo - offset : hi - offset] == whole[lo:hi]:
            return None
        return whole

    def _synchronize_everything(self, thread: int) -> None:
        """Every way of waiting, not only the one that may have lied: each stream the test
        made, the default stream, then the device (a call known to hang is not made)."""
        for s in [*self._streams(), *([0] if self._default_stream else [])]:
            if self._backend.would_hang("synchronize_stream", {"stream": s}) is None:
                self._backend.raw("synchronize_stream", thread, {"stream": s}, "a second look")
        if self._backend.would_hang("synchronize_device", {}) is None:
            self._backend.raw(
                "synchronize_device", thread, {}, "a second look: aclrtSynchronizeDevice()"
            )

    def _read_late_or_wrong(self, v: Violation, thread: int) -> Violation:
        """An asynchronous read known complete left its destination as it was: synchronised
        again, has the destination changed?  Then the read ran late (the promise ``v``
        cites is broken).  Unchanged, while a read of the whole variable shows bytes the
        model allows there, the read did not put them there (nothing, or wrong bytes that
        equal the old ones, as a read of the wrong place can find): charged to the read,
        the promise named beside it.  A variable that is wrong itself leaves ``v`` as it
        is (the read may have read what was there)."""
        address, before = v.unwritten  # type: ignore[misc]
        device, var, lo, hi = v.read  # type: ignore[misc]
        self._synchronize_everything(thread)
        if self._backend.read_back(address, len(before), thread) != before:
            return _charged(v, charging.read_late_or_wrong(_cited(v), destination_changed=True))
        whole = self._raw_read(thread, var, 0, self._fixtures[var].size)
        if (
            whole is None
            or whole[lo:hi] == before  # the variable holds them now: which ran when is open
            or not self._model.allows(device, var, lo, whole[lo:hi])
        ):
            return v
        charge = charging.read_late_or_wrong(_cited(v), destination_changed=False)
        return dataclasses.replace(
            v,
            requirement=charge.requirement,
            message=f"the asynchronous read of {var} bytes [{lo}, {hi}) did not leave them in "
            "its destination, even after a second synchronisation of every stream",
            details=[
                *v.details,
                f"{charge.why}; a read of the whole {var} shows there: "
                f"{whole[lo:hi][:32].hex(' ')}",
            ],
            also=charge.also,
        )

    def _late_or_lost(self, v: Violation, thread: int) -> Violation:
        _device, var, lo, hi = v.read  # type: ignore[misc]
        self._synchronize_everything(thread)
        # The whole variable, sliced: what a partial read of the backend says may not be
        # where it says (a read that lies is the read's fault, see ``_read_lies``).
        whole = self._raw_read(thread, var, 0, self._fixtures[var].size)
        if whole is None:
            return v
        again = whole[lo:hi]
        mostly = again != v.missing and _mostly(again, v.missing, v.wrong)
        charge = charging.late_or_lost(
            _cited(v), v.late, again == v.missing or mostly, v.older_write_shows, lo, hi
        )
        if mostly:
            late = _charged(v, charge)
            note = (
                "most of them, that is: the others hold what its source held after the call "
                "(it read its source late)"
            )
            return dataclasses.replace(late, details=[*late.details, note])
        if again == v.missing or v.older_write_shows:
            return _charged(v, charge)
        return dataclasses.replace(
            _charged(v, charge),
            message=v.message + "; not there after a second synchronisation either",
        )

    def _read_or_bytes(self, v: Violation, thread: int) -> Violation:
        if v.racing:
            # Copies that may or may not have run when the read ran: a later read of the
            # whole variable may see them landed, whichever answer was wrong.  Both stay.
            return dataclasses.replace(v, also=charging.racing_read(_cited(v)).also)
        device, var, lo, hi = v.read  # type: ignore[misc]
        whole = self._raw_read(thread, var, 0, self._fixtures[var].size)
        if whole is None or not self._model.allows(device, var, lo, whole[lo:hi]):
            return v  # the variable's bytes are wrong, whichever way they are read
        return self._charged_to_the_read(v, whole)

    @staticmethod
    def _charged_to_the_read(v: Violation, whole: bytes) -> Violation:
        """``v`` charged to the read: a read of the whole variable showed ``whole``, whose
        bytes there the model allows."""
        _device, var, lo, hi = v.read  # type: ignore[misc]
        charge = charging.the_read_lies(_cited(v))
        return dataclasses.replace(
            v,
            requirement=charge.requirement,
            message=f"the read of {var} bytes [{lo}, {hi}) is wrong: {charge.why}",
            details=[
                *v.details,
                f"a read of the whole {var} shows there: {whole[lo:hi][:32].hex(' ')}",
            ],
            also=charge.also,
        )


def _cited(v: Violation) -> charging.Charge:
    """What ``v`` cites now, as a charge a second look may change."""
    return charging.Charge(v.requirement, v.also)


def _charged(v: Violation, charge: charging.Charge) -> Violation:
    """``v`` as ``charge`` decides after a second look, its words added to the details."""
    return dataclasses.replace(
        v,
        requirement=charge.requirement,
        also=charge.also,
        details=[*v.details, charge.why],
    )


def _mostly(again: bytes, missing: bytes | None, wrong: npt.NDArray[np.bool_] | None) -> bool:
    """Do more than half of the bytes that were wrong (``wrong``: True at those of the
    range; None: all of them) hold the missing copy's bytes when read again?  (A copy
    that ran late and read its source late, after the host wrote over parts of it, leaves
    its bytes everywhere else; a copy that never ran, or lost some bytes for good, leaves
    older bytes there, which equal its own at a byte here and there only by chance.  The
    bytes that were right the first time say nothing either way.)"""
    if missing is None or len(missing) != len(again) or not again:
        return False
    now = np.frombuffer(again, dtype=np.uint8) == np.frombuffer(missing, dtype=np.uint8)
    if wrong is not None and len(wrong) == len(now):
        now = now[wrong]
    return 2 * int(np.count_nonzero(now)) > len(now) > 0
