"""Device variables' starting contents: each is read from the backend before its first
use on each device (never assumed), and that read is the model's starting point."""

from __future__ import annotations

from typing import TYPE_CHECKING

from acl_conformance.adapters.base import FixtureVariable
from acl_conformance.reference_impl import judge

from .backend_calls import D2H
from .backend_calls import raw
from .backend_calls import read_back
from .failure import ConformanceFailure
from .failure_evidence import gather
from .host_memory import HostBuffer

if TYPE_CHECKING:  # pragma: no cover
    from .harness import Harness

BASELINE_LIMIT = 4096
"""Variables up to this size are read as soon as a device is first used, so that a
stray write into them shows even if no test touches them on purpose; a larger one
is read when it, or the variable laid out just before it, is first used."""


def ensure_known(h: Harness, thread: int, symbol: int) -> None:
    """Before a copy touches ``symbol``: read what the model has not seen of it and of
    the variables around it on the current device."""
    dev = h.model.current_device(thread)
    if dev is None:
        return
    fixture = next((f for f in h.fixtures.values() if f.address == symbol), None)
    if fixture is None:
        return
    if (dev, "*") not in h.known:
        h.known.add((dev, "*"))
        for f in h.fixtures.values():
            if f.size <= BASELINE_LIMIT:
                learn(h, thread, dev, f)
    learn(h, thread, dev, fixture)
    # The variable laid out next (fixtures() lists them in layout order) is where a
    # copy that runs past the end would land.
    order = list(h.fixtures.values())
    i = order.index(fixture)
    if i + 1 < len(order):
        learn(h, thread, dev, order[i + 1])


def learn(h: Harness, thread: int, device: int, f: FixtureVariable) -> None:
    """Read a variable before the model has seen it: its contents become the starting point."""
    if (device, f.name) in h.known:
        return
    h.known.add((device, f.name))
    scratch = scratch_buffer(h, thread, f.size)
    args = dict(
        dst=scratch.address,
        dst_max=scratch.size,
        symbol=f.address,
        count=f.size,
        offset=0,
        kind=D2H,
    )
    r = raw(h, "memcpy_from_symbol", thread, args, f"reading {f.name} on device {device}")
    observed = read_back(h, scratch.address, f.size, thread) if r.ok else None
    if observed is not None:
        h.first_reads[(device, f.name)] = observed
    with h.lock:
        step = judge(h.model, r, observed, setup=True)
    if step.violations:
        raise h.failure(step.violations)


def scratch_buffer(h: Harness, thread: int, need: int = BASELINE_LIMIT) -> HostBuffer:
    """Host memory that this thread's reads land in (never a source, so never filled)."""
    buf = h.scratch.get(thread)
    if buf is None or buf.size < need:
        size = max(need, min(BASELINE_LIMIT, max(f.size for f in h.fixtures.values())))
        with h.setup():
            r = h.call("malloc_pageable", size=size)
        if not r.ok:
            raise ConformanceFailure.setup(
                f"malloc({size}) failed in the backend: {r.code}", gather(h)
            )
        buf = h.scratch[thread] = HostBuffer(int(r["ptr"]), size, False, "scratch")
        h.buffers.append(buf)
    return buf
