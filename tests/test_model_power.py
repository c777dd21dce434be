"""Power: where the outcome is unique, the model rejects every wrong result.

For histories whose final contents every legal schedule agrees on (everything
synchronised, no source changed while a copy is pending), a backend that
flips a byte, drops a write, writes at the wrong offset or runs two writes of
one stream in the wrong order produces different bytes; the model must reject
each such result.
"""

from __future__ import annotations

from histories import unique_histories
from hypothesis import assume
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from legal_executor import VARS
from legal_executor import Fault
from legal_executor import run_history


def writes_in(ops: list) -> int:
    return sum(1 for op in ops if op[0] in ("write", "sync_write"))


def swappable(ops: list) -> list[int]:
    """Write numbers k whose next operation is a pinned write to an overlapping range of the
    same stream: a backend running them in the wrong order leaves different bytes."""
    out = []
    k = -1
    for op, nxt in zip(ops, [*ops[1:], None], strict=True):
        if op[0] in ("write", "sync_write"):
            k += 1
        if op[0] != "write" or nxt is None or nxt[0] != "write" or nxt[1] != op[1]:
            continue
        (_, _, var, off, n, buf, _), (_, _, var2, off2, n2, buf2, _) = op, nxt
        pinned = all(b.startswith("pinned") for b in (buf, buf2))
        if pinned and var == var2 and off < off2 + n2 and off2 < off + n:
            out.append(k)
    return out


@st.composite
def faults(draw: st.DrawFn, ops: list) -> Fault:
    n_writes = writes_in(ops)
    kinds = ["drop", "shift", "flip"] + (["swap", "swap"] if swappable(ops) else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "swap":
        return Fault("swap", write=draw(st.sampled_from(swappable(ops))))
    if kind == "flip":
        var = draw(st.sampled_from(sorted(VARS)))
        return Fault("flip", var=var, index=draw(st.integers(0, VARS[var] - 1)))
    return Fault(
        kind, write=draw(st.integers(0, n_writes - 1)), delta=draw(st.sampled_from([-2, -1, 1, 2]))
    )


@settings(max_examples=250, deadline=None)
@given(
    history=unique_histories(),
    seeds=st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)),
    data=st.data(),
)
def test_model_rejects_wrong_results(
    history: tuple[int, list], seeds: tuple[int, int], data: st.DataObject
) -> None:
    streams, ops = history
    n = writes_in(ops)
    assume(n > 0)
    correct = run_history(ops, seeds[0], streams, "spec")
    assert not correct.violations, "\n".join(v.render() for v in correct.violations)
    fault = data.draw(faults(ops))
    wrong = run_history(ops, seeds[1], streams, "spec", fault)
    if wrong.final != correct.final:
        assert wrong.violations, f"{fault} changed the result and the model accepted it"
    if fault.kind == "flip":
        assert wrong.final != correct.final and wrong.violations


@settings(max_examples=100, deadline=None)
@given(
    history=unique_histories(),
    seeds=st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)),
)
def test_unique_histories_are_unique(history: tuple[int, list], seeds: tuple[int, int]) -> None:
    """The generator's promise, checked with the executor alone: two schedules, same bytes."""
    streams, ops = history
    a = run_history(ops, seeds[0], streams, "cann")
    b = run_history(ops, seeds[1], streams, "cann")
    assert a.final == b.final
    assert not a.violations and not b.violations


@settings(max_examples=100, deadline=None)
@given(
    history=unique_histories(max_writes=6),
    pair=st.tuples(st.integers(0, 7), st.integers(1, 8), st.integers(0, 7), st.integers(1, 8)),
    seeds=st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)),
)
def test_model_rejects_same_stream_writes_in_the_wrong_order(
    history: tuple[int, list], pair: tuple[int, int, int, int], seeds: tuple[int, int]
) -> None:
    streams, ops = history
    off1, n1, off2, n2 = pair
    n1, n2 = min(n1, 8 - off1), min(n2, 8 - off2)
    assume(off1 < off2 + n2 and off2 < off1 + n1)  # the two copies overlap
    first = writes_in(ops)
    ops = [
        *ops,
        ("sync_device",),
        ("write", 0, "g_a", off1, n1, "pinned0", 0),
        ("write", 0, "g_a", off2, n2, "pinned1", 0),
    ]
    correct = run_history(ops, seeds[0], streams, "cann")
    assert not correct.violations
    wrong = run_history(ops, seeds[1], streams, "cann", Fault("swap", write=first))
    assume(wrong.final != correct.final)  # a mutated source can make the two copies equal
    assert wrong.violations
    assert {v.requirement for v in wrong.violations} == {"STREAM-FIFO"}
