"""Invalid arguments, in one table: what each defect does to a call of the symbol APIs.

Every clause test and machine that makes a call wrong on purpose takes the defect from
here.  A defect's values come from what the backend declares (the variable's size,
its invalid handle, a stream it destroyed, host memory that is no variable), never
from sizes the suite assumes, so that the same defect means the same thing on every
variable of every backend.

Numeric defects sit at the boundaries a backend's arithmetic gets wrong: one byte past
the end, a sum that wraps ``size_t``, a sum or a value that only looks small once cut
to 32 bits, values past ``2^31`` that turn negative in signed arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.harness.harness import HostBuffer
from acl_conformance.reference_impl.constants import SIZE_MAX

from . import ops

TO_ASYNC = "memcpy_to_symbol_async"
TO_SYNC = "memcpy_to_symbol"
FROM_SYNC = "memcpy_from_symbol"
FROM_ASYNC = "memcpy_from_symbol_async"
TO = frozenset({TO_ASYNC, TO_SYNC})
FROM = frozenset({FROM_SYNC, FROM_ASYNC})
COPIES = TO | FROM
STREAMED = frozenset({TO_ASYNC, FROM_ASYNC})

U32 = 2**32
I32 = 2**31
I64 = 2**63


@dataclass(frozen=True)
class Site:
    """What a defect needs to know of the call it breaks."""

    h: Harness
    var: str
    size: int
    """The variable's declared size."""
    count: int
    """The call's valid count."""
    host: int
    """A host address that is no variable (to pass as a symbol)."""


Change = Callable[[dict[str, Any], Site], None]


@dataclass(frozen=True)
class Defect:
    """One way to make a call of the symbol APIs wrong."""

    name: str
    argument: str
    """The argument it breaks (symbol, src, dst, count, offset, kind, stream, dst_max)."""
    calls: frozenset[str]
    change: Change
    checked_by: str
    """The requirement of the To-symbol copies that demands the rejection."""

    def applies_to(self, call: str) -> bool:
        return call in self.calls

    def apply(self, args: dict[str, Any], site: Site) -> dict[str, Any]:
        out = dict(args)
        self.change(out, site)
        return out


def _set(**values: Any) -> Change:
    def change(args: dict[str, Any], _site: Site) -> None:
        args.update(values)

    return change


def _offset(f: Callable[[Site], int]) -> Change:
    def change(args: dict[str, Any], site: Site) -> None:
        args["offset"] = f(site)

    return change


def _count_offset(f: Callable[[Site], tuple[int, int]]) -> Change:
    def change(args: dict[str, Any], site: Site) -> None:
        args["count"], args["offset"] = f(site)

    return change


