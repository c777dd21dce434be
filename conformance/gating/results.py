"""The results document of one pytest run of the suite (``--acl-results FILE``).

One record per suite test, with a status in the suite's own words, and
everything a report needs about the run: the backend, the profile, the
options, and the requirement catalogue of the profile (so that ``reports``
needs nothing but this document).  Written by the pytest plugin; read by
``acl-conformance run``, the self-check and the reports.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import IO
from typing import Any

import pytest

from acl_conformance.reference_impl.catalogue import for_profile
from acl_conformance.reports.status import Status

from .expectations import short_id

SCHEMA = "acl-conformance-results/3"

# A test's status is one of ``reports.status.TEST_STATUSES`` (the enum says what each
# means); ``fail``: the backend broke a requirement (the record's ``failures`` say which).

DONE = frozenset({Status.PASS, Status.XPASS, Status.DECLINED, Status.NOT_SUPPORTED, Status.SKIPPED})
"""How a test's last attempt ends when the test has said all it could."""

END_OF_RUN = "acl-conformance: at the end of the run: "
"""How the plugin says on stderr that releasing the backend went wrong (the command
line passes such lines on)."""

NOT_SUPPORTED = "not supported: "
"""Prefix of skip reasons for capabilities the backend lacks."""


SUITE_ERROR = "acl_suite_error"
"""The user property in which the plugin says, in one line, that the suite itself went wrong
while it ran a test (recording a failure raised): the run did not reach its end."""

ENDED = "did_not_reach_its_end"
"""The results document's list of why the run did not reach its end ([] when it did): a
worker lost, an internal error, the suite's own error, tests that never ran; the report
adds pytest's exit status and a stop (``reports/ending.py``)."""

ACL_STATUS = "acl_status"
"""The user property in which the plugin gives a test's status when pytest's outcome does
not tell it (``declined``, ``xpass``, or the status of the failure it found); its value is
the status' string (pytest-xdist carries user properties as plain data)."""


def status_of(report: pytest.TestReport, props: dict[str, Any]) -> Status | None:
    """The status a report gives its test, or None when the report says nothing final
    (a setup or teardown phase that passed)."""
    if report.when == "call":
        if report.passed:
            return Status.PASS
        if report.skipped:
            if hasattr(report, "wasxfail"):
                return Status.XFAIL
            if props.get(ACL_STATUS) == Status.DECLINED:
                return Status.DECLINED
            # A capability the backend lacks, found in the test body (a skip at any phase).
            return (
                Status.NOT_SUPPORTED
                if skip_reason(report).startswith(NOT_SUPPORTED)
                else Status.SKIPPED
            )
        if ACL_STATUS not in props and "crashed while running" in str(report.longrepr):
            return Status.CRASH  # pytest-xdist: the backend took the worker process down
        return Status(props.get(ACL_STATUS, Status.ERROR))
    if report.when == "setup":
        if report.skipped:
            reason = skip_reason(report)
            if reason.startswith(NOT_SUPPORTED):
                return Status.NOT_SUPPORTED
            return Status.XFAIL if hasattr(report, "wasxfail") else Status.SKIPPED
        if report.failed:
            return Status.ERROR
        return None
    if report.failed:  # teardown: the backend could not be cleaned up after the test
        return Status.ERROR
    return None


def skip_reason(report: pytest.TestReport) -> str:
    if isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    return ""


