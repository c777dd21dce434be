"""Each suite test's report: its status in the suite's words, the failure record, the
trace file and the command that reproduces it."""

from __future__ import annotations

import builtins
import os
import re
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from acl_conformance.conformance.gating import results
from acl_conformance.conformance.harness.failure import DECLINED
from acl_conformance.conformance.harness.failure import EXPECTED
from acl_conformance.conformance.harness.failure import KNOWN
from acl_conformance.conformance.harness.failure import BackendCrash
from acl_conformance.conformance.harness.failure import BackendTimeout
from acl_conformance.conformance.harness.failure import ConformanceFailure
from acl_conformance.conformance.harness.failure import Declined
from acl_conformance.conformance.harness.failure import ExpectedFailure
from acl_conformance.conformance.harness.failure import KnownFailure
from acl_conformance.conformance.session import attempts
from acl_conformance.conformance.session import context
from acl_conformance.conformance.traces import trace
from acl_conformance.conformance.traces.replay import recheck
from acl_conformance.conformance.traces.trace import TRACE_FORMAT
from acl_conformance.reference_impl import Violation
from acl_conformance.reports.status import Status

from . import inflight
from . import shared
from .options import adapter_options
from .seeding import reproduce_command

_STOPPED = pytest.StashKey["BaseException | None"]()
"""On a test: the suite's own stop (a known or expected failure, a declined step) that its
call raised, or None.  pytest reports a ``unittest.SkipTest`` raised by a test function as
a skip of its own that keeps only the reason; the stop itself, with what it knows (the
failure, the entry, the owner, the masked requirement), is taken here as it passes."""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    item.stash[_STOPPED] = None
    try:
        return (yield)
    except BaseException as exc:
        item.stash[_STOPPED] = _stop(exc)
        raise


def _stop_of(item: pytest.Item, raised: BaseException | None) -> BaseException | None:
    """The suite's own stop that ended the test's call: as its call raised it (a test
    function), or behind what the call report holds (a state machine: unittest hands pytest
    the reason only, and pytest's skip is raised while the stop is being handled, so the
    stop is its context)."""
    return item.stash.get(_STOPPED, None) or _stop(raised)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[Any]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if not shared.is_suite_item(item) or call.when != "call":
        return report
    report = _call_report(item, call, report)
    more = _more_failures(item)
    if more:
        report.user_properties.append(("acl_more_failures", more))
    return report


def _more_failures(item: pytest.Item) -> list[dict[str, Any]]:
    """The failures the test's harnesses met in their clean-up or second looks besides the
    one its call raised (``Suite.cleanup_failures``), as failure records: none is lost
    behind the one pytest reports."""
    suite = item.config.stash[shared.SUITE]
    pending, suite.cleanup_failures[:] = list(suite.cleanup_failures), []
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for exc in pending:
        expected: str | None = None
        same_as: str | None = None
        failure: BaseException | None = exc
        if isinstance(exc, Declined):
            continue  # a step not taken: no failure of the backend
        if isinstance(exc, ExpectedFailure):
            failure, expected = exc.failure, exc.key
        elif isinstance(exc, KnownFailure):
            failure, same_as = exc.failure, exc.owner
        elif isinstance(exc, BackendCrash) and exc.owner is not None:
            same_as = exc.owner
        identity = str(getattr(failure, "identity", None) or failure)
        if failure is None or identity in seen:
            continue
        seen.add(identity)
        out.append(_failure_record(item, failure, expected, same_as, replay=False))
    return out


