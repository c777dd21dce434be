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

from acl_conformance.adapters.base import FixtureVariable
from acl_conformance.reference_impl import Model
from acl_conformance.reference_impl import Violation
from acl_conformance.reference_impl.constants import D2H
from acl_conformance.reference_impl.constants import StreamStatus
from acl_conformance.reference_impl.requirement_ids import EFFECT_BYTES
from acl_conformance.reference_impl.requirement_ids import FROMSYMBOL_BYTES
from acl_conformance.reference_impl.requirement_ids import PAGEABLE_BLOCKS
from acl_conformance.reference_impl.requirement_ids import PAGEABLE_DRAINS_STREAM
from acl_conformance.reference_impl.requirement_ids import STREAM_QUERY

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
        if whole[lo : lo + len(data)] == data:
            note = "with the gate still closed its bytes are there: it copied without waiting for its stream"
            return dataclasses.replace(v, details=[*v.details, note])
        note = "with the gate still closed its bytes are not there either: it did not wait for its own copy"
        if v.requirement != PAGEABLE_DRAINS_STREAM:
            return dataclasses.replace(v, details=[*v.details, note])
        return dataclasses.replace(
            v,
            requirement=PAGEABLE_BLOCKS,
            details=[*v.details, note],
            also=tuple(dict.fromkeys(r for r in (v.requirement, *v.also) if r != PAGEABLE_BLOCKS)),
        )

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
        if int(query.outputs.get("status", -1)) == StreamStatus.ACL_STREAM_STATUS_COMPLETE:
            note = "after a second synchronisation the stream is complete: a task was still running when the promise said it was complete"
            return dataclasses.replace(v, details=[*v.details, note])
        note = "after a second synchronisation that succeeded the stream is still reported busy: the query's answer is wrong"
        return dataclasses.replace(
            v,
            requirement=STREAM_QUERY,
            details=[*v.details, note],
            also=tuple(
                dict.fromkeys(r for r in (v.requirement, *v.also) if r and r != STREAM_QUERY)
            ),
        )

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
            note = "after a second synchronisation of every stream the destination changed: the read ran, late"
            return dataclasses.replace(v, details=[*v.details, note])
        whole = self._raw_read(thread, var, 0, self._fixtures[var].size)
        if (
            whole is None
            or whole[lo:hi] == before  # the variable holds them now: which ran when is open
            or not self._model.allows(device, var, lo, whole[lo:hi])
        ):
            return v
        return dataclasses.replace(
            v,
            requirement=FROMSYMBOL_BYTES,
            message=f"the asynchronous read of {var} bytes [{lo}, {hi}) did not leave them in "
            "its destination, even after a second synchronisation of every stream",
            details=[
                *v.details,
                "after a second synchronisation of every stream the destination still holds "
                f"what it held before the read; a read of the whole {var} shows there: "
                f"{whole[lo:hi][:32].hex(' ')}",
            ],
            also=tuple(
                dict.fromkeys(r for r in (v.requirement, *v.also) if r and r != FROMSYMBOL_BYTES)
            ),
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
        if again == v.missing or _mostly(again, v.missing):
            note = (
                "after a second synchronisation of every stream the bytes are there: the copy ran, late"
                if again == v.missing
                else "after a second synchronisation of every stream most of the bytes are "
                "there: the copy ran, late, and took the rest from its source as the host "
                "changed it after the call"
            )
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
                also=tuple(dict.fromkeys(r for r in (*v.also, EFFECT_BYTES) if r != v.requirement)),
            )
        return dataclasses.replace(
            v,
            requirement=EFFECT_BYTES,
            message=v.message + "; not there after a second synchronisation either",
            details=[
                *v.details,
                f"after a second synchronisation of every stream bytes [{lo}, {hi}) still do "
                "not hold what the copy should have left: it did not write them there",
            ],
            also=tuple(
                dict.fromkeys(r for r in (v.requirement, *v.also) if r and r != EFFECT_BYTES)
            ),
        )

    def _read_or_bytes(self, v: Violation, thread: int) -> Violation:
        if v.racing:
            # Copies that may or may not have run when the read ran: a later read of the
            # whole variable may see them landed, whichever answer was wrong.  Both stay.
            also = tuple(dict.fromkeys((*v.also, FROMSYMBOL_BYTES)))
            return dataclasses.replace(v, also=tuple(r for r in also if r != v.requirement))
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
        return dataclasses.replace(
            v,
            requirement=FROMSYMBOL_BYTES,
            message=f"the read of {var} bytes [{lo}, {hi}) is wrong: a read of the whole "
            "variable shows bytes the model allows there",
            details=[
                *v.details,
                f"a read of the whole {var} shows there: {whole[lo:hi][:32].hex(' ')}",
            ],
            also=tuple(
                dict.fromkeys(r for r in (v.requirement, *v.also) if r and r != FROMSYMBOL_BYTES)
            ),
        )


def _mostly(again: bytes, missing: bytes | None) -> bool:
    """Do more than half of the bytes read again hold the missing copy's bytes?  (A copy
    that ran late and read its source late, after the host wrote over parts of it, leaves
    its bytes everywhere else; a copy that never ran leaves older bytes, which equal its
    own at a byte here and there only by chance.)"""
    if missing is None or len(missing) != len(again) or not again:
        return False
    same = np.count_nonzero(
        np.frombuffer(again, dtype=np.uint8) == np.frombuffer(missing, dtype=np.uint8)
    )
    return 2 * int(same) > len(again)
