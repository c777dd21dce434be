"""Devices under pytest-xdist: each worker's agent starts on a device of its own.

Worker ``gwK`` starts its agent with ``ASCEND_RT_VISIBLE_DEVICES`` set to the device
list rotated by K (with devices 0,1: ``gw0`` sees ``0,1``, ``gw1`` sees ``1,0``).  Each
worker's device 0 is then a different physical device, so the single-device tests
(nearly all of them) are spread over the devices, while every worker still sees every
device and the two-device tests keep two.  An ``ASCEND_RT_VISIBLE_DEVICES`` already set
is the list rotated; otherwise the device count is asked of the agent once.

With device groups (``--devices-per-worker K``, the option ``device_ids``), each
worker's agent sees only its own group instead: ``ASCEND_RT_VISIBLE_DEVICES`` is the
group's devices, which the agent then numbers 0 .. K-1.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path

from acl_conformance.reference_impl.constants import ACL_SUCCESS

from .client import AgentProcess
from .process import environment


@functools.lru_cache(maxsize=8)
def probe_device_count(agent: Path, env_items: tuple[tuple[str, str], ...]) -> int:
    """How many devices an agent sees (started once per process and agent)."""
    proc = AgentProcess([str(agent)], dict(env_items), timeout=30)
    try:
        reply = proc.call(0, "hello", label="hello (device probe)")
        code, count = int(reply.outputs[5]), int(reply.outputs[6])
        return count if code == ACL_SUCCESS else 1
    finally:
        proc.close()


def xdist_worker_index() -> int | None:
    """K of pytest-xdist worker ``gwK``, or None outside xdist."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    if name.startswith("gw") and name[2:].isdigit():
        return int(name[2:])
    return None


def spread_devices(base: list[str], worker: int) -> str:
    """The device list ``base`` rotated so that worker ``worker`` starts on its own device."""
    k = worker % len(base)
    return ",".join(base[k:] + base[:k])


def group_devices(device_ids: tuple[int, ...]) -> str:
    """``ASCEND_RT_VISIBLE_DEVICES`` for a device group (the option ``device_ids``): the
    devices themselves, or, when ``ASCEND_RT_VISIBLE_DEVICES`` already limits what this
    process sees, the ones it lists at those indices.  ValueError (one line) for an index
    past that list."""
    given = [d.strip() for d in os.environ.get("ASCEND_RT_VISIBLE_DEVICES", "").split(",")]
    given = [d for d in given if d]
    if not given:
        return ",".join(str(i) for i in device_ids)
    past = [i for i in device_ids if i >= len(given)]
    if past:
        raise ValueError(
            f"cann option device_ids: device {past[0]} is not one of the {len(given)} that "
            f"ASCEND_RT_VISIBLE_DEVICES={','.join(given)} lets this process see"
        )
    return ",".join(given[i] for i in device_ids)


def visible_devices(
    spread: str, agent: Path, env: Mapping[str, str | None], device_ids: tuple[int, ...] = ()
) -> str | None:
    """``ASCEND_RT_VISIBLE_DEVICES`` for this worker's agent (None: leave it as it is): its
    device group when it has one (``spread`` is then not used: the group is the worker's
    own), else the rotation of ``spread``."""
    if device_ids:
        return group_devices(device_ids)
    if spread in ("0", "off", "false"):
        return None
    worker = xdist_worker_index()
    if worker is None:
        return None
    given = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")
    if given:
        base = [d.strip() for d in given.split(",") if d.strip()]
    else:
        probe_env = environment(env)
        probe_env.pop("ASCEND_RT_VISIBLE_DEVICES", None)
        count = probe_device_count(agent, tuple(sorted(probe_env.items())))
        base = [str(i) for i in range(count)]
    if len(base) < 2:
        return None
    return spread_devices(base, worker)
