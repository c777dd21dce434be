"""What test_cann_agent.py and test_cann_agent_life.py share: helpers, fixtures and case tables."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from acl_conformance.adapters.base import Adapter
from acl_conformance.adapters.cann import CannAdapter
from acl_conformance.adapters.cann.client import AgentProcess
from acl_conformance.adapters.cann.pool import FORK_SERVERS
from acl_conformance.adapters.cann.pool import SPARES
from acl_conformance.adapters.cann.pool import AgentSpec

SIZE_MAX = (1 << 64) - 1


H2D, D2H, DEFAULT = 1, 2, 4


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


# -- white-box views of the adapter and its pools (not part of the contract) --------------------
def agent_process(a: CannAdapter) -> AgentProcess:
    """The adapter's agent process (the protocol's tests talk to it directly)."""
    return a._agent


def spare_pid(spec: AgentSpec) -> int | None:
    """The pid of the spare waiting for ``spec``, if any."""
    with SPARES._lock:
        spare = SPARES._spares.get(spec)
        return spare.pid if spare is not None else None


def spare_pids() -> list[int]:
    """The pids of every waiting spare."""
    with SPARES._lock:
        return [p.pid for p in SPARES._spares.values()]


def close_spares() -> None:
    """Close every waiting spare (the pool stays usable)."""
    with SPARES._lock:
        SPARES._wanted.clear()
        spares = list(SPARES._spares.values())
        SPARES._spares.clear()
    SPARES.wait_idle(timeout=60)
    with SPARES._lock:
        spares += list(SPARES._spares.values())
        SPARES._spares.clear()
    for p in spares:
        p.close()


def fork_server_pid(spec: AgentSpec) -> int | None:
    """The pid of the running fork server of ``spec``, if any."""
    with FORK_SERVERS._lock:
        server = FORK_SERVERS._servers.get(spec)
        return server.pid if server is not None else None


# -- isolation and the warm spares ----------------------------------------------------------------
def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie)."""
    return Path(f"/proc/{pid}").exists() and _state(pid) not in ("Z", "")


EXIT_SCRIPT = """
import os, sys
from acl_conformance.adapters.cann import CannAdapter
from acl_conformance.adapters.cann.pool import FORK_SERVERS, SPARES
source = {"agent": sys.argv[1]} if sys.argv[3] == "exec" else {"double": "1"}
a = CannAdapter(**source)
b = CannAdapter(**source, devices="1")
assert SPARES.wait_idle()
servers = [
    s.pid for spec in (a.spec, b.spec) if (s := FORK_SERVERS._servers.get(spec)) is not None
]
print(a.pid, b.pid, *(p.pid for p in SPARES._spares.values()), *servers, flush=True)
if sys.argv[2] == "kill":
    os._exit(0)  # no atexit, no finaliser: the agents see EOF on stdin and quit
"""


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def run_c_program(
    tmp: Path, source: str, lib: Path, language: str = "c", extra: Sequence[str] = ()
) -> subprocess.CompletedProcess[str]:
    """Compile ``source`` (C11 or C++17, -Wall -Wextra -Werror, <acl/acl.h> on the include
    path), link it against the double ``lib``, run it; its completed process."""
    from acl_conformance.adapters.cann import build

    src = tmp / ("p.c" if language == "c" else "p.cpp")
    src.write_text(source)
    compiler = build.c_compiler() if language == "c" else build.cxx_compiler()
    std = "-std=c11" if language == "c" else "-std=c++17"
    exe = tmp / "p"
    subprocess.run(
        [
            *compiler,
            std,
            *build.WARNINGS,
            *extra,
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
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
