"""The cann adapter, its agent and the C double: protocol, every call, codes, crash, hang, options.

The agent is built against the bundled C double (once per session: the build
cache keys each variant by its sources and flags).  The codes of the double are
compared, call by call, with the simulator's: both implement CANN's codes and
order of checks, independently (one in C, one in Python).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from acl_conformance.adapters.base import CONTRACT_CALLS, Adapter, CallTimeout
from acl_conformance.adapters.cann import AgentDied, CannAdapter, ProtocolError, build
from acl_conformance.adapters.cann.devices import spread_devices
from acl_conformance.adapters.cann.exports import SYMBOL_APIS
from acl_conformance.adapters.cann.installed import skip_reason
from acl_conformance.adapters.cann.pool import FORK_SERVERS, SPARE_LIMIT, SPARES
from acl_conformance.adapters.registry import AdapterResolutionError, resolve
from acl_conformance.adapters.simulator import Simulator
from acl_conformance.adapters.simulator.layout import DEFAULT_FIXTURES

SIZE_MAX = (1 << 64) - 1
H2D, D2H, DEFAULT = 1, 2, 4


@pytest.fixture(scope="session")
def double_agent() -> Path:
    return build.build_agent_with_double(())


@pytest.fixture
def agent(double_agent: Path) -> Iterator[CannAdapter]:
    a = CannAdapter(agent=str(double_agent))
    try:
        yield a
    finally:
        a.close()


def fixture(a: Adapter, name: str) -> int:
    return next(f.address for f in a.fixtures() if f.name == name)


def reaped(pid: int) -> bool:
    """The process is gone and not a zombie of ours."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return not Path(f"/proc/{pid}").exists() or _state(pid) != "Z"
    return False


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return ""


# -- the header and the double ------------------------------------------------------------------
PROGRAM = r"""
#include <acl/acl.h>
#include <acl_conformance/register.h>
#include <stdio.h>
#include <string.h>

static unsigned char g_var[16];

int main(void)
{
    if (aclConformanceRegisterVariable(g_var, "g_var", sizeof g_var) != 0) return 1;
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) return 2;
    aclrtStream stream = NULL;
    void *pinned = NULL;
    if (aclrtCreateStream(&stream) != ACL_SUCCESS) return 3;
    if (aclrtMallocHost(&pinned, 16) != ACL_SUCCESS) return 4;
    memset(pinned, 7, 16);
    aclrtMemcpyKind kind = ACL_MEMCPY_HOST_TO_DEVICE;
    if (aclrtMemcpyToSymbolAsync(g_var, pinned, 16, 0, kind, stream) != ACL_SUCCESS) return 5;
    if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) return 6;
    unsigned char out[16] = {0};
    if (aclrtMemcpyFromSymbol(out, sizeof out, g_var, 16, 0, ACL_MEMCPY_DEVICE_TO_HOST) != 0) return 7;
    if (out[15] != 7) return 8;
    if (aclrtMemcpyToSymbolAsync(g_var + 1, pinned, 1, 0, kind, stream)
        != ACL_ERROR_RT_INVALID_SYMBOL) return 9;
    size_t size = 0;
    if (aclrtGetSymbolSize(g_var, &size) != ACL_SUCCESS || size != 16) return 10;
    aclrtStreamStatus status = ACL_STREAM_STATUS_RESERVED;
    if (aclrtStreamQuery(stream, &status) != ACL_SUCCESS) return 11;
    char version[ACL_PKG_VERSION_MAX_SIZE];
    char pkg[] = "runtime";
    if (aclsysGetVersionStr(pkg, version) != ACL_SUCCESS) return 12;
    aclrtFreeHost(pinned);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    printf("ok %s\n", version);
    return 0;
}
"""


