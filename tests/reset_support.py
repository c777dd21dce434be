"""Backends and helpers of the tests of isolation ``reset`` (``test_isolation_reset.py``).

The backends are named ``reset_support:<Class>`` (this folder is on the path of the test
process, and of the pytest runs it makes in process)."""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from acl_conformance.adapters.simulator import Simulator
from acl_conformance.adapters.variants.leaky import ACL_ERROR_RT_NO_STREAM_RESOURCE

COUNTS_PLUGIN = "agent_counts_plugin"
"""The plugin (``tests/agent_counts_plugin.py``) that writes each process's agent counts."""


class Resetting(Simulator):
    """The simulator, asking for isolation reset (one instance, reset between harnesses)."""

    isolation = "reset"


class ZeroedOnReset(Resetting):
    """A device whose context, after an aclrtResetDevice ended it, starts zero-filled
    (legal: DEVICE-RESET-CONTENTS), and that counts the bytes each aclrtMemcpyToSymbol
    and aclrtMemcpyFromSymbol moves (:attr:`moved`: (call, count) in order)."""

    def __init__(self, zero: str = "1", **options: Any) -> None:
        super().__init__(**options)
        self.zero = zero == "1"
        """Off (``zero=0``): a new context starts from the initial pattern, as the
        simulator's does."""
        self.zero_next: set[int] = set()
        self.moved: list[tuple[str, int]] = []

    def reset_device(self, device_id: int) -> int:
        had = self._devices.context_of(device_id) is not None
        code = super().reset_device(device_id)
        if self.zero and had and self._devices.context_of(device_id) is None:
            self.zero_next.add(device_id)
        return code

    def set_device(self, device_id: int) -> int:
        code = super().set_device(device_id)
        if code == 0 and device_id in self.zero_next:
            self.zero_next.discard(device_id)
            ctx = self._devices.current()
            assert ctx is not None
            ctx.memory[:] = 0
        return code

    def memcpy_to_symbol(self, symbol: int, src: int, count: int, offset: int, kind: int) -> int:
        self.moved.append(("to", count))
        return super().memcpy_to_symbol(symbol, src, count, offset, kind)

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        self.moved.append(("from", count))
        return super().memcpy_from_symbol(dst, dst_max, symbol, count, offset, kind)


class StreamsRunOut(Simulator):
    """aclrtCreateStream fails with 207008 once the instance has created ``limit`` streams
    (default 3), destroyed ones included: legal in any harness that creates fewer."""

    isolation = "reset"

    def __init__(self, limit: str = "3", isolation: str = "reset", **options: Any) -> None:
        super().__init__(**options)
        self.limit = int(limit)
        self.isolation = isolation
        self.created = 0

    def create_stream(self, null_stream: bool = False) -> tuple[int, int]:
        if self.created >= self.limit:
            return ACL_ERROR_RT_NO_STREAM_RESOURCE, 0
        code, stream = super().create_stream(null_stream)
        self.created += code == 0
        return code, stream


class HangsWhenAsked(Resetting):
    """Calls that may hang (the suite bounds each), and aclrtMemcpyToSymbol does while
    :attr:`hang` is set, until :attr:`released` is."""

    calls_may_hang = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.hang = threading.Event()
        self.released = threading.Event()

    def memcpy_to_symbol(self, symbol: int, src: int, count: int, offset: int, kind: int) -> int:
        if self.hang.is_set():
            self.released.wait(30)
        return super().memcpy_to_symbol(symbol, src, count, offset, kind)


def agent_counts(directory: Path) -> tuple[Counter[str], list[str], list[str]]:
    """What the plugin wrote in ``directory``, summed over the processes of the run: agents
    started by reason, tests recovered, reset failures."""
    agents: Counter[str] = Counter()
    recovered: list[str] = []
    failures: list[str] = []
    for path in sorted(directory.glob("agents-*.json")):
        doc = json.loads(path.read_text())
        agents.update(doc["instances"])
        recovered += doc["recovered"]
        failures += doc["reset_failures"]
    return agents, recovered, failures


def counting_env(directory: Path) -> dict[str, str]:
    """The environment that loads the plugin into a run (with ``-p`` :data:`COUNTS_PLUGIN`)
    and has it write into ``directory``."""
    here = str(Path(__file__).resolve().parent)
    path = os.environ.get("PYTHONPATH")
    return {
        "PYTHONPATH": here + (os.pathsep + path if path else ""),
        "ACL_TEST_AGENT_COUNTS": str(directory),
    }
