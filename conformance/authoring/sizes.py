"""Sizes where backends switch copy paths, for the clause tests (conformance/suite/
test_sizes.py) and the machines (their rare large copies).

Real runtimes copy a small buffer one way and a large one another: a page, a staging
buffer or DMA chunk, a large page, a DMA descriptor's length field.  The thresholds are
where real runtimes switch; the variables a copy goes into, and the largest count, come
from what the backend declares.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.harness.harness import HostBuffer

from . import ops

THRESHOLDS = (4 << 10, 64 << 10, 1 << 20, 2 << 20)
"""Counts at which real runtimes switch copy paths: a page, a staging buffer or DMA
chunk, a large page, two of them."""
PAGE = 4096
"""The page size aclrtHostRegisterV2 aligns to."""
SPOT = 4096
"""Bytes overwritten at each end of a source right after a To copy (all of it when the
copy is no longer than two spots): a copy that reads its source late, whole or in
chunks from either end, takes some of them."""
MEMORIES = ("pinned", "pageable", "registered")
"""Where the host side of a copy lies: aclrtMallocHost, malloc, or malloc'd memory
page-locked with aclrtHostRegisterV2."""


@dataclass(frozen=True)
class Copy:
    """One copy: ``count`` bytes at ``offset`` of ``var``, from (or to) ``host_offset``
    bytes into the host memory a test uses."""

    var: str
    count: int
    offset: int
    host_offset: int

    def __str__(self) -> str:
        return f"{self.count} bytes at offset {self.offset} of {self.var}"


def largest(h: Harness, names: Sequence[str]) -> int:
    """The declared size of the largest of the variables ``names`` (of the suite's
    fixture variables: 16 MiB in the bundled backends)."""
    return max(h.fixtures[n].size for n in names)


def fitting(h: Harness, names: Sequence[str], count: int, offset: int) -> Copy | None:
    """``count`` bytes at ``offset`` of the smallest of the variables ``names`` they fit in
    (None: none is that large); an odd ``offset`` comes from an odd host offset."""
    declared = {n: h.fixtures[n].size for n in names}
    fits = [n for n in declared if declared[n] >= count + offset]
    if count < 1 or offset < 0 or not fits:
        return None
    return Copy(min(fits, key=lambda n: declared[n]), count, offset, offset & 1)


def size_plan(h: Harness, names: Sequence[str]) -> list[Copy]:
    """The copies of a clause test, smallest first: for each threshold T, T - 1 bytes at
    offset 1, T at offset 0 and T + 1 at offset 3, each into the smallest of the variables
    ``names`` it fits in; then the whole of the largest of them and all of it but its first
    byte."""
    top = largest(h, names)
    wanted = [(t + d, o) for t in THRESHOLDS for d, o in ((-1, 1), (0, 0), (1, 3))]
    wanted += [(top, 0), (top - 1, 1)]
    plan: dict[tuple[int, int], Copy] = {}
    for count, offset in wanted:
        c = fitting(h, names, count, offset)
        if c is not None:
            plan.setdefault((count, offset), c)
    return sorted(plan.values(), key=lambda c: (c.count, c.offset))


def host_memory(h: Harness, memory: str, size: int) -> tuple[HostBuffer, int]:
    """At least ``size`` bytes of ``memory`` host memory (``MEMORIES``), as (buffer, offset
    of its first byte to use).  "registered": a malloc buffer page-locked with
    aclrtHostRegisterV2 from its first page boundary, over whole pages (the
    registration's alignment); the caller checks the backend declares it.  A registration
    that fails is charged to PINNED-REGISTERED."""
    if memory == "pinned":
        return h.pinned(size), 0
    if memory == "pageable":
        return h.pageable(size), 0
    if memory != "registered":
        raise ValueError(f"host memory is one of {MEMORIES}, not {memory!r}")
    pages = (size + PAGE - 1) // PAGE
    buf = h.pageable((pages + 1) * PAGE)
    start = ((buf.address + PAGE - 1) & ~(PAGE - 1)) - buf.address
    r = h.call("host_register", ptr=buf.at(start), size=pages * PAGE)
    if not r.ok:
        h.fail(
            "PINNED-REGISTERED",
            f"aclrtHostRegisterV2 of {pages} pages ({pages * PAGE} bytes), 4 KiB aligned, "
            f"failed with {r.code}",
        )
    return buf, start


def overwrite_source(h: Harness, src: HostBuffer, at: int, count: int, tag: int) -> None:
    """The host writes new bytes (``ops.pattern(tag)`` and ``tag + 1``) over the source of a
    copy of ``count`` bytes from ``at``, right after the call: ``SPOT`` bytes at each end,
    or all of it when it is short."""
    if count <= 2 * SPOT:
        h.write(src, at, ops.pattern(tag, count))
        return
    h.write(src, at, ops.pattern(tag, SPOT))
    h.write(src, at + count - SPOT, ops.pattern(tag + 1, SPOT))


def read_around(h: Harness, c: Copy) -> bytes:
    """Read back (aclrtMemcpyFromSymbol, judged) the bytes ``c`` wrote and one byte either
    side where the variable has them; returns the bytes ``c`` wrote."""
    size = ops.size(h, c.var)
    lo = max(0, c.offset - 1)
    hi = min(size, c.offset + c.count + 1)
    got = h.observe(c.var, offset=lo, count=hi - lo)
    return got[c.offset - lo : c.offset - lo + c.count]


def read_tail(h: Harness, c: Copy) -> None:
    """Read back (judged) the last byte ``c`` wrote and the byte after it, if any: where a
    copy that drops its tail, wraps its length or has not run shows, for two bytes."""
    end = c.offset + c.count
    h.observe(c.var, offset=end - 1, count=min(2, ops.size(h, c.var) - end + 1))