def _interior(args: dict[str, Any], site: Site) -> None:
    # Into the middle of the variable; a 1-byte variable has no interior: past its start.
    args["symbol"] = ops.symbol(site.h, site.var) + max(1, site.size // 2)


def _unregistered(args: dict[str, Any], site: Site) -> None:
    args["symbol"] = site.host


def _destroyed(args: dict[str, Any], site: Site) -> None:
    args["stream"] = ops.destroyed_stream(site.h)


def _garbage(args: dict[str, Any], site: Site) -> None:
    args["stream"] = site.h.adapter.invalid_handle()


def _null_buffer(args: dict[str, Any], _site: Site) -> None:
    args["src" if "src" in args else "dst"] = 0


DEFECTS: tuple[Defect, ...] = (
    # kinds
    Defect("kind D2H", "kind", TO, _set(kind=ops.D2H), "KIND-REJECTED"),
    Defect("kind H2D", "kind", FROM, _set(kind=ops.H2D), "FROMSYMBOL-KINDS"),
    Defect("kind H2H", "kind", COPIES, _set(kind=0), "KIND-REJECTED"),
    Defect("kind D2D", "kind", COPIES, _set(kind=3), "KIND-REJECTED"),
    Defect("kind 7", "kind", COPIES, _set(kind=7), "KIND-REJECTED"),
    Defect("kind 8", "kind", COPIES, _set(kind=8), "KIND-OUT-OF-ENUM"),
    Defect("kind -1", "kind", COPIES, _set(kind=-1), "KIND-OUT-OF-ENUM"),
    Defect("kind 2^31-1", "kind", COPIES, _set(kind=I32 - 1), "KIND-OUT-OF-ENUM"),
    Defect("kind -2^31", "kind", COPIES, _set(kind=-I32), "KIND-OUT-OF-ENUM"),
    # bounds: past the end
    Defect(
        "one past the end",
        "offset",
        COPIES,
        _offset(lambda s: s.size - s.count + 1),
        "BOUNDS-PAST-END",
    ),
    Defect(
        "offset at the end",
        "offset",
        COPIES,
        _count_offset(lambda s: (1, s.size)),
        "BOUNDS-PAST-END",
    ),
    Defect(
        "count one too many",
        "count",
        COPIES,
        _count_offset(lambda s: (s.size + 1, 0)),
        "BOUNDS-PAST-END",
    ),
    Defect(
        "offset past 2^31",
        "offset",
        COPIES,
        _offset(lambda s: I32 + s.size),
        "BOUNDS-PAST-END",
    ),
    # bounds: a sum or a value that looks small once cut to 32 bits, or signed
    Defect(
        "offset 2^32",
        "offset",
        COPIES,
        _offset(lambda s: U32),  # cut to 32 bits: 0, in bounds
        "BOUNDS-PAST-END",
    ),
    Defect(
        "offset 2^32 past the start",
        "offset",
        COPIES,
        _offset(lambda s: U32 + s.size - s.count),  # cut: the very end, in bounds
        "BOUNDS-PAST-END",
    ),
    Defect(
        "count 2^32 + count",
        "count",
        COPIES,
        _count_offset(lambda s: (U32 + s.count, 0)),  # cut to 32 bits: a valid count
        "BOUNDS-PAST-END",
    ),
    Defect(
        "offset 2^63",
        "offset",
        COPIES,
        _offset(lambda s: I64),  # negative as a signed 64-bit value
        "BOUNDS-PAST-END",
    ),
    Defect(
        "offset SIZE_MAX",
        "offset",
        COPIES,
        _offset(lambda s: SIZE_MAX),  # -1 as a signed value
        "BOUNDS-OVERFLOW",
    ),
    # bounds: the sum wraps size_t
    Defect(
        "sum wraps to 0",
        "offset",
        COPIES,
        _offset(lambda s: SIZE_MAX - s.count + 1),
        "BOUNDS-OVERFLOW",
    ),
    Defect(
        "sum wraps into bounds",
        "offset",
        COPIES,
        # The sum wraps to 1: a backend that adds in size_t and compares accepts it.
        _count_offset(lambda s: (max(2, s.count), SIZE_MAX - max(2, s.count) + 2)),
        "BOUNDS-OVERFLOW",
    ),
    Defect(
        "count 2^63 + offset 2^63",
        "count",
        COPIES,
        _count_offset(lambda s: (I64, I64)),
        "BOUNDS-OVERFLOW",
    ),
    # the symbol
    Defect("NULL symbol", "symbol", COPIES, _set(symbol=0), "SYMBOL-NULL"),
    Defect("interior symbol", "symbol", COPIES, _interior, "SYMBOL-INTERIOR"),
    Defect("host address as symbol", "symbol", COPIES, _unregistered, "SYMBOL-UNREGISTERED"),
    # host memory
    Defect("NULL host buffer", "src", COPIES, _null_buffer, "SRC-NULL"),
    # the stream
    Defect("destroyed stream", "stream", STREAMED, _destroyed, "STREAM-INVALID-HANDLE"),
    Defect("garbage stream", "stream", STREAMED, _garbage, "STREAM-INVALID-HANDLE"),
    # dstMax (reads only)
    Defect(
        "dstMax one short",
        "dst_max",
        FROM,
        lambda a, s: a.update(dst_max=s.count - 1),
        "FROMSYMBOL-DSTMAX",
    ),
    Defect("dstMax 0", "dst_max", FROM, _set(dst_max=0), "FROMSYMBOL-DSTMAX"),
)

BY_NAME: Mapping[str, Defect] = {d.name: d for d in DEFECTS}


def for_call(call: str, names: Iterable[str] | None = None) -> list[Defect]:
    """The defects that apply to ``call`` (only those named, when names are given)."""
    wanted = set(names) if names is not None else None
    return [d for d in DEFECTS if d.applies_to(call) and (wanted is None or d.name in wanted)]


PAIR = " & "
"""Joins the names of two defects made in one call (``pairs``)."""


def pairs(call: str) -> list[str]:
    """Every pair of defects of ``call`` on two different arguments, each named
    ``"a & b"`` (``apply_named`` makes both): with several checks failing at once, the
    code pins the order of checks down (CHECK-ORDER under cann; any error under spec)."""
    ds = for_call(call)
    return [
        f"{a.name}{PAIR}{b.name}"
        for i, a in enumerate(ds)
        for b in ds[i + 1 :]
        if a.argument != b.argument
    ]


def apply_named(args: dict[str, Any], site: Site, name: str) -> dict[str, Any]:
    """``args`` with the defect ``name`` made, or both of a pair ``"a & b"``."""
    for part in name.split(PAIR):
        args = BY_NAME[part].apply(args, site)
    return args


def valid_args(
    h: Harness,
    call: str,
    var: str,
    buf: HostBuffer,
    count: int,
    offset: int = 0,
    stream: int | None = None,
) -> dict[str, Any]:
    """The arguments of a valid ``call`` of ``count`` bytes at ``offset`` of ``var``, with
    ``buf`` as the host side."""
    args: dict[str, Any] = {"symbol": ops.symbol(h, var), "count": count, "offset": offset}
    if call in TO:
        args.update(src=buf.address, kind=ops.H2D)
    else:
        args.update(dst=buf.address, dst_max=buf.size, kind=ops.D2H)
    if call in STREAMED:
        args["stream"] = h.any_stream() if stream is None else stream
    return args


def site(h: Harness, var: str, count: int, host: int) -> Site:
    return Site(h, var, ops.size(h, var), count, host)


# -- valid calls at the boundaries -------------------------------------------------------
def boundary_ranges(size: int) -> list[tuple[int, int]]:
    """Valid (count, offset) pairs at the edges a backend's size arithmetic gets wrong, for
    a variable of ``size`` bytes: single bytes at both ends, word sizes aligned and not,
    the whole variable and all but a byte of it, page sizes and one either side of them,
    counts that are no multiple of 4 KiB or 64 KiB and span several pages."""
    out: dict[tuple[int, int], None] = {}

    def add(count: int, offset: int) -> None:
        if count >= 1 and offset >= 0 and offset + count <= size:
            out[(count, offset)] = None

    add(1, 0)
    add(1, size - 1)
    add(size, 0)
    add(size - 1, 1)
    add(size - 1, 0)
    for w in (2, 4, 8, 16):
        add(w, 0)
        add(w, size - w)
        add(w, 1)
        add(w, 3)
    for edge in (4096, 65536):
        for d in (-1, 0, 1):
            add(edge + d, 0)
            add(edge + d, size - (edge + d))
            add(edge + d, 1)
    for n in (3 * 4096 + 100, 2 * 65536 + 4095):
        add(n, 7)
    if size > 3:
        add(size - 3, 3)  # the whole variable but its first bytes, at an odd offset
    return list(out)
