"""Where a run's work goes: how many pytest-xdist workers, and which devices each owns.

- :func:`usable_cpus`: the CPUs this process may use (its affinity mask and its cgroup's
  CPU quota), not the host's count: a CI runner's container or a ``taskset`` sees
  fewer CPUs than the host has, and one worker per host CPU would only make the
  workers wait for each other;
- :func:`device_groups`: with ``--devices-per-worker K``, worker ``i`` owns devices
  ``i*K .. i*K+K-1``; the adapter is told them as the option :data:`DEVICE_IDS` and shows
  them to the suite as devices ``0 .. K-1``;
- :func:`probe_device_count`: how many devices the backend has, asked of it once.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from acl_conformance.adapters.registry import resolve

DEVICE_IDS = "device_ids"
"""The adapter option that tells an adapter the devices its worker owns: their IDs (as
the backend numbers them when nothing limits what it sees), comma-separated.  An
adapter that honours it shows exactly those devices, as devices ``0 .. K-1`` in that
order; one that does not know it rejects it as an unknown option, and the run stops
with that line (docs/writing-an-adapter.md)."""

CGROUP_ROOT = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class Cpus:
    """The CPUs this process may use, why that many, and the host's count."""

    usable: int
    limit: str
    """What limits them: ``"affinity"``, ``"cgroup quota"``, or ``""`` (nothing: all of
    the host's)."""
    host: int

    def describe(self) -> str:
        """E.g. ``1 CPU usable by this process (affinity), host has 2``."""
        cpus = f"{self.usable} CPU{'' if self.usable == 1 else 's'}"
        if not self.limit:
            return f"{cpus} usable by this process (all of the host's)"
        return f"{cpus} usable by this process ({self.limit}), host has {self.host}"


def _affinity() -> int | None:
    getter = getattr(os, "sched_getaffinity", None)  # not on macOS or Windows
    if getter is None:
        return None
    try:
        return len(getter(0))
    except OSError:
        return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _quota(quota: str | None, period: str | None) -> float | None:
    try:
        q, p = int(quota or ""), int(period or "")
    except ValueError:
        return None
    return q / p if q > 0 and p > 0 else None  # a quota of -1 (v1) or "max" (v2): none


def _up(path: str) -> list[list[str]]:
    """A cgroup's path and each one above it, down to the root: ``a/b`` -> a/b, a, root."""
    parts = [p for p in path.strip().split("/") if p]
    return [parts[:depth] for depth in range(len(parts), -1, -1)]


def cgroup_quota(root: Path = CGROUP_ROOT, proc_cgroup: Path | None = None) -> float | None:
    """The CPU quota of this process's cgroup in CPUs (quota / period; the tightest of its
    cgroup and those above it), or None where there is none or it cannot be read.

    cgroup v2: ``cpu.max`` (``"max 100000"`` or ``"QUOTA PERIOD"``) along the process's
    path (``/proc/self/cgroup``'s line ``0::/path``); cgroup v1: ``cpu.cfs_quota_us`` over
    ``cpu.cfs_period_us`` (-1: no quota) along its ``cpu`` controller's path, under
    ``cpu`` or ``cpu,cpuacct``.  Inside a container the paths are usually ``/``."""
    proc_cgroup = Path("/proc/self/cgroup") if proc_cgroup is None else proc_cgroup
    v2, v1 = "", ""
    for line in (_read(proc_cgroup) or "").splitlines():
        _, controllers, path = [*line.split(":", 2), "", ""][:3]
        if line.startswith("0::"):
            v2 = path
        elif "cpu" in controllers.split(","):
            v1 = path
    found: list[float] = []
    for parts in _up(v2):
        fields = (_read(root.joinpath(*parts, "cpu.max")) or "").split()
        q = _quota(*fields) if len(fields) == 2 and fields[0] != "max" else None
        if q is not None:
            found.append(q)
    for mount in ("cpu", "cpu,cpuacct"):
        for parts in _up(v1):
            d = root.joinpath(mount, *parts)
            q = _quota(_read(d / "cpu.cfs_quota_us"), _read(d / "cpu.cfs_period_us"))
            if q is not None:
                found.append(q)
    return min(found) if found else None


def usable_cpus(
    affinity: Callable[[], int | None] = _affinity,
    quota: Callable[[], float | None] = cgroup_quota,
    host: Callable[[], int | None] = os.cpu_count,
) -> Cpus:
    """The CPUs this process may use: the fewest of its affinity mask and its cgroup's
    quota (rounded up: a quota of 1.5 CPUs keeps two workers busy part of the time, which
    beats one), at least 1."""
    total = host() or 1
    usable, limit = total, ""
    mask = affinity()
    if mask is not None and mask < usable:
        usable, limit = mask, "affinity"
    q = quota()
    if q is not None and math.ceil(q) < usable:
        usable, limit = max(1, math.ceil(q)), "cgroup quota"
    return Cpus(max(1, usable), limit, total)


def device_groups(workers: int, per_worker: int) -> list[list[int]]:
    """Worker ``i``'s devices, for each worker: ``i*K .. i*K+K-1``."""
    return [list(range(i * per_worker, (i + 1) * per_worker)) for i in range(workers)]


def ids_text(ids: list[int]) -> str:
    """Device IDs as the :data:`DEVICE_IDS` option writes them: ``2,3``."""
    return ",".join(str(i) for i in ids)


def groups_text(groups: list[list[int]]) -> str:
    """``gw0: 0,1; gw1: 2,3``: which worker owns which devices."""
    return "; ".join(f"gw{i}: {ids_text(g)}" for i, g in enumerate(groups))


def probe_device_count(adapter: str, options: Mapping[str, str]) -> int:
    """How many devices the backend has (aclrtGetDeviceCount of an instance started for
    the question and closed again).  Raises what resolving the adapter raises
    (AdapterResolutionError, ValueError) and RuntimeError for a backend that cannot say."""
    backend = resolve(adapter, dict(options))
    try:
        code = backend.init(None)
        if code != 0:
            raise RuntimeError(f"aclInit(NULL) returned {code}")
        code, count = backend.get_device_count()
        backend.finalize()
        if code != 0:
            raise RuntimeError(f"aclrtGetDeviceCount returned {code}")
        return count
    finally:
        backend.close()
