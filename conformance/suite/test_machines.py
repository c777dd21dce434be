"""The stateful machines, run as tests (their failures name the requirement they broke)."""

from __future__ import annotations

import pytest

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

TestSingleDevice = pytest.mark.requirement(*COPY_REQUIREMENTS)(SingleDeviceMachine.TestCase)

TestMultiDevice = pytest.mark.needs(devices=2)(
    pytest.mark.requirement(
        "DEVICE-INSTANCE", "DEVICE-CURRENT", "STREAM-FOREIGN-DEVICE", "GETSYMBOL-ADDRESS"
    )(MultiDeviceMachine.TestCase)
)

TestThreads = pytest.mark.needs(threads=True)(
    pytest.mark.requirement("CONCURRENCY-THREADS", "EFFECT-BYTES", "PINNED-SOURCE-WINDOW")(
        ThreadsMachine.TestCase
    )
)
