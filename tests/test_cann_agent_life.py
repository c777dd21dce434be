"""The agent's life: bad options, builds, devices under xdist, isolation, spares, forks, CMake."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cann_agent_support import D2H
from cann_agent_support import EXIT_SCRIPT
from cann_agent_support import H2D
from cann_agent_support import _alive
from cann_agent_support import _parent
from cann_agent_support import agent_process
from cann_agent_support import close_spares
from cann_agent_support import fixture
from cann_agent_support import fork_server_pid
from cann_agent_support import reaped
from cann_agent_support import spare_pid
from cann_agent_support import spare_pids

from acl_conformance.adapters.cann import AgentDied
from acl_conformance.adapters.cann import CannAdapter
from acl_conformance.adapters.cann import build
from acl_conformance.adapters.cann.devices import spread_devices
from acl_conformance.adapters.cann.installed import skip_reason
from acl_conformance.adapters.cann.pool import SPARE_LIMIT
from acl_conformance.adapters.cann.pool import SPARES
from acl_conformance.adapters.registry import AdapterResolutionError
from acl_conformance.adapters.registry import resolve
from acl_conformance.adapters.simulator.layout import DEFAULT_FIXTURES


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
        (
            {"double": "1", "isolation": "worker"},
            "isolation='worker': expected reset, example, test, run",
        ),
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


def test_isolation_option(double_agent: Path) -> None:
    """The default is one agent reset between examples (what the suite reads is the
    instance's ``isolation``); isolation=run starts no spare."""
    assert CannAdapter.isolation == "reset"
    a = CannAdapter(agent=str(double_agent), isolation="Test")
    try:
        assert a.isolation == "test"
    finally:
        a.close()
    close_spares()
    b = CannAdapter(agent=str(double_agent), isolation="run", devices="3")
    try:
        assert b.isolation == "run" and SPARES.wait_idle()
        assert spare_pid(b.spec) is None
    finally:
        b.close()


def test_a_spare_is_started_and_used(double_agent: Path) -> None:
    """Taking an agent starts the next one in the background; the next adapter of the same
    options gets it, already through its start-up, and a new spare replaces it."""
    a = CannAdapter(agent=str(double_agent))
    try:
        assert a.isolation == "reset"
        assert SPARES.wait_idle()
        spare = spare_pid(a.spec)
        assert spare is not None and spare != a.pid and _alive(spare)
    finally:
        a.close()
    b = CannAdapter(agent=str(double_agent))
    try:
        assert b.pid == spare  # the spare was handed out
        assert b.set_device(0) == 0 and b.get_device() == (0, 0)  # a working, fresh agent
        assert SPARES.wait_idle()
        assert spare_pid(b.spec) not in (None, spare)
    finally:
        b.close()
    assert reaped(spare)


def test_a_spare_of_other_options_is_never_used(double_agent: Path) -> None:
    a = CannAdapter(agent=str(double_agent), devices="2")
    a.close()
    assert SPARES.wait_idle()
    spare = spare_pid(a.spec)
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
    assert SPARES.wait_idle() and len(spare_pids()) <= SPARE_LIMIT  # the oldest went first
    kept = spare_pid(a.spec)
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
    spare = spare_pid(a.spec)
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
    close_spares()
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


def test_fresh_agents_are_forks_of_one_server() -> None:
    """For the double, every agent is forked from one server per option set: each starts as
    an agent just started (its own pid, no current device, the initial bytes), whatever the
    one before did; fork=0 executes the agent instead, and so does isolation=run."""
    a = CannAdapter(double="1", devices="2")
    try:
        assert a.spec.fork
        server = fork_server_pid(a.spec)
        assert server is not None and _parent(a.pid) == server
        sym = fixture(a, "g_u64")
        _, buf = a.malloc_pageable(8)
        assert a.set_device(0) == 0 and a.write_host(buf, b"\xee" * 8) == 0
        assert a.memcpy_to_symbol(sym, buf, 8, 0, H2D) == 0
        assert a.create_stream()[0] == 0
    finally:
        a.close()
    assert agent_process(a).proc.returncode == 0  # its exit status, from the server
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
    server = fork_server_pid(a.spec)
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
            assert fork_server_pid(b.spec) not in (None, server)
            assert _parent(spare_pid(b.spec) or 0) == fork_server_pid(b.spec)
        finally:
            b.close()
        os.kill(a.pid, signal.SIGSEGV)
        # (the signal is delivered when the agent next runs: on a loaded machine a call made
        # at once may still be answered)
        deadline = time.monotonic() + 10
        while _alive(a.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
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
