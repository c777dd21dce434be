"""The session: the backend started before anything runs, each suite test's result
collected (in the controller too, under pytest-xdist), the results document written
and the backend released at the end."""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from acl_conformance.adapters.registry import AdapterResolutionError
from acl_conformance.conformance.gating import results
from acl_conformance.conformance.gating.expectations import Expectations
from acl_conformance.conformance.gating.expectations import short_id
from acl_conformance.conformance.session import context
from acl_conformance.conformance.session import placement
from acl_conformance.reports.status import Status

from . import shared
from .options import adapter_options
from .xdist import INSTANCES
from .xdist import ITEMS

_RESULTS = pytest.StashKey[list[dict[str, Any]]]()
_STARTED = pytest.StashKey[tuple[str, float]]()
_BACKEND = pytest.StashKey[dict[str, Any]]()
_DIED = pytest.StashKey[list[pytest.TestReport]]()
_JOURNAL = pytest.StashKey[results.Journal]()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    if shared.suite_requested(session.config):
        # Before anything runs (and whatever the verbosity): a backend that cannot be
        # had is one line and a usage error, not an error per test.
        suite = session.config.stash[shared.SUITE]
        try:
            suite.adapter()
        except AdapterResolutionError as exc:
            if placement.DEVICE_IDS in suite.adapter_options and placement.DEVICE_IDS in str(exc):
                raise pytest.UsageError(
                    f"--devices-per-worker: adapter {suite.adapter_name!r} does not take the "
                    f"option {placement.DEVICE_IDS}, so its workers cannot have devices of their "
                    f"own (docs/writing-an-adapter.md, device groups): {exc}"
                ) from None
            raise pytest.UsageError(str(exc)) from None
        except context.BackendSetupError as exc:
            raise pytest.UsageError(f"adapter {suite.adapter_name!r}: {exc}") from None
        except Exception as exc:  # the backend was found but would not start
            what = " ".join(f"{type(exc).__name__}: {exc}".split())
            raise pytest.UsageError(
                f"adapter {suite.adapter_name!r}: the backend could not be started: {what}"
            ) from None
    session.config.stash[_STARTED] = (
        datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        time.monotonic(),
    )
    path = session.config.getoption("acl_results")
    if path and not hasattr(session.config, "workerinput"):
        # What finishes is kept as it finishes: a run stopped before its end still has it.
        journal = results.Journal(results.journal_path(Path(path)))
        journal.write("header", _header(session.config))
        session.config.stash[_JOURNAL] = journal


