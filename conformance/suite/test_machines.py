"""The stateful machines, run as tests (their failures name the requirement they broke).

Each machine runs as several *shards*: test items of their own, each with a
share of the example budget and a seed of its own (see the plugin's
``--acl-seed``), so that pytest-xdist can spread one machine's examples over
its workers.
"""

from __future__ import annotations

import math
import unittest
from typing import Any

import pytest
from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine

from acl_conformance.conformance.machines.multi_device import MultiDeviceMachine
from acl_conformance.conformance.machines.single_device import SingleDeviceMachine
from acl_conformance.conformance.machines.threads import ThreadsMachine

COPY_REQUIREMENTS = (
    "EFFECT-BYTES",
    "EFFECT-NO-STRAY",
    "EFFECT-NEIGHBOURS",
    "STREAM-FIFO",
    "STREAM-UNORDERED",
    "STREAM-EVENT-ORDER",
    "PINNED-COMPLETE-AFTER-SYNC",
    "PINNED-SOURCE-WINDOW",
    "PAGEABLE-BLOCKS",
    "PAGEABLE-SOURCE-REUSE",
    "PAGEABLE-DRAINS-STREAM",
    "HYGIENE-NO-WRITE",
    "HYGIENE-NO-ENQUEUE",
    "HYGIENE-STREAM-USABLE",
    "KIND-ACCEPTED",
    "KIND-REJECTED",
    "BOUNDS-PAST-END",
    "BOUNDS-OVERFLOW",
    "SYMBOL-INTERIOR",
    "STREAM-INVALID-HANDLE",
    "STREAM-QUERY",
    "TOSYMBOL-SYNC",
    "FROMSYMBOL-BYTES",
)


def shards(
    machine: type[RuleBasedStateMachine], n: int, *marks: pytest.MarkDecorator
) -> dict[str, type[unittest.TestCase]]:
    """``n`` test classes for ``machine``, named ``Test<Machine>_<k>``, sharing the
    profile's example budget (each at least one example)."""
    budget = settings.default.max_examples if settings.default is not None else 100
    per = max(1, math.ceil(budget / n))
    name = machine.__name__.removesuffix("Machine")
    out: dict[str, type[unittest.TestCase]] = {}
    for k in range(n):
        shard: Any = type(f"{machine.__name__}_{k}", (machine,), {"__module__": machine.__module__})
        case = shard.TestCase
        case.settings = settings(case.settings, max_examples=per)
        case.state_machine = shard  # the plugin seeds it (--acl-seed)
        for mark in marks:
            case = mark(case)
        out[f"Test{name}_{k}"] = case
    return out


globals().update(shards(SingleDeviceMachine, 8, pytest.mark.requirement(*COPY_REQUIREMENTS)))
globals().update(
    shards(
        MultiDeviceMachine,
        4,
        pytest.mark.needs(devices=2),
        pytest.mark.requirement(
            "DEVICE-INSTANCE", "DEVICE-CURRENT", "STREAM-FOREIGN-DEVICE", "GETSYMBOL-ADDRESS"
        ),
    )
)
globals().update(
    shards(
        ThreadsMachine,
        8,
        pytest.mark.needs(threads=True),
        pytest.mark.requirement("CONCURRENCY-THREADS", "EFFECT-BYTES", "PINNED-SOURCE-WINDOW"),
    )
)
