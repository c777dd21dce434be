"""Symbols and devices: the symbol is a registered variable's host address; one instance per device."""

from __future__ import annotations

import threading

import pytest

from acl_conformance.conformance.authoring import defects
from acl_conformance.conformance.authoring import device_reset
from acl_conformance.conformance.authoring import device_switch
from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.harness.harness import HostBuffer
from acl_conformance.conformance.suite.suite_helpers import ALL_VARS
from acl_conformance.conformance.suite.suite_helpers import MEMORIES
from acl_conformance.conformance.suite.suite_helpers import apply_defects
from acl_conformance.conformance.suite.suite_helpers import copy_and_synchronize
from acl_conformance.conformance.suite.suite_helpers import pattern_buffer

VAR = "g_arr256"


@pytest.mark.requirement("SYMBOL-NULL", "HYGIENE-NO-WRITE")
@pytest.mark.parametrize("memory", MEMORIES)
def test_null_symbol(harness: Harness, memory: str) -> None:
    h = harness
    src = pattern_buffer(h, memory, 60, 16)
    assert not ops.to_symbol_async(h, VAR, src, count=16, sym=0).ok
    ops.sync_device(h)
    h.observe(VAR)


@pytest.mark.requirement("SYMBOL-UNREGISTERED", "HYGIENE-NO-WRITE")
def test_unregistered_host_address(harness: Harness) -> None:
    h = harness
    src = h.pageable(16, ops.pattern(61, 16))
    local = h.pageable(256, ops.pattern(62, 256))  # an ordinary host variable, not __gm__
    assert not ops.to_symbol_async(h, VAR, src, count=16, sym=local.address).ok
    assert h.read(local) == ops.pattern(62, 256)  # and it is not written either
    h.observe(VAR)


@pytest.mark.requirement("SYMBOL-INTERIOR", "HYGIENE-NO-WRITE")
@pytest.mark.parametrize(
    "var,k",
    [("g_arr256", 1), ("g_arr256", 128), ("g_arr256", 255), ("g_u64", 4), ("g_arr4k", 4095)],
)
def test_interior_pointer_is_not_a_symbol(harness: Harness, var: str, k: int) -> None:
    h = harness
    src = h.pageable(8, ops.pattern(63, 8))
    assert not ops.to_symbol_async(h, var, src, count=1, sym=ops.symbol(h, var) + k).ok
    h.observe(var)


@pytest.mark.requirement("SRC-NULL", "HYGIENE-NO-WRITE")
def test_null_source(harness: Harness) -> None:
    h = harness
    s = h.stream()
    assert not ops.to_symbol_async(h, VAR, ops.NULL, count=16, stream=s).ok
    ops.sync(h, s)
    h.observe(VAR)


ONE_PER_ARGUMENT = (
    "NULL symbol",
    "host address as symbol",
    "NULL host buffer",
    "kind D2H",
    "one past the end",
    "sum wraps to 0",
    "garbage stream",
)
"""A defect of each argument (and each check of CANN's order): pairs of them pin the
order of checks down (cann), or must simply be rejected (spec)."""
PAIRS = [
    (a, b)
    for i, a in enumerate(ONE_PER_ARGUMENT)
    for b in ONE_PER_ARGUMENT[i + 1 :]
    if defects.BY_NAME[a].argument != defects.BY_NAME[b].argument
    and {a, b} != {"one past the end", "sum wraps to 0"}
]


@pytest.mark.requirement("CHECK-ORDER")
@pytest.mark.parametrize(
    "wrong",
    [*PAIRS, ("NULL symbol", "kind D2H", "one past the end", "garbage stream")],
    ids=lambda w: "+".join(w),
)
def test_several_wrong_arguments(harness: Harness, wrong: tuple[str, ...]) -> None:
    """cann: the first failing check in CANN's order gives the code; spec: any error."""
    h = harness
    src = h.pageable(64, ops.pattern(64, 64))
    site = defects.site(h, VAR, 16, src.address)
    args = defects.valid_args(h, defects.TO_ASYNC, VAR, src, 16, stream=h.stream())
    args = apply_defects(args, site, *wrong)
    assert not h.call("memcpy_to_symbol_async", **args).ok


