"""The plugin's command-line options (all start with ``--acl-``), and the checks of
options that pytest cannot make itself."""

from __future__ import annotations

import pytest

from acl_conformance.conformance.gating import shards
from acl_conformance.conformance.session import settings
from acl_conformance.conformance.session.adapter_options import parse as parse_key_values
from acl_conformance.reference_impl.catalogue import PROFILES

from . import shared


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("acl-conformance", "ACL conformance suite")
    g.addoption(
        "--acl-adapter",
        default="sim",
        help="backend: sim, module:attribute, or an entry point name (default sim)",
    )
    g.addoption(
        "--acl-adapter-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option for the adapter's factory (repeatable), e.g. schedule=random",
    )
    g.addoption(
        "--acl-profile",
        default="spec",
        choices=PROFILES,
        help="spec (the text) or cann (CANN's exact codes)",
    )
    g.addoption(
        "--acl-expectations",
        default=None,
        metavar="FILE",
        help="known failures of this backend (skipped)",
    )
    g.addoption(
        "--acl-skips",
        default=None,
        metavar="FILE",
        help="tests not to run at all (the expectations file's format; reported as skipped)",
    )
    g.addoption(
        "--acl-flakes",
        default=None,
        metavar="FILE",
        help="flaky failures the gate accepts (the expectations file's format): a failure "
        "whose trace does not fail again against a fresh backend, of a listed requirement "
        "or test",
    )
    g.addoption(
        "--acl-hypothesis-profile",
        default="standard",
        type=settings.hypothesis_profile,  # an old name (ci) is read as its profile
        choices=settings.HYPOTHESIS_PROFILES,
        help="the Hypothesis settings profile: standard (derandomised, the default; "
        "ci is its old name, still accepted), dev, or thorough",
    )
    g.addoption(
        "--acl-seed",
        type=int,
        default=None,
        metavar="N",
        help="seed every Hypothesis test (each from N and its own id): the same N, the same run",
    )
    g.addoption(
        "--acl-examples", type=int, default=None, metavar="N", help="Hypothesis examples per test"
    )
    g.addoption(
        "--acl-call-timeout", default=settings.CALL_TIMEOUT_SECONDS, **settings.CALL_TIMEOUT_OPTION
    )
    g.addoption(
        "--acl-heartbeat",
        type=float,
        default=None,
        metavar="SECONDS",
        help="while a test runs longer than SECONDS, say so every SECONDS (default: never)",
    )
    g.addoption(
        "--acl-progress",
        action="store_true",
        default=False,
        help="name each suite test and its status as it ends, on a line of its own",
    )
    g.addoption(
        "--acl-trace-dir",
        default=None,
        metavar="DIR",
        help="write each failing test's call trace here",
    )
    g.addoption(
        "--acl-requirement",
        action="append",
        default=[],
        metavar="ID",
        help="run only the tests that check this requirement (repeatable)",
    )
    g.addoption(
        "--acl-results",
        default=None,
        metavar="FILE",
        help="write every suite test's result as JSON",
    )
    g.addoption(
        "--acl-no-shrink",
        action="store_true",
        default=False,
        help="report the first failing sequence as found, without shrinking it",
    )
    g.addoption(
        "--acl-shard",
        default=None,
        metavar="K/N",
        help="run part K of N of the suite's tests (a deterministic partition; the N parts "
        "together are the tests of the run without it)",
    )
    g.addoption(
        "--acl-durations",
        default=None,
        metavar="RESULTS.json",
        help="with --acl-shard: balance the parts by the seconds each test took in this "
        "earlier run",
    )
    g.addoption(
        "--acl-devices-per-worker",
        type=int,
        default=None,
        metavar="K",
        help="device groups: pytest-xdist worker I owns devices I*K .. I*K+K-1, given to "
        "its adapter as the option device_ids (default: every worker sees every device)",
    )
    g.addoption(
        "--acl-stop-on",
        default=None,
        metavar="ID",
        help="stop the run at the first failure that cites this requirement (self-checks)",
    )
    # the bug hunt (acl-conformance hunt runs the machines under HypoFuzz with these)
    g.addoption(
        "--acl-hunt",
        default=None,
        metavar="DATABASE",
        help="bug hunt: the machines only, not derandomised, sharing this example database "
        "(a directory, or redis://...)",
    )
    g.addoption(
        "--acl-finds",
        default=None,
        metavar="DIR",
        help="bug hunt: save each failure found here, one folder per failure identity",
    )


def adapter_options(config: pytest.Config) -> dict[str, str]:
    """The ``--acl-adapter-option KEY=VALUE`` options, as a mapping."""
    try:
        return parse_key_values(config.getoption("acl_adapter_option"), "--acl-adapter-option")
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


HYPOTHESIS_OPTIONS = {
    "--hypothesis-profile": "--acl-hypothesis-profile " + "|".join(settings.HYPOTHESIS_PROFILES),
    "--hypothesis-seed": "--acl-seed N",
}
"""Hypothesis' own options that the suite's settings would override, and what to use
instead."""


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Refuse, in one line, what a run of the suite cannot honour: Hypothesis' own profile
    and seed (the suite loads its own profile and seeds its tests itself; Hypothesis'
    plugin would also fail on the suite's profile names) and a negative heartbeat."""
    per_worker = config.getoption("acl_devices_per_worker")
    if per_worker is not None and per_worker < 1:
        raise pytest.UsageError(f"--acl-devices-per-worker {per_worker}: must be at least 1")
    heartbeat = config.getoption("acl_heartbeat")
    if heartbeat is not None and heartbeat <= 0:
        raise pytest.UsageError(f"--acl-heartbeat {heartbeat:g}: expected a number of seconds > 0")
    if config.getoption("acl_durations") and not config.getoption("acl_shard"):
        raise pytest.UsageError("--acl-durations is for --acl-shard K/N only")
    if config.getoption("acl_shard"):
        try:
            shards.parse(config.getoption("acl_shard"), "--acl-shard")
        except shards.ShardError as exc:
            raise pytest.UsageError(str(exc)) from None
    if not shared.suite_requested(config):
        return
    for option, instead in HYPOTHESIS_OPTIONS.items():
        if config.getoption(option, None) is not None:
            raise pytest.UsageError(
                f"{option} is not used by the acl-conformance suite: use {instead}"
            )
