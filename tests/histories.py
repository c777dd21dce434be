"""Hypothesis strategies for host histories run by the legal executor."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from legal_executor import BUF_SIZE
from legal_executor import SOURCES
from legal_executor import VARS

Op = tuple[Any, ...]


@st.composite
def copy_args(draw: st.DrawFn) -> tuple[str, int, int, str, int]:
    # g_a twice as often: overlapping copies are where ordering shows
    var = draw(st.sampled_from(["g_a", *sorted(VARS)]))
    size = VARS[var]
    offset = draw(st.integers(0, size - 1))
    count = draw(st.integers(1, size - offset))
    buf = draw(st.sampled_from(SOURCES))
    src_off = draw(st.integers(0, BUF_SIZE - count))
    return var, offset, count, buf, src_off


@st.composite
def mutation(draw: st.DrawFn) -> Op:
    buf = draw(st.sampled_from(SOURCES))
    offset = draw(st.integers(0, BUF_SIZE - 1))
    data = draw(st.binary(min_size=1, max_size=BUF_SIZE - offset))
    return ("mutate", buf, offset, data)


@st.composite
def histories(draw: st.DrawFn, max_ops: int = 30) -> tuple[int, list[Op]]:
    """Any history over 1-3 streams: copies, events, gates, syncs, mutation in windows."""
    streams = draw(st.integers(1, 3))
    stream = st.integers(0, streams - 1)
    ops: list[Op] = []
    gates = 0
    for _ in range(draw(st.integers(1, max_ops))):
        kind = draw(
            st.sampled_from(
                [
                    "write",
                    "write",
                    "write",
                    "write",
                    "sync_write",
                    "mutate",
                    "mutate",
                    "sync",
                    "sync_device",
                    "sync_timeout",
                    "query",
                    "record",
                    "wait",
                    "sync_event",
                    "gate",
                    "open_gate",
                    "register",
                    "unregister",
                    "observe",
                    "observe",
                    "read_async",
                ]
            )
        )
        if kind == "write":
            ops.append(("write", draw(stream), *draw(copy_args())))
        elif kind == "sync_write":
            ops.append(("sync_write", *draw(copy_args())))
        elif kind == "mutate":
            ops.append(draw(mutation()))
        elif kind in ("sync", "sync_timeout", "query"):
            ops.append((kind, draw(stream)))
        elif kind == "sync_device":
            ops.append(("sync_device",))
        elif kind == "record":
            ops.append(("record", draw(st.integers(0, 1)), draw(stream)))
        elif kind == "wait":
            ops.append(("wait", draw(stream), draw(st.integers(0, 1))))
        elif kind == "sync_event":
            ops.append(("sync_event", draw(st.integers(0, 1))))
        elif kind == "gate":
            gates += 1
            ops.append(("gate", draw(stream)))
        elif kind == "open_gate" and gates:
            ops.append(("open_gate", draw(st.integers(1, gates))))
        elif kind in ("register", "unregister"):
            ops.append((kind, draw(st.sampled_from(["pageable0", "pageable1"]))))
        elif kind == "observe":
            ops.append(("observe", draw(st.sampled_from(sorted(VARS)))))
        elif kind == "read_async":
            var = draw(st.sampled_from(sorted(VARS)))
            offset = draw(st.integers(0, VARS[var] - 1))
            ops.append(
                ("read_async", draw(stream), var, offset, draw(st.integers(1, VARS[var] - offset)))
            )
    return streams, ops


@st.composite
def unique_histories(draw: st.DrawFn, max_writes: int = 12) -> tuple[int, list[Op]]:
    """Histories whose final contents are the same under every legal schedule.

    Whenever a write goes to another stream than the one before, the earlier
    stream is ordered before it (a sync, or an event record + wait); a source is
    only changed when nothing is pending (right after a device sync).
    """
    streams = draw(st.integers(1, 3))
    ops: list[Op] = []
    prev: int | None = None
    for _ in range(draw(st.integers(1, max_writes))):
        choice = draw(
            st.sampled_from(["write", "write", "write", "sync_write", "mutate", "register"])
        )
        if choice == "mutate":
            ops.append(("sync_device",))
            ops.append(draw(mutation()))
            prev = None
            continue
        if choice == "register":
            ops.append(("sync_device",))
            ops.append(
                (
                    draw(st.sampled_from(["register", "unregister"])),
                    draw(st.sampled_from(["pageable0", "pageable1"])),
                )
            )
            prev = None
            continue
        s = -1 if choice == "sync_write" else draw(st.integers(0, streams - 1))
        if prev is not None and prev != s:
            if prev >= 0 and s >= 0 and draw(st.booleans()):
                e = draw(st.integers(0, 1))
                ops += [("record", e, prev), ("wait", s, e)]
            elif prev >= 0:
                ops.append(("sync", prev))
        if s < 0:
            ops.append(("sync_write", *draw(copy_args())))
        else:
            ops.append(("write", s, *draw(copy_args())))
        prev = s
    return streams, ops
