"""The results document of one pytest run of the suite (``--acl-results FILE``).

One record per suite test, with a status in the suite's own words, and
everything a report needs about the run: the backend, the profile, the
options, and the requirement catalogue of the profile (so that ``reports``
needs nothing but this document).  Written by the pytest plugin; read by
``acl-conformance run``, the self-check and the reports.
"""

from __future__ import annotations

from typing import Any

import pytest

from acl_conformance.reference_impl.catalogue import for_profile

from .expectations import short_id

SCHEMA = "acl-conformance-results/2"

# A test's status: pass, fail, crash, timeout, not_supported, skipped, xfail, xpass,
# declined or error.  ``fail``: the backend broke a requirement (``failures`` say which);
# ``crash`` / ``timeout``: the backend died or hung; ``not_supported``: a capability the
# backend does not declare; ``skipped``: the test does not apply (another profile);
# ``xfail``: every failure it found is listed in the expectations file; ``xpass``: listed
# but passing (the entry is stale); ``declined``: it stopped before a step that puts a
# masked requirement at stake (known to fail in this run, or listed), having checked what
# it could; ``error``: the suite could not run the test (a set-up error).

DONE = frozenset({"pass", "xpass", "declined", "not_supported", "skipped"})
"""How a test's last attempt ends when the test has said all it could."""

END_OF_RUN = "acl-conformance: at the end of the run: "
"""How the plugin says on stderr that releasing the backend went wrong (the command
line passes such lines on)."""

NOT_SUPPORTED = "not supported: "
"""Prefix of skip reasons for capabilities the backend lacks."""


def status_of(report: pytest.TestReport, props: dict[str, Any]) -> str | None:
    """The status a report gives its test, or None when the report says nothing final
    (a setup or teardown phase that passed)."""
    if report.when == "call":
        if report.passed:
            return "pass"
        if report.skipped:
            if hasattr(report, "wasxfail"):
                return "xfail"
            if props.get("acl_status") == "declined":
                return "declined"
            # A capability the backend lacks, found in the test body (a skip at any phase).
            return "not_supported" if skip_reason(report).startswith(NOT_SUPPORTED) else "skipped"
        if "acl_status" not in props and "crashed while running" in str(report.longrepr):
            return "crash"  # pytest-xdist: the backend took the worker process down
        return str(props.get("acl_status", "error"))
    if report.when == "setup":
        if report.skipped:
            reason = skip_reason(report)
            if reason.startswith(NOT_SUPPORTED):
                return "not_supported"
            return "xfail" if hasattr(report, "wasxfail") else "skipped"
        if report.failed:
            return "error"
        return None
    if report.failed:  # teardown: the backend could not be cleaned up after the test
        return "error"
    return None


def skip_reason(report: pytest.TestReport) -> str:
    if isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    return ""


def record(report: pytest.TestReport, status: str) -> dict[str, Any]:
    """The result record of one test."""
    props: dict[str, Any] = dict(report.user_properties)
    message = props.get("message")
    if message is None and report.failed:
        message = str(report.longrepr)[:4000]
    failures = props.get("failures")
    if failures is None:
        failures = [props["acl_failure"]] if isinstance(props.get("acl_failure"), dict) else []
    last = props.get("last_status", status)
    return {
        "nodeid": report.nodeid,
        "suite_id": props.get("suite_id", short_id(report.nodeid)),
        "status": status,
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
        "evidence": props.get("evidence") or {},
        "masks": list(props.get("masks") or []),
        "attempts": int(props.get("attempts") or 1),
        "completed": last in DONE,
        "declined_by": props.get("declined_by"),
        "last_message": props.get("last_message"),
    }


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
    exitstatus: int,
    results: list[dict[str, Any]],
    selected: list[str],
    expectations: dict[str, Any],
) -> dict[str, Any]:
    """The whole results document."""
    return {
        "schema": SCHEMA,
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
    }
