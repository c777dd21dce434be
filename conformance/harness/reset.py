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
   compares (:func:`restore`).  A variable of a device the harness reset is read first
   and compared with those bytes (a backend that gives a variable back its starting
   bytes on a reset, as the bundled ones do, costs one read); only the runs that differ
   are rewritten and read back;
4. brings each device's aclrtSetDevice references down to one (aclrtResetDevice), and
   makes device 0 current again.

Only what may have changed is rewritten: an example that wrote four bytes of a 16 MiB
variable costs a four-byte rewrite, and one that wrote nothing costs one aclrtSetDevice.

A variable that no harness read from this instance on a device is left as it is: the
instance has no bytes of it to restore, and none are needed.  No harness relied on its
contents (a copy into a variable is always preceded by a read of it: ``variables.py``),
so whatever a device reset (DEVICE-RESET-CONTENTS: anything) or a stray copy (already
the harness's failure) left there is what the next harness reads first, and that read
becomes the instance's starting point for it.  So the large variables (g_arr1m,
g_arr16m) cost nothing unless a harness uses them, and a harness that resets a device
does not cost a fresh instance.

The calls go through the harness's one judged path (``Harness.call``), as a test's do:
a call that does not answer is a hang charged to the requirement its success stands
for, one that raises is a crash, an answer the profile does not allow (a read-back that
differs from the rewrite included) is a failure, each the test's own, and the backend
is dropped.  A call the run declines or a refusal the profile allows: the reset fails,
with one line that says why, and the suite starts a fresh backend for the next harness.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Mapping

from acl_conformance.adapters.base import FixtureVariable
from acl_conformance.reference_impl.constants import D2H
from acl_conformance.reference_impl.constants import H2D
from acl_conformance.reference_impl.record import CallRecord

from .failure import Declined
from .ledger import Ledger
from .teardown import Call
from .variables import SPARE

Ranges = dict[tuple[int, str], list[tuple[int, int]]]
"""(device, variable) -> the byte ranges [start, end) to rewrite there, sorted, disjoint."""

MAX_RANGES = 16
"""Ranges rewritten one by one in a variable at most; past that, the span from the first
to the last is rewritten in one copy (fewer calls: the bytes between hold their initial
values, so rewriting them too changes nothing)."""

_INVERT = bytes(b ^ 0xFF for b in range(256))

_BLOCK = 4096
"""Bytes compared at once when a variable read is compared with its starting bytes."""

Look = Callable[[int, str], bytes]
"""Read variable ``name`` whole on ``device`` (the calling thread's current device) through
the harness's judged path, and return what it holds."""


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
    call: Call,
    fixtures: Mapping[str, FixtureVariable],
    initial: Mapping[tuple[int, str], bytes],
    ranges: Ranges,
    devices_reset: Collection[int] = (),
    look: Look | None = None,
    references: Callable[[], Mapping[int, int]] | None = None,
) -> list[str]:
    """Rewrite ``ranges`` with the ``initial`` bytes and read them back, then make device 0
    current; every call through ``call``, the harness's judged path (``Harness.call``): a
    read-back that differs from what was rewritten is the model's to charge, a hang, a
    crash or an answer the profile does not allow is raised as the test's own.

    On a device of ``devices_reset`` (whose variables ``ranges`` hold whole), each
    variable is first read through ``look`` and compared with its ``initial`` bytes; only
    the runs that differ are rewritten.  A variable with no ``initial`` bytes (never read
    from this instance) is left as it is (the module's docstring says why).  Returns
    those, ``"<variable> on device <d>"`` each.

    ``references``: the aclrtSetDevice references each device holds now; each device
    that holds more than one is brought down to one (aclrtResetDevice), so that the
    count an instance holds does not grow with the harnesses it served (a test that
    ends a device's context resets as many times as the count says) and no context
    ends.  Raises ResetFailed when the reset cannot be made (a call declined or refused
    with a code the profile allows)."""
    left = [f"{name} on device {d}" for d, name in sorted(ranges) if (d, name) not in initial]
    wanted = {key: spans for key, spans in ranges.items() if key in initial}
    try:
        if look is not None:
            wanted = _differing(call, initial, wanted, set(devices_reset), look)
        if wanted:
            _rewrite(call, fixtures, initial, wanted)
        for d, n in sorted((references() if references is not None else {}).items()):
            for _ in range(n - 1):
                _ok(call("reset_device", {"device_id": d}), f"aclrtResetDevice({d})")
        _ok(call("set_device", {"device_id": 0}), "aclrtSetDevice(0)")
    except Declined as exc:
        raise ResetFailed(f"a call was not made: {exc}") from None
    return left


