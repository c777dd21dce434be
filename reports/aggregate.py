"""From per-test results to per-requirement statuses, a summary and a verdict.

A requirement's status is the worst of what its tests say of it:

- a test that passed says ``pass``; one the backend cannot run (a capability it
  does not declare) says ``not_supported``; one that stopped at a failure the
  expectations file lists says ``xfail`` of the requirement that failure cites,
  and nothing of the others;
- a test that failed citing the requirement says ``fail``; a test that failed
  citing *another* requirement says ``unknown`` of this one (it stopped before
  it could check it: a check that did not finish is never a pass);
- a test whose backend died or hung says ``crash`` / ``timeout``; one the suite
  could not run says ``unknown``;
- a failure that one observation cannot pin on a single requirement (a rejected
  end-exact copy on the NULL stream breaks the bound or the default stream; a
  wrong answer with several host threads may or may not need the threads) names
  the others it could be charged to (``also_explained_by``).  When the one it
  cites never failed clearly but one of the others did (elsewhere in the run,
  with no other reading), the failure is charged to that other one, instead of
  a second requirement failing for the same bug.

Worst first: fail, crash, timeout, unknown, xfail, pass, not_supported (a
requirement is not_supported only when none of its tests could run).  A
requirement no test reported on is ``unknown``.
"""

from __future__ import annotations

from typing import Any

STATUS_ORDER = ("fail", "crash", "timeout", "unknown", "xfail", "pass", "not_supported")
"""Requirement statuses, worst first."""

SUMMARY_KEYS = ("pass", "fail", "not_supported", "crash", "timeout", "unknown", "xfail")

BAD = frozenset({"fail", "crash", "timeout", "unknown"})
"""Statuses that make a run not conformant."""


def _says(test: dict[str, Any], req: str, charged: str | None) -> str | None:
    """What ``test`` says of requirement ``req`` (None: nothing); ``charged``: the
    requirement its failure is charged to."""
    status = test["status"]
    if status == "pass":
        return "pass"
    if status == "xpass":
        return "pass"  # it passes; the stale expectation is the gate's business
    if status == "not_supported":
        return "not_supported"
    if status == "xfail":
        # An expected failure stops its test: it says xfail of the requirement it cites
        # and nothing of the others it would have gone on to check.
        failed = test.get("failed_requirement")
        return "xfail" if failed in (None, req) else None
    if status == "fail":
        return "fail" if charged == req else "unknown"
    if status in ("crash", "timeout"):
        return str(status)
    if status == "error":
        return "unknown"
    return None  # skipped: the test does not apply to this run


def _worst(statuses: list[str]) -> str:
    if not statuses:
        return "unknown"
    return min(statuses, key=STATUS_ORDER.index)


def _charges(tests: list[dict[str, Any]]) -> dict[int, str | None]:
    """The requirement each failed test is charged to: the one it cites, unless it
    names others it could equally be charged to and one of those failed clearly (with
    no other reading) elsewhere in the run; then that one."""
    clear = {
        t["failed_requirement"]
        for t in tests
        if t["status"] in ("fail", "xfail")
        and t.get("failed_requirement")
        and not t.get("also_explained_by")
    }
    out: dict[int, str | None] = {}
    for t in tests:
        if t["status"] != "fail":
            continue
        cited = t.get("failed_requirement")
        others = [r for r in t.get("also_explained_by") or [] if r in clear and r != cited]
        out[id(t)] = others[0] if others and cited not in clear else cited
    return out