def _call_report(
    item: pytest.Item, call: pytest.CallInfo[Any], report: pytest.TestReport
) -> pytest.TestReport:
    """The call report of a suite test in the suite's words (status, failure record)."""
    suite = item.config.stash[shared.SUITE]
    report.user_properties.append(("tally", suite.tally.to_json()))
    report.user_properties.append(("masks", sorted(suite.masks)))
    raised = call.excinfo.value if call.excinfo is not None else None
    stop = _stop_of(item, raised)
    stopped = _stop(raised) if report.failed and _unwrap(raised) is None else None
    if stopped is not None:
        # A stop of the suite's own (a known or expected failure, a declined step) that
        # Hypothesis wrapped in an error of its own (a backend whose answers change from
        # run to run makes the same example draw differently): it is still that stop.
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {stopped}")
    reason = results.skip_reason(report) if report.skipped else ""
    expected: str | None = None
    same_as: str | None = None
    failure: BaseException | None
    if reason.startswith(DECLINED):
        report.user_properties.append((results.ACL_STATUS, Status.DECLINED.value))
        if isinstance(stop, Declined):
            report.user_properties.append(("declined_by", stop.requirement))
        return report
    if reason.startswith(EXPECTED) and not hasattr(report, "wasxfail"):
        # A failure the expectations file lists by requirement (ExpectedFailure):
        # reported as pytest reports an xfail.
        report.wasxfail = reason
        exp = stop if isinstance(stop, ExpectedFailure) else None
        expected = exp.key if exp is not None else reason.removeprefix(EXPECTED)
        failure = exp.failure if exp is not None else None
        report.user_properties.append(("expected_failure", expected))
    elif reason.startswith(KNOWN):
        # The same failure as another test found (and shrinks): a failure of this test too.
        known = stop if isinstance(stop, KnownFailure) else None
        failure = known.failure if known is not None else None
        same_as = known.owner if known is not None else None
        report.outcome = "failed"
        report.longrepr = reason
    else:
        failure = _unwrap(call.excinfo.value if call.excinfo is not None else None)
        if isinstance(failure, BackendCrash) and failure.owner is not None:
            same_as = failure.owner  # the same hang or crash, met first by another test
    listed = item.stash.get(shared.LISTED, None)
    if failure is None:
        if listed is not None and report.failed and same_as is None:
            # A listed test stopped by something that is not a judgement of the model.
            report.outcome = "skipped"
            report.wasxfail = f"{EXPECTED}{listed}"
        elif listed is not None and report.passed and item.stash.get(attempts.ATTEMPT, 1) == 1:
            # Listed as failing, and passed: the entry is stale.
            report.outcome = "failed"
            report.longrepr = f"[XPASS] {shared.suite_id(item)} passed, but the expectations file lists it ({listed}): the entry is stale"
            report.user_properties.append((results.ACL_STATUS, Status.XPASS.value))
        return report
    if listed is not None and expected is None:
        # A test the expectations file lists: whatever it fails on is expected.
        carried = dict(item.user_properties).get("expected_failure")
        expected = str(carried) if carried is not None else None
        report.outcome = "skipped"
        report.wasxfail = f"{EXPECTED}{listed}"
        report.longrepr = None
    # A short note first, kept on disk: should recording it (the trace, the replay) take
    # the process down, the failure is still known (inflight.py).
    note = _failure_note(item, failure, expected, same_as)
    inflight.recording(item.config, note)
    try:
        record = _failure_record(item, failure, expected, same_as)
    except Exception as exc:  # a MemoryError too: the failure is kept, the run marked
        record = _unrecorded(item, note, exc)
        report.user_properties.append((results.SUITE_ERROR, record["suite_error"]))
    inflight.recorded(
        item.config, {**note, "status": record["status"], "trace_file": record["trace_file"]}
    )
    report.user_properties.append(("acl_failure", record))
    if expected is None:
        report.user_properties.append((results.ACL_STATUS, record["status"]))
    for key in ("reproduce", "calls", "call_count", "message", "trace_file"):
        report.user_properties.append((key, record[key]))
    if isinstance(failure, ConformanceFailure):
        report.user_properties.append(("failed_requirement", failure.requirement or ""))
        report.user_properties.append(("also_explained_by", " ".join(failure.also)))
        report.user_properties.append(("allowed", record["allowed"]))
        report.user_properties.append(("observed", record["observed"]))
    stop_on = item.config.getoption("acl_stop_on")
    # (a hang or a crash is charged to a requirement too)
    if (
        stop_on
        and isinstance(failure, (ConformanceFailure, BackendCrash))
        and failure.requirement == stop_on
    ):
        item.session.shouldstop = f"a failure cites {stop_on}"
    if same_as is None:
        report.sections.append(("acl-conformance: reproduce", reproduce_command(item)))
    return report


