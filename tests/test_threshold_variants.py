"""The mutants of adapters/variants/threshold_mutants.py are the bug they claim, at the size
they claim it: at the threshold a copy is made as the simulator makes it, one byte past it
it is not.  (That the suite catches them is tests/test_variants.py's business.)"""

from __future__ import annotations

import time

import pytest
from simulator_streams_support import new_stream
from test_simulator_support import H2D
from test_simulator_support import OpenLater
from test_simulator_support import bounded
from test_simulator_support import gate
from test_simulator_support import host
from test_simulator_support import read_var
from test_simulator_support import sym

from acl_conformance.adapters.variants import threshold_mutants as tm
from acl_conformance.conformance.authoring.ops import pattern

N = tm.STAGING
VAR = "g_arr1m"


@pytest.mark.parametrize("count", [N, N + 1], ids=["at", "one-past"])
def test_staged_in_order_returns_behind_a_closed_gate_past_the_threshold(count: int) -> None:
    with tm.PageableStagedInOrder() as sim:
        assert sim.set_device(0) == 0
        s = new_stream(sim)
        data = pattern(1, count)
        src = host(sim, data, "pageable")
        g = gate(sim, s)
        opener = OpenLater(sim, g, 0.2)
        code, returned = bounded(
            sim, lambda: sim.memcpy_to_symbol_async(sym(sim, VAR), src, count, 0, H2D, s)
        )
        assert code == 0
        if count == N:
            assert opener.opened_at is not None and returned >= opener.opened_at
            assert read_var(sim, VAR, 0, count) == data  # there at return
            return
        assert opener.opened_at is None, "the staged copy waited for the gate"
        opener.cancel()
        assert sim.open_gate(g) == 0
        assert sim.synchronize_stream(s) == 0  # it keeps its place: the sync waits for it
        assert read_var(sim, VAR, 0, count) == data


def test_staged_out_of_order_lands_after_the_return_and_outside_the_stream() -> None:
    with tm.PageableStagedOutOfOrder() as sim:
        assert sim.set_device(0) == 0
        s = new_stream(sim)
        data = pattern(2, N + 1)
        src = host(sim, data, "pageable")
        at_return = []
        # the staging thread lands 2 ms after the return: seen missing at least once (a
        # loaded machine may delay this thread past it now and then, not twenty times)
        for _ in range(20):
            assert sim.memcpy_to_symbol_async(sym(sim, VAR), src, N + 1, 0, H2D, s) == 0
            at_return.append(read_var(sim, VAR, 0, N + 1) == data)
            deadline = time.monotonic() + 5
            while read_var(sim, VAR, 0, N + 1) != data and time.monotonic() < deadline:
                time.sleep(0.005)
            assert read_var(sim, VAR, 0, N + 1) == data  # it lands
            if not at_return[-1]:
                break
            src = host(sim, data := pattern(3 + len(at_return), N + 1), "pageable")
        assert not all(at_return)
        # at the threshold it is the simulator's copy: there at return
        small = pattern(9, N)
        assert (
            sim.memcpy_to_symbol_async(sym(sim, VAR), host(sim, small, "pageable"), N, 0, H2D, s)
            == 0
        )
        assert read_var(sim, VAR, 0, N) == small


@pytest.mark.parametrize("memory", ["pinned", "registered", "pageable"])
@pytest.mark.parametrize("count", [N, N + 1, 3 * N - 1])
def test_pinned_chunks_lose_the_tail_past_the_threshold(memory: str, count: int) -> None:
    with tm.PinnedChunksDropTheTail() as sim:
        assert sim.set_device(0) == 0
        s = new_stream(sim)
        before = read_var(sim, VAR, 0, count)
        data = pattern(4, count)
        src = host(sim, data, memory)
        assert sim.memcpy_to_symbol_async(sym(sim, VAR), src, count, 0, H2D, s) == 0
        assert sim.synchronize_stream(s) == 0
        kept = count if memory == "pageable" or count % N == 0 else count - count % N
        assert read_var(sim, VAR, 0, count) == data[:kept] + before[kept:]


@pytest.mark.parametrize("count", [(1 << 24) - 1, 1 << 24])
def test_dma_length_wraps_at_2_24(count: int) -> None:
    with tm.DmaLengthWraps() as sim:
        assert sim.set_device(0) == 0
        before = read_var(sim, "g_arr16m")
        data = pattern(5, count)
        src = host(sim, data, "pinned")
        assert sim.memcpy_to_symbol(sym(sim, "g_arr16m"), src, count, 0, H2D) == 0
        expected = before if count == 1 << 24 else data + before[count:]
        assert read_var(sim, "g_arr16m") == expected
