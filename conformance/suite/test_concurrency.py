"""Several host threads, each with its own stream and variables, copying at once."""

from __future__ import annotations

import threading

import pytest

from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.harness.failure import ConformanceFailure
from acl_conformance.conformance.harness.failure import Declined
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.suite.suite_helpers import MEMORIES
from acl_conformance.conformance.suite.suite_helpers import pattern_buffer

VARS = ["g_u64", "g_struct24", "g_arr256", "g_arr4k"]
ROUNDS = 25


@pytest.mark.requirement("CONCURRENCY-THREADS", "EFFECT-BYTES")
@pytest.mark.needs(threads=True)
@pytest.mark.parametrize("memory", MEMORIES)
def test_threads_with_their_own_streams(harness: Harness, memory: str) -> None:
    h = harness
    h.baseline(*VARS)
    errors: list[BaseException] = []
    start = threading.Barrier(len(VARS))

    def worker(k: int, var: str) -> None:
        try:
            with h.unclassified():
                work(k, var)
        except ConformanceFailure as exc:
            errors.append(
                h.classify(
                    exc.under(
                        "CONCURRENCY-THREADS", f"with {len(VARS)} host threads copying at once"
                    )
                )
            )
        except BaseException as exc:
            errors.append(exc)

    def work(k: int, var: str) -> None:
        h.call("set_device", device_id=0)
        n = ops.size(h, var)
        bufs = [pattern_buffer(h, memory, 80 + k * ROUNDS + r, n) for r in range(2)]
        s = h.stream()
        start.wait(timeout=30)
        for r in range(ROUNDS):
            # each round a unique pattern, so a lost or mixed write shows
            h.write(bufs[r % 2], 0, ops.pattern(80 + k * ROUNDS + r, n))
            ops.to_symbol_async(h, var, bufs[r % 2], count=n, stream=s)
            ops.sync(h, s)
        assert h.observe(var) == ops.pattern(80 + k * ROUNDS + ROUNDS - 1, n)

    threads = [threading.Thread(target=worker, args=(k, v)) for k, v in enumerate(VARS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a host thread did not finish"
    if not errors:
        h.passed("CONCURRENCY-THREADS")
    if errors:  # a failure before a declined step (see Declined)
        raise next((e for e in errors if not isinstance(e, Declined)), errors[0])
