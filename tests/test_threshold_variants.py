"""The mutants of adapters/variants/threshold_mutants.py are the bug they claim, at the size
they claim it: at the threshold a copy is made as the simulator makes it, one byte past it
it is not.  (That the suite catches them is tests/test_variants.py's business; the DMA
length one, whose targeted run meets a 16 MiB failure of test_bounds.py first, is run
here on test_sizes.py alone.)"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
from acl_conformance.adapters.variants.catalogue import BY_NAME
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


@contextmanager
def address_space_limit(limit: int) -> Iterator[None]:
    """The processes started inside run with at most ``limit`` bytes of address space
    (``ulimit -v``): a failure recorded with too much memory dies of it here, not the
    machine.  This process's own limit is put back after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (limit if hard < 0 else min(limit, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def test_the_sizes_tests_catch_the_dma_length_wrap(tmp_path: Path) -> None:
    """The synchronous copies of test_sizes.py against the variant, under an 8 GB
    address-space limit: a failure cites the requirement the catalogue charges it to
    (under cann; under spec too with ACL_CONFORMANCE_VARIANTS_BOTH=1)."""
    v = BY_NAME["dma-length-wraps-at-2-24"]
    both = os.environ.get("ACL_CONFORMANCE_VARIANTS_BOTH") == "1"
    for profile in ("spec", "cann") if both else ("cann",):
        out = tmp_path / f"{profile}.json"
        cmd = [
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
            "--pyargs", "acl_conformance.conformance.suite.test_sizes",
            "-k", "sync_copy and pinned",
            "--acl-adapter", "acl_conformance.adapters.variants:variant",
            "--acl-adapter-option", f"name={v.name}",
            "--acl-profile", profile, "--acl-results", str(out),
        ]  # fmt: skip
        with address_space_limit(8_000_000_000):
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert out.exists(), p.stdout[-2000:] + p.stderr[-2000:]
        doc = json.loads(out.read_text())
        cited = {f["requirement"] for r in doc["results"] for f in r.get("failures") or []}
        assert v.catches[profile] in cited, (profile, cited, p.stdout[-1000:])