@pytest.mark.parametrize("language", ["c", "c++"])
def test_header_and_double_build_a_program(tmp_path: Path, language: str) -> None:
    """A program using <acl/acl.h> (as C reproducers do) compiles, links against the double
    and runs; -Wall -Wextra -Werror."""
    lib = build.build_double(())
    src = tmp_path / ("p.c" if language == "c" else "p.cpp")
    src.write_text(PROGRAM)
    compiler = build.c_compiler() if language == "c" else build.cxx_compiler()
    std = "-std=c11" if language == "c" else "-std=c++17"
    exe = tmp_path / "p"
    subprocess.run(
        [
            *compiler,
            std,
            *build.WARNINGS,
            f"-I{build.INCLUDE_DIR}",
            str(src),
            str(lib),
            f"-Wl,-rpath,{lib.parent}",
            "-o",
            str(exe),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("ok acl-conformance C double"), out


def test_double_variants_compile_warning_free() -> None:
    """Every planted bug, fault and release builds under -Wall -Wextra -Werror (no unused
    code), alone and with a bug whose helper the release leaves out."""
    for spec in (
        "bound-off-by-one",
        "kind-unchecked",
        "pageable-late",
        "hang-sync",
        "stream-limit:3",
        "no-symbol-apis",
        "no-symbol-apis,kind-unchecked",
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


def _exports(path: Path, defined: bool) -> set[str]:
    """The dynamic symbols of a binary: those it defines, or those it needs from elsewhere."""
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm is not installed")
    out = subprocess.run(
        [nm, "-D", *(["--defined-only"] if defined else ["--undefined-only"]), str(path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


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
    assert agent.build_mode == "plain"
    assert [(f.name, f.size) for f in agent.fixtures()] == list(DEFAULT_FIXTURES)
    assert agent.capabilities().devices == 2
    assert agent.invalid_handle() not in {f.address for f in agent.fixtures()}
    code, version = agent.get_version_str()
    assert code == 0 and version.startswith("acl-conformance C double")


def test_hello_says_the_symbol_apis_are_there(agent: CannAdapter) -> None:
    reply = agent.process.call(0, "hello")
    assert [o.decode() for o in reply.outputs[7:]] == ["1", "-"]
    assert agent.symbol_apis and agent.missing_symbol_apis == []
    assert agent.capabilities().symbol_apis


def test_a_backend_without_the_symbol_apis() -> None:
    """hello says which are absent (all six), the capability is off, each of the six calls
    answers 207000 without calling anything (no crash, no output), and the other calls work."""
    a = CannAdapter(double="no-symbol-apis")
    try:
        reply = a.process.call(0, "hello")
        assert [o.decode() for o in reply.outputs[7:]] == ["0", ",".join(SYMBOL_APIS)]
        assert a.missing_symbol_apis == list(SYMBOL_APIS)
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


def test_every_contract_call_round_trips(agent: CannAdapter) -> None:
    made: set[str] = set()
    a = agent

    def call(name: str, *args: Any, **kw: Any) -> Any:
        made.add(name)
        return getattr(a, name)(*args, **kw)

    assert call("init", None) == 0
    assert call("get_version_str")[0] == 0
    assert call("get_device_count") == (0, 2)
    assert call("set_device", 1) == 0
    assert call("get_device") == (0, 1)
    assert call("set_device", 0) == 0
    code, stream = call("create_stream")
    assert code == 0 and stream
    code, event = call("create_event")
    assert code == 0 and event
    code, pinned = call("malloc_host", 4096)
    code2, page = call("malloc_pageable", 3 * 4096)
    assert code == code2 == 0
    aligned = (page + 4095) & ~4095
    assert call("host_register", aligned, 4096) == 0
    assert call("host_unregister", aligned) == 0
    assert call("write_host", pinned, b"\x11" * 64) == 0
    assert call("read_host", pinned, 4) == (0, b"\x11" * 4)
    sym = fixture(a, "g_arr256")
    code, dev = call("get_symbol_address", sym)
    assert code == 0 and dev
    assert call("get_symbol_size", sym) == (0, 256)
    code, gate = call("launch_gate", stream)
    assert code == 0 and gate
    assert call("memcpy_to_symbol_async", sym, pinned, 64, 0, H2D, stream) == 0
    assert call("stream_query", stream) == (0, 1)  # behind the gate: not ready
    assert call("record_event", event, stream) == 0
    assert call("stream_wait_event", 0, event) == 0
    assert call("synchronize_stream_with_timeout", stream, 20) == 507046
    assert call("open_gate", gate) == 0
    assert call("synchronize_event", event) == 0
    assert call("synchronize_stream", stream) == 0
    assert call("stream_query", stream) == (0, 0)
    assert call("memcpy_to_symbol", sym, page, 8, 64, DEFAULT) == 0
    assert call("memcpy_from_symbol", page, 128, sym, 72, 0, D2H) == 0
    assert call("read_host", page, 72)[1] == b"\x11" * 64 + bytes(8)
    assert call("memcpy_from_symbol_async", pinned, 64, sym, 64, 0, D2H, stream) == 0
    assert call("synchronize_device") == 0
    assert call("destroy_event", event) == 0
    assert call("destroy_stream", stream) == 0
    assert call("free_host", pinned) == 0
    assert call("free_pageable", page) == 0
    assert call("reset_device", 0) == 0
    assert call("finalize") == 0
    assert made == set(CONTRACT_CALLS)


def _script(a: Adapter) -> list[tuple[str, Any]]:
    """A fixed sequence of calls, mostly error paths, and what each returned (codes, and
    outputs that do not depend on addresses)."""
    out: list[tuple[str, Any]] = []

    def c(label: str, result: Any, keep: Callable[[Any], Any] | None = None) -> Any:
        code = result[0] if isinstance(result, tuple) else result
        out.append((label, code if keep is None else (code, keep(result))))
        return result

    sym = fixture(a, "g_arr256")
    u32 = fixture(a, "g_u32")
    bad = a.invalid_handle()
    c("init", a.init(None))
    c("init again", a.init(None))
    c("init other config", a.init("/nonexistent.json"))
    c("get_device unset", a.get_device(), lambda r: r[1])
    c("create_stream without device", a.create_stream())
    c("symbol address without device", a.get_symbol_address(sym))
    c("copy without device", a.memcpy_to_symbol_async(sym, 4096, 4, 0, H2D, 0))
    c("count 0 without device", a.memcpy_to_symbol_async(0, 0, 0, 0, 999, bad))
    c("gate without device", a.launch_gate(0))
    c("set_device 2", a.set_device(2))
    c("set_device -1", a.set_device(-1))
    c("set_device 0", a.set_device(0))
    c("get_device", a.get_device(), lambda r: r[1])
    c("get_device_count", a.get_device_count(), lambda r: r[1])
    c("malloc_host 0", a.malloc_host(0))
    c("malloc_host NULL", a.malloc_host(64, null_host_ptr=True))
    _, pinned = c("malloc_host", a.malloc_host(3 * 4096))
    _, page = c("malloc", a.malloc_pageable(3 * 4096))
    _, plain = c("malloc 2", a.malloc_pageable(4096))
    p_aligned = (pinned + 4095) & ~4095
    aligned = (page + 4095) & ~4095
    # Contents that do not depend on where the buffers lie (alignment differs).
    a.write_host(plain, bytes(range(256)) * 16)
    a.write_host(pinned, bytes(range(255, -1, -1)) * 48)
    a.write_host(aligned, bytes((i * 7 + 3) & 0xFF for i in range(256)) * 16)
    c("register pinned page", a.host_register(p_aligned, 4096))
    c("register misaligned", a.host_register(aligned + 64, 4096))
    c("register size 0", a.host_register(aligned, 0))
    c("register flag 0", a.host_register(aligned, 4096, 0))
    c("register flag 1", a.host_register(aligned, 4096, 1))
    c("register NULL", a.host_register(0, 4096))
    c("register", a.host_register(aligned, 4096))
    c("register again", a.host_register(aligned, 4096))
    c("unregister interior", a.host_unregister(aligned + 8))
    c("unregister NULL", a.host_unregister(0))
    for name, s in [("NULL", 0), ("interior", sym + 1), ("unregistered", page), ("ok", sym)]:
        c(f"symbol address {name}", a.get_symbol_address(s))
        c(f"symbol size {name}", a.get_symbol_size(s), lambda r: r[1])
    c("symbol address NULL out", a.get_symbol_address(sym, null_dev_ptr=True))
    c("symbol size NULL out", a.get_symbol_size(sym, null_size=True))
    c("create_stream NULL", a.create_stream(null_stream=True))
    _, s = c("create_stream", a.create_stream())
    _, dead = c("create_stream 2", a.create_stream())
    c("destroy 2", a.destroy_stream(dead))
    for src_name, src in [("pinned", pinned), ("pageable", plain), ("registered", aligned)]:
        for label, args in [
            ("NULL symbol", (0, src, 4, 0, H2D, s)),
            ("NULL src", (sym, 0, 4, 0, H2D, s)),
            *((f"kind {k}", (sym, src, 4, 0, k, s)) for k in (0, 2, 3, 5, 6, 7, 8, -1, 999)),
            ("interior", (sym + 3, src, 4, 0, H2D, s)),
            ("unregistered", (page, src, 4, 0, H2D, s)),
            ("overflow", (sym, src, 1, SIZE_MAX, H2D, s)),
            ("overflow 2", (sym, src, SIZE_MAX, 2, H2D, s)),
            ("past end", (sym, src, 4, 253, H2D, s)),
            ("exact end", (sym, src, 4, 252, DEFAULT, s)),
            ("bad stream", (sym, src, 4, 0, H2D, bad)),
            ("destroyed stream", (sym, src, 4, 0, H2D, dead)),
            ("NULL stream", (u32, src, 4, 0, H2D, 0)),
            ("count 0", (0, 0, 0, 0, 999, bad)),
            ("symbol+kind+bounds", (0, src, 4, 300, D2H, bad)),
        ]:
            c(f"{src_name} async {label}", a.memcpy_to_symbol_async(*args))
            c(f"{src_name} sync {label}", a.memcpy_to_symbol(*args[:5]))
    c("sync", a.synchronize_stream(s))
    c("sync NULL", a.synchronize_stream(0))
    _, scratch = a.malloc_pageable(256)
    c("read back", a.memcpy_from_symbol(scratch, 256, sym, 256, 0, D2H))
    c("bytes", a.read_host(scratch, 256), lambda r: r[1].hex())
    for label, fargs in [
        ("NULL dst", (0, 64, sym, 4, 0, D2H)),
        ("dst_max", (scratch, 3, sym, 4, 0, D2H)),
        ("kind H2D", (scratch, 64, sym, 4, 0, H2D)),
        ("kind 999", (scratch, 64, sym, 4, 0, 999)),
        ("NULL symbol", (scratch, 64, 0, 4, 0, D2H)),
        ("interior", (scratch, 64, sym + 1, 4, 0, D2H)),
        ("overflow", (scratch, 64, sym, 1, SIZE_MAX, D2H)),
        ("past end", (scratch, 64, sym, 4, 254, DEFAULT)),
        ("count 0", (0, 0, 0, 0, 0, 999)),
    ]:
        c(f"from {label}", a.memcpy_from_symbol(*fargs))
        c(f"from async {label}", a.memcpy_from_symbol_async(*fargs, s))
    c("from async bad stream", a.memcpy_from_symbol_async(scratch, 64, sym, 4, 0, D2H, bad))
    c("from async pinned", a.memcpy_from_symbol_async(pinned, 64, sym, 64, 0, DEFAULT, s))
    c("sync timeout -2 bad", a.synchronize_stream_with_timeout(bad, -2))
    c("sync timeout 0 bad", a.synchronize_stream_with_timeout(bad, 0))
    c("sync timeout 0", a.synchronize_stream_with_timeout(s, 0))
    c("sync timeout -1", a.synchronize_stream_with_timeout(s, -1))
    c("sync timeout 100", a.synchronize_stream_with_timeout(s, 100))
    c("pinned read back", a.read_host(pinned, 64), lambda r: r[1].hex())
    c("sync bad", a.synchronize_stream(bad))
    c("sync destroyed", a.synchronize_stream(dead))
    c("query bad", a.stream_query(bad), lambda r: r[1])
    c("query", a.stream_query(s), lambda r: r[1])
    c("create_event NULL", a.create_event(null_event=True))
    _, e = c("create_event", a.create_event())
    c("record NULL", a.record_event(0, s))
    c("record bad event", a.record_event(bad, s))
    c("record bad stream", a.record_event(e, bad))
    c("record stream as event", a.record_event(s, s))
    c("wait NULL", a.stream_wait_event(s, 0))
    c("wait bad stream", a.stream_wait_event(bad, e))
    c("wait bad event", a.stream_wait_event(s, bad))
    c("wait unrecorded", a.stream_wait_event(s, e))
    c("sync unrecorded", a.synchronize_event(e))
    c("record", a.record_event(e, s))
    c("record NULL stream", a.record_event(e, 0))
    c("wait", a.stream_wait_event(s, e))
    c("sync event", a.synchronize_event(e))
    c("sync event NULL", a.synchronize_event(0))
    c("sync event bad", a.synchronize_event(bad))
    c("gate bad", a.launch_gate(bad))
    _, g = c("gate", a.launch_gate(s))
    c("query gated", a.stream_query(s), lambda r: r[1])
    c("sync timeout gated", a.synchronize_stream_with_timeout(s, 30))
    c("open", a.open_gate(g))
    c("open unknown", a.open_gate(987654))
    c("sync opened", a.synchronize_stream(s))
    # another device's stream
    c("set_device 1", a.set_device(1))
    _, s1 = c("create_stream on 1", a.create_stream())
    _, e1 = c("create_event on 1", a.create_event())
    c("set_device 0 again", a.set_device(0))
    c("foreign pinned copy", a.memcpy_to_symbol_async(u32, pinned, 4, 0, H2D, s1))
    c("foreign pageable copy", a.memcpy_to_symbol_async(u32, plain, 4, 0, H2D, s1))
    c("foreign registered copy", a.memcpy_to_symbol_async(u32, aligned, 4, 0, H2D, s1))
    c("foreign pinned read", a.memcpy_from_symbol_async(pinned, 4, u32, 4, 0, D2H, s1))
    c("foreign gate", a.launch_gate(s1))
    c("foreign record", a.record_event(e1, s1))
    c("record on foreign event", a.record_event(e1, s))
    c("foreign wait", a.stream_wait_event(s1, e))
    c("foreign sync", a.synchronize_stream(s1))
    c("foreign query", a.stream_query(s1), lambda r: r[1])
    c("foreign destroy", a.destroy_stream(s1))
    c("u32 on device 0", a.memcpy_from_symbol(scratch, 4, u32, 4, 0, D2H))
    c("u32 bytes", a.read_host(scratch, 4), lambda r: r[1].hex())
    c("destroy event", a.destroy_event(e))
    c("destroy event again", a.destroy_event(e))
    c("destroy event NULL", a.destroy_event(0))
    c("destroy NULL", a.destroy_stream(0))
    c("destroy bad", a.destroy_stream(bad))
    c("destroy", a.destroy_stream(s))
    c("destroy again", a.destroy_stream(s))
    c("reset 5", a.reset_device(5))
    c("reset 1", a.reset_device(1))
    c("s1 after reset", a.synchronize_stream(s1))
    c("e1 after reset", a.synchronize_event(e1))
    c("reset 1 again", a.reset_device(1))
    c("write outside", a.write_host(scratch + 250, b"0123456789"))
    c("read outside", a.read_host(scratch + 250, 10), lambda r: r[1])
    c("free_host NULL", a.free_host(0))
    c("free_host pageable", a.free_host(plain))
    c("free_host interior", a.free_host(pinned + 64))
    c("free_host", a.free_host(pinned))
    c("free_host again", a.free_host(pinned))
    c("free NULL", a.free_pageable(0))
    c("free interior", a.free_pageable(scratch + 8))
    c("free", a.free_pageable(scratch))
    c("reset 0", a.reset_device(0))
    c("get_device after reset", a.get_device(), lambda r: r[1])
    c("finalize", a.finalize())
    c("finalize 2", a.finalize())
    c("finalize 3", a.finalize())
    c("version", a.get_version_str())
    return out


def test_codes_and_bytes_match_the_simulator(agent: CannAdapter) -> None:
    """The C double and the simulator, written apart, agree on every code of the script."""
    sim = Simulator()
    try:
        want = _script(sim)
    finally:
        sim.close()
    got = _script(agent)
    assert len(got) == len(want)
    diffs = [(w[0], w[1], g[1]) for w, g in zip(want, got, strict=True) if w != g]
    assert not diffs, "label, simulator, double:\n" + "\n".join(map(str, diffs))


def test_open_gate_while_a_call_waits_for_it(agent: CannAdapter) -> None:
    """A pageable copy behind a closed gate blocks its caller; another thread opens the gate."""
    a = agent
    assert a.set_device(0) == 0
    _, s = a.create_stream()
    _, buf = a.malloc_pageable(16)
    _, gate = a.launch_gate(s)
    timer = threading.Timer(0.3, lambda: a.open_gate(gate))
    t0 = time.monotonic()
    timer.start()
    assert a.memcpy_to_symbol_async(fixture(a, "g_u64"), buf, 8, 0, H2D, s) == 0
    waited = time.monotonic() - t0
    timer.join()
    assert 0.25 < waited < 5


def test_each_thread_has_its_own_context_and_agent_thread(agent: CannAdapter) -> None:
    a = agent

    def tasks() -> int:
        return len(os.listdir(f"/proc/{a.pid}/task"))

    assert a.set_device(1) == 0
    before = tasks()
    seen: list[tuple[int, int]] = []
    t = threading.Thread(target=lambda: seen.append(a.get_device()))
    t.start()
    t.join()
    assert seen == [(107002, -1)]  # a new host thread has no current device
    assert a.get_device() == (0, 1)  # carries the "bye" of t: its agent thread ends, soon
    deadline = time.monotonic() + 5
    while tasks() > before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert tasks() == before
    called = threading.Barrier(7)
    done = threading.Event()

    def host_thread() -> None:
        a.set_device(0)
        called.wait(10)
        done.wait(10)  # stay alive until counted

    threads = [threading.Thread(target=host_thread) for _ in range(6)]
    for th in threads:
        th.start()
    called.wait(10)
    assert tasks() >= before + 6  # one agent thread each
    done.set()
    for th in threads:
        th.join()
    del th, threads
    import gc

    gc.collect()
    a.get_device()  # carries the "bye" of the ended threads
    deadline = time.monotonic() + 5
    while tasks() > before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert tasks() <= before


def test_protocol_error_is_not_a_backend_verdict(agent: CannAdapter) -> None:
    with pytest.raises(ProtocolError, match="unknown command 'frobnicate'"):
        agent.process.call(1, "frobnicate")
    with pytest.raises(ProtocolError, match="bad int32 argument 'x'"):
        agent.process.call(1, "set_device", ("x",))
    assert agent.get_device_count() == (0, 2)  # still fine


def test_close_reaps_the_agent_and_leaves_no_thread(double_agent: Path) -> None:
    """One agent's life (isolation=run: no warm spare is started; the spares have tests of
    their own below)."""
    assert SPARES.wait_idle()  # no spare being started by an earlier test meanwhile
    threads = threading.active_count()
    a = CannAdapter(agent=str(double_agent), isolation="run")
    pid = a.pid
    a.set_device(0)
    a.close()
    a.close()  # idempotent
    assert a.process.proc.returncode == 0  # it quit on request
    assert reaped(pid)
    assert threading.active_count() == threads
    with pytest.raises(AgentDied):
        a.get_device()


def test_a_dropped_adapter_is_reaped(double_agent: Path) -> None:
    """Without close(): the finaliser kills and reaps the agent and the watchdog ends."""
    import gc

    assert SPARES.wait_idle()
    threads = threading.active_count()
    a = CannAdapter(agent=str(double_agent), isolation="run")
    pid = a.pid
    assert a.set_device(0) == 0
    del a
    gc.collect()
    deadline = time.monotonic() + 5
    while threading.active_count() > threads and time.monotonic() < deadline:
        time.sleep(0.02)
    assert threading.active_count() == threads
    assert reaped(pid)


def test_segfault_is_a_crash_naming_the_call(tmp_path: Path) -> None:
    a = CannAdapter(double="segv-on:aclrtStreamQuery")
    pid = a.pid
    try:
        assert a.set_device(0) == 0
        with pytest.raises(AgentDied) as info:
            a.stream_query(0)
        text = str(info.value)
        assert "SIGSEGV" in text and "aclrtStreamQuery(NULL" in text, text
        assert "\n" not in text
        with pytest.raises(AgentDied):  # and every later call at once
            a.get_device()
    finally:
        a.close()
    assert reaped(pid)


def test_hang_is_a_timeout_and_the_agent_is_killed() -> None:
    a = CannAdapter(double="hang-sync", timeout="0.5")
    pid = a.pid
    try:
        assert a.set_device(0) == 0
        t0 = time.monotonic()
        with pytest.raises(
            CallTimeout, match=r"^no answer within 0.5 s: the agent \(pid \d+\) was killed$"
        ):
            a.synchronize_stream(0)
        assert time.monotonic() - t0 < 5
        assert a.process.proc.returncode == -9
        with pytest.raises(CallTimeout):
            a.get_device()
    finally:
        a.close()
    assert reaped(pid)


def test_a_timeout_fails_the_other_waiting_threads_as_timeouts() -> None:
    a = CannAdapter(double="hang-sync", timeout="1")
    errors: list[BaseException] = []

    def other() -> None:
        try:
            a.set_device(0)
            _, s = a.create_stream()
            a.launch_gate(s)  # never opened
            _, buf = a.malloc_pageable(8)
            a.memcpy_to_symbol_async(fixture(a, "g_u64"), buf, 8, 0, H2D, s)  # waits for g
        except BaseException as exc:
            errors.append(exc)

    try:
        assert a.set_device(0) == 0
        t = threading.Thread(target=other)
        t.start()
        time.sleep(0.3)
        with pytest.raises(CallTimeout):
            a.synchronize_stream(0)
        t.join(10)
        assert not t.is_alive()
        assert len(errors) == 1 and isinstance(errors[0], CallTimeout), errors
    finally:
        a.close()


# -- options --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "options,message",
    [
        ({"nope": "1"}, "unknown cann option 'nope'"),
        ({"double": "bogus"}, "unknown double variant 'bogus'"),
        ({"double": "1", "timeout": "-1"}, "timeout=-1: must be > 0"),
        ({"double": "1", "timeout": "soon"}, "timeout='soon': expected seconds"),
        ({"double": "1", "sanitize": "maybe"}, "sanitize='maybe': expected 1 or 0"),
        ({"double": "1", "devices": "0"}, "devices=0: 1 to 64"),
        ({"double": "1", "isolation": "worker"}, "isolation='worker': expected example, test, run"),
        ({"double": "1", "fork": "yes"}, "fork='yes': expected auto, 1 or 0"),
        ({"double": "stream-limit:many"}, "unknown double variant 'stream-limit:many'"),
        ({"agent": "/nonexistent/agent"}, "not an executable file"),
        ({"lib": "/nonexistent/libacl.so"}, "library /nonexistent/libacl.so does not exist"),
        ({"ascend_home_path": "/nonexistent"}, "no lib64/libacl_rt.so there"),
        ({}, "no backend: give agent=PATH"),
    ],
)
def test_bad_options_give_one_line(
    monkeypatch: pytest.MonkeyPatch, options: dict[str, str], message: str
) -> None:
    monkeypatch.delenv("ACL_CONFORMANCE_AGENT", raising=False)
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    with pytest.raises(AdapterResolutionError) as info:
        resolve("cann", options)
    text = str(info.value)
    assert message in text and "\n" not in text, text


def test_no_compiler_gives_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "/nonexistent/cc")
    build.build_double.cache_clear()
    try:
        with pytest.raises(
            AdapterResolutionError, match=r"CC='/nonexistent/cc' is not an executable compiler"
        ):
            resolve("cann", {"double": "kind-unchecked"})
    finally:
        build.build_double.cache_clear()


def test_build_failure_gives_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "acl").mkdir()
    (tmp_path / "acl" / "acl.h").write_text("#error this is not an ACL header\n")
    lib = build.build_double(())
    with pytest.raises(AdapterResolutionError) as info:
        resolve("cann", {"lib": str(lib), "include": str(tmp_path)})
    text = str(info.value)
    assert "building the agent against" in text and "this is not an ACL header" in text
    assert "full log:" in text and "\n" not in text


def test_environment_fallback_and_lib_option(
    monkeypatch: pytest.MonkeyPatch, double_agent: Path
) -> None:
    monkeypatch.setenv("ACL_CONFORMANCE_AGENT", str(double_agent))
    a = resolve("cann", {})
    try:
        assert a.get_device_count() == (0, 2)
    finally:
        a.close()
    b = resolve("cann", {"lib": str(build.build_double(())), "devices": "3"})
    try:
        assert b.get_device_count() == (0, 3)
    finally:
        b.close()


def test_xdist_workers_start_on_different_devices(
    monkeypatch: pytest.MonkeyPatch, double_agent: Path
) -> None:
    assert spread_devices(["0", "1"], 0) == "0,1"
    assert spread_devices(["0", "1"], 1) == "1,0"
    assert spread_devices(["4", "5", "6"], 5) == "6,4,5"
    monkeypatch.delenv("ASCEND_RT_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    a = CannAdapter(agent=str(double_agent))
    try:
        assert a.visible_devices == "1,0"
        assert "(devices 1,0 of 2)" in a.get_version_str()[1]
        assert a.capabilities().devices == 2  # the two-device tests keep two devices
    finally:
        a.close()
    monkeypatch.setenv("ASCEND_RT_VISIBLE_DEVICES", "1")
    b = CannAdapter(agent=str(double_agent))
    try:
        assert b.visible_devices is None and b.capabilities().devices == 1
    finally:
        b.close()


# -- isolation and the warm spares ----------------------------------------------------------------
def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie)."""
    return Path(f"/proc/{pid}").exists() and _state(pid) not in ("Z", "")


def test_isolation_option(double_agent: Path) -> None:
    """The default is a fresh agent per example (what the suite reads is the instance's
    ``isolation``); isolation=run starts no spare."""
    assert CannAdapter.isolation == "example"
    a = CannAdapter(agent=str(double_agent), isolation="Test")
    try:
        assert a.isolation == "test"
    finally:
        a.close()
    SPARES.close_spares()
    b = CannAdapter(agent=str(double_agent), isolation="run", devices="3")
    try:
        assert b.isolation == "run" and SPARES.wait_idle()
        assert SPARES.spare_pid(b.spec) is None
    finally:
        b.close()


def test_a_spare_is_started_and_used(double_agent: Path) -> None:
    """Taking an agent starts the next one in the background; the next adapter of the same
    options gets it, already through its start-up, and a new spare replaces it."""
    a = CannAdapter(agent=str(double_agent))
    try:
        assert a.isolation == "example"
        assert SPARES.wait_idle()
        spare = SPARES.spare_pid(a.spec)
        assert spare is not None and spare != a.pid and _alive(spare)
    finally:
        a.close()
    hits = SPARES.hits
    b = CannAdapter(agent=str(double_agent))
    try:
        assert b.pid == spare and SPARES.hits == hits + 1
        assert b.set_device(0) == 0 and b.get_device() == (0, 0)  # a working, fresh agent
        assert SPARES.wait_idle()
        assert SPARES.spare_pid(b.spec) not in (None, spare)
    finally:
        b.close()
    assert reaped(spare)


def test_a_spare_of_other_options_is_never_used(double_agent: Path) -> None:
    a = CannAdapter(agent=str(double_agent), devices="2")
    a.close()
    assert SPARES.wait_idle()
    spare = SPARES.spare_pid(a.spec)
    assert spare is not None
    for options in ({"devices": "3"}, {"devices": "2", "timeout": "14"}):
        b = CannAdapter(agent=str(double_agent), **options)
        try:
            assert b.pid != spare and b.spec != a.spec, options
            assert b.get_device_count() == (0, int(options["devices"]))
        finally:
            b.close()
    os.environ["ACL_CONFORMANCE_TEST_MARK"] = "1"  # another environment, another agent
    try:
        c = CannAdapter(agent=str(double_agent), devices="2")
        c.close()
    finally:
        del os.environ["ACL_CONFORMANCE_TEST_MARK"]
    assert c.pid != spare
    assert SPARES.wait_idle() and len(SPARES.pids()) <= SPARE_LIMIT  # the oldest went first
    kept = SPARES.spare_pid(a.spec)
    assert kept in (None, spare)
    d = CannAdapter(agent=str(double_agent), devices="2")  # a's options again
    try:
        assert d.pid == kept if kept is not None else d.pid not in (spare, b.pid, c.pid)
    finally:
        d.close()
    assert reaped(spare) or kept == spare


def test_a_spare_of_a_replaced_build_is_never_used(tmp_path: Path, double_agent: Path) -> None:
    """The agent file is rebuilt (here: replaced by a copy) while a spare of the old one
    waits: the next adapter starts the new file."""
    exe = tmp_path / "agent"
    shutil.copy(double_agent, exe)
    a = CannAdapter(agent=str(exe))
    a.close()
    assert SPARES.wait_idle()
    spare = SPARES.spare_pid(a.spec)
    assert spare is not None
    new = tmp_path / "agent.new"
    shutil.copy(double_agent, new)
    os.replace(new, exe)
    b = CannAdapter(agent=str(exe))
    try:
        assert b.pid != spare and b.spec.build != a.spec.build
        assert Path(f"/proc/{b.pid}/exe").stat().st_ino == exe.stat().st_ino
    finally:
        b.close()
    SPARES.close_spares()
    assert reaped(spare)


def test_the_agent_environment_does_not_follow_the_running_test(double_agent: Path) -> None:
    """PYTEST_CURRENT_TEST changes with every test: it is not passed on, so a spare made
    during one test serves the next."""
    assert os.environ.get("PYTEST_CURRENT_TEST")
    a = CannAdapter(agent=str(double_agent))
    try:
        assert "PYTEST_CURRENT_TEST" not in a.environment
        env = Path(f"/proc/{a.pid}/environ").read_bytes().split(b"\0")
        assert not any(e.startswith(b"PYTEST_CURRENT_TEST=") for e in env)
    finally:
        a.close()


EXIT_SCRIPT = """
import os, sys
from acl_conformance.adapters.cann import CannAdapter
from acl_conformance.adapters.cann.pool import FORK_SERVERS, SPARES
source = {"agent": sys.argv[1]} if sys.argv[3] == "exec" else {"double": "1"}
a = CannAdapter(**source)
b = CannAdapter(**source, devices="1")
assert SPARES.wait_idle()
servers = [p for p in (FORK_SERVERS.pid(a.spec), FORK_SERVERS.pid(b.spec)) if p]
print(a.pid, b.pid, *SPARES.pids(), *servers, flush=True)
if sys.argv[2] == "kill":
    os._exit(0)  # no atexit, no finaliser: the agents see EOF on stdin and quit
"""


@pytest.mark.parametrize("how", ["exit", "kill"])
@pytest.mark.parametrize("start", ["exec", "fork"])
def test_no_agent_outlives_its_process(
    tmp_path: Path, double_agent: Path, how: str, start: str
) -> None:
    """A process that ends with adapters open and spares waiting leaves no agent running
    (nor fork server), whether it exits normally (atexit closes the spares and servers) or
    without any clean-up (EOF on their stdin, or on the server's socket)."""
    script = tmp_path / "p.py"
    script.write_text(EXIT_SCRIPT)
    out = subprocess.run(
        [sys.executable, str(script), str(double_agent), how, start],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    pids = [int(x) for x in out.stdout.split()]
    # two adapters, a spare for each (and with fork, a server for each)
    assert len(pids) == (4 if start == "exec" else 6), out.stdout
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in pids if _alive(p)]


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def test_fresh_agents_are_forks_of_one_server() -> None:
    """For the double, every agent is forked from one server per option set: each starts as
    an agent just started (its own pid, no current device, the initial bytes), whatever the
    one before did; fork=0 executes the agent instead, and so does isolation=run."""
    a = CannAdapter(double="1", devices="2")
    try:
        assert a.spec.fork
        server = FORK_SERVERS.pid(a.spec)
        assert server is not None and _parent(a.pid) == server
        sym = fixture(a, "g_u64")
        _, buf = a.malloc_pageable(8)
        assert a.set_device(0) == 0 and a.write_host(buf, b"\xee" * 8) == 0
        assert a.memcpy_to_symbol(sym, buf, 8, 0, H2D) == 0
        assert a.create_stream()[0] == 0
    finally:
        a.close()
    assert a.process.proc.returncode == 0  # its exit status, from the server
    b = CannAdapter(double="1", devices="2")
    try:
        assert b.pid != a.pid and _parent(b.pid) == server
        assert b.get_device() == (107002, -1)
        _, buf = b.malloc_pageable(8)
        assert b.set_device(0) == 0
        assert b.memcpy_from_symbol(buf, 8, fixture(b, "g_u64"), 8, 0, D2H) == 0
        k = [f.name for f in b.fixtures()].index("g_u64")
        assert b.read_host(buf, 8) == (0, bytes((k * 37 + i * 11 + 0x5A) & 0xFF for i in range(8)))
    finally:
        b.close()
    c = CannAdapter(double="1", devices="2", fork="0")
    try:
        assert not c.spec.fork and _parent(c.pid) == os.getpid()
    finally:
        c.close()
    d = CannAdapter(double="1", devices="2", isolation="run")  # one agent: nothing to fork
    try:
        assert not d.spec.fork and _parent(d.pid) == os.getpid()
    finally:
        d.close()


def test_a_forked_agent_outlives_a_dead_server() -> None:
    """The server is killed: its agents go on working; one that ends then is reported with
    an unknown exit status; the next adapter gets a new server."""
    a = CannAdapter(double="1", devices="1")
    server = FORK_SERVERS.pid(a.spec)
    assert server is not None
    try:
        os.kill(server, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while _alive(server) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert a.set_device(0) == 0 and a.get_device() == (0, 0)
        b = CannAdapter(double="1", devices="1")  # (the spare, forked before the kill)
        try:
            assert b.get_device_count() == (0, 1)
            assert SPARES.wait_idle()  # its replacement came from a new server
            assert FORK_SERVERS.pid(b.spec) not in (None, server)
            assert _parent(SPARES.spare_pid(b.spec) or 0) == FORK_SERVERS.pid(b.spec)
        finally:
            b.close()
        os.kill(a.pid, signal.SIGSEGV)
        with pytest.raises(AgentDied, match=r"ended \(its exit status is unknown\)"):
            a.get_device()
    finally:
        a.close()


# -- the other builds ------------------------------------------------------------------------------
@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_cmake_plain_build(tmp_path: Path) -> None:
    """agent/CMakeLists.txt in its plain mode builds an agent against the double."""
    lib = build.build_double(())
    out = tmp_path / "build"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND")}
    for cmd in (
        [
            "cmake",
            "-S",
            str(build.AGENT_DIR),
            "-B",
            str(out),
            "-DACL_CONFORMANCE_PLAIN=ON",
            f"-DACL_LIBRARY={lib}",
        ],
        ["cmake", "--build", str(out)],
    ):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    a = CannAdapter(agent=str(out / build.AGENT_NAME))
    try:
        assert [f.name for f in a.fixtures()] == [n for n, _ in DEFAULT_FIXTURES]
    finally:
        a.close()


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_cmake_asc_build_needs_an_installation(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND")}
    proc = subprocess.run(
        ["cmake", "-S", str(build.AGENT_DIR), "-B", str(tmp_path / "b")],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode != 0 and "has no lib64/libacl_rt.so" in proc.stdout + proc.stderr


def test_tox_cann_env_skips_without_an_installation() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND")}
    proc = subprocess.run(
        [sys.executable, "-m", "acl_conformance.adapters.cann.installed"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0
    assert "SKIPPED: ASCEND_HOME_PATH is not set" in proc.stdout
    assert skip_reason({"ASCEND_HOME_PATH": "/nonexistent"}) == (
        "ASCEND_HOME_PATH=/nonexistent has no lib64/libacl_rt.so"
    )