class Collector:
    """Collects each suite test's outcome as its report is logged (in the controller too,
    under xdist) on the run's config; registered by ``pytest_configure`` (the hook is
    given the report only)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        config = self.config
        props = dict(report.user_properties)
        journal = config.stash.get(_JOURNAL, None)
        if "suite_id" not in props:
            if report.failed and "crashed while running" in str(report.longrepr):
                # pytest-xdist's report for a test whose worker died: resolved at the end,
                # when the surviving workers have said what each test is.
                config.stash.setdefault(_DIED, []).append(report)
                if journal is not None:
                    journal.write("record", _died(config, report))
            return
        backend: Any = props.get("backend")
        if isinstance(backend, dict):
            config.stash[_BACKEND] = backend
            if journal is not None:
                journal.write("backend", backend)
        status = results.status_of(report, props)
        if status is None:
            return
        record = results.record(report, status)
        config.stash.setdefault(_RESULTS, []).append(record)
        if journal is not None:
            journal.write("record", record)


def _died(config: pytest.Config, report: pytest.TestReport) -> dict[str, Any]:
    """The crash record of a test whose worker died, as far as the collected list tells
    (the journal's: the workers' own account of their tests comes only at the end)."""
    path = Path(config.getoption("acl_results"))
    listed = {t["nodeid"]: t for t in results.read_collected(results.collected_path(path)) or []}
    t = listed.get(report.nodeid, {})
    return results.crash_record(
        report.nodeid,
        t.get("suite_id", short_id(report.nodeid)),
        t.get("requirements", []),
        f"the test's process died: {str(report.longrepr).strip()[:2000]}",
    )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    suite = config.stash.get(shared.SUITE, None)
    path = config.getoption("acl_results")
    journal = config.stash.get(_JOURNAL, None)
    if journal is not None:
        journal.close()
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None and suite is not None:
        # For the controller: how many backend instances this worker started, and why.
        workeroutput["acl_instances"] = _instances(suite)
    if path and not hasattr(config, "workerinput"):
        _write_results(config, suite, Path(path), int(exitstatus))
    if suite is not None:
        problem = suite.close()
        if problem and not hasattr(config, "workerinput"):
            # Every test has been judged by now; say it, but do not hang the run on it.
            sys.stderr.write(f"{results.END_OF_RUN}{problem}\n")


def _write_results(
    config: pytest.Config, suite: context.Suite | None, path: Path, exitstatus: int
) -> None:
    recorded: list[dict[str, Any]] = config.stash.get(_RESULTS, [])
    records = list(recorded)
    items = config.stash.get(ITEMS, {})
    for rep in config.stash.get(_DIED, []):
        sid, reqs = items.get(rep.nodeid, [short_id(rep.nodeid), []])
        rep.user_properties = [
            ("suite_id", sid),
            ("requirements", " ".join(reqs)),
            ("message", f"the test's process died: {str(rep.longrepr).strip()[:2000]}"),
        ]
        records.append(results.record(rep, Status.CRASH))
    backend = config.stash.get(_BACKEND, {})
    _started, t0 = config.stash.get(_STARTED, ("", time.monotonic()))
    doc = results.document(
        **_header(config),
        backend_name=backend.get("name") or config.getoption("acl_adapter"),
        backend_version=backend.get("version")
        or (suite.backend_version if suite is not None else ""),
        capabilities=backend.get("capabilities"),
        duration_s=time.monotonic() - t0,
        exitstatus=exitstatus,
        results=records,
        instances=results.merge_instances(
            [
                *config.stash.get(INSTANCES, []),
                *([_instances(suite)] if suite is not None else []),
            ]
        ),
        shard=results.read_shard(results.shard_path(path))
        if config.getoption("acl_shard")
        else None,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1))


def _listing(listing: Expectations) -> dict[str, Any]:
    """An expectations (or flakes) file as the results document keeps it."""
    return {
        "file": listing.source or None,
        "entries": [
            {
                "key": e.key,
                "target": e.target,
                "reason": e.reason,
                "link": e.link,
                # a requirement found in a test: which requirement, in which tests
                **({"requirement": e.requirement, "test": e.test} if e.is_found_in_test else {}),
            }
            for e in listing.entries
        ],
    }


def _instances(suite: context.Suite) -> dict[str, Any]:
    return results.instances(
        suite.instances_started,
        suite.recovered,
        suite.reset_failures,
        suite.recovered_failures,
        suite.restarts_listed,
    )


def _header(config: pytest.Config) -> dict[str, Any]:
    """What the results document says of the run, known before any test runs."""
    started, _t0 = config.stash.get(_STARTED, ("", 0.0))
    return {
        "suite_version": _suite_version(),
        "adapter": config.getoption("acl_adapter"),
        "adapter_options": adapter_options(config),
        "profile": config.getoption("acl_profile"),
        "hypothesis_profile": config.getoption("acl_hypothesis_profile"),
        "seed": config.getoption("acl_seed"),
        "examples": config.getoption("acl_examples"),
        "workers": int(getattr(config.option, "numprocesses", 0) or 0),
        "started": started,
        "selected": list(config.getoption("acl_requirement")),
        "expectations": _listing(config.stash[shared.EXPECT]),
        "flakes": _listing(config.stash[shared.FLAKES]),
    }


def _suite_version() -> str:
    """The installed suite's version (shards of one run are made by one suite)."""
    try:
        return importlib.metadata.version("acl-conformance")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