def _differing(
    call: Call,
    initial: Mapping[tuple[int, str], bytes],
    ranges: Ranges,
    devices_reset: set[int],
    look: Look,
) -> Ranges:
    """``ranges``, where those of a device of ``devices_reset`` are the runs in which the
    variable, read now through ``look``, differs from its ``initial`` bytes."""
    out: Ranges = {}
    for device in sorted({d for d, _ in ranges}):
        checked = device in devices_reset
        if checked:
            _ok(call("set_device", {"device_id": device}), f"aclrtSetDevice({device})")
        for (d, name), spans in sorted(ranges.items()):
            if d != device:
                continue
            if not checked:
                out[(d, name)] = spans
                continue
            runs = differing_runs(look(d, name), initial[(d, name)])
            if runs:
                out[(d, name)] = _merged(runs)
    return out


def differing_runs(now: bytes, want: bytes) -> list[tuple[int, int]]:
    """The ranges [start, end) where ``now`` differs from ``want``, in blocks of
    :data:`_BLOCK` bytes (rewriting the equal bytes of a block with their own values
    changes nothing), sorted; bytes of ``want`` past the end of ``now`` differ."""
    runs: list[tuple[int, int]] = []
    n = min(len(now), len(want))
    for lo in range(0, n, _BLOCK):
        hi = min(lo + _BLOCK, n)
        if now[lo:hi] == want[lo:hi]:
            continue
        if runs and runs[-1][1] == lo:
            runs[-1] = (runs[-1][0], hi)
        else:
            runs.append((lo, hi))
    if len(now) < len(want):
        runs.append((n, len(want)))
    return runs


def _rewrite(
    call: Call,
    fixtures: Mapping[str, FixtureVariable],
    initial: Mapping[tuple[int, str], bytes],
    ranges: Ranges,
) -> None:
    size = max(hi - lo for spans in ranges.values() for lo, hi in spans)
    r = call("malloc_pageable", {"size": size})
    _ok(r, f"malloc({size})")
    src = int(r["ptr"])
    # dstMax a little above the largest count: a backend wrong at dstMax == count is
    # caught by FROMSYMBOL-DSTMAX's own tests, not here (where it would undecide others)
    r = call("malloc_pageable", {"size": size + SPARE})
    if not r.ok:
        call("free_pageable", {"ptr": src})
        _ok(r, f"malloc({size + SPARE})")
    dst = int(r["ptr"])
    for device in sorted({d for d, _ in ranges}):
        _ok(call("set_device", {"device_id": device}), f"aclrtSetDevice({device})")
        for (d, name), spans in sorted(ranges.items()):
            if d != device:
                continue
            f = fixtures[name]
            for lo, hi in spans:
                want = initial[(d, name)][lo:hi]
                where = f"{name}[{lo}:{hi}] on device {d}"
                _ok(
                    call("write_host", {"dst": src, "data": want}), f"filling the source of {where}"
                )
                rewrite = {
                    "symbol": f.address,
                    "src": src,
                    "count": hi - lo,
                    "offset": lo,
                    "kind": H2D,
                }
                _ok(call("memcpy_to_symbol", rewrite), f"aclrtMemcpyToSymbol rewriting {where}")
                # Other bytes first: a read that writes nothing cannot pass.
                _ok(
                    call("write_host", {"dst": dst, "data": want.translate(_INVERT)}),
                    "clearing the read",
                )
                # The model judges the bytes read back against the rewrite.
                read = {
                    "dst": dst,
                    "dst_max": size + SPARE,
                    "symbol": f.address,
                    "count": hi - lo,
                    "offset": lo,
                    "kind": D2H,
                }
                _ok(call("memcpy_from_symbol", read), f"aclrtMemcpyFromSymbol reading back {where}")
    for p in (src, dst):
        _ok(call("free_pageable", {"ptr": p}), "free")


def free(call: Call, addresses: list[int]) -> None:
    """free() each of ``addresses`` (pageable memory the reset's reads allocated); raises
    ResetFailed when one is not made or does not succeed."""
    try:
        for p in addresses:
            _ok(call("free_pageable", {"ptr": p}), "free")
    except Declined as exc:
        raise ResetFailed(f"a call was not made: {exc}") from None


def _ok(r: CallRecord, what: str) -> None:
    if not r.ok:
        raise ResetFailed(f"{what} returned {r.code}")
