"""junit.xml: the gate, as a CI dashboard shows it.

One test case per requirement (named by its ID, classed by its area), failing where
the gate fails for it: a failure the expectations file does not list, a crash or hang,
a requirement left undecided, an entry gone stale.  An expected failure and a missing
capability are skipped (with the reason and link), a pass passes.  The test suite is
named after the adapter and the profile; its properties carry both answers (the gate
and the conformance verdict) and the backend, as JSON, so that a dashboard that shows
only red and green still shows the gate, and the verdict is one click away.
"""

from __future__ import annotations

import json
from typing import Any
from xml.sax.saxutils import escape
from xml.sax.saxutils import quoteattr

from .evidence_text import counterexample_facts
from .evidence_text import evidence_lines
from .evidence_text import gate_basis
from .evidence_text import interrupted_text
from .evidence_text import shards_text
from .status import Status


def _attr(value: object) -> str:
    return quoteattr(str(value))


def _details(r: dict[str, Any]) -> str:
    lines = [f"{r['id']} ({r['level']}): {r['title']}", f"status: {r['status']}"]
    lines += evidence_lines(r)
    c = r.get("counterexample")
    if c:
        lines.append(f"counterexample from {c['test']}:")
        lines += [f"  {x};" for x in c.get("calls") or []]
        lines += [f"{label}: {value}" for _, label, value in counterexample_facts(c)]
    return "\n".join(lines)


def _case(r: dict[str, Any], stale: set[str], new: set[str]) -> tuple[str, str]:
    """(the testcase element, its junit status: pass / failure / skipped)."""
    head = f"<testcase classname={_attr('acl-conformance.' + r['clause'])} name={_attr(r['id'])} time={_attr(round(sum(t['duration_s'] for t in r['tests']), 3))}>"
    details = escape(_details(r))
    status = r["status"]
    if r["id"] in stale:
        body = f'<failure type="unexpected pass" message={_attr("listed as an expected failure, and it passed: the expectations entry is stale")}>{details}</failure>'
        junit_status = "failure"
    elif r["id"] in new:
        c = r.get("counterexample") or {}
        msg = (c.get("message") or r.get("reason") or status).splitlines()[0]
        body = f"<failure type={_attr(status)} message={_attr(msg)}>{details}</failure>"
        junit_status = "failure"
    elif status == Status.FLAKY and r.get("flake"):
        f = r.get("flake") or {}
        why = f"a flake the flakes file accepts ({f.get('key')}): {f.get('reason') or ''}"
        body = f"<skipped message={_attr(why)}/><system-out>{details}</system-out>"
        junit_status = "skipped"
    elif r.get("expected_failure"):
        e = r.get("expected_failure") or {}
        why = f"expected failure ({e.get('key')}): {e.get('reason') or ''}" + (
            f" {e['link']}" if e.get("link") else ""
        )
        body = f"<skipped message={_attr(why)}/><system-out>{details}</system-out>"
        junit_status = "skipped"
    elif status == Status.NOT_SUPPORTED:
        body = f"<skipped message={_attr('not supported: ' + (r.get('reason') or ''))}/>"
        junit_status = "skipped"
    else:
        body = f"<system-out>{details}</system-out>"
        junit_status = "pass"
    return f"{head}{body}</testcase>", junit_status


def render(report: dict[str, Any]) -> str:
    t = report["execution_target"]
    gate = report["gate"]
    exp = report["expectations"]
    stale = exp.get("stale_entries", [])
    stale_reqs = {e["requirement"] for e in stale if e["target"] == "requirement"}
    new = set(exp.get("new_failures", []))
    cases = [_case(r, stale_reqs, new) for r in report["requirements"]]
    for e in stale:
        if e["target"] == "test":
            msg = (
                f"the tests of entry {e['key']} did not fail citing {e['requirement']}: "
                "the entry is stale"
                if e.get("requirement")
                else f"the test listed by entry {e['key']} passed: the entry is stale"
            )
            cases.append(
                (
                    f'<testcase classname="acl-conformance.expectations" name={_attr(e["key"])} time="0">'
                    f'<failure type="unexpected pass" message={_attr(msg)}/></testcase>',
                    "failure",
                )
            )
    stopped = interrupted_text(report["run"])
    if stopped:
        # A run that did not reach its end fails as a run, whatever its rows say.
        cases.insert(
            0,
            (
                '<testcase classname="acl-conformance.run" name="the run reached its end" '
                f"time={_attr(report['run'].get('duration_s') or 0)}>"
                f'<failure type="interrupted" message={_attr(stopped)}/></testcase>',
                "failure",
            ),
        )
    failures = sum(1 for _c, k in cases if k == "failure")
    skipped = sum(1 for _c, k in cases if k == "skipped")
    backend = {
        "adapter": t["adapter"],
        "adapter_options": t.get("adapter_options") or {},
        "backend": t.get("backend"),
        "version": t.get("backend_version"),
        "capabilities": t.get("capabilities"),
        "profile": t["profile"],
    }
    props = {
        "gate": gate["result"],
        "gate_reasons": "; ".join(gate["reasons"]),
        "gate_against": gate_basis(report),
        "verdict": report["verdict"],
        "verdict_headline": report.get("verdict_headline", report["verdict"]),
        "verdict_reasons": "; ".join(report["verdict_reasons"]),
        "profile": t["profile"],
        "mode": report["run"]["mode"],
        "interrupted": report["run"].get("interrupted") or "",
        "shards": shards_text(report["run"]),
        "suite": f"{report['suite']['name']} {report['suite']['version']} {report['suite']['commit']}",
        "backend": json.dumps(backend, sort_keys=True),
    }
    name = f"acl-conformance {t['adapter']} {t['profile']}"
    properties = "".join(f"<property name={_attr(k)} value={_attr(v)}/>" for k, v in props.items())
    out = [
        '<?xml version="1.0" encoding="utf-8"?>',
        f'<testsuites name={_attr(name)} tests="{len(cases)}" failures="{failures}" errors="0" skipped="{skipped}">',
        f'<testsuite name={_attr(name)} tests="{len(cases)}" failures="{failures}" errors="0" '
        f'skipped="{skipped}" time={_attr(report["run"].get("duration_s") or 0)} '
        f"timestamp={_attr(report['run'].get('started') or '')}>",
        f"<properties>{properties}</properties>",
        *(c for c, _k in cases),
        f"<system-out>{escape(_summary(report))}</system-out>",
        "</testsuite>",
        "</testsuites>",
    ]
    return "\n".join(out) + "\n"


def _summary(report: dict[str, Any]) -> str:
    gate = report["gate"]
    lines = [
        f"gate: {gate['result'].upper()} ({gate_basis(report)})",
        *(f"  - {x}" for x in gate["reasons"]),
        f"conformance verdict: {report.get('verdict_headline', report['verdict'].upper())}",
        *(f"  - {x}" for x in report["verdict_reasons"]),
    ]
    return "\n".join(lines)
