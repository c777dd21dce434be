"""The mutants of adapters/variants/sync_pending_mutants.py are the bug they claim: with N
tasks pending or fewer the synchronising call waits as it must; with more it returns
success at once.  (That the suite catches them is tests/test_variants.py's business.)"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from simulator_streams_support import new_event
from simulator_streams_support import new_stream
from test_simulator_support import H2D
from test_simulator_support import OpenLater
from test_simulator_support import bounded
from test_simulator_support import gate
from test_simulator_support import host
from test_simulator_support import read_var
from test_simulator_support import sym

from acl_conformance.adapters.variants import sync_pending_mutants as sp
from acl_conformance.adapters.variants.catalogue import BY_NAME
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INVALID_HANDLE

DELAY = 0.2
"""Seconds until the gate opens: a call that waits returns after it."""

CallIt = Callable[[sp.MutantBase, int, int], int]
CALLS: dict[str, tuple[type[sp.MutantBase], CallIt]] = {
    "stream": (sp.StreamSyncEarlyWhenDeep, lambda sim, s, e: sim.synchronize_stream(s)),
    "device": (sp.DeviceSyncEarlyWhenDeep, lambda sim, s, e: sim.synchronize_device()),
    "event": (sp.EventSyncEarlyWhenDeep, lambda sim, s, e: sim.synchronize_event(e)),
    "timeout": (
        sp.TimeoutSyncEarlyWhenDeep,
        lambda sim, s, e: sim.synchronize_stream_with_timeout(s, 10_000),
    ),
    "destroy": (sp.DestroyEarlyWhenDeep, lambda sim, s, e: sim.destroy_stream(s)),
}


@pytest.mark.parametrize("how", list(CALLS))
@pytest.mark.parametrize("deep", [False, True], ids=["n-pending", "n+1-pending"])
def test_returns_at_once_only_past_the_depth(how: str, deep: bool) -> None:
    n = 4
    cls, call = CALLS[how]
    with sp.deeper_than(cls, n)() as sim:
        assert sim.set_device(0) == 0
        s = new_stream(sim)
        data = bytes(range(1, 65))
        src = host(sim, data)
        g = gate(sim, s)
        copies = n if deep else n - 1  # with the gate: n + 1 or n tasks pending
        if how == "event":
            copies -= 1  # the record is a task too
        for _ in range(copies):
            assert sim.memcpy_to_symbol_async(sym(sim, "g_arr256"), src, 64, 0, H2D, s) == 0
        e = 0
        if how == "event":
            e = new_event(sim)
            assert sim.record_event(e, s) == 0
        opener = OpenLater(sim, g, DELAY)
        code, returned = bounded(sim, lambda: call(sim, s, e))
        assert code == 0
        if deep:
            assert opener.opened_at is None, f"{how} waited for the gate with {n + 1} pending"
            opener.cancel()
            assert sim.open_gate(g) == 0
        else:
            assert opener.opened_at is not None and returned >= opener.opened_at, (
                f"{how} did not wait with {n} pending"
            )
        if how == "destroy":  # the handle is gone at the return
            assert sim.synchronize_stream(s) == ACL_ERROR_RT_INVALID_HANDLE
        # The tasks still run (after the return, when deep: the gate is open now).
        deadline = time.monotonic() + 5
        while read_var(sim, "g_arr256", 0, 64) != data and time.monotonic() < deadline:
            time.sleep(0.01)
        assert read_var(sim, "g_arr256", 0, 64) == data


def test_the_catalogue_names_its_depth() -> None:
    for name, n in [("sync-early-past-2", 2), ("sync-early-past-8", 8), ("sync-early-past-32", 32)]:
        v = BY_NAME[name]
        assert f"more than {n} tasks" in v.description, v.description
        sim = v.build()
        try:
            assert isinstance(sim, sp.StreamSyncEarlyWhenDeep)
            depth = sim.LIMIT
            assert depth == n
        finally:
            sim.close()
