"""Scenarios from real callers: the flows of CANN's own samples, as clause tests.

CANN's device-variable samples (hicann/runtime, example/2_advanced_features/kernel/):
``9_device_symbol_io`` writes a variable from page-locked memory, does more work on
the same stream, synchronises and reads it back twice (synchronously into a stack
array, asynchronously into page-locked memory); ``5_fdtd_stencil`` checks the size
and writes the variable synchronously from a constant array before any other work.
And what a compatibility layer gets wrong: an address that is not a variable must be
rejected by every one of the six symbol APIs, never served from a shadow buffer.
"""

from __future__ import annotations

import pytest

from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.harness.harness import Harness

VAR = "g_arr256"


@pytest.mark.requirement(
    "GETSYMBOL-ADDRESS",
    "GETSYMBOL-SIZE",
    "SYMBOL-SIZE-AS-DECLARED",
    "KIND-ACCEPTED",
    "STREAM-FIFO",
    "FROMSYMBOL-BYTES",
    "PINNED-COMPLETE-AFTER-SYNC",
)
def test_device_symbol_io_sample(harness: Harness) -> None:
    h = harness
    address = h.call("get_symbol_address", symbol=ops.symbol(h, VAR))
    assert address.ok and address["dev_ptr"] != 0
    size = h.call("get_symbol_size", symbol=ops.symbol(h, VAR))
    assert size.ok
    n = int(size["size"])
    host_in, host_out = h.pinned(n, ops.pattern(300, n)), h.pinned(n, bytes(n))
    s = h.stream()
    assert ops.to_symbol_async(h, VAR, host_in, count=n, offset=0, stream=s).ok
    # more work on the same stream, which changes the variable in place (the sample's
    # kernel): a second copy over part of it
    part = h.pinned(n // 2, ops.pattern(301, n // 2))
    assert ops.to_symbol_async(h, VAR, part, count=n // 2, offset=n // 4, stream=s).ok
    assert ops.sync(h, s).ok
    expect = bytearray(ops.pattern(300, n))
    expect[n // 4 : n // 4 + n // 2] = ops.pattern(301, n // 2)
    stack = h.pageable(n, bytes(n))  # a stack array: pageable, dstMax = sizeof
    assert ops.from_symbol(h, stack, VAR, count=n, dst_max=n).ok
    assert ops.from_symbol_async(h, host_out, VAR, count=n, stream=s).ok
    assert ops.sync(h, s).ok
    assert h.read(stack) == h.read(host_out) == bytes(expect)


@pytest.mark.requirement("GETSYMBOL-SIZE", "SYMBOL-SIZE-AS-DECLARED", "TOSYMBOL-SYNC")
def test_fdtd_stencil_sample(fresh_harness: Harness) -> None:
    h = fresh_harness
    var = "g_struct24"
    size = h.call("get_symbol_size", symbol=ops.symbol(h, var))
    assert size.ok and size["size"] == ops.size(h, var)
    n = int(size["size"])
    coefficients = h.pageable(n, ops.pattern(302, n))  # a constant array on the host
    assert ops.to_symbol(h, var, coefficients, count=n).ok  # before any stream work
    assert h.observe(var) == ops.pattern(302, n)


SIX = [
    "get_symbol_address",
    "get_symbol_size",
    "memcpy_to_symbol",
    "memcpy_to_symbol_async",
    "memcpy_from_symbol",
    "memcpy_from_symbol_async",
]


@pytest.mark.requirement("SYMBOL-UNREGISTERED", "GETSYMBOL-ADDRESS", "GETSYMBOL-SIZE")
@pytest.mark.parametrize("call", SIX)
def test_every_symbol_api_rejects_an_address_that_is_no_variable(
    harness: Harness, call: str
) -> None:
    """A host array that looks like a variable (its size, its bytes) is no variable: a
    layer that falls back to a shadow buffer for unknown addresses turns the rejection
    into a success.  Nothing is written, on the device or on the host."""
    h = harness
    n = ops.size(h, VAR)
    h.observe(VAR)
    lookalike = h.pageable(n, h.observe(VAR))
    # dstMax above count (the buffer has spare bytes): the read's one defect is its symbol
    m = n + 64
    buf = h.pinned(m, ops.pattern(303, m))
    if call in ("get_symbol_address", "get_symbol_size"):
        args: dict[str, object] = {"symbol": lookalike.address}
    elif call.startswith("memcpy_to"):
        args = dict(symbol=lookalike.address, src=buf.address, count=n, offset=0, kind=ops.H2D)
    else:
        args = dict(
            dst=buf.address, dst_max=m, symbol=lookalike.address, count=n, offset=0, kind=ops.D2H
        )
    if call.endswith("_async"):
        args["stream"] = h.any_stream()
    assert not h.call(call, **args).ok
    ops.sync_device(h)
    assert h.read(lookalike) == h.observe(VAR)
    assert h.read(buf) == ops.pattern(303, m)
