"""The C double's device-like variants, each checked for what it does (and each would fail
these tests if it did nothing): ``setup-ms:<N>``, ``frees-wait``, ``host-funcs-serial`` and
``pageable-staged``, all four in the preset ``device-like[:N]``.

One build, ``device-like:20``, serves every test here (the whole suite against it is in
test_cann_suite.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest
from cann_agent_support import D2H
from cann_agent_support import H2D
from cann_agent_support import fixture
from cann_agent_support import run_c_program

from acl_conformance.adapters.cann import CannAdapter
from acl_conformance.adapters.cann import build

DEVICE_LIKE = "device-like:20"
SETUP_S = 0.020
DELAY = 0.3
"""Seconds before a timer opens a gate (the checks are causal: what returned before it)."""


@pytest.fixture
def device_like() -> Iterator[CannAdapter]:
    """A cann adapter on the double built with every device-like behaviour."""
    a = CannAdapter(double=DEVICE_LIKE)
    try:
        yield a
    finally:
        a.close()


def test_device_like_variant_names() -> None:
    everything = (
        "ACL_DOUBLE_FREES_WAIT",
        "ACL_DOUBLE_HOST_FUNCS_SERIAL",
        "ACL_DOUBLE_PAGEABLE_STAGED",
    )
    assert build.double_defines("device-like") == (*everything, "ACL_DOUBLE_SETUP_MS=200")
    assert build.double_defines("device-like:0020") == (*everything, "ACL_DOUBLE_SETUP_MS=20")
    assert build.double_defines("device-like:20,setup-ms:20,frees-wait") == (
        *everything,
        "ACL_DOUBLE_SETUP_MS=20",
    )
    assert build.double_defines("setup-ms:5, pageable-staged") == (
        "ACL_DOUBLE_PAGEABLE_STAGED",
        "ACL_DOUBLE_SETUP_MS=5",
    )
    with pytest.raises(ValueError, match="gives ACL_DOUBLE_SETUP_MS two different values"):
        build.double_defines("device-like,setup-ms:5")
    for bad in ("setup-ms", "setup-ms:x", "setup-ms:60001", "frees-wait:1", "device-like:-1"):
        with pytest.raises(ValueError, match=r"setup-ms:<N>, frees-wait, .*device-like\[:<N>\]"):
            build.double_defines(bad)


def test_version_names_the_device_behaviours(device_like: CannAdapter) -> None:
    code, version = device_like.get_version_str()
    assert code == 0 and version.endswith(" device-like-20"), version


def test_setup_ms_makes_every_context_creation_take_that_long(device_like: CannAdapter) -> None:
    """The first aclrtSetDevice of a device in the process, and the first after its last
    reset, create a context: each takes at least setup-ms."""
    a = device_like
    for _ in range(2):
        t0 = time.monotonic()
        assert a.set_device(1) == 0
        assert time.monotonic() - t0 >= SETUP_S
        assert a.reset_device(1) == 0


def _returns_only_after_opened(a: CannAdapter, gate: int, call: Callable[[], int]) -> int:
    """``call()``'s code; it must not return before a timer opens ``gate``."""
    opened = threading.Event()

    def open_it() -> None:
        opened.set()  # set before the gate opens: a call that returns after sees it
        a.open_gate(gate)

    timer = threading.Timer(DELAY, open_it)
    timer.start()
    try:
        code = call()
        assert opened.is_set(), "returned while the gate was still closed"
    finally:
        timer.join()
    return code


@pytest.mark.parametrize("call", ["free_host", "host_unregister"])
@pytest.mark.parametrize("device", [0, 1])
def test_frees_wait_for_every_stream_of_every_device(
    device_like: CannAdapter, call: str, device: int
) -> None:
    """aclrtFreeHost and aclrtHostUnregister do not return while a gate (a host function)
    is closed on a stream of any device with a live context."""
    a = device_like
    assert a.set_device(device) == 0
    _, s = a.create_stream()
    _, g = a.launch_gate(s)
    assert a.set_device(0) == 0
    if call == "free_host":
        _, ptr = a.malloc_host(64)
        assert _returns_only_after_opened(a, g, lambda: a.free_host(ptr)) == 0
    else:
        _, page = a.malloc_pageable(2 * 4096)
        ptr = (page + 4095) & ~4095
        assert a.host_register(ptr, 4096) == 0
        assert _returns_only_after_opened(a, g, lambda: a.host_unregister(ptr)) == 0


