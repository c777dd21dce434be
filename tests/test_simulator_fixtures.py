"""Simulator fixtures shared by the simulator's tests (no tests here).

A module takes ``eager`` and ``bare`` by importing ``eager_fixture`` / ``bare_fixture``
(pytest finds a fixture by the name it was declared with), and builds its own ``sim`` on
:func:`open_simulator` where it needs other options.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from acl_conformance.adapters.simulator import Simulator

SCHEDULES = ["eager", "lazy", "random"]
"""The simulator's schedules, the params of each module's schedule-parametrised ``sim``."""


def open_simulator(set_device: bool = True, **options: Any) -> Iterator[Simulator]:
    """The body of a simulator fixture: a Simulator with ``options``, on which this thread
    has set device 0 (unless ``set_device`` is False), closed after the test."""
    s = Simulator(**options)
    if set_device:
        assert s.set_device(0) == 0
    yield s
    s.close()


@pytest.fixture(name="eager")
def eager_fixture() -> Iterator[Simulator]:
    """A simulator with the default (eager) schedule; this thread has set device 0."""
    yield from open_simulator()


@pytest.fixture(name="bare")
def bare_fixture() -> Iterator[Simulator]:
    """A simulator on which this thread has set no device."""
    yield from open_simulator(set_device=False)
