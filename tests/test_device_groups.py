"""Device groups (``--devices-per-worker``) and workers sized to the CPUs this process may
use (affinity, cgroup quota): end to end on the simulator, and the CPU count from fake
affinity and cgroup files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from acl_conformance.adapters.cann import CannAdapter
from acl_conformance.adapters.cann import build
from acl_conformance.adapters.cann.devices import group_devices
from acl_conformance.adapters.simulator import Simulator
from acl_conformance.conformance.command_line import cli
from acl_conformance.conformance.command_line import runner
from acl_conformance.conformance.harness.runstate import RunState
from acl_conformance.conformance.plugin.xdist import XdistHooks
from acl_conformance.conformance.session import placement

# The two-device tests of one requirement: each worker brings up both of its devices.
TWO_DEVICE_REQUIREMENT = "DEVICE-INSTANCE"


def _touches(log: Path) -> dict[str, set[int]]:
    out: dict[str, set[int]] = defaultdict(set)
    for line in log.read_text().splitlines():
        worker, device = line.split()
        out[worker].add(int(device))
    return dict(out)


def test_each_worker_touches_only_its_own_devices(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log, d = tmp_path / "touched.txt", tmp_path / "report"
    rc = cli.main(
        [
            "run",
            "--adapter-option", "devices=8",
            "--adapter-option", f"touch_log={log}",
            "--jobs", "4",
            "--devices-per-worker", "2",
            "--requirement", TWO_DEVICE_REQUIREMENT,
            "--examples", "1",
            "--report-dir", str(d),
        ]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0, out[-3000:]
    report = json.loads((d / "report.json").read_text())
    assert report["verdict"] == "conformant"
    groups = report["run"]["device_groups"]
    assert groups == {"gw0": [0, 1], "gw1": [2, 3], "gw2": [4, 5], "gw3": [6, 7]}
    touched = _touches(log)
    assert touched, "no worker brought a device up"
    for worker, devices in touched.items():
        assert devices <= set(groups[worker]), f"{worker} touched {sorted(devices)}"
    # Each worker's logical device 1 is its group's second device: the two-device tests
    # ran on two devices of the group, not on one.
    assert any(len(devices) == 2 for devices in touched.values())
    # The header (terminal and report) says which worker had which devices.
    header = next(line for line in out.splitlines() if line.startswith("acl-conformance: "))
    assert "4 workers: --jobs 4" in header and "gw3: 6,7" in header
    assert "gw1: 2,3" in (d / "report.md").read_text()
    assert "gw2: 4,5" in (d / "report.html").read_text()
    assert report["execution_target"]["devices"] == 2  # what each worker was shown


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--jobs", "5", "--devices-per-worker", "2"], "5 worker(s) need 10 devices"),
        (["--devices-per-worker", "0"], "must be at least 1"),
        (["--devices-per-worker", "9"], "need 9 devices; the backend has 8"),
        (["--devices-per-worker", "2", "--adapter-option", "device_ids=1"], "give one"),
    ],
)
def test_groups_the_backend_cannot_make_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    d = tmp_path / "report"
    rc = cli.main(["run", "--adapter-option", "devices=8", *argv, "--report-dir", str(d)])
    err = capsys.readouterr().err
    assert rc == 2
    assert says in err and len(err.strip().splitlines()) == 1, err
    assert not d.exists()  # nothing ran


def test_an_adapter_that_takes_no_device_ids_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ungrouped_backend.py").write_text(
        "from acl_conformance.adapters.simulator import Simulator\n"
        "def make(devices='2'):\n"
        "    return Simulator(devices=devices)\n"
    )
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), *sys.path]))
    monkeypatch.syspath_prepend(str(tmp_path))
    rc = cli.main(
        [
            "run", "--adapter", "ungrouped_backend:make",
            "--adapter-option", "devices=4",
            "--devices-per-worker", "2",
            "--requirement", TWO_DEVICE_REQUIREMENT, "--examples", "1",
            "--report-dir", str(tmp_path / "report"),
        ]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2
    assert "does not take the option device_ids" in err, err
    assert len(err.strip().splitlines()) == 1, err


def _node(name: str) -> Any:
    return SimpleNamespace(gateway=SimpleNamespace(id=name), workerinput={}, workeroutput={})


def test_a_worker_started_in_place_of_a_dead_one_takes_its_devices(tmp_path: Path) -> None:
    config = SimpleNamespace(getoption=lambda name, default=None: 2, stash={})
    hooks = XdistHooks(config, RunState(tmp_path / "run"))
    nodes = [_node(f"gw{i}") for i in range(4)]
    for n in nodes:
        hooks.pytest_configure_node(n)
    assert [n.workerinput["acl_device_ids"] for n in nodes] == ["0,1", "2,3", "4,5", "6,7"]
    hooks.pytest_testnodedown(nodes[1], "crashed")
    clone = _node("gw4")
    hooks.pytest_configure_node(clone)
    assert clone.workerinput["acl_device_ids"] == "2,3"  # not gw0's, though 4 % 4 == 0


def test_without_jobs_the_devices_bound_the_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(placement, "usable_cpus", lambda: placement.Cpus(16, "", 16))
    opts = runner.RunOptions(adapter_options=["devices=8"], devices_per_worker=3)
    w = runner.workers(opts)
    assert w.jobs == 2 and w.groups == [[0, 1, 2], [3, 4, 5]]
    monkeypatch.setattr(placement, "usable_cpus", lambda: placement.Cpus(1, "affinity", 16))
    assert runner.workers(opts).jobs == 1


def test_the_simulator_shows_its_group_as_devices_from_0(tmp_path: Path) -> None:
    log = tmp_path / "touched.txt"
    sim = Simulator.from_options({"devices": "8", "device_ids": "5,2", "touch_log": str(log)})
    try:
        assert sim.init(None) == 0
        assert sim.get_device_count() == (0, 2)
        assert sim.capabilities().devices == 2
        assert sim.set_device(1) == 0 and sim.set_device(0) == 0
        assert sim.set_device(2) != 0  # only the group's two
    finally:
        sim.close()
    assert _touches(log) == {os.environ.get("PYTEST_XDIST_WORKER", "main"): {2, 5}}
    with pytest.raises(ValueError, match="device 8 is not one of the 8"):
        Simulator.from_options({"devices": "8", "device_ids": "7,8"})


# -- the CPUs this process may use -------------------------------------------------------


def _cgroup(tmp_path: Path, own: str, files: dict[str, str]) -> tuple[Path, Path]:
    root = tmp_path / "cgroup"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    proc = tmp_path / "proc_self_cgroup"
    proc.write_text(own)
    return root, proc


def test_cgroup_v2_quota_is_the_tightest_along_the_path(tmp_path: Path) -> None:
    root, proc = _cgroup(
        tmp_path,
        "0::/ci/job\n",
        {"cpu.max": "max 100000\n", "ci/cpu.max": "300000 100000\n", "ci/job/cpu.max": "150000 100000\n"},
    )  # fmt: skip
    assert placement.cgroup_quota(root, proc) == 1.5
    root, proc = _cgroup(tmp_path / "none", "0::/\n", {"cpu.max": "max 100000\n"})
    assert placement.cgroup_quota(root, proc) is None


def test_cgroup_v1_quota(tmp_path: Path) -> None:
    root, proc = _cgroup(
        tmp_path,
        "4:memory:/x\n2:cpu,cpuacct:/docker/abc\n",
        {
            "cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "200000\n",
            "cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n",
            "cpu/cpu.cfs_quota_us": "-1\n",
            "cpu/cpu.cfs_period_us": "100000\n",
        },
    )
    assert placement.cgroup_quota(root, proc) == 2.0
    assert placement.cgroup_quota(tmp_path / "absent", tmp_path / "absent.txt") is None


@pytest.mark.parametrize(
    ("mask", "quota", "usable", "says"),
    [
        (None, None, 8, "8 CPUs usable by this process (all of the host's)"),
        (8, None, 8, "8 CPUs usable by this process (all of the host's)"),
        (1, None, 1, "1 CPU usable by this process (affinity), host has 8"),
        (4, 1.5, 2, "2 CPUs usable by this process (cgroup quota), host has 8"),
        (2, 3.0, 2, "2 CPUs usable by this process (affinity), host has 8"),
        (None, 0.2, 1, "1 CPU usable by this process (cgroup quota), host has 8"),
    ],
)
def test_usable_cpus(mask: int | None, quota: float | None, usable: int, says: str) -> None:
    cpus = placement.usable_cpus(affinity=lambda: mask, quota=lambda: quota, host=lambda: 8)
    assert cpus.usable == usable and cpus.describe() == says


def test_the_default_workers_are_the_usable_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(placement, "usable_cpus", lambda: placement.Cpus(3, "cgroup quota", 64))
    assert runner.default_jobs() == 3
    w = runner.workers(runner.RunOptions())
    assert w.header() == "3 workers: 3 CPUs usable by this process (cgroup quota), host has 64"


def test_conformance_mode_accepts_jobs_and_device_groups() -> None:
    opts = runner.RunOptions(
        mode="conformance",
        jobs=2,
        devices_per_worker=1,
        given={"mode", "jobs", "devices_per_worker"},
    )
    runner.check(opts)  # raises RunError for a locked option
    with pytest.raises(runner.RunError, match="--seed"):
        runner.check(runner.RunOptions(mode="conformance", seed=1, given={"mode", "seed"}))


@pytest.mark.skipif(shutil.which("taskset") is None, reason="taskset is not installed")
def test_taskset_one_cpu_gives_one_worker(tmp_path: Path) -> None:
    if not hasattr(os, "sched_getaffinity") or 0 not in os.sched_getaffinity(0):
        pytest.skip("CPU 0 is not this process's to give")
    d = tmp_path / "report"
    exe = [sys.executable, "-m", "acl_conformance"]
    proc = subprocess.run(
        ["taskset", "-c", "0", *exe, "run", "--requirement", "INIT-CALLS", "--examples", "1",
         "--report-dir", str(d)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    host = os.cpu_count() or 1
    said = (
        f"1 worker: 1 CPU usable by this process (affinity), host has {host}"
        if host > 1
        else "1 worker: 1 CPU usable by this process (all of the host's)"
    )
    assert proc.stdout.startswith(f"acl-conformance: {said}\n"), proc.stdout[:500]
    run = json.loads((d / "report.json").read_text())["run"]
    assert run["jobs"] == 1 and run["workers"] == said
    assert said in (d / "report.md").read_text()


# -- the cann adapter: ASCEND_RT_VISIBLE_DEVICES per group ----------------------------------


def test_the_cann_agent_sees_only_its_group(monkeypatch: pytest.MonkeyPatch) -> None:
    agent = str(build.build_agent_with_double(()))
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")  # spread would rotate; a group does not
    monkeypatch.delenv("ASCEND_RT_VISIBLE_DEVICES", raising=False)
    a = CannAdapter(agent=agent, devices="8", device_ids="2,3")
    try:
        assert a.visible_devices == "2,3"
        assert a.environment["ASCEND_RT_VISIBLE_DEVICES"] == "2,3"
        assert a.init(None) == 0
        assert a.get_device_count() == (0, 2) and a.capabilities().devices == 2
        assert "2,3" in a.get_version_str()[1]  # the double names the devices it shows
    finally:
        a.close()
    # IDs index what this process may see when ASCEND_RT_VISIBLE_DEVICES already limits it.
    monkeypatch.setenv("ASCEND_RT_VISIBLE_DEVICES", "4,5,6,7")
    assert group_devices((1, 3)) == "5,7"
    with pytest.raises(ValueError, match="device 4 is not one of the 4"):
        group_devices((3, 4))
