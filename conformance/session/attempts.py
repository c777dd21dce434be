"""A suite test run until every requirement it carries has had its say.

A test stops at its first failure, so whatever it would have gone on to check stays
unchecked.  When a test fails on requirement R (or on a requirement the expectations
file lists), it is run again with R *masked*: the harness declines the steps that put
R at stake and sets aside what it already knows R breaks, so the rest of the test
runs to its end and its other requirements get a requirement status of their own.  A
further failure masks its requirement too, up to ``MAX_ATTEMPTS`` runs.

pytest sees one result per test: the attempts are merged (every failure found, the
checks of every attempt, the masks of the last), and logged once.

An attempt that meets a hang (a call that did not return, charged to a requirement:
``conformance/harness/hangs.py``) is run again too, once per hang: the run declines every
later call in the hung call's situation, so the next attempt steps past it.

An attempt that fails (a failure, or a crash or a hang charged to no call; not a declined
step, an expected failure or a stale expectation; a call that never returned or raised is
charged where it happened, its situation declined from then on, and stands) after one of
its harnesses ran on a backend instance that had served earlier harnesses (``Suite.attempt_reused``: isolation ``reset`` or ``test``)
is run again at once with a fresh instance for every harness, and that run replaces it:
what the earlier harnesses left behind must never fail a later test.  If the rerun fails,
its failure stands (fresh instances found it); if it passes, the test passes, "recovered by
a fresh backend instance" (``Suite.recovered``), and the worker gives every later harness a
fresh instance.  The rerun's call report says which (user property ``fresh_instance_recheck``:
``"recovered"`` or ``"reproduced"``).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from _pytest.runner import runtestprotocol

from acl_conformance.conformance.gating.results import ACL_STATUS
from acl_conformance.reference_impl.evidence import Tally
from acl_conformance.reports.status import Status

from . import context

MAX_ATTEMPTS = 5
MASKS = pytest.StashKey[frozenset[str]]()
"""The requirements a test's own earlier attempts failed on (masked in the next)."""
ATTEMPT = pytest.StashKey[int]()
"""Which attempt of the test is running (1 for the first)."""
HANGS = pytest.StashKey[frozenset[str]]()
"""The hangs (failure identities) a test's earlier attempts met: the next attempt declines
the call that hung (``hangs.py``) and goes on, so that the test's other requirements are
decided."""


def props(report: pytest.TestReport) -> dict[str, Any]:
    return dict(report.user_properties)


def _call(reports: list[pytest.TestReport]) -> pytest.TestReport | None:
    return next((r for r in reports if r.when == "call"), None)


def _to_mask(report: pytest.TestReport) -> frozenset[str]:
    """What the attempt's failure says to mask next: the requirement it cites and those it
    could equally be charged to (nothing for a crash, a timeout or a suite error)."""
    failure = props(report).get("acl_failure")
    if not isinstance(failure, dict) or failure.get("status") not in (Status.FAIL, Status.FLAKY):
        return frozenset()
    return frozenset(r for r in [failure.get("requirement"), *failure.get("also", [])] if r)


def _hang_of(report: pytest.TestReport | None) -> str | None:
    """The identity of the hang (or crash: a call that raised) the attempt met, charged to
    a requirement (None for any other ending, and for a hang of a backend's start-up or
    release): the next attempt declines its situation and goes on."""
    failure = props(report).get("acl_failure") if report is not None else None
    if not isinstance(failure, dict) or failure.get("status") not in (
        Status.TIMEOUT,
        Status.CRASH,
    ):
        return None
    identity = failure.get("identity")
    return str(identity) if identity and failure.get("requirement") else None


