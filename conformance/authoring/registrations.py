"""Host registration with several live ranges, carried to its second and third step.

Ranges are registered with aclrtHostRegisterV2 (two or more, disjoint, in one allocation
and in different ones); one that is not the most recent is unregistered; every range
still registered must act page-locked (PINNED-REGISTERED, PINNED-ASYNC: behind a
closed gate the copy returns at once), the unregistered one pageable (PAGEABLE-BLOCKS,
PAGEABLE-DRAINS-STREAM: the copy returns only once the gate ahead of it has opened);
then it is registered again and must act page-locked again.

Every call goes through the harness, so the model judges it (a pageable copy that
returns behind a closed gate is its finding); whether a page-locked copy waited is a
timing only the helper sees, and the helper reports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.harness.harness import HostBuffer

from . import ops

PAGE = 4096
"""The page size aclrtHostRegisterV2 aligns to."""
SAFETY = 2.0
"""Seconds after which a timer opens the gate ahead of a page-locked copy anyway: a
backend that wrongly waits returns then (and fails), instead of hanging the run."""
DRAIN = 0.02
"""Seconds the gate ahead of a pageable copy stays closed: the copy must wait them out."""
COUNT = 32
"""Bytes each checking copy takes from the start of a range."""


@dataclass(frozen=True)
class HostRange:
    """One page of a malloc buffer, to register."""

    buffer: HostBuffer
    offset: int

    @property
    def address(self) -> int:
        return self.buffer.at(self.offset)

    def __repr__(self) -> str:
        return f"{self.buffer.name}+{self.offset}"


def disjoint_ranges(h: Harness, fill: int) -> list[HostRange]:
    """Three disjoint one-page ranges: the second and fourth page of one allocation (a page
    left before each) and the second page of another, filled with ``ops.pattern(fill + k)``."""
    one = h.pageable(5 * PAGE, ops.pattern(fill, 5 * PAGE))
    other = h.pageable(3 * PAGE, ops.pattern(fill + 1, 3 * PAGE))
    out = []
    # pages 1 and 3 of the first, 1 of the other: the page before each is free, for a
    # registration again that starts elsewhere (see unregister_one_then_register_again)
    for buf, pages in ((one, (1, 3)), (other, (1,))):
        start = ((buf.address + PAGE - 1) & ~(PAGE - 1)) - buf.address
        out += [HostRange(buf, start + p * PAGE) for p in pages]
    return out


def register(h: Harness, rng: HostRange) -> bool:
    """aclrtHostRegisterV2 of one aligned page of malloc memory; did it succeed?  The model
    judged the answer: a failure it does not allow is its finding; one it allows (the page
    overlaps a registration made on memory since freed, which may outlive the free) ends
    the life cycle, unchecked."""
    return h.call("host_register", ptr=rng.address, size=PAGE).ok


def acts_pinned(h: Harness, var: str, rng: HostRange, data: bytes, step: str) -> None:
    """A copy from ``rng`` behind a closed gate returns at once (it is page-locked); then
    a sync, and the bytes are judged."""
    h.write(rng.buffer, rng.offset, data)
    s = h.stream()
    g = h.close_stream_gate(s)
    timer = h.open_later(g, SAFETY)
    r = ops.to_symbol_async(h, var, rng.buffer, count=len(data), stream=s, src_offset=rng.offset)
    waited = g in r.gates_open
    call = h.model.last_call()
    h.settle_timer(timer, g)
    ops.sync(h, s)
    h.observe(var)
    if waited and r.ok:
        h.fail(
            "PINNED-REGISTERED",
            f"a copy from a registered range ({rng!r}, {step}) did not return until the gate "
            f"ahead of it in its stream opened ({SAFETY:g} s)",
            call=call,
            allowed="return at once: a registered range is page-locked memory, its copy "
            "asynchronous",
            observed="the call waited for the stream, as a pageable copy does",
        )
    h.passed("PINNED-REGISTERED", "PINNED-ASYNC")


def acts_pageable(h: Harness, var: str, rng: HostRange, data: bytes) -> None:
    """A copy from ``rng`` behind a closed gate returns only once the gate has opened, its
    bytes there at return (the model judges both: PAGEABLE-BLOCKS, PAGEABLE-DRAINS-STREAM,
    charged to PINNED-REGISTERED when the range was registered once)."""
    h.write(rng.buffer, rng.offset, data)
    s = h.stream()
    g = h.close_stream_gate(s)
    timer = h.open_later(g, DRAIN)
    ops.to_symbol_async(h, var, rng.buffer, count=len(data), stream=s, src_offset=rng.offset)
    h.settle_timer(timer, g)
    h.observe(var)  # there at return, no sync
    ops.sync(h, s)


def unregister_one_then_register_again(
    h: Harness,
    var: str,
    ranges: Sequence[HostRange],
    drop: int,
    tag: int,
) -> bool:
    """Register every range of ``ranges`` in order; unregister ``ranges[drop]`` (not the
    last: ``drop < len(ranges) - 1``); check the others still act page-locked and it acts
    pageable; register it again and check it acts page-locked, then once more within a
    range that starts a page earlier; unregister them all.
    ``tag`` picks the bytes each copy carries (``ops.pattern(tag + k)``).  False when a
    call failed where the model allows it to (see ``register``): the rest is not checked."""
    if not 0 <= drop < len(ranges) - 1:
        raise ValueError(f"drop is a range registered before the last one, not {drop}")
    made = [rng for rng in ranges if register(h, rng)]
    done = len(made) == len(ranges)
    dropped = ranges[drop]
    k = tag
    if done:
        # every range used while all are registered, the one to unregister last (a
        # backend may remember the range its last copy hit)
        for rng in [*(r for r in ranges if r is not dropped), dropped]:
            k += 1
            acts_pinned(h, var, rng, ops.pattern(k, COUNT), "all registered")
    if done and h.call("host_unregister", ptr=dropped.address).ok:
        made.remove(dropped)
        # the unregistered range first, straight after its unregistration, then the rest
        for rng in [dropped, *(r for r in ranges if r is not dropped)]:
            k += 1
            if rng is dropped:
                acts_pageable(h, var, rng, ops.pattern(k, COUNT))
            else:
                acts_pinned(h, var, rng, ops.pattern(k, COUNT), "another range was unregistered")
        # registered again, as it was, then in a range that starts a page earlier: that
        # overlaps nothing registered now, only where the unregistered range was
        if register(h, dropped):
            acts_pinned(h, var, dropped, ops.pattern(k + 1, COUNT), "registered again")
            h.call("host_unregister", ptr=dropped.address)
            again = HostRange(dropped.buffer, dropped.offset - PAGE)
            if h.call("host_register", ptr=again.address, size=2 * PAGE).ok:
                step = "registered again within a range that starts a page earlier"
                acts_pinned(h, var, dropped, ops.pattern(k + 2, COUNT), step)
                h.call("host_unregister", ptr=again.address)
            else:
                done = False
        else:
            done = False
    else:
        done = False
    for rng in made:
        h.call("host_unregister", ptr=rng.address)
    return done