def record(report: pytest.TestReport, status: Status) -> dict[str, Any]:
    """The result record of one test."""
    props: dict[str, Any] = dict(report.user_properties)
    message = props.get("message")
    if message is None and report.failed:
        message = str(report.longrepr)[:4000]
    failures = props.get("failures")
    if failures is None:
        failures = [props["acl_failure"]] if isinstance(props.get("acl_failure"), dict) else []
        # What its clean-up or second looks met besides (plugin/reporting.py).
        failures += [f for f in props.get("acl_more_failures") or [] if isinstance(f, dict)]
    last = Status(props.get("last_status", status))
    return {
        "nodeid": report.nodeid,
        "suite_id": props.get("suite_id", short_id(report.nodeid)),
        "status": status.value,
        "phase": report.when,
        "requirements": str(props.get("requirements", "")).split(),
        "failed_requirement": props.get("failed_requirement") or None,
        "also_explained_by": str(props.get("also_explained_by") or "").split(),
        "call_count": props.get("call_count"),
        "calls": str(props["calls"]).splitlines() if props.get("calls") else [],
        "allowed": props.get("allowed"),
        "observed": props.get("observed"),
        "message": message,
        "skip_reason": skip_reason(report) if report.skipped else None,
        "expected_failure": props.get("expected_failure"),
        "trace_file": props.get("trace_file"),
        "reproduce": props.get("reproduce"),
        "duration_s": round(report.duration, 4),
        "failures": failures,
        "tally": props.get("tally") or {},
        "masks": list(props.get("masks") or []),
        "attempts": int(props.get("attempts") or 1),
        "completed": last in DONE,
        "declined_by": props.get("declined_by"),
        "last_message": props.get("last_message"),
    }


def crash_record(
    nodeid: str,
    suite_id: str,
    requirements: list[str],
    message: str,
    failures: list[dict[str, Any]] | None = None,
    status: Status = Status.CRASH,
) -> dict[str, Any]:
    """The result record of a test whose process died while it ran (no report of its own):
    ``failures`` are those it had found (kept from the process's notes, ``inflight.py``);
    ``status`` is ``crash`` when the backend took the process down, ``error`` when the suite
    did (it died, or stopped, while recording a failure: that failure is charged, and the
    test's other requirements are not decided by it)."""
    failures = list(failures or [])
    first = next((f for f in failures if f.get("requirement")), None)
    return {
        "nodeid": nodeid,
        "suite_id": suite_id,
        "status": status.value,
        "phase": "call",
        "requirements": list(requirements),
        "failed_requirement": first.get("requirement") if first else None,
        "also_explained_by": list(first.get("also") or []) if first else [],
        "call_count": first.get("call_count") if first else None,
        "calls": list(first.get("calls") or []) if first else [],
        "allowed": None,
        "observed": None,
        "message": message,
        "skip_reason": None,
        "expected_failure": None,
        "trace_file": first.get("trace_file") if first else None,
        "reproduce": first.get("reproduce") if first else None,
        "duration_s": 0.0,
        "failures": failures,
        "tally": {},
        "masks": [],
        "attempts": 1,
        "completed": False,
        "declined_by": None,
        "last_message": None,
        "cut_short": message,
    }


def failure_from_note(note: dict[str, Any], why: str, trace_written: bool) -> dict[str, Any]:
    """A failure record made of a process's short note of it (``plugin/inflight.py``,
    written before the failure is recorded): ``why`` says what became of the rest,
    ``trace_written`` whether the trace file the note names was written."""
    planned = note.get("trace_file")
    trace = "" if trace_written or not planned else f"; its trace {planned} was not written"
    return {
        "requirement": note.get("requirement"),
        "also": list(note.get("also") or []),
        "identity": note.get("identity"),
        "status": note.get("status") or Status.FAIL.value,
        "expected": note.get("expected"),
        "same_as": note.get("same_as"),
        "calls": [note["call"]] if note.get("call") else [],
        "call_count": 1 if note.get("call") else 0,
        "allowed": None,
        "observed": None,
        "message": f"{note.get('message') or ''}\n"
        + (f"call:     {note['call']}\n" if note.get("call") else "")
        + f"({why}{trace})",
        "trace_file": planned if trace_written else None,
        "reproduce": note.get("reproduce"),
        "attempt": note.get("attempt", 1),
        "replay": None,
    }