def _failure_status(failure: BaseException) -> Status:
    """A failure's status: a call that never returned, the backend raising or dying, or a
    wrong answer."""
    if isinstance(failure, BackendTimeout):
        return Status.TIMEOUT
    return Status.CRASH if isinstance(failure, BackendCrash) else Status.FAIL


def _charge(
    failure: BaseException, status: Status, expected: str | None, same_as: str | None
) -> dict[str, Any]:
    """What a failure record and its early note both say of where a failure is charged:
    the requirement it cites (a hang or crash has one too: the one its call's success
    stands for), its other readings, its identity, status, entry and owner."""
    return {
        "requirement": getattr(failure, "requirement", None),
        "also": list(getattr(failure, "also", ())),
        "identity": getattr(failure, "identity", None),
        "status": status.value,
        "expected": expected,
        "same_as": same_as,
    }


def _failure_record(
    item: pytest.Item,
    failure: BaseException,
    expected: str | None,
    same_as: str | None,
    replay: bool = True,
) -> dict[str, Any]:
    """One failure of one attempt of a test, as the results document keeps it.

    A failure found by this test itself (not expected, not another test's) is replayed
    against a fresh backend: one that does not fail again is ``flaky``, neither a pass nor
    a fail, and both traces are kept (the failing one, and ``….replay.trace.json``)."""
    status = _failure_status(failure)
    history: list[str] = list(getattr(failure, "history", []))
    hang = failure if isinstance(failure, BackendTimeout) and failure.call else None
    if hang is not None:
        history.append(f"{hang.call} /* never returned */")
    first = (
        failure.violations[0]
        if isinstance(failure, ConformanceFailure) and failure.violations
        else None
    )
    trace_path: Path | None = None
    replayed: dict[str, Any] | None = None
    if same_as is None:
        doc = _trace_doc(item, failure, status)
        trace_path = _write_trace(item, doc)
        if status is Status.FAIL and expected is None:
            suite = item.config.stash[shared.SUITE]
            if suite.attempt_reused:
                # Found on a backend instance that served earlier harnesses: the attempt runs
                # again on fresh ones (attempts.py), whose failure, if any, is replayed.
                replayed = {
                    "reproduced": None,
                    "broken": [],
                    "note": "not replayed: found on a reused backend, run again on fresh ones",
                    "trace_file": None,
                }
            elif not replay:
                # Met in the suite's clean-up after the test had failed: reported beside
                # that failure, which is the one replayed.
                replayed = {
                    "reproduced": None,
                    "broken": [],
                    "note": "not replayed: met in the suite's clean-up after the test failed",
                    "trace_file": None,
                }
            elif getattr(failure, "by_test", False):
                # A timing the test measured, an order of returns it compared: the calls
                # alone, replayed, do not repeat the check.
                replayed = {
                    "reproduced": None,
                    "broken": [],
                    "note": "not replayed: a check the test made itself, not a call's",
                    "trace_file": None,
                }
            else:
                replayed = _recheck(item, doc, trace_path)
            if replayed["reproduced"] is False:
                status = Status.FLAKY
    record = {
        **_charge(failure, status, expected, same_as),
        "calls": history[-60:],
        "call_count": len(history),
        **_allowed_and_observed(first, hang),
        "message": str(failure)[:8000],
        "trace_file": recorded_path(item.config, trace_path),
        "reproduce": reproduce_command(item).splitlines()[0],
        "attempt": item.stash.get(attempts.ATTEMPT, 1),
        "replay": replayed,
    }
    if status is Status.FLAKY:
        record["flake"] = _flake_entry(item, record)
    return record


