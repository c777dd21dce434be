"""The session: the backend started before anything runs, each suite test's result
collected (in the controller too, under pytest-xdist), the results document written
and the backend released at the end."""

from __future__ import annotations

import contextlib
import datetime
import importlib.metadata
import json
import re
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

from . import inflight
from . import shared
from .options import adapter_options
from .reporting import error_line
from .xdist import INSTANCES
from .xdist import ITEMS
from .xdist import LOST
from .xdist import SCHEDULED

_RESULTS = pytest.StashKey[list[dict[str, Any]]]()
_STARTED = pytest.StashKey[tuple[str, float]]()
_BACKEND = pytest.StashKey[dict[str, Any]]()
_DIED = pytest.StashKey[list[dict[str, Any]]]()
_JOURNAL = pytest.StashKey[results.Journal]()
_ENDED = pytest.StashKey[list[str]]()
"""Why the run did not reach its end (results.ENDED), as the controller learns it."""
_INTERNAL = pytest.StashKey[bool]()
"""pytest has stopped with an internal error (the first one is the one said)."""
_ITEMS = pytest.StashKey[list[str]]()
"""A run without pytest-xdist: the node ids of the suite's tests it is to run."""


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

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not hasattr(self.config, "workerinput"):
            self.config.stash[_ITEMS] = [i.nodeid for i in session.items if shared.is_suite_item(i)]

    def pytest_internalerror(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """pytest stopped with an internal error (in the controller, or one a worker
        forwarded): the run does not reach its end; said in one line."""
        if hasattr(self.config, "workerinput") or self.config.stash.get(_INTERNAL, False):
            return  # (a later one follows from the first)
        self.config.stash[_INTERNAL] = True
        _ended(self.config, f"pytest stopped with an internal error: {_internal_error(excinfo)}")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        config = self.config
        props = dict(report.user_properties)
        journal = config.stash.get(_JOURNAL, None)
        if "suite_id" not in props:
            if report.failed and "crashed while running" in str(report.longrepr):
                if _worker_error(config, report) == STOPPED_BY_USER:
                    return  # the run was interrupted (SIGINT): the test was not reached
                # pytest-xdist's report for a test whose worker died (the test it was
                # running, named by the worker's own note of it when it has one).
                record, why = _died(config, report)
                config.stash.setdefault(_DIED, []).append(record)
                if journal is not None:
                    journal.write("record", record)
                _ended(config, why)
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
        # The suite's own error while recording a failure of any attempt of the test (the
        # failure is kept from its note): the run does not reach its end.
        for error in [
            props.get(results.SUITE_ERROR),
            *(f.get("suite_error") for f in record["failures"] if isinstance(f, dict)),
        ]:
            if error:
                _ended(config, str(error))
        if journal is not None:
            journal.write("record", record)


def _ended(config: pytest.Config, why: str) -> None:
    """Note (and journal) one reason the run does not reach its end."""
    ended = config.stash.setdefault(_ENDED, [])
    if why in ended:
        return
    ended.append(why)
    journal = config.stash.get(_JOURNAL, None)
    if journal is not None:
        with contextlib.suppress(OSError, ValueError):
            journal.write(results.ENDED, why)


def _internal_error(excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    """An internal error in one line: a worker's (pytest-xdist hands it over as the text of
    its traceback) or the controller's own."""
    exc = excinfo.value
    text = str(exc)
    if isinstance(exc, AssertionError) and text.lstrip().startswith("Traceback"):
        lines = [x.strip() for x in text.splitlines() if x.strip()]
        while len(lines) > 1 and lines[-1].startswith("assert "):
            lines.pop()  # pytest's rewriting of pytest-xdist's ``assert False, text``
        if lines and lines[-1].startswith("E "):
            lines[-1] = lines[-1][2:].strip()
        frames = re.findall(r'File "([^"]+)", line \d+, in (\S+)', text)
        where = f" (in {Path(frames[-1][0]).name} {frames[-1][1]})" if frames else ""
        return f"in a worker: {' '.join(lines[-1].split())[:300]}{where}"
    return error_line(exc)


def _suite_ids(config: pytest.Config) -> dict[str, tuple[str, list[str]]]:
    """Each test's suite id and requirements, by node id: from the list the workers wrote
    when they collected, and what the workers said of their tests at their end."""
    out: dict[str, tuple[str, list[str]]] = {}
    path = config.getoption("acl_results")
    if path:
        for t in results.read_collected(results.collected_path(Path(path))) or []:
            out[t["nodeid"]] = (t["suite_id"], list(t["requirements"]))
    for nodeid, (sid, reqs) in config.stash.get(ITEMS, {}).items():
        out.setdefault(nodeid, (sid, list(reqs)))
    return out


def _unfinished(
    config: pytest.Config, nodeid: str, note: dict[str, Any] | None, how: str, died: bool
) -> tuple[dict[str, Any], str]:
    """The record of a test that did not finish, and why the run did not reach its end
    (``results.unfinished_record``)."""
    sid, reqs = _suite_ids(config).get(nodeid, (short_id(nodeid), []))
    path = Path(config.getoption("acl_results"))
    return results.unfinished_record(nodeid, sid, reqs, note, how, died, path.parent)


STOPPED_BY_USER = "keyboard-interrupt"
"""How pytest-xdist says a worker went down on a SIGINT (not a death: the run was stopped)."""


def _worker_of(report: pytest.TestReport) -> str:
    """The worker pytest-xdist names on the report of a test whose worker went down."""
    return str(getattr(getattr(getattr(report, "node", None), "gateway", None), "id", "") or "")


def _worker_error(config: pytest.Config, report: pytest.TestReport) -> str | None:
    return config.stash.get(LOST, {}).get(_worker_of(report))


def _died(config: pytest.Config, report: pytest.TestReport) -> tuple[dict[str, Any], str]:
    """The record of a test whose worker died while running it, and why the run did not
    reach its end.  pytest-xdist names the test its worker was given last; the worker's own
    note (``inflight.py``) says what it had found and was recording, if anything."""
    worker = _worker_of(report)
    note = inflight.read(Path(config.getoption("acl_results")), worker) if worker else None
    error = config.stash.get(LOST, {}).get(worker) or str(report.longrepr).strip()[:300]
    how = f"its process died (worker {worker or '?'}: {error})"
    record, why = _unfinished(config, report.nodeid, note, how, died=True)
    return {**record, "worker": worker}, why


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
    ids = _suite_ids(config)
    for died in config.stash.get(_DIED, []):
        if not died["requirements"]:  # known by now from what the workers said at their end
            died = {**died, "requirements": ids.get(died["nodeid"], ("", []))[1]}
        records.append(died)
    seen = {r["nodeid"] for r in records}
    # pytest's Interrupted (a SIGINT, --acl-stop-on, -x, pytest-xdist's most crashed
    # workers): what did not finish was not reached, and says so (reports/ending.py);
    # a worker that died on its own has already been said.
    interrupted = exitstatus == int(pytest.ExitCode.INTERRUPTED)
    for note in [] if interrupted else inflight.read_all(path):
        nodeid = note.get("nodeid")
        if nodeid and nodeid in seen and config.stash.get(_INTERNAL, False):
            # reported, but its process did not get past it (an internal error there)
            sid = ids.get(nodeid, (short_id(nodeid), []))[0]
            _ended(config, f"worker {note.get('worker')} stopped in {sid}, after its result")
        elif nodeid and nodeid not in seen:
            # A test a process was running when the run ended without it (an internal
            # error stopped it): named, with what its note kept.
            how = f"the run ended while worker {note.get('worker')} ran it"
            record, why = _unfinished(config, nodeid, note, how, died=False)
            records.append(record)
            seen.add(nodeid)
            _ended(config, why)
    inflight.remove_all(path)
    named = {str(d.get("worker")) for d in config.stash.get(_DIED, [])}
    for worker, error in config.stash.get(LOST, {}).items():
        if worker not in named and error != STOPPED_BY_USER:  # down between tests
            _ended(config, f"worker {worker} was lost: {error}")
    scheduled = config.stash.get(SCHEDULED, None)
    to_run = (
        [n for n in scheduled if n in ids]
        if scheduled is not None
        else config.stash.get(_ITEMS, [])
    )
    never = [n for n in to_run if n not in seen]
    if never and not interrupted:
        first = ids.get(never[0], (short_id(never[0]), []))[0]
        _ended(
            config,
            f"{len(never)} of {len(to_run)} tests never ran ({first}"
            + (f" and {len(never) - 1} more)" if len(never) > 1 else ")"),
        )
    noted: list[str] = config.stash.get(_ENDED, [])
    ended = list(noted)
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
        did_not_reach_its_end=ended,
        # what was to run, for a run that did not reach its end: which tests it left
        collected=results.read_collected(results.collected_path(path)) if ended or never else None,
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
