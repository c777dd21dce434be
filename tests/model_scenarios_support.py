"""What test_model_scenarios.py and test_model_scenarios_effects.py share: helpers, fixtures and case tables."""

from __future__ import annotations

import pytest
from world import PAGEABLE
from world import PINNED
from world import Announced
from world import W
from world import announce
from world import call
from world import initial
from world import make_world
from world import observe_now

H2D = 1


PIN = bytes(range(256)) * 32


"""The pinned buffer's contents (see world.make_world)."""


PAGE = bytes(255 - (i % 256) for i in range(8192))


def init(name: str) -> bytes:
    from world import SYMBOLS

    return initial(name, SYMBOLS[name])


def copy(
    w: W,
    name: str = "g_arr256",
    src: int = PINNED,
    count: int = 16,
    offset: int = 0,
    stream: int | None = None,
    thread: int = 0,
) -> list:
    return call(
        w.model,
        "memcpy_to_symbol_async",
        0,
        thread=thread,
        symbol=w.sym[name],
        src=src,
        count=count,
        offset=offset,
        kind=H2D,
        stream=w.stream if stream is None else stream,
    )


def announce_copy(w: W, src: int = PINNED, offset: int = 0, kind: int = H2D) -> Announced:
    """The model's expectation of a 16-byte aclrtMemcpyToSymbolAsync into g_arr256 on the
    world's stream, to settle with what the backend said."""
    return announce(
        w.model,
        "memcpy_to_symbol_async",
        symbol=w.sym["g_arr256"],
        src=src,
        count=16,
        offset=offset,
        kind=kind,
        stream=w.stream,
    )


def reqs(violations: list) -> set[str | None]:
    return {v.requirement for v in violations}


def after(name: str, offset: int, data: bytes) -> bytes:
    base = bytearray(init(name))
    base[offset : offset + len(data)] = data
    return bytes(base)


@pytest.fixture(params=["spec", "cann"], name="w")
def w_fixture(request: pytest.FixtureRequest) -> W:
    return make_world(request.param)


def observe(w: W, name: str, data: bytes, device: int = 0) -> set[str | None]:
    return reqs(observe_now(w.model, device, name, 0, data))


def _reuse_registered_address(w: W) -> None:
    """Register a page, free its memory without unregistering, allocate again at the same
    address (as malloc does)."""
    w.ok("host_register", ptr=PAGEABLE, size=4096)
    w.ok("free_pageable", ptr=PAGEABLE)
    w.ok("malloc_pageable", size=4096, outputs={"ptr": PAGEABLE, "contents": PAGE[:4096]})


# --- asynchronous reads -------------------------------------------------------------
def read_async(w: W, stream: int, count: int = 16) -> None:
    w.ok("malloc_host", size=4096, outputs={"host_ptr": 0x7E00_0000_0000, "contents": bytes(4096)})
    w.ok(
        "memcpy_from_symbol_async",
        dst=0x7E00_0000_0000,
        dst_max=4096,
        symbol=w.sym["g_arr256"],
        count=count,
        offset=0,
        kind=2,
        stream=stream,
    )