def _failure_note(
    item: pytest.Item, failure: BaseException, expected: str | None, same_as: str | None
) -> dict[str, Any]:
    """What is known of a failure before it is recorded, in a few hundred bytes: its
    requirement, test, call, message's first line and where its trace is to go."""
    try:
        text = str(failure)
    except Exception:  # even this may run out of memory
        text = type(failure).__name__
    lines = text.splitlines()
    call = next((x for x in lines if x.startswith("call:")), None)
    hang = failure if isinstance(failure, BackendTimeout) and failure.call else None
    history: list[str] = list(getattr(failure, "history", [])[-1:])
    status = _failure_status(failure)
    return {
        **_charge(failure, status, expected, same_as),
        "test": shared.suite_id(item),
        "call": (
            call.removeprefix("call:").strip()
            if call
            else f"{hang.call} /* never returned */"
            if hang is not None
            else history[0]
            if history
            else None
        ),
        "message": (lines[0] if lines else "")[:500],
        "trace_file": recorded_path(item.config, _trace_path(item)) if same_as is None else None,
        "reproduce": reproduce_command(item).splitlines()[0],
        "attempt": item.stash.get(attempts.ATTEMPT, 1),
    }


def _unrecorded(item: pytest.Item, note: dict[str, Any], exc: BaseException) -> dict[str, Any]:
    """The record of a failure whose recording raised (``exc``): what its note knows, and
    why the rest is missing (``suite_error``: the run did not reach its end)."""
    path = _trace_path(item)
    why = f"the suite could not record it: {error_line(exc)}"
    record = results.failure_from_note(note, why, path is not None and path.is_file())
    record["suite_error"] = (
        f"{why}; the failure of {note.get('requirement') or 'a requirement'} in "
        f"{note.get('test')} is kept from its note (its requirement, call and trace path)"
    )
    return record


def error_line(exc: BaseException) -> str:
    """An exception in one line: its type, message and where it was raised."""
    try:
        text = " ".join(str(exc).split())[:300]
    except Exception:  # an exception whose str() raises
        text = ""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = (
        f" (in {Path(tb.tb_frame.f_code.co_filename).name} {tb.tb_frame.f_code.co_name})"
        if tb is not None
        else ""
    )
    return f"{type(exc).__name__}{': ' + text if text else ''}{where}"


def _allowed_and_observed(
    first: Violation | None, hang: BackendTimeout | None
) -> dict[str, str | None]:
    """What the profile allowed and what the backend did, in words: of the first violation
    of a failure, or of a call that never returned."""
    if first is not None:
        return {"allowed": first.allowed, "observed": first.observed}
    if hang is not None:
        return {"allowed": hang.allowed, "observed": f"the call did not return within {hang.limit}"}
    return {"allowed": None, "observed": None}


def _recheck(item: pytest.Item, doc: dict[str, Any], trace_path: Path | None) -> dict[str, Any]:
    """The failing trace replayed against a fresh backend (see ``replay.recheck``); the
    replay's own trace is kept beside the failing one."""
    config = item.config
    suite = config.stash[shared.SUITE]
    # What the replay's own harness meets is the replay's to say (``found``), not a failure
    # of the test's clean-up.
    pending = list(suite.cleanup_failures)
    try:
        found = recheck(
            trace.Trace.from_json(doc, str(trace_path) if trace_path else shared.suite_id(item)),
            suite.adapter_name,
            dict(suite.adapter_options),
            suite.profile,
            suite.call_timeout,
        )
    finally:
        suite.cleanup_failures[:] = pending
    suite.instances_started[context.REPLAY] += found.started
    out = found.to_json()
    out["trace_file"] = None
    if found.records and trace_path is not None:
        replay_doc = {
            **doc,
            "status": (Status.FAIL if found.reproduced else Status.PASS).value,
            "message": "the failing trace replayed against a fresh backend: "
            + (f"broke {', '.join(found.broken)}" if found.reproduced else "every call allowed"),
            "calls": [r.to_json(raw=True) for r in found.records],
        }
        path = trace_path.with_name(
            trace_path.name.removesuffix(".trace.json") + ".replay.trace.json"
        )
        trace.dump(replay_doc, path)
        out["trace_file"] = recorded_path(config, path)
    return out


