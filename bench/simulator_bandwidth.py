"""Simulator bandwidth: a 64 MiB pinned copy plus synchronize, against numpy copying the same bytes.

Run: ``python bench/simulator_bandwidth.py``.  Prints the medians of several
runs and, as its last line, ``ratio: <simulator bytes/s / numpy bytes/s>``
(target: >= 0.5).  It also prints the median time one 4-byte pinned
aclrtMemcpyToSymbolAsync takes to enqueue, in microseconds (target: <= 20).

The 64 MiB copy needs a variable that large; the simulator declares one for
the bench through its ``extra_fixtures`` option (fixtures are backend-declared).
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from acl_conformance.adapters.simulator import Simulator
from acl_conformance.reference_impl.constants import MemcpyKind

SIZE = 64 << 20
RUNS = 15
ENQUEUES = 5000
H2D = int(MemcpyKind.ACL_MEMCPY_HOST_TO_DEVICE)


def _check(code: int, what: str) -> None:
    if code != 0:
        raise SystemExit(f"{what} failed with aclError {code}")


def copy_seconds(sim: Simulator, symbol: int, src: int) -> tuple[list[float], list[float]]:
    """Wall times of the simulator (64 MiB pinned copy, then synchronize the stream) and of
    numpy copying 64 MiB between two touched arrays, one of each per run, interleaved so
    that both see the same machine load."""
    np_src = np.random.default_rng(1).integers(0, 256, SIZE, dtype=np.uint8)
    np_dst = np.ones(SIZE, dtype=np.uint8)
    sim_times, np_times = [], []
    for run in range(RUNS + 1):
        t0 = time.perf_counter()
        _check(sim.memcpy_to_symbol_async(symbol, src, SIZE, 0, H2D, 0), "copy")
        _check(sim.synchronize_stream(0), "synchronize")
        t1 = time.perf_counter()
        np.copyto(np_dst, np_src)
        t2 = time.perf_counter()
        if run:  # the first run warms up (the worker thread, the caches)
            sim_times.append(t1 - t0)
            np_times.append(t2 - t1)
    return sim_times, np_times


def enqueue_microseconds(sim: Simulator, symbol: int, src: int) -> list[float]:
    """Duration of each of many 4-byte pinned copies (the call only, not the copy)."""
    times = []
    clock = time.perf_counter_ns
    for i in range(ENQUEUES):
        t0 = clock()
        code = sim.memcpy_to_symbol_async(symbol, src, 4, 0, H2D, 0)
        times.append((clock() - t0) / 1000.0)
        _check(code, "4-byte copy")
        if i % 500 == 499:
            _check(sim.synchronize_stream(0), "synchronize")
    _check(sim.synchronize_stream(0), "synchronize")
    return times


def main() -> None:
    with Simulator(devices=1, extra_fixtures=[("g_bench64m", SIZE)]) as sim:
        _check(sim.set_device(0), "set_device")
        symbols = {v.name: v.address for v in sim.fixtures()}
        code, src = sim.malloc_host(SIZE)
        _check(code, "malloc_host")
        payload = np.random.default_rng(2).integers(0, 256, SIZE, dtype=np.uint8).tobytes()
        _check(sim.write_host(src, payload), "write_host")

        sim_times, np_times = copy_seconds(sim, symbols["g_bench64m"], src)
        enqueue = enqueue_microseconds(sim, symbols["g_u32"], src)

        out_code, out = sim.malloc_host(SIZE)
        _check(out_code, "malloc_host")
        d2h = int(MemcpyKind.ACL_MEMCPY_DEVICE_TO_HOST)
        _check(sim.memcpy_from_symbol(out, SIZE, symbols["g_bench64m"], SIZE, 0, d2h), "read back")
        if sim.read_host(out, SIZE)[1] != payload:
            raise SystemExit("the 64 MiB copy delivered wrong bytes")

    sim_s = statistics.median(sim_times)
    np_s = statistics.median(np_times)
    sim_bw = SIZE / sim_s
    np_bw = SIZE / np_s
    print(f"copy_bytes: {SIZE}")
    print(f"runs: {RUNS}")
    print(f"simulator_copy_sync_median_ms: {sim_s * 1e3:.2f}")
    print(f"numpy_copy_median_ms: {np_s * 1e3:.2f}")
    print(f"simulator_GB_per_s: {sim_bw / 1e9:.2f}")
    print(f"numpy_GB_per_s: {np_bw / 1e9:.2f}")
    print(f"enqueue_4B_median_us: {statistics.median(enqueue):.1f}")
    print(f"enqueue_4B_p90_us: {statistics.quantiles(enqueue, n=10)[-1]:.1f}")
    print(f"ratio: {sim_bw / np_bw:.3f}")


if __name__ == "__main__":
    main()