def run(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Run ``item`` (again, with more masked, while that decides more) and log one result."""
    ihook = item.ihook
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    item.stash[MASKS] = frozenset()
    item.stash[HANGS] = frozenset()
    runs: list[list[pytest.TestReport]] = []
    suite = context.current()
    while True:
        item.stash[ATTEMPT] = len(runs) + 1
        stop = item.session.shouldstop
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
        if _failed(reports) and suite.attempt_reused and _hang_of(_call(reports)) is None:
            # (A call that never returned or raised stands as found: the run now declines
            # its situation, so a rerun could not meet it again, and would pass for it.)
            item.session.shouldstop = stop  # (--acl-stop-on) the rerun decides
            reports = _recheck(item, nextitem, suite, _what_failed(reports))
        runs.append(reports)
        call = _call(reports)
        seen: frozenset[str] = item.stash[MASKS]
        more = _to_mask(call) - seen if call is not None else frozenset[str]()
        hang = _hang_of(call)
        again = hang is not None and hang not in item.stash[HANGS]
        if (not more and not again) or len(runs) >= MAX_ATTEMPTS:
            break
        if hang is not None:
            item.stash[HANGS] = item.stash[HANGS] | {hang}
        item.stash[MASKS] = seen | more
        _reset(item)
    for report in merge(runs):
        ihook.pytest_runtest_logreport(report=report)
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)


def _failed(reports: list[pytest.TestReport]) -> bool:
    """Did the attempt fail on the backend (a failure, known failure, crash, timeout or
    suite error; not a stale expectation, which fails on a pass)?"""
    call = _call(reports)
    return call is not None and call.failed and props(call).get(ACL_STATUS) != Status.XPASS


def _what_failed(reports: list[pytest.TestReport]) -> str:
    """The failure of an attempt, in one line: the requirement it cites and its message
    (kept when a recheck on fresh instances passes: what the reused instance got wrong)."""
    call = _call(reports)
    failure = props(call).get("acl_failure") if call is not None else None
    if isinstance(failure, dict):
        lines = str(failure.get("message") or "").strip().splitlines()
        first = lines[0] if lines else ""
        if first.startswith("["):
            return first
        head = failure.get("requirement") or failure.get("status") or "failure"
        return f"[{head}] {first}".strip()
    text = str(call.longrepr) if call is not None else ""
    return (text.strip().splitlines() or ["failed"])[-1][:300]


def _recheck(
    item: pytest.Item, nextitem: pytest.Item | None, suite: context.Suite, first: str
) -> list[pytest.TestReport]:
    """The attempt again, a fresh backend instance for every harness: its reports
    (``first``: what the attempt on a reused instance failed on)."""
    _reset(item)
    with suite.recheck():
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
    failed = _failed(reports)
    if not failed:
        suite.recovered_by_fresh_instance(suite.test_id or item.nodeid, first)
    call = _call(reports)
    if call is not None:
        call.user_properties.append(
            ("fresh_instance_recheck", "reproduced" if failed else "recovered")
        )
    return reports


def _reset(item: pytest.Item) -> None:
    """Fresh fixtures for the next attempt."""
    init = getattr(item, "_initrequest", None)
    if init is not None:
        init()


def merge(runs: list[list[pytest.TestReport]]) -> list[pytest.TestReport]:
    """The reports of the attempts as one test's: setup of the first, teardown of the last,
    and a call report that fails if any attempt failed unexpectedly, is an expected
    failure if every failure was expected, and is the last attempt's otherwise."""
    if len(runs) == 1:
        return runs[0]
    calls = [c for c in (_call(r) for r in runs) if c is not None]
    setup = next(r for r in runs[0] if r.when == "setup")
    teardown = [r for r in runs[-1] if r.when == "teardown"]
    failed = [c for c in calls if c.failed]
    xfailed = [c for c in calls if hasattr(c, "wasxfail")]
    base = copy.copy(failed[0] if failed else xfailed[0] if xfailed else calls[-1])
    last = props(calls[-1])
    tally = Tally.total(Tally.from_json(props(c).get("tally")) for c in calls)
    failures = [
        f
        for c in calls
        for f in [props(c).get("acl_failure"), *(props(c).get("acl_more_failures") or [])]
        if isinstance(f, dict)
    ]
    kept = [(k, v) for k, v in base.user_properties if k not in _MERGED]
    base.user_properties = [
        *kept,
        ("tally", tally.to_json()),
        ("failures", failures),
        ("attempts", len(calls)),
        ("masks", last.get("masks", [])),
        ("last_status", _status(calls[-1]).value),
    ]
    if "declined_by" in last:
        base.user_properties.append(("declined_by", last["declined_by"]))
    if calls[-1] is not base and not calls[-1].passed and not calls[-1].skipped:
        # How the last attempt ended, when that is not the failure reported above.
        base.user_properties.append(("last_message", str(calls[-1].longrepr)[-3000:]))
    base.duration = sum(c.duration for c in calls)
    return [setup, base, *teardown]


_MERGED = {
    "tally",
    "failures",
    "attempts",
    "masks",
    "last_status",
    "declined_by",
    "last_message",
    "acl_more_failures",
}


def _status(call: pytest.TestReport) -> Status:
    """How one attempt ended (the merged report's ``last_status``)."""
    p = props(call)
    if call.passed:
        return Status.PASS
    if hasattr(call, "wasxfail"):
        return Status.XFAIL
    return Status(p.get(ACL_STATUS, Status.SKIPPED if call.skipped else Status.ERROR))