@pytest.mark.requirement("DEVICE-INSTANCE", "DEVICE-CURRENT")
@pytest.mark.needs(devices=2)
@pytest.mark.parametrize("device", [0, 1])
def test_each_device_has_its_own_instance(harness: Harness, device: int) -> None:
    h = harness
    other = 1 - device
    h.baseline(VAR, "g_u32", device=other)
    with h.on_device(device):
        src = h.pageable(64, ops.pattern(65 + device, 64))
        s = h.stream()
        ops.to_symbol_async(h, VAR, src, count=64, stream=s)
        ops.to_symbol_async(h, "g_u32", src, count=4, stream=s)
        ops.sync(h, s)
        assert h.observe(VAR)[:64] == ops.pattern(65 + device, 64)
    h.observe(VAR, device=other)
    h.observe("g_u32", device=other)


@pytest.mark.requirement("DEVICE-INSTANCE", "GETSYMBOL-ADDRESS")
@pytest.mark.needs(devices=2)
def test_address_is_fetched_per_device(harness: Harness) -> None:
    h = harness
    for d in (0, 1):
        with h.on_device(d):
            r = h.call("get_symbol_address", symbol=ops.symbol(h, VAR))
            assert r.ok and r["dev_ptr"] != 0
            again = h.call("get_symbol_address", symbol=ops.symbol(h, VAR))
            assert again["dev_ptr"] == r["dev_ptr"]


def _copy_known_complete(
    h: Harness, how: str, src: HostBuffer, count: int, offset: int = 0
) -> None:
    """A copy into VAR that is complete when this returns, by one of two promises: a
    page-locked copy and aclrtSynchronizeStream, or the synchronous aclrtMemcpyToSymbol.
    Two ways, so that a backend that breaks one promise still gets DEVICE-RESET-CONTENTS
    decided through the other (a test resting on a broken promise is declined)."""
    if how == "synchronous":
        ops.to_symbol(h, VAR, src, count=count, offset=offset, src_offset=offset)
        return
    copy_and_synchronize(h, VAR, src, count=count, offset=offset, src_offset=offset)


COMPLETE_BY = ["pinned and a stream sync", "synchronous"]


@pytest.mark.requirement("DEVICE-RESET-CONTENTS", "DEVICE-CALLS")
@pytest.mark.parametrize("how", COMPLETE_BY)
def test_contents_after_a_device_reset(fresh_harness: Harness, how: str) -> None:
    h = fresh_harness
    src = h.pinned(128, ops.pattern(67, 128))
    _copy_known_complete(h, how, src, 64)
    h.call("reset_device", device_id=0)
    h.call("set_device", device_id=0)
    h.observe(VAR)  # anything is accepted, and becomes the new starting point
    h.write(src, 64, ops.pattern(68, 64))
    _copy_known_complete(
        h, how, src, 64, offset=64
    )  # on a new stream: the reset destroyed the first
    assert h.observe(VAR)[64:128] == ops.pattern(68, 64)


@pytest.mark.requirement("DEVICE-INSTANCE", "DEVICE-CURRENT", "EFFECT-NEIGHBOURS")
@pytest.mark.needs(devices=2)
def test_every_variable_on_every_device(harness: Harness) -> None:
    """Each variable, the large ones included, has an instance per device: a write of
    its own to each on each device, then every instance read back on every device."""
    h = harness
    devices = range(min(h.caps.devices, 4))
    for d in devices:
        h.baseline(*ALL_VARS, device=d)
    for d in devices:
        with h.on_device(d):
            s = h.stream()
            for k, var in enumerate(ALL_VARS):
                n = ops.size(h, var)
                src = h.pinned(n, ops.pattern(400 + 16 * d + k, n))
                ops.to_symbol_async(h, var, src, count=n, stream=s)
            ops.sync(h, s)
    for d in devices:
        for k, var in enumerate(ALL_VARS):
            assert h.observe(var, device=d) == ops.pattern(400 + 16 * d + k, ops.size(h, var))


