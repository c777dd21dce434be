"""How the model's cost grows with the variable's size (it must not).

The same history runs against a 4 KiB and a 64 MiB variable, side by side in
one process: 1,000 overlapping pinned copies (1-64 bytes, inside one 4 KiB
window) issued on two streams, a stream synchronisation every ten copies, a
source changed inside pending windows now and then, and at the end one
observation of the whole variable.  The timed part is the model's work:
issuing, settling, pruning at the syncs, and judging every byte of the final
read.  The bytes judged are what an eager backend would leave (computed
outside the timed part); the run fails if the model rejects them.

Last line: ``ratio: <64 MiB time / 4 KiB time>`` (target <= 2).
"""

from __future__ import annotations

import random
import statistics
import sys
import time

import numpy as np

from acl_conformance.reference_impl import CallRecord
from acl_conformance.reference_impl import Capabilities
from acl_conformance.reference_impl import Model
from acl_conformance.reference_impl import Violation
from acl_conformance.reference_impl import judge
from acl_conformance.reference_impl.observation import observe

WRITES = 1000
WINDOW = 4096
SRC = 0x7F00_0000_0000
SRC_SIZE = 4096
STREAMS = (0x100, 0x200)
REPEATS = 5


def history(seed: int) -> list[tuple]:
    rng = random.Random(seed)
    ops: list[tuple] = []
    for i in range(WRITES):
        n = rng.randint(1, 64)
        ops.append(
            (
                "copy",
                rng.randrange(WINDOW - n + 1),
                n,
                rng.randrange(SRC_SIZE - n + 1),
                STREAMS[i % 2],
            )
        )
        if rng.random() < 0.05:
            ops.append(("mutate", rng.randrange(SRC_SIZE - 16), rng.randbytes(16)))
        if i % 10 == 9:
            ops.append(("sync", STREAMS[i % 2]))
    ops.append(("sync", STREAMS[0]))
    ops.append(("sync", STREAMS[1]))
    return ops


def expected(
    size: int, base: int, initial: np.ndarray, ops: list[tuple], src0: bytes
) -> np.ndarray:
    """What an eager backend leaves: each copy runs at the call."""
    dev = initial.copy()
    src = bytearray(src0)
    for op in ops:
        if op[0] == "copy":
            _, off, n, so, _s = op
            dev[base + off : base + off + n] = np.frombuffer(
                bytes(src[so : so + n]), dtype=np.uint8
            )
        elif op[0] == "mutate":
            _, so, data = op
            src[so : so + len(data)] = data
    return dev


def call(m: Model, name: str, outputs: dict | None = None, **args: object) -> list[Violation]:
    """``name(**args)`` answered ACL_SUCCESS (and ``outputs``), judged by the model."""
    return judge(m, CallRecord(0, name, dict(args), 0, dict(outputs or {}))).violations


def run(
    size: int, base: int, ops: list[tuple], initial: np.ndarray, src0: bytes, final: np.ndarray
) -> float:
    m = Model("cann", Capabilities(devices=1))
    sym = m.add_symbol("g_var", 0x5555_0000_0000, size)
    observe(m, 0, sym, 0, initial.tobytes(), None)  # what the variable holds at the start
    call(m, "set_device", device_id=0)
    for s in STREAMS:
        call(m, "create_stream", outputs={"stream": s})
    call(m, "malloc_host", size=SRC_SIZE, outputs={"host_ptr": SRC, "contents": src0})
    observed = final.tobytes()
    start = time.perf_counter()
    bad = []
    for op in ops:
        if op[0] == "copy":
            _, off, n, so, s = op
            bad += call(
                m,
                "memcpy_to_symbol_async",
                symbol=0x5555_0000_0000,
                src=SRC + so,
                count=n,
                offset=base + off,
                kind=1,
                stream=s,
            )
        elif op[0] == "mutate":
            bad += call(m, "write_host", dst=SRC + op[1], data=op[2])
        else:
            bad += call(m, "synchronize_stream", stream=op[1])
    bad += observe(m, 0, sym, 0, observed, None)
    elapsed = time.perf_counter() - start
    if bad:
        sys.exit("the model rejected a legal result:\n" + bad[0].render())
    return elapsed


def main() -> None:
    ops = history(1)
    src0 = random.Random(2).randbytes(SRC_SIZE)
    cases = {}
    for label, size in (("4KiB", 4096), ("64MiB", 64 << 20)):
        rng = np.random.default_rng(3)
        initial = rng.integers(0, 256, size, dtype=np.uint8)
        base = 0 if size == WINDOW else size // 2  # the window lies inside the big variable
        final = expected(size, base, initial, ops, src0)
        cases[label] = (size, base, initial, final)
    times: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(REPEATS):  # interleaved, so both see the same machine state
        for label, (size, base, initial, final) in cases.items():
            times[label].append(run(size, base, ops, initial, src0, final))
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in times.items():
        print(
            f"{k}: median {med[k] * 1e3:.1f} ms over {len(v)} runs (min {min(v) * 1e3:.1f}, max {max(v) * 1e3:.1f})"
        )
    print(
        f"writes: {WRITES}, syncs: {sum(1 for op in ops if op[0] == 'sync')}, mutations: {sum(1 for op in ops if op[0] == 'mutate')}"
    )
    print(f"ratio: {med['64MiB'] / med['4KiB']:.2f}")


if __name__ == "__main__":
    main()