def _symbol_bytes(a: CannAdapter, name: str, count: int) -> bytes:
    _, buf = a.malloc_pageable(count)
    assert a.memcpy_from_symbol(buf, count, fixture(a, name), count, 0, D2H) == 0
    return bytes(a.read_host(buf, count)[1])


def test_pageable_staged_lands_the_source_as_at_the_call(device_like: CannAdapter) -> None:
    """A pageable copy waits behind a closed gate; meanwhile another host thread changes its
    source, then opens the gate: the variable gets the source as at the call (the correct
    double, which drains and then copies, lands the changed bytes)."""
    a = device_like
    assert a.set_device(0) == 0
    _, s = a.create_stream()
    _, src = a.malloc_pageable(8)
    symbol = fixture(a, "g_u64")
    landed = b""
    # The change must come after the call has staged its source, which nothing outside
    # the double shows: wait a while first, and longer if the write came too early.
    for attempt, wait in enumerate((0.2, 0.5, 1.0)):
        before, after = bytes([0x10 + attempt]) * 8, bytes([0x20 + attempt]) * 8
        assert a.write_host(src, before) == 0
        _, g = a.launch_gate(s)
        codes: list[int] = []

        def copy(codes: list[int] = codes) -> None:
            a.set_device(0)  # this host thread's context (the device's, shared)
            codes.append(a.memcpy_to_symbol_async(symbol, src, 8, 0, H2D, s))

        t = threading.Thread(target=copy)
        t.start()
        time.sleep(wait)
        assert a.write_host(src, after) == 0
        assert a.open_gate(g) == 0
        t.join(30)
        assert not t.is_alive() and codes == [0]
        landed = _symbol_bytes(a, "g_u64", 8)
        assert landed in (before, after)
        if landed == before:
            break
    assert landed == before, "the copy landed the source as changed after the call"


HOST_FUNCS_PROGRAM = r"""
#include <acl/acl.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int a_started, a_release, b_ran, c_ran;

static void blocking(void *arg)  /* runs on stream 1 until main releases it */
{
    (void)arg;
    pthread_mutex_lock(&mu);
    a_started = 1;
    pthread_cond_broadcast(&cv);
    while (!a_release) pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
}

static void mark(void *arg)
{
    pthread_mutex_lock(&mu);
    ++*(int *)arg;
    pthread_mutex_unlock(&mu);
}

int main(void)
{
    aclrtStream s1, s2, s3;
    if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) return 1;
    if (aclrtCreateStream(&s1) != 0 || aclrtCreateStream(&s2) != 0) return 2;
    if (aclrtLaunchHostFunc(s1, blocking, NULL) != 0) return 3;
    pthread_mutex_lock(&mu);
    while (!a_started) pthread_cond_wait(&cv, &mu);  /* the blocking function runs */
    pthread_mutex_unlock(&mu);
    if (aclrtLaunchHostFunc(s2, mark, &b_ran) != 0) return 4;
    aclError held = aclrtSynchronizeStreamWithTimeout(s2, 200);
    pthread_mutex_lock(&mu);
    int b_early = b_ran;
    pthread_mutex_unlock(&mu);
    /* another device's host functions are not held */
    if (aclrtSetDevice(1) != 0 || aclrtCreateStream(&s3) != 0) return 5;
    if (aclrtLaunchHostFunc(s3, mark, &c_ran) != 0) return 6;
    aclError other = aclrtSynchronizeStreamWithTimeout(s3, 10000);
    if (aclrtSetDevice(0) != 0) return 7;
    pthread_mutex_lock(&mu);
    a_release = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    aclError after = aclrtSynchronizeStream(s2);
    printf("held=%d b_early=%d other=%d c_ran=%d after=%d b_ran=%d\n", (int)held, b_early,
           (int)other, c_ran, (int)after, b_ran);
    return 0;
}
"""


def test_host_funcs_serial_a_blocked_host_function_holds_the_other_streams(
    tmp_path: Path,
) -> None:
    """While a host function blocks on stream 1, a host function on stream 2 of the same
    device does not run (its stream does not complete within a time limit: 507046); one on
    another device runs; once the first returns, the second runs.  A C program against the
    double, so that it knows the first host function is running before it goes on."""
    lib = build.build_double(build.double_defines(DEVICE_LIKE))
    out = run_c_program(tmp_path, HOST_FUNCS_PROGRAM, lib, extra=["-pthread"])
    assert out.returncode == 0, out
    assert out.stdout.split() == [
        "held=507046",
        "b_early=0",
        "other=0",
        "c_ran=1",
        "after=0",
        "b_ran=1",
    ], out.stdout