def unfinished_record(
    nodeid: str,
    suite_id: str,
    requirements: list[str],
    note: dict[str, Any] | None,
    how: str,
    died: bool,
    results_dir: Path,
) -> tuple[dict[str, Any], str]:
    """The record of a test that did not finish (``how``: what happened to it, ``died``:
    its process died), with what its process's note kept (the failures it had found, the
    one it was recording; trace files named relative to ``results_dir``); and the reason
    the run did not reach its end, in one line.

    The backend took the process down in the test: ``crash``, of the test's requirements.
    The suite's own end (its process died while recording a failure, an internal error,
    pytest ended): ``error``; the failures it had found are charged, and what the test did
    not get to is not decided by it."""
    notes = list(note.get("failures") or []) if note and note.get("nodeid") == nodeid else []
    failures = []
    for n in notes:
        trace = n.get("trace_file")
        written = bool(trace) and (results_dir / str(trace)).is_file()
        when = "after it was recorded" if n.get("recorded") else "while it was being recorded"
        failures.append(
            failure_from_note(n, f"kept from the test's own note: {how} {when}", written)
        )
    recording = next((n for n in notes if not n.get("recorded")), None)
    during = (
        f", while the suite was recording its failure of {recording.get('requirement') or '?'}"
        if recording is not None
        else ""
    )
    status = Status.CRASH if died and recording is None else Status.ERROR
    record = crash_record(nodeid, suite_id, requirements, f"{how}{during}", failures, status)
    return record, f"{suite_id}: {how}{during}"


def inflight_path(results_path: Path, worker: str) -> Path:
    """Where process ``worker`` (``gw0``, or ``main``) keeps its note of what it is doing."""
    return results_path.with_name(f"{results_path.stem}.inflight.{worker}.json")