def _flake_entry(item: pytest.Item, record: dict[str, Any]) -> str | None:
    """The flakes file's entry that accepts this flaky failure (by the test's id, by a
    requirement the failure cites, or by such a requirement found in this test), if any."""
    flakes = item.config.stash[shared.FLAKES]
    entry = flakes.match(shared.suite_id(item))
    if entry is None:
        listed = {**flakes.requirements(), **flakes.found_in(shared.suite_id(item))}
        cited = [record["requirement"], *record["also"]]
        entry = next((listed[r] for r in cited if r in listed), None)
    return entry.key if entry is not None else None


def _trace_doc(item: pytest.Item, failure: BaseException, status: Status) -> dict[str, Any]:
    """The trace file's document of ``failure``: its calls and what a replay needs."""
    return {
        "format": TRACE_FORMAT,
        "test": shared.suite_id(item),
        "adapter": item.config.getoption("acl_adapter"),
        "profile": item.config.getoption("acl_profile"),
        "status": status.value,
        "requirement": getattr(failure, "requirement", None),
        "message": str(failure),
        "adapter_options": adapter_options(item.config),
        **getattr(failure, "backend", {}),
        # Bytes as they are: trace.dump writes large ones into the trace's data file.
        "calls": [r.to_json(raw=True) for r in getattr(failure, "trace", [])],
    }


def _write_trace(item: pytest.Item, doc: dict[str, Any]) -> Path | None:
    """Write the trace file (``--acl-trace-dir``; none without it); where it is."""
    path = _trace_path(item)
    if path is None:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    trace.dump(doc, path)
    return path


def _trace_path(item: pytest.Item) -> Path | None:
    """Where the trace file of this attempt's failure goes (``--acl-trace-dir``), or None."""
    trace_dir = item.config.getoption("acl_trace_dir")
    if not trace_dir:
        return None
    attempt = item.stash.get(attempts.ATTEMPT, 1)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", item.nodeid)[-150:]
    return Path(trace_dir) / (stem + (f"__attempt{attempt}" if attempt > 1 else "") + ".trace.json")


def recorded_path(config: pytest.Config, path: Path | None) -> str | None:
    """A trace file as the results document records it: relative to the folder of the
    results file (``--acl-results``), so that the folder can be moved, archived by a CI or
    opened on another machine and its reports still name the traces beside them
    (``traces/….trace.json`` in ``acl-conformance run``'s report folder).  Without a
    results file, or where no relative path leads there (another drive), as it was
    written."""
    if path is None:
        return None
    results = config.getoption("acl_results")
    if not results:
        return str(path)
    try:
        return Path(os.path.relpath(path.resolve(), Path(results).resolve().parent)).as_posix()
    except ValueError:
        return str(path)


_GROUP: Any = getattr(builtins, "BaseExceptionGroup", None)


_STOPS = (KnownFailure, ExpectedFailure, Declined)
_FAILURES = (ConformanceFailure, BackendCrash)


def _find(
    exc: BaseException | None, kinds: tuple[type[BaseException], ...]
) -> BaseException | None:
    """The first exception of ``kinds`` behind ``exc``: in its causes and contexts, and in
    the members of exception groups (what Hypothesis and pytest wrap it in)."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, kinds):
            return exc
        if _GROUP is not None and isinstance(exc, _GROUP):
            for sub in exc.exceptions:
                found = _find(sub, kinds)
                if found is not None:
                    return found
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def _stop(exc: BaseException | None) -> BaseException | None:
    """The suite's own stop (a known or expected failure, a declined step) behind ``exc``
    (asked only when no failure of the suite's own is behind it)."""
    return _find(exc, _STOPS)


def _unwrap(exc: BaseException | None) -> BaseException | None:
    """The suite's own failure inside whatever Hypothesis or pytest wrapped it in."""
    return _find(exc, _FAILURES)