@pytest.mark.requirement("DEVICE-RESET-CONTENTS", "DEVICE-INSTANCE", "DEVICE-CALLS")
@pytest.mark.needs(devices=2)
@pytest.mark.parametrize("how", COMPLETE_BY)
@pytest.mark.parametrize("device", [0, 1])
def test_a_reset_leaves_the_other_devices_alone(
    fresh_harness: Harness, device: int, how: str
) -> None:
    h = fresh_harness
    n = ops.size(h, VAR)
    for d in (0, 1):  # one aclrtSetDevice each: one reset ends the context
        h.call("set_device", device_id=d)
        _copy_known_complete(h, how, h.pinned(n, ops.pattern(420 + d, n)), n)
    h.call("reset_device", device_id=device)
    h.call("set_device", device_id=device)
    h.observe(VAR, device=device)  # anything is accepted, and becomes the new start
    other = 1 - device
    assert h.observe(VAR, device=other) == ops.pattern(420 + other, n)


@pytest.mark.requirement("DEVICE-CURRENT", "DEVICE-CALLS", "CONCURRENCY-THREADS")
@pytest.mark.needs(devices=2, threads=True)
def test_the_current_device_is_per_host_thread(harness: Harness) -> None:
    """Two host threads on two devices at once: neither sees the other's choice (ACL's
    context is per thread)."""
    h = harness
    n = ops.size(h, VAR)
    h.baseline(VAR, device=0)
    h.baseline(VAR, device=1)
    ready = threading.Barrier(2)
    errors: list[BaseException] = []

    def host(device: int) -> None:
        try:
            h.call("set_device", device_id=device)
            ready.wait(timeout=30)  # both devices set before either thread goes on
            for _ in range(3):
                assert h.call("get_device")["device_id"] == device
                src = h.pageable(n, ops.pattern(430 + device, n))
                ops.to_symbol(h, VAR, src, count=n)
                ready.wait(timeout=30)
        except BaseException as exc:
            errors.append(exc)
            ready.abort()

    threads = [threading.Thread(target=host, args=(d,)) for d in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    real = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)]
    if real or errors:
        raise (real or errors)[0]
    for d in (0, 1):
        assert h.observe(VAR, device=d) == ops.pattern(430 + d, n)


@pytest.mark.requirement("STREAM-NULL-DEFAULT", "DEVICE-CURRENT")
@pytest.mark.needs(devices=2, default_stream=True)
def test_null_stream_across_device_switches(harness: Harness) -> None:
    """One host thread sets device 0, 1, then 0 again and uses NULL at each step
    (device_switch.py): NULL is the current device's default stream every time."""
    for d in set(device_switch.PATH):
        harness.baseline(VAR, device=d)
    device_switch.null_across_switches(harness, VAR, 440)


@pytest.mark.requirement("DEVICE-INSTANCE", "DEVICE-RESET-CONTENTS", "DEVICE-CALLS")
@pytest.mark.needs(devices=2)
@pytest.mark.parametrize("device", [0, 1])
def test_a_reset_among_devices_that_hold_instances(harness: Harness, device: int) -> None:
    """Bytes of their own to several variables on every device (up to three); ``device``
    reset and set again: the others' instances untouched, its own instances its own
    (conformance/authoring/device_reset.py)."""
    h = harness
    devices = tuple(range(min(h.caps.devices, 3)))
    names = ("g_u8", "g_u32", "g_struct24", "g_arr256")
    device_reset.reset_then_set_again(h, names, devices, device, 700)
