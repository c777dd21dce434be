"""Per-call round trip through the conformance agent, against the in-process simulator.

The agent is built against the bundled C double (so its calls cost next to
nothing and what is measured is the protocol: a request line to the agent, its
reading thread, the executor thread of the calling thread, the answer back).
Three cheap calls are timed, each for many rounds; the figure per call is the
median over rounds of (round time / calls per round).

For scale it also times a bare pipe round trip through ``cat`` (``pipe_us``), the
floor of any agent on the machine.

Run: ``python bench/agent_overhead.py [--calls N] [--rounds R]``; the last line is
``agent_us: <median microseconds per call through the agent>``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable

from acl_conformance.adapters.base import Adapter
from acl_conformance.adapters.cann import CannAdapter
from acl_conformance.adapters.simulator import Simulator


def _calls(a: Adapter) -> list[Callable[[], object]]:
    """A stream query, a device query and an 8-byte synchronous symbol copy."""
    a.init(None)
    a.set_device(0)
    code, stream = a.create_stream()
    assert code == 0
    code, buf = a.malloc_pageable(64)
    assert code == 0
    var = next(f for f in a.fixtures() if f.name == "g_u64")
    return [
        lambda: a.stream_query(stream),
        a.get_device,
        lambda: a.memcpy_to_symbol(var.address, buf, 8, 0, 1),
    ]


def per_call_us(a: Adapter, calls: int, rounds: int) -> float:
    """Median over rounds of the mean time of one call, in microseconds."""
    fns = _calls(a)
    for fn in fns:  # warm up
        for _ in range(200):
            fn()
    samples = []
    for _ in range(rounds):
        for fn in fns:
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            samples.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(samples)


def pipe_round_trip_us(rounds: int = 15, calls: int = 500) -> float:
    """The floor on this machine: one line to ``cat`` and back, in microseconds (median)."""
    proc = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert proc.stdin is not None and proc.stdout is not None
    fi, fo = proc.stdin.fileno(), proc.stdout.fileno()
    samples = []
    try:
        for _ in range(rounds):
            t0 = time.perf_counter()
            for _ in range(calls):
                os.write(fi, b"1 1 stream_query 0\n")
                os.read(fo, 4096)
            samples.append((time.perf_counter() - t0) / calls * 1e6)
    finally:
        proc.stdin.close()
        proc.wait()
    return statistics.median(samples)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=500, help="calls per round and kind (500)")
    p.add_argument("--rounds", type=int, default=15, help="rounds (15)")
    args = p.parse_args()
    sim = Simulator()
    try:
        sim_us = per_call_us(sim, args.calls, args.rounds)
    finally:
        sim.close()
    agent = CannAdapter(double="1")
    try:
        agent_us = per_call_us(agent, args.calls, args.rounds)
        version = agent.get_version_str()[1]
    finally:
        agent.close()
    print(f"backend: {version}")
    print(
        f"calls: stream_query, get_device, memcpy_to_symbol(8 bytes); {args.calls} per round, {args.rounds} rounds"
    )
    if shutil.which("cat"):
        print(f"pipe_us: {pipe_round_trip_us():.1f}  (a bare pipe round trip through cat)")
    print(f"sim_us: {sim_us:.1f}")
    print(f"overhead_us: {agent_us - sim_us:.1f}")
    print(f"agent_us: {agent_us:.1f}")


if __name__ == "__main__":
    main()
