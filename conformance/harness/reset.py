"""Bringing a backend that served one harness back to a known state for the next one
(an adapter's ``isolation = "reset"``, see ``context.Suite``).

The harness's teardown (``teardown.py``) has opened its gates, drained every device it
used and released its streams, events, registrations and buffers.  Then the reset:

1. fails if the teardown could not release something (a clean-up call that failed);
2. works out what the harness may have changed in device variables (:func:`plan`, from
   the harness's ledger of what it made and wrote, ``ledger.py``): each
   range a copy to a symbol that the backend accepted wrote, on the device that was
   current for it; the whole variable when the harness cannot tell which bytes (a copy
   to an address that is not a variable's start, or past its end), every variable of a
   device whose current-ness it cannot tell or that it reset;
3. rewrites each range with the bytes the suite first read there from this backend
   (aclrtMemcpyToSymbol from pageable memory), reads it back (aclrtMemcpyFromSymbol into
   memory filled with other bytes first, so that a read that wrote nothing shows) and
   compares (:func:`restore`);
4. makes device 0 current again.

Only what may have changed is rewritten: an example that wrote four bytes of a 16 MiB
variable costs a four-byte rewrite, and one that wrote nothing costs one aclrtSetDevice.

The calls go to the adapter itself, not through a harness or the trace: they are the
suite's own, never judged against a requirement and never part of a counterexample.  A
call that fails, raises or does not answer, a read-back that differs, or bytes that must
be rewritten but were never read from this backend: the reset fails, with one line that
says why, and the suite starts a fresh backend for the next harness.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

from acl_conformance.adapters.base import Adapter
from acl_conformance.adapters.base import CallTimeout
from acl_conformance.adapters.base import FixtureVariable
from acl_conformance.reference_impl.constants import ACL_SUCCESS
from acl_conformance.reference_impl.constants import D2H
from acl_conformance.reference_impl.constants import H2D

from .ledger import Ledger
from .variables import SPARE

Ranges = dict[tuple[int, str], list[tuple[int, int]]]
"""(device, variable) -> the byte ranges [start, end) to rewrite there, sorted, disjoint."""

MAX_RANGES = 16
"""Ranges rewritten one by one in a variable at most; past that, the span from the first
to the last is rewritten in one copy (fewer calls: the bytes between hold their initial
values, so rewriting them too changes nothing)."""

_INVERT = bytes(b ^ 0xFF for b in range(256))


class ResetFailed(Exception):
    """The backend could not be brought back to the known state (the message says why)."""


def plan(ledger: Ledger, fixture_variables: Mapping[str, FixtureVariable]) -> Ranges:
    """What a harness may have changed in device variables (by its ``ledger``), by device
    and variable."""
    fixtures = list(fixture_variables.values())
    devices = sorted(
        ledger.devices_used | ledger.devices_reset | set(ledger.thread_devices.values()) | {0}
    )
    wanted: dict[tuple[int, str], list[tuple[int, int]]] = {}

    def whole(device: int, f: FixtureVariable) -> None:
        wanted.setdefault((device, f.name), []).append((0, f.size))

    for d in ledger.devices_reset:
        for f in fixtures:
            whole(d, f)
    for w in ledger.writes:
        on = [w.device] if w.device is not None else devices
        target = next((f for f in fixtures if f.address == w.symbol), None)
        for d in on:
            if target is not None and w.offset >= 0 and w.offset + w.count <= target.size:
                wanted.setdefault((d, target.name), []).append((w.offset, w.offset + w.count))
            else:
                # Accepted, though it is not a copy into one variable: where its bytes went
                # is anyone's guess (a backend bug): every variable of the device.
                for g in fixtures:
                    whole(d, g)
    return {key: _merged(ranges) for key, ranges in wanted.items()}


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``ranges`` sorted, overlapping and touching ones joined; one span past MAX_RANGES."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    if len(out) > MAX_RANGES:
        out = [(out[0][0], out[-1][1])]
    return out


def restore(
    adapter: Adapter,
    fixtures: Mapping[str, FixtureVariable],
    initial: Mapping[tuple[int, str], bytes],
    ranges: Ranges,
) -> list[int]:
    """Rewrite ``ranges`` with the ``initial`` bytes, read them back and compare, then
    make device 0 current; in the calling thread.  The devices it made current, one per
    successful aclrtSetDevice (each holds a reference a later reset has to drop).  Raises
    ResetFailed."""
    missing = [f"{name} on device {d}" for d, name in sorted(ranges) if (d, name) not in initial]
    if missing:
        raise ResetFailed(
            f"{', '.join(missing)} may have been written but was never read from this backend"
        )
    made_current: list[int] = []
    try:
        if ranges:
            _rewrite(adapter, fixtures, initial, ranges, made_current)
        _ok(adapter.set_device(0), "aclrtSetDevice(0)")
        made_current.append(0)
        return made_current
    except ResetFailed:
        raise
    except CallTimeout as exc:
        raise ResetFailed(f"a call did not answer: {exc}") from None
    except Exception as exc:  # the backend raised instead of answering
        raise ResetFailed(f"a call raised {type(exc).__name__}: {exc}") from None


def _rewrite(
    adapter: Adapter,
    fixtures: Mapping[str, FixtureVariable],
    initial: Mapping[tuple[int, str], bytes],
    ranges: Ranges,
    made_current: list[int],
) -> None:
    size = max(hi - lo for spans in ranges.values() for lo, hi in spans)
    code, src = adapter.malloc_pageable(size)
    _ok(code, f"malloc({size})")
    # dstMax a little above the largest count: a backend wrong at dstMax == count is
    # caught by FROMSYMBOL-DSTMAX's own tests, not here (where it would undecide others)
    code, dst = adapter.malloc_pageable(size + SPARE)
    if code != ACL_SUCCESS:
        adapter.free_pageable(src)
        _ok(code, f"malloc({size + SPARE})")
    try:
        for device in sorted({d for d, _ in ranges}):
            _ok(adapter.set_device(device), f"aclrtSetDevice({device})")
            made_current.append(device)
            for (d, name), spans in sorted(ranges.items()):
                if d != device:
                    continue
                f = fixtures[name]
                for lo, hi in spans:
                    want = initial[(d, name)][lo:hi]
                    where = f"{name}[{lo}:{hi}] on device {d}"
                    _ok(adapter.write_host(src, want), f"filling the source of {where}")
                    _ok(
                        adapter.memcpy_to_symbol(f.address, src, hi - lo, lo, H2D),
                        f"aclrtMemcpyToSymbol rewriting {where}",
                    )
                    # Other bytes first: a read that writes nothing cannot pass.
                    _ok(adapter.write_host(dst, want.translate(_INVERT)), "clearing the read")
                    _ok(
                        adapter.memcpy_from_symbol(dst, size + SPARE, f.address, hi - lo, lo, D2H),
                        f"aclrtMemcpyFromSymbol reading back {where}",
                    )
                    code, got = adapter.read_host(dst, hi - lo)
                    _ok(code, f"reading back {where}")
                    if bytes(got) != want:
                        bad = next(
                            (i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
                            min(len(got), len(want)),
                        )
                        raise ResetFailed(
                            f"{where} reads back {bytes(got[bad : bad + 8]).hex()} at byte "
                            f"{lo + bad} after it was rewritten with {want[bad : bad + 8].hex()}"
                        )
    except BaseException:
        # The backend is dropped now; free what it still can, but the error that failed
        # the reset is the one to report.
        for p in (src, dst):
            with contextlib.suppress(Exception):
                adapter.free_pageable(p)
        raise
    for p in (src, dst):
        _ok(adapter.free_pageable(p), "free")


def _ok(code: int, what: str) -> None:
    if code != ACL_SUCCESS:
        raise ResetFailed(f"{what} returned {code}")
