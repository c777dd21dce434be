"""What the clause tests build again and again, built once.

The fixture variables by size, pinned or pageable host memory filled with a pattern, the
first page boundary of a buffer, a stream held by a gate that a timer opens, a copy made
complete by a stream synchronisation, defects applied to valid arguments, a stream's
status.  Every helper goes through the harness (every call is judged by the model); what
a test checks stays in the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from acl_conformance.conformance.authoring import defects
from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.harness.harness import HostBuffer
from acl_conformance.conformance.session.context import FIXTURES_NEEDED
from acl_conformance.reference_impl.constants import StreamStatus
from acl_conformance.reference_impl.record import CallRecord

ALL_VARS: tuple[str, ...] = FIXTURES_NEEDED
"""Every fixture variable the suite copies into, smallest first."""
LARGE_VARS = ("g_arr1m", "g_arr16m")
"""The variables of a MiB and more (a copy of the whole of one is slow)."""
SMALL_VARS = tuple(v for v in ALL_VARS if v not in LARGE_VARS)
"""The variables of 4 KiB and less: one byte, words, structs, arrays."""

MEMORIES = ("pinned", "pageable")
"""The two memories a host source or destination may be in: page-locked
(aclrtMallocHost) or pageable (malloc)."""
PAGE = 4096
"""The page size aclrtHostRegisterV2 aligns to."""


def host_buffer(h: Harness, memory: str, size: int, fill: bytes | None = None) -> HostBuffer:
    """``size`` bytes of ``memory`` host memory ("pinned": aclrtMallocHost, "pageable":
    malloc) holding ``fill`` (None: bytes no other buffer of the test holds)."""
    if memory not in MEMORIES:
        raise ValueError(f"host memory is one of {MEMORIES}, not {memory!r}")
    return h.pinned(size, fill) if memory == "pinned" else h.pageable(size, fill)


def pattern_buffer(h: Harness, memory: str, tag: int, size: int) -> HostBuffer:
    """``size`` bytes of ``memory`` host memory holding ``ops.pattern(tag, size)``."""
    return host_buffer(h, memory, size, ops.pattern(tag, size))


def first_page(buf: HostBuffer) -> int:
    """The offset in ``buf`` of its first byte on a page boundary."""
    return ((buf.address + PAGE - 1) & ~(PAGE - 1)) - buf.address


@contextmanager
def gate_opened_later(
    h: Harness, delay: float, stream: int | None = None
) -> Iterator[tuple[int, int]]:
    """A stream (a new one unless ``stream`` is given) held by a closed gate that a timer
    opens after ``delay`` seconds, as ``(stream, gate)``: a backend whose call wrongly
    waits for the stream returns then, instead of hanging the run.  When the block ends
    the timer is stopped and the gate opened, if the timer did not already."""
    s = h.stream() if stream is None else stream
    g = h.close_stream_gate(s)
    timer = h.open_later(g, delay)
    yield s, g
    h.settle_timer(timer, g)


def returned_while_closed(result: CallRecord, gate: int) -> bool:
    """Did the call return while ``gate`` was still closed (before any timer opened it)?"""
    return gate not in result.gates_open


def copy_and_synchronize(
    h: Harness,
    var: str,
    src: HostBuffer,
    count: int,
    offset: int = 0,
    kind: int = ops.H2D,
    src_offset: int = 0,
) -> int:
    """aclrtMemcpyToSymbolAsync on a new stream, then aclrtSynchronizeStream on it: the
    copy is complete when this returns.  Returns the stream."""
    s = h.stream()
    ops.to_symbol_async(
        h, var, src, count=count, offset=offset, kind=kind, stream=s, src_offset=src_offset
    )
    ops.sync(h, s)
    return s


def apply_defects(args: dict[str, Any], site: defects.Site, *names: str) -> dict[str, Any]:
    """``args`` with each named defect of the table (conformance/authoring/defects.py) applied in turn."""
    for name in names:
        args = defects.BY_NAME[name].apply(args, site)
    return args


def stream_status(h: Harness, stream: int) -> int:
    """What aclrtStreamQuery reports for ``stream`` (an aclrtStreamStatus value)."""
    return int(h.call("stream_query", stream=stream)["status"])


def assert_held(h: Harness, stream: int, gate: int) -> None:
    """aclrtStreamQuery says NOT_READY for ``stream``, held by ``gate``, while the gate is
    closed.  The suite opens its gates itself when a call takes long (the harness's
    RELEASE_AFTER: a loaded machine, or a backend that legally waits for more than it
    must); COMPLETE is then legal too, and the model, told of the opening, judged it."""
    status = stream_status(h, stream)
    if not h.gate_is_open(gate):
        assert status == StreamStatus.ACL_STREAM_STATUS_NOT_READY, (
            f"aclrtStreamQuery on a stream held by a closed gate returned status {status}"
        )