def requirement_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per requirement of the profile, in catalogue order."""
    tests = results["results"]
    selected = set(results.get("selected") or [])
    charged = _charges(tests)
    rows = []
    for req in results["requirements"]:
        rid = req["id"]
        if selected and rid not in selected:
            continue  # a partial run (--requirement) reports what it was asked about
        mine = [
            t
            for t in tests
            if rid in t["requirements"] or charged.get(id(t), t.get("failed_requirement")) == rid
        ]
        said = [(t, s) for t in mine if (s := _says(t, rid, charged.get(id(t)))) is not None]
        status = _worst([s for _, s in said])
        # The counterexample: a failure that cites this requirement itself, if any.
        failing = min(
            (t for t, s in said if s in ("fail", "crash", "timeout") and s == status),
            key=lambda t: t.get("failed_requirement") != rid,
            default=None,
        )
        expected = next((t["expected_failure"] for t, s in said if s == "xfail"), None)
        cut_short = sorted(
            {
                str(charged[id(t)])
                for t, s in said
                if s == "unknown" and t["status"] == "fail" and charged.get(id(t))
            }
        )
        rows.append(
            {
                "id": rid,
                "level": req["level"],
                "clause": req["clause"],
                "title": req["title"],
                "quote": req["quote"],
                "silent": req.get("silent"),
                "status": status,
                "tests": [
                    {
                        "nodeid": t["suite_id"],
                        "status": t["status"],
                        "duration_s": t["duration_s"],
                    }
                    for t, _ in said
                ],
                "counterexample": _counterexample(failing) if failing is not None else None,
                "expected_failure": expected,
                "cut_short_by": cut_short,
            }
        )
    return rows


def _counterexample(test: dict[str, Any]) -> dict[str, Any]:
    return {
        "test": test["suite_id"],
        "calls": list(test.get("calls") or []),
        "allowed": test.get("allowed"),
        "observed": test.get("observed"),
        "message": test.get("message"),
        "trace_file": test.get("trace_file"),
        "reproduce": test.get("reproduce"),
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, int]:
    out = {k: 0 for k in SUMMARY_KEYS}
    for r in rows:
        out[r["status"]] += 1
    out["total"] = len(rows)
    return out


def gate(results: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """What the expectations file did: which entries were met, which are stale (what they
    expect to fail passed), which matched no test that ran."""
    tests = results["results"]
    exp = results.get("expectations") or {}
    entries = list(exp.get("entries", []))
    by_id = {r["id"]: r for r in rows}
    stale: list[str] = []
    unused: list[str] = []
    for e in entries:
        key = e["key"]
        if e.get("kind") == "requirement":
            row = by_id.get(key)
            ran = [t for t in (row["tests"] if row else []) if t["status"] != "not_supported"]
            if not ran:
                unused.append(key)
            elif row is not None and row["status"] == "pass":
                stale.append(f"{key} (entry {key}): no test failed citing it")
        else:
            mine = [t for t in tests if t.get("expected_failure") == key]
            if not mine:
                unused.append(key)
            stale += [f"{t['suite_id']} (entry {key})" for t in mine if t["status"] == "xpass"]
    return {
        "file": exp.get("file"),
        "entries": entries,
        "unexpected_passes": sorted(set(stale)),
        "expected_failures": sorted({r["id"] for r in rows if r["status"] == "xfail"}),
        "unused": unused,
    }


def verdict(rows: list[dict[str, Any]], gate_info: dict[str, Any]) -> tuple[str, list[str]]:
    """('conformant' | 'not conformant', the reasons).  Requirements left unknown only
    because their tests were cut short by another requirement's failure are named
    together, after the failures that cut them short."""
    reasons = []
    collateral = []
    for r in rows:
        if r["status"] not in BAD:
            continue
        if r["status"] == "unknown" and r.get("cut_short_by"):
            collateral.append(r)
        else:
            reasons.append(f"{r['id']} ({r['level']}): {r['status']}")
    if collateral:
        causes = sorted({c for r in collateral for c in r["cut_short_by"]})
        reasons.append(
            f"{len(collateral)} more unknown ({', '.join(r['id'] for r in collateral)}): "
            f"some of their tests were cut short by the failure of {', '.join(causes)}"
        )
    for p in gate_info["unexpected_passes"]:
        reasons.append(f"unexpected pass: {p}; the expectations entry is stale")
    if not rows:
        # A run that checked nothing vouches for nothing.
        reasons.append("no requirement was checked")
    return ("not conformant" if reasons else "conformant"), reasons
