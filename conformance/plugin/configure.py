"""Setting the run up: the suite's context, markers, expectations and skips files,
Hypothesis settings, the helper plugins, and the report header."""

from __future__ import annotations

from typing import Any

import pytest

from acl_conformance.adapters.registry import AdapterResolutionError
from acl_conformance.conformance.gating.expectations import EXPECTATIONS
from acl_conformance.conformance.gating.expectations import FLAKES
from acl_conformance.conformance.gating.expectations import SKIPS
from acl_conformance.conformance.gating.expectations import Expectations
from acl_conformance.conformance.gating.expectations import ExpectationsError
from acl_conformance.conformance.harness.runstate import RunState
from acl_conformance.conformance.session import context
from acl_conformance.conformance.session import placement
from acl_conformance.conformance.session import settings

from . import hunt
from . import shared
from .collection import Ordering
from .heartbeat import Heartbeat
from .inflight import InFlight
from .options import adapter_options
from .progress import Progress
from .session import Collector
from .xdist import XdistHooks

MARKERS = (
    "requirement(*ids): catalogue requirements this test checks",
    "needs(**capabilities): backend capabilities the test needs",
    "profile(name): the test applies to this profile only",
)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(Ordering(), "acl-conformance-ordering")
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    workerinput = getattr(config, "workerinput", None)
    suite = context.Suite(
        adapter_name=config.getoption("acl_adapter"),
        adapter_options={**adapter_options(config), **_device_ids(config, workerinput)},
        profile=config.getoption("acl_profile"),
        call_timeout=config.getoption("acl_call_timeout"),
    )
    context.install(suite)
    config.stash[shared.SUITE] = suite
    if workerinput is not None and workerinput.get("acl_run_dir"):
        suite.run = RunState(workerinput["acl_run_dir"])
    else:
        # The controller (or a run without workers) owns the run's shared state.
        suite.run = RunState.create()
    if hunt.active(config):
        hunt.configure(config, suite)
    config.pluginmanager.register(XdistHooks(config, suite.run), "acl-conformance-xdist")
    config.pluginmanager.register(Collector(config), "acl-conformance-results")
    config.pluginmanager.register(InFlight(config), "acl-conformance-inflight")
    if workerinput is None:
        # Where the terminal is: the controller hears of each test a worker starts and ends.
        heartbeat = config.getoption("acl_heartbeat")
        if heartbeat:
            config.pluginmanager.register(Heartbeat(config, heartbeat), "acl-conformance-heartbeat")
        if config.getoption("acl_progress"):
            config.pluginmanager.register(Progress(config), "acl-conformance-progress")
    config.stash[shared.EXPECT] = _listing(config.getoption("acl_expectations"), EXPECTATIONS)
    config.stash[shared.SKIPS] = _listing(config.getoption("acl_skips"), SKIPS)
    config.stash[shared.FLAKES] = _listing(config.getoption("acl_flakes"), FLAKES)
    suite.expected = {
        rid: (e.key, e.describe()) for rid, e in config.stash[shared.EXPECT].requirements().items()
    }
    settings.register(config.getoption("acl_examples"), config.getoption("acl_no_shrink"))
    if shared.suite_requested(config):
        # Now, before the suite's modules are imported: a state machine's TestCase
        # takes its settings when the class is built.
        shared.load_settings(config)


def _device_ids(config: pytest.Config, workerinput: dict[str, Any] | None) -> dict[str, str]:
    """``--acl-devices-per-worker``: the adapter option that tells the adapter this
    process's devices.  A worker's come from the controller (``XdistHooks``); the
    controller and a run without workers use the first group (the controller starts its
    backend only to check it before the run, which also shows that the adapter takes
    the option)."""
    per_worker = config.getoption("acl_devices_per_worker")
    if per_worker is None:
        return {}
    if workerinput is not None:
        return {placement.DEVICE_IDS: workerinput["acl_device_ids"]}
    return {placement.DEVICE_IDS: placement.ids_text(placement.device_groups(1, per_worker)[0])}


def _listing(path: str | None, what: str) -> Expectations:
    """The expectations or skips file at ``path`` (empty when none is given); a file that
    cannot be read or parsed is a usage error, in one line."""
    try:
        return Expectations.load(path, what) if path else Expectations.empty()
    except ExpectationsError as exc:
        raise pytest.UsageError(str(exc)) from None


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    if not shared.suite_requested(config):
        return None
    suite = config.stash[shared.SUITE]
    try:
        suite.adapter()
    except AdapterResolutionError as exc:
        raise pytest.UsageError(str(exc)) from None
    hyp = config.getoption("acl_hypothesis_profile")
    given = config.getoption("acl_seed")
    seed = given if given is not None else ("derandomised" if hyp == "standard" else "random")
    opts = ", ".join(f"{k}={v}" for k, v in suite.adapter_options.items())
    examples = config.getoption("acl_examples")
    return [
        f"acl-conformance: adapter={suite.adapter_name}{f' ({opts})' if opts else ''}, profile={suite.profile}",
        f"acl-conformance: backend version: {suite.backend_version}",
        f"acl-conformance: hypothesis profile={hyp}, seed={seed}"
        + (f", examples={examples}" if examples else ""),
        *(
            [f"acl-conformance: devices per worker: {per_worker} (worker I owns I*K .. I*K+K-1)"]
            if (per_worker := config.getoption("acl_devices_per_worker"))
            else []
        ),
    ]
