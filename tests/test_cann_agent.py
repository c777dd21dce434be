"""The cann adapter, its agent and the C double: protocol, every call, codes, crash, hang, options.

The agent is built against the bundled C double (once per session: the build
cache keys each variant by its sources and flags).  The codes of the double are
compared, call by call, with the simulator's: both implement CANN's codes and
order of checks, independently (one in C, one in Python)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from cann_agent_support import D2H
from cann_agent_support import H2D
from cann_agent_support import PROGRAM
from cann_agent_support import _exports
from cann_agent_support import agent_process
from cann_agent_support import fixture
from cann_agent_support import run_c_program

from acl_conformance.adapters.cann import CannAdapter
from acl_conformance.adapters.cann import build
from acl_conformance.adapters.cann.exports import SYMBOL_APIS
from acl_conformance.adapters.simulator.layout import DEFAULT_FIXTURES


@pytest.mark.parametrize("language", ["c", "c++"])
def test_header_and_double_build_a_program(tmp_path: Path, language: str) -> None:
    """A program using <acl/acl.h> (as C reproducers do) compiles, links against the double
    and runs; -Wall -Wextra -Werror."""
    lib = build.build_double(())
    out = run_c_program(tmp_path, PROGRAM, lib, language)
    assert out.returncode == 0 and out.stdout.startswith("ok acl-conformance C double"), out


def test_double_variants_compile_warning_free() -> None:
    """Every planted bug, fault, release and device-like behaviour builds under -Wall
    -Wextra -Werror (no unused code), alone and with a bug whose helper the release leaves
    out (or whose path a behaviour replaces)."""
    for spec in (
        "bound-off-by-one",
        "kind-unchecked",
        "pageable-late",
        "large-pageable-drops",
        "hang-sync",
        "stream-limit:3",
        "no-symbol-apis",
        "no-symbol-apis,kind-unchecked",
        "setup-ms:5",
        "frees-wait",
        "host-funcs-serial",
        "pageable-staged",
        "pageable-staged,pageable-late",
        "device-like",
    ):
        assert build.build_double(build.double_defines(spec)).is_file()
    assert build.build_double(build.double_defines("segv-on:aclrtStreamQuery")).is_file()


def test_double_variant_names() -> None:
    assert build.double_defines("1") == ()
    assert build.double_defines("kind-unchecked, segv-on:aclrtFreeHost") == (
        "ACL_DOUBLE_BUG_KIND_UNCHECKED",
        "ACL_DOUBLE_FAULT_SEGV_ON=aclrtFreeHost",
    )
    assert build.double_defines("stream-limit:0200,no-symbol-apis") == (
        "ACL_DOUBLE_FAULT_STREAM_LIMIT=200",
        "ACL_DOUBLE_NO_SYMBOL_APIS",
    )
    with pytest.raises(ValueError, match="unknown double variant 'nope'; known: bound-off-by-one"):
        build.double_defines("nope")
    for bad in ("stream-limit", "stream-limit:-1", "stream-limit:\u00b2", "no-symbol-apis:1"):
        with pytest.raises(ValueError, match="stream-limit:<N>, no-symbol-apis"):
            build.double_defines(bad)


def test_the_agent_does_not_link_the_symbol_apis(double_agent: Path) -> None:
    """They are looked up at start-up: the agent needs none of them to link or load, and
    the double without them exports none (while the correct one exports all six)."""
    assert not _exports(double_agent, defined=False) & set(SYMBOL_APIS)
    assert _exports(build.build_double(()), defined=True) >= set(SYMBOL_APIS)
    lacking = build.build_double(build.double_defines("no-symbol-apis"))
    assert not _exports(lacking, defined=True) & set(SYMBOL_APIS)
    assert "aclrtStreamQuery" in _exports(lacking, defined=True)


# -- the agent ------------------------------------------------------------------------------------
def test_hello_fixtures_and_capabilities(agent: CannAdapter) -> None:
    assert agent_process(agent).call(0, "hello").outputs[2] == b"plain"  # the build mode
    assert [(f.name, f.size) for f in agent.fixtures()] == list(DEFAULT_FIXTURES)
    assert agent.capabilities().devices == 2
    assert agent.invalid_handle() not in {f.address for f in agent.fixtures()}
    code, version = agent.get_version_str()
    assert code == 0 and version.startswith("acl-conformance C double")


def test_hello_says_the_symbol_apis_are_there(agent: CannAdapter) -> None:
    reply = agent_process(agent).call(0, "hello")
    assert [o.decode() for o in reply.outputs[7:]] == ["1", "-"]
    assert agent.symbol_apis
    assert agent.capabilities().symbol_apis


def test_a_backend_without_the_symbol_apis() -> None:
    """hello says which are absent (all six), the capability is off, each of the six calls
    answers 207000 without calling anything (no crash, no output), and the other calls work."""
    a = CannAdapter(double="no-symbol-apis")
    try:
        reply = agent_process(a).call(0, "hello")
        assert [o.decode() for o in reply.outputs[7:]] == ["0", ",".join(SYMBOL_APIS)]
        assert not a.capabilities().symbol_apis
        assert "no-symbol-apis" in a.get_version_str()[1]
        assert a.init(None) == 0 and a.set_device(0) == 0
        code, stream = a.create_stream()
        code2, buf = a.malloc_pageable(64)
        assert code == code2 == 0
        sym = fixture(a, "g_u64")
        assert a.get_symbol_address(sym) == (207000, 0)
        assert a.get_symbol_size(sym) == (207000, 0)
        assert a.memcpy_to_symbol_async(sym, buf, 8, 0, H2D, stream) == 207000
        assert a.memcpy_to_symbol(sym, buf, 8, 0, H2D) == 207000
        assert a.memcpy_from_symbol(buf, 8, sym, 8, 0, D2H) == 207000
        assert a.memcpy_from_symbol_async(buf, 8, sym, 8, 0, D2H, stream) == 207000
        # Not even the checks that come first in CANN (count 0, NULL pointers) are made.
        assert a.memcpy_to_symbol_async(0, 0, 0, 0, 999, 0) == 207000
        assert a.get_symbol_size(sym, null_size=True) == (207000, 0)
        assert a.synchronize_stream(stream) == 0 and a.destroy_stream(stream) == 0
        assert a.get_device() == (0, 0)
    finally:
        a.close()


def test_initial_pattern_of_every_variable(agent: CannAdapter) -> None:
    """Byte i of variable k starts as (k*37 + i*11 + 0x5A) & 0xFF on every device."""
    code, buf = agent.malloc_pageable(16 << 20)
    assert code == 0
    for device in (0, 1):
        assert agent.set_device(device) == 0
        for k, f in enumerate(agent.fixtures()):
            assert agent.memcpy_from_symbol(buf, f.size, f.address, f.size, 0, D2H) == 0
            code, data = agent.read_host(buf, f.size)
            want = bytes((k * 37 + i * 11 + 0x5A) & 0xFF for i in range(min(f.size, 4096)))
            assert code == 0 and data[:4096] == want, f.name
            assert data == want * (f.size // len(want)) + want[: f.size % len(want)], f.name


def test_large_transfers(agent: CannAdapter) -> None:
    """16 MiB through the pipe both ways and through the double's largest variable."""
    data = os.urandom(16 << 20)
    assert agent.set_device(0) == 0
    code, buf = agent.malloc_pageable(len(data))
    code2, back = agent.malloc_pageable(len(data))
    assert code == code2 == 0
    t0 = time.monotonic()
    assert agent.write_host(buf, data) == 0
    sym = fixture(agent, "g_arr16m")
    assert agent.memcpy_to_symbol_async(sym, buf, len(data), 0, H2D, 0) == 0
    assert agent.memcpy_from_symbol(back, len(data), sym, len(data), 0, D2H) == 0
    code, got = agent.read_host(back, len(data))
    assert code == 0 and got == data
    assert time.monotonic() - t0 < 10
