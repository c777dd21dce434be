"""The segment map of one variable: candidates per byte range, cost by cuts not size."""

from __future__ import annotations

import numpy as np

from acl_conformance.reference_impl.judgement import Judgement
from acl_conformance.reference_impl.memory import INITIAL
from acl_conformance.reference_impl.memory import UNKNOWN
from acl_conformance.reference_impl.memory import VarMemory
from acl_conformance.reference_impl.memory import Write
from acl_conformance.reference_impl.order import Order
from acl_conformance.reference_impl.outcome import SUCCESS
from acl_conformance.reference_impl.outcome import AllowedAnswers
from acl_conformance.reference_impl.outcome import Alternative

COPIED = AllowedAnswers((Alternative(SUCCESS, None, None, "a copy"),))


def arr(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=np.uint8)


def setup(size: int = 16) -> tuple[Order, VarMemory]:
    return Order(), VarMemory(size, arr(bytes((100 + i) % 256 for i in range(size))))


def write(order: Order, q, offset: int, data: bytes, wid: int = 1) -> Write:
    call = Judgement(wid, 0, "memcpy_to_symbol_async", {}, f"w{wid}", COPIED)
    return Write(wid, call, order.enqueue(q), offset, len(data), arr(data), "pinned")


def test_untouched_variable_is_one_segment_of_initial_contents() -> None:
    _o, vm = setup(1 << 20)
    assert vm.segment_count() == 1
    assert list(vm.segments()) == [(0, 1 << 20, (INITIAL,))]
    assert vm.check(0, vm.initial.copy(), lambda w: True) == []


def test_a_write_cuts_at_most_two_segments() -> None:
    order, vm = setup()
    q = order.new_queue()
    w = write(order, q, 4, b"\x01\x02\x03\x04")
    vm.add(w)
    assert [(a, b, len(c)) for a, b, c in vm.segments()] == [(0, 4, 1), (4, 8, 2), (8, 16, 1)]


def test_pending_write_allows_old_or_new_per_byte() -> None:
    order, vm = setup()
    q = order.new_queue()
    vm.add(write(order, q, 4, b"\x01\x02\x03\x04"))
    obs = bytearray(vm.initial.tobytes())
    obs[4], obs[6] = 1, 3  # half of the copy has happened: copies are not atomic
    assert vm.check(0, arr(bytes(obs)), lambda w: True) == []
    obs[5] = 0xEE  # a value neither the write nor the initial contents hold
    (m,) = vm.check(0, arr(bytes(obs)), lambda w: True)
    assert (m.lo, m.hi, m.observed) == (5, 6, b"\xee")


def test_done_write_hides_initial_and_earlier_writes_of_its_stream() -> None:
    order, vm = setup()
    q = order.new_queue()
    w1 = write(order, q, 0, b"\xaa" * 8, 1)
    w2 = write(order, q, 4, b"\xbb" * 8, 2)
    vm.add(w1)
    vm.add(w2)
    order.complete(dict(q.frontier))
    vm.prune(0, 16, lambda w: order.is_done(w.task))
    expect = b"\xaa" * 4 + b"\xbb" * 8 + vm.initial.tobytes()[12:]
    assert vm.check(0, arr(expect), lambda w: True) == []
    stale = b"\xaa" * 8 + b"\xbb" * 4 + vm.initial.tobytes()[12:]
    (m,) = vm.check(0, arr(stale), lambda w: True)
    assert (m.lo, m.hi) == (4, 8)
    assert w1 in vm.retired


def test_unordered_writes_both_stay_candidates() -> None:
    order, vm = setup()
    a, b = order.new_queue(), order.new_queue()
    wa, wb = write(order, a, 0, b"\x01" * 4, 1), write(order, b, 0, b"\x02" * 4, 2)
    vm.add(wa)
    vm.add(wb)
    order.complete(dict(a.frontier))
    order.complete(dict(b.frontier))
    vm.prune(0, 4, lambda w: order.is_done(w.task))
    for obs in (b"\x01" * 4, b"\x02" * 4, b"\x01\x02\x02\x01"):
        assert vm.check(0, arr(obs), lambda w: True) == []
    assert vm.check(0, arr(bytes(vm.initial[:4])), lambda w: True) != []  # a done write must show


def test_invisible_candidates_are_excluded() -> None:
    order, vm = setup()
    q = order.new_queue()
    vm.add(write(order, q, 0, b"\x09" * 4))
    assert vm.check(0, arr(b"\x09" * 4), lambda w: False) != []
    assert vm.check(0, arr(bytes(vm.initial[:4])), lambda w: False) == []


def test_alternatives_are_judged_per_byte() -> None:
    order, vm = setup()
    q = order.new_queue()
    w = write(order, q, 0, b"\x01\x01\x01\x01")
    w.alternatives.append((1, arr(b"\x05\x05")))
    vm.add(w)
    assert vm.check(0, arr(b"\x01\x05\x01\x01"), lambda x: True) == []
    assert vm.check(0, arr(b"\x01\x05\x05\x01"), lambda x: True) == []
    (m,) = vm.check(0, arr(b"\x05\x01\x01\x01"), lambda x: True)
    assert (m.lo, m.hi) == (0, 1)


def test_merge_keeps_the_map_small() -> None:
    order, vm = setup(4096)
    q = order.new_queue()
    for i in range(200):
        vm.add(write(order, q, (i * 13) % 4000, bytes([i % 256]) * 64, i))
    assert vm.segment_count() > 100
    order.complete(dict(q.frontier))
    vm.prune(0, 4096, lambda w: order.is_done(w.task))
    # after a sync only the last write at each byte is left; equal neighbours merge
    assert vm.segment_count() <= 2 * 200 + 1
    assert all(len(c) == 1 for _a, _b, c in vm.segments())


def test_forget_and_snapshot() -> None:
    order, vm = setup()
    q = order.new_queue()
    vm.add(write(order, q, 2, b"\x07\x07"))
    snap = vm.snapshot(0, 8)
    vm.forget(None)
    assert list(vm.segments()) == [(0, 16, (UNKNOWN,))]
    assert vm.check(0, arr(b"\xff" * 16), lambda w: True) == []
    rebuilt = VarMemory.from_segments(16, vm.initial, snap)
    assert [a for a, _b, _c in rebuilt.segments()] == [0, 2, 4, 8]
    vm.forget(arr(b"\x00" * 16))
    assert vm.check(0, arr(b"\x00" * 16), lambda w: True) == []
    assert vm.check(0, arr(b"\x01" * 16), lambda w: True) != []
