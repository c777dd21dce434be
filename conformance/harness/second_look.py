"""A second look at bytes a read got wrong, before the failure is charged.

Extra calls that tell apart two readings of a wrong read (they are the suite's
own: the counterexample leaves them out).  A copy known complete whose bytes
are missing: after a second synchronisation of the device, are they there?
Then it ran late (the promise of completion was false); else it never wrote
them there (its effect is wrong).  A read of part of a variable that disagrees
with the model: does a read of the whole variable show the same bytes?  If the
whole read agrees with the model, the partial read is what is wrong.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING
from typing import Any

from acl_conformance.reference_impl import Violation

from .backend_calls import D2H
from .backend_calls import raw
from .backend_calls import read_back
from .failure import BackendCrash
from .variables import scratch_buffer

if TYPE_CHECKING:  # pragma: no cover
    from .harness import Harness


def second_look(
    h: Harness, name: str, args: dict[str, Any], thread: int, violations: list[Violation]
) -> list[Violation]:
    """``violations`` as charged after a second look where one tells readings apart."""
    if h.poisoned:
        return violations
    out = []
    for v in violations:
        try:
            if (
                v.read is not None
                and v.call is not None
                and v.call.name == "memcpy_from_symbol_async"
            ):
                # The observer under test: does a plain read agree with the model
                # where the asynchronous one did not?
                v = _read_or_bytes(h, v, thread)
            elif v.read is not None and v.missing is not None:
                v = _late_or_lost(h, v, thread)
            elif (
                v.read is not None
                and name == "memcpy_from_symbol"
                and not _whole(h, args, v.read[1])
            ):
                v = _read_or_bytes(h, v, thread)
        except BackendCrash:
            pass  # the backend cannot take a second look: the first reading stands
        out.append(v)
    return out


def _whole(h: Harness, args: dict[str, Any], var: str) -> bool:
    """Does a read with these arguments cover the whole variable?"""
    return int(args.get("offset") or 0) == 0 and int(args.get("count") or 0) == h.fixtures[var].size


def _raw_read(h: Harness, thread: int, var: str, lo: int, hi: int) -> bytes | None:
    f = h.fixtures[var]
    scratch = scratch_buffer(h, thread, f.size)
    args = dict(
        dst=scratch.address,
        dst_max=scratch.size,
        symbol=f.address,
        count=hi - lo,
        offset=lo,
        kind=D2H,
    )
    r = raw(h, "memcpy_from_symbol", thread, args, f"a second look: reading {var}")
    return read_back(h, scratch.address, hi - lo, thread) if r.ok else None


def _late_or_lost(h: Harness, v: Violation, thread: int) -> Violation:
    _device, var, lo, hi = v.read  # type: ignore[misc]
    # Every way of waiting, not only the one that may have lied: each stream the test
    # made, the default stream, then the device.
    for s in [*h.streams, *([0] if h.caps.default_stream else [])]:
        raw(h, "synchronize_stream", thread, {"stream": s}, "a second look")
    raw(h, "synchronize_device", thread, {}, "a second look: aclrtSynchronizeDevice()")
    again = _raw_read(h, thread, var, lo, hi)
    if again is None:
        return v
    if again == v.missing:
        note = (
            "after a second synchronisation of every stream the bytes are there: the copy ran, late"
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
            also=tuple(dict.fromkeys(r for r in (*v.also, "EFFECT-BYTES") if r != v.requirement)),
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
        also=tuple(dict.fromkeys(r for r in (v.requirement, *v.also) if r and r != "EFFECT-BYTES")),
    )


def _read_or_bytes(h: Harness, v: Violation, thread: int) -> Violation:
    device, var, lo, hi = v.read  # type: ignore[misc]
    whole = _raw_read(h, thread, var, 0, h.fixtures[var].size)
    if whole is None or not h.model.allows(device, var, lo, whole[lo:hi]):
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
