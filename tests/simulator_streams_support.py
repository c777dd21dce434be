"""What test_simulator_streams.py and test_simulator_events_and_gate.py share: helpers, fixtures and case tables."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from test_simulator_fixtures import SCHEDULES
from test_simulator_fixtures import bare_fixture  # noqa: F401 (the fixtures bare, eager)
from test_simulator_fixtures import eager_fixture  # noqa: F401 (the fixtures bare, eager)
from test_simulator_fixtures import open_simulator
from test_simulator_support import OpenLater
from test_simulator_support import bounded

from acl_conformance.adapters.simulator import Simulator

COMPLETE, NOT_READY, RESERVED = 0, 1, 0xFFFF


DELAY = 0.4


"""Seconds before a timer opens a gate (the checks are causal, not timing margins)."""


@pytest.fixture(params=SCHEDULES, name="sim")
def sim_fixture(request: pytest.FixtureRequest) -> Iterator[Simulator]:
    yield from open_simulator(schedule=request.param, seed=3)


def new_stream(sim: Simulator) -> int:
    code, stream = sim.create_stream()
    assert code == 0 and stream != 0
    return stream


def new_event(sim: Simulator) -> int:
    code, event = sim.create_event()
    assert code == 0 and event != 0
    return event


def dead_stream(sim: Simulator) -> int:
    s = new_stream(sim)
    assert sim.destroy_stream(s) == 0
    return s


def foreign_stream(sim: Simulator) -> int:
    assert sim.set_device(1) == 0
    s = new_stream(sim)
    assert sim.set_device(0) == 0
    return s


def assert_blocks_until_opened(sim: Simulator, g: int, call: object) -> object:
    """``call()`` must not return before the timer opens gate ``g``."""
    opener = OpenLater(sim, g, DELAY)
    started = time.monotonic()
    result, returned = bounded(sim, call)  # type: ignore[arg-type]
    assert opener.opened_at is not None, "returned while the gate was still closed"
    assert started < opener.opened_at <= returned
    return result