def read_inflight(results_path: Path, worker: str) -> dict[str, Any] | None:
    """What process ``worker`` noted last, or None."""
    try:
        doc = json.loads(inflight_path(results_path, worker).read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def read_all_inflight(results_path: Path) -> list[dict[str, Any]]:
    """What every process of the run noted last."""
    out = []
    stem = f"{results_path.stem}.inflight."
    for p in sorted(results_path.parent.glob(f"{stem}*.json")):
        doc = read_inflight(results_path, p.name[len(stem) : -len(".json")])
        if doc is not None:
            out.append(doc)
    return out


def instances(
    started: Mapping[str, int],
    recovered: list[str],
    reset_failures: list[str],
    recovered_failures: list[str] | None = None,
    restarts: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """What the results document says of the backend instances one process
    started: how many, why, the tests recovered by a fresh one (and what each failed on,
    on the reused instance), the failed resets, and each restart after a failure (its
    reason, test, call, the requirement charged, and whether a test was charged)."""
    reasons = {k: int(v) for k, v in sorted(started.items()) if v}
    return {
        "started": sum(reasons.values()),
        "reasons": reasons,
        "recovered": list(recovered),
        "recovered_failures": list(recovered_failures or []),
        "reset_failures": list(reset_failures),
        "restarts": list(restarts or []),
    }


def merge_instances(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The backend instances of several processes (pytest-xdist's workers and its
    controller) as one."""
    reasons: dict[str, int] = {}
    for part in parts:
        for k, v in (part.get("reasons") or {}).items():
            reasons[k] = reasons.get(k, 0) + int(v)
    return instances(
        reasons,
        [t for part in parts for t in part.get("recovered") or []],
        [r for part in parts for r in part.get("reset_failures") or []],
        [r for part in parts for r in part.get("recovered_failures") or []],
        [r for part in parts for r in part.get("restarts") or []],
    )


def catalogue(profile: str) -> list[dict[str, Any]]:
    """The requirements of ``profile`` as plain data (what a report shows of each)."""
    out = []
    for r in for_profile(profile):
        level = r.level(profile)
        out.append(
            {
                "id": r.id,
                "clause": r.clause,
                "level": level.value if level else None,
                "title": r.title,
                "quote": list(r.quote),
                "cann": r.cann if profile == "cann" else None,
                "silent": r.silent,
            }
        )
    return out


def document(
    *,
    adapter: str,
    adapter_options: dict[str, str],
    profile: str,
    backend_name: str,
    backend_version: str,
    capabilities: dict[str, Any] | None,
    hypothesis_profile: str,
    seed: int | None,
    examples: int | None,
    workers: int,
    started: str,
    duration_s: float,
    exitstatus: int | None,
    results: list[dict[str, Any]],
    selected: list[str],
    expectations: dict[str, Any],
    flakes: dict[str, Any] | None = None,
    instances: dict[str, Any] | None = None,
    suite_version: str | None = None,
    shard: dict[str, Any] | None = None,
    did_not_reach_its_end: list[str] | None = None,
    collected: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The whole results document (``shard``: what part of the suite a ``--shard K/N`` run
    ran, ``shards.info``; None for a whole run)."""
    return {
        "schema": SCHEMA,
        "suite_version": suite_version,
        "adapter": adapter,
        "adapter_options": dict(adapter_options),
        "profile": profile,
        "backend_name": backend_name,
        "backend_version": backend_version,
        "capabilities": capabilities,
        "hypothesis_profile": hypothesis_profile,
        "seed": seed,
        "examples": examples,
        "workers": workers,
        "started": started,
        "duration_s": round(duration_s, 3),
        "exitstatus": exitstatus,
        "requirements": catalogue(profile),
        "selected": selected,
        "results": results,
        "expectations": expectations,
        "flakes": flakes,
        "instances": instances,
        "shard": shard,
        ENDED: list(did_not_reach_its_end or []),
        **({"collected": collected} if collected is not None else {}),
    }


# -- a run that may not reach its end ----------------------------------------------------


def journal_path(results_path: Path) -> Path:
    """Where the run's journal goes: beside the results file (``results.journal.jsonl``)."""
    return results_path.with_name(results_path.stem + ".journal.jsonl")


def collected_path(results_path: Path) -> Path:
    """Where the collected tests are listed: beside the results file."""
    return results_path.with_name(results_path.stem + ".collected.json")


class Journal:
    """The results document as it grows: one JSON line per fact, flushed as it comes (the
    run's options first, then the backend's identity and each test's record), so that a
    run stopped before its end (a signal, a time budget, a killed process) still has
    everything that finished.  :func:`from_journal` makes a results document of it."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file: IO[str] = path.open("w", encoding="utf-8")

    def write(self, key: str, value: Any) -> None:
        self._file.write(json.dumps({key: value}) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def write_collected(path: Path, tests: list[dict[str, Any]]) -> None:
    """List the tests a run is to run (``suite_id``, ``requirements``, ``skipped``), written
    whole or not at all (every pytest-xdist worker collects, and writes the same list)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(tests))
    os.replace(tmp, path)


def shard_path(results_path: Path) -> Path:
    """Where a shard's run says which part of the suite it ran: beside the results file."""
    return results_path.with_name(results_path.stem + ".shard.json")


def write_shard(path: Path, shard: dict[str, Any]) -> None:
    """Write what part of the suite a shard runs (``shards.info``), whole or not at all
    (every pytest-xdist worker collects, and writes the same)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(shard))
    os.replace(tmp, path)


def read_shard(path: Path) -> dict[str, Any] | None:
    """What :func:`write_shard` wrote, or None."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def read_collected(path: Path) -> list[dict[str, Any]] | None:
    """The list :func:`write_collected` wrote, or None (not written: the run stopped first)."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, list) else None


def from_journal(path: Path, duration_s: float) -> dict[str, Any] | None:
    """The results document of a run that stopped before its end, from its journal (None
    when the journal holds no header: the run stopped before it began)."""
    header: dict[str, Any] | None = None
    backend: dict[str, Any] = {}
    records: list[dict[str, Any]] = []
    ended: list[str] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # the last line, cut short by the stop
        if not isinstance(entry, dict):
            continue
        if "header" in entry:
            header = entry["header"]
        elif "backend" in entry:
            backend = entry["backend"]
        elif "record" in entry:
            records.append(entry["record"])
        elif ENDED in entry:
            ended.append(str(entry[ENDED]))
    if header is None:
        return None
    return document(
        **header,
        backend_name=backend.get("name") or header["adapter"],
        backend_version=backend.get("version", ""),
        capabilities=backend.get("capabilities"),
        duration_s=duration_s,
        exitstatus=None,
        results=records,
        did_not_reach_its_end=ended,
    )
