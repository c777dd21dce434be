"""From per-test results to per-requirement statuses, with their evidence; the two answers.

A requirement's status rests on *checks* (judgements of the model charged to it) and
on *failures* (a check that went wrong, charged to it):

- ``fail``: a failure is charged to it that the expectations file does not list;
- ``crash`` / ``timeout``: a test that carries it took the backend down, or hung it; a hang
  charged to a requirement (the call that did not return, ``conformance/harness/hangs.py``)
  is that requirement's ``timeout`` alone, the other requirements of its test are decided
  by the attempt that stepped past it;
- ``flaky``: a failure is charged to it whose trace did not fail again when replayed
  against a fresh backend (neither a pass nor a fail: real hardware varies from run to
  run); the gate accepts it when the flakes file lists it;
- ``xfail``: every failure charged to it is listed as expected;
- ``unknown``: it could not be decided, and the row says why: no check of it ran (its
  tests were declined, not run, or could not run), or a test that carries it could not
  run to its end (a suite error, or more failures than a test is re-run for);
- ``not_supported``: no check ran, and its tests need a capability the backend lacks;
- ``pass``: checks of it ran, all passed, and every test that carries it ran to its end
  (a test stopped by a failure is re-run with that failure's requirement masked).

Worst first: fail, crash, timeout, flaky, unknown, xfail, pass, not_supported.

A failure that one observation cannot pin on a single requirement (a rejected end-exact
copy on the NULL stream breaks the bound or the default stream; a wrong answer with
several host threads may or may not need the threads) names the others it could be
charged to.  When the one it cites never failed clearly but one of the others did
(elsewhere in the run, with no other reading), the failure is charged to that other one,
instead of a second requirement failing for the same bug.

Two answers are kept apart.  The *conformance verdict*: does the backend meet every MUST
of the profile (an expected failure still breaks it; a capability the backend declares
absent does not).  The *gate*: did anything change against the expectations file (a
failure it does not list, a requirement left undecided, an entry gone stale).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from acl_conformance.reference_impl import charging
from acl_conformance.reference_impl.evidence import HOST_KINDS
from acl_conformance.reference_impl.evidence import OUTCOMES
from acl_conformance.reference_impl.evidence import Tally

from .status import REQUIREMENT_STATUSES
from .status import Status

SUMMARY_KEYS = REQUIREMENT_STATUSES
"""The counts of the report's ``summary``, in its order."""

BAD = frozenset({Status.FAIL, Status.CRASH, Status.TIMEOUT, Status.FLAKY, Status.UNKNOWN})
"""Statuses that fail the gate unless the expectations file accounts for them (or, for
``flaky``, the flakes file)."""

NOT_MET = frozenset(
    {Status.FAIL, Status.CRASH, Status.TIMEOUT, Status.FLAKY, Status.UNKNOWN, Status.XFAIL}
)
"""Statuses of a MUST requirement that make the backend not conformant."""


def _failures(tests: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Every failure of every test (all attempts), with its test."""
    out = []
    for t in tests:
        fs = t.get("failures")
        if fs is None and t.get("status") in (
            Status.FAIL,
            Status.XFAIL,
            Status.CRASH,
            Status.TIMEOUT,
        ):
            # A record from a results document of schema 1: one failure, flat.
            fs = [
                {
                    "requirement": t.get("failed_requirement"),
                    "also": t.get("also_explained_by") or [],
                    "status": t["status"]
                    if t["status"] in (Status.CRASH, Status.TIMEOUT)
                    else Status.FAIL.value,
                    "expected": t.get("expected_failure") if t["status"] == Status.XFAIL else None,
                    "same_as": None,
                    **{k: t.get(k) for k in _COUNTEREXAMPLE_KEYS},
                }
            ]
        out += [(t, f) for f in fs or []]
    return out


_COUNTEREXAMPLE_KEYS = (
    "calls",
    "call_count",
    "allowed",
    "observed",
    "message",
    "trace_file",
    "reproduce",
    "replay",
)


def _charges(failures: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[str | None]:
    """The requirement each failure is charged to, as ``charging.in_the_run`` decides: the
    one it cites, unless one of its other readings failed clearly elsewhere in the run.  A
    failure counts there when it failed or is flaky (not an expected failure)."""
    return charging.in_the_run(
        [
            charging.Cited(
                f.get("requirement"),
                tuple(f.get("also") or ()),
                f.get("status") in (Status.FAIL, Status.FLAKY),
            )
            for _t, f in failures
        ]
    )


def _flaky_alike(
    failures: list[tuple[dict[str, Any], dict[str, Any]]], charged: list[str | None]
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The failures, each ``flaky`` when the bug behind it is known flaky (one bug, one row,
    one status): a later test's meeting of a failure another test found and replayed (its
    identity's owner), and a failure charged to a requirement other than the one it cites
    (it could equally be charged there) when every clear failure of that requirement is
    flaky."""
    owners = {
        f.get("identity"): f.get("status")
        for _t, f in failures
        if f.get("same_as") is None and f.get("identity")
    }
    clear: dict[str, set[str]] = {}
    for (_t, f), c in zip(failures, charged, strict=True):
        if c is not None and c == f.get("requirement") and f.get("same_as") is None:
            clear.setdefault(c, set()).add(str(f.get("status")))
    out = []
    for (t, f), c in zip(failures, charged, strict=True):
        if f.get("status") == Status.FAIL and (
            (f.get("same_as") is not None and owners.get(f.get("identity")) == Status.FLAKY)
            or (c is not None and c != f.get("requirement") and clear.get(c) == {Status.FLAKY})
        ):
            f = {**f, "status": Status.FLAKY.value}
        out.append((t, f))
    return out


def requirement_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per requirement of the profile, in catalogue order."""
    tests = results["results"]
    selected = set(results.get("selected") or [])
    entries = {e["key"]: e for e in (results.get("expectations") or {}).get("entries", [])}
    failures = _failures(tests)
    charged = _charges(failures)
    failures = _flaky_alike(failures, charged)
    tallies = {id(t): Tally.from_json(t.get("tally")) for t in tests}
    ev = Tally.total(tallies.values())
    unreached = not_reached(results)
    rows = []
    for req in results["requirements"]:
        rid = req["id"]
        carriers = [t for t in tests if rid in t["requirements"]]
        # A failure charged here is reported whatever was asked: a test run for another
        # requirement that finds this one broken must not vanish from the verdict.
        found = rid in charged
        if selected and rid not in selected and not found:
            continue  # a partial run (--requirement) reports what it was asked about
        if results.get("shard") and not carriers and not found:
            continue  # one shard (--shard K/N) speaks of the requirements of its tests only
        mine = [(t, f) for (t, f), c in zip(failures, charged, strict=True) if c == rid]
        checks = ev.checks.get(rid, 0)
        status, reason = _status(rid, carriers, mine, checks)
        declined = declined_tests(carriers)
        if status is Status.PASS and too_many_declined(declined, key="not_made"):
            # Declined is never passed: too little of it was checked to vouch for it.
            status, reason = Status.UNKNOWN, _declined_text(declined, "of its tests", "half")
        if results.get("interrupted") and status in UNDECIDED_WHEN_STOPPED:
            missing = unreached.get(rid) if unreached is not None else None
            if missing is None or missing:
                status, reason = Status.UNKNOWN, _not_reached(missing, results["interrupted"])
        owner = _counterexample_source(rid, mine)
        rows.append(
            {
                "id": rid,
                "level": req["level"],
                "clause": req["clause"],
                "title": req["title"],
                "quote": req["quote"],
                "silent": req.get("silent"),
                "status": status.value,
                "reason": reason,
                "checks": checks,
                "outcomes": _outcomes(rid, ev),
                "coverage": coverage(rid, ev),
                "masked": _masked(carriers, tallies),
                "failures": len(mine),
                "declined": declined,
                "tests": [
                    {
                        "nodeid": t["suite_id"],
                        "status": t["status"],
                        "duration_s": t["duration_s"],
                        "checks": tallies[id(t)].checks.get(rid, 0),
                        "completed": t.get("completed", t["status"] == Status.PASS),
                    }
                    for t in carriers
                ],
                "counterexample": _counterexample(*owner) if owner is not None else None,
                "expected_failure": _entry(entries, rid, mine),
                "flake": _flake(results, rid, mine) if status is Status.FLAKY else None,
                "cut_short_by": sorted(
                    {m for t in carriers if not t.get("completed", True) for m in _cited_by(t)}
                    - {rid}
                ),
            }
        )
    return rows


DECLINED_SHARE = 1 / 2
"""The share of a requirement's tests that may stop at a call not made, because it hung
or raised earlier in the run, before what they were to check is not vouched for: a
requirement more than half of whose tests that ran were so declined is ``unknown`` (as is
one all of whose tests were): most of its tests did not run to their end.  (A test steered
around a requirement that failed with a wrong answer, masked, checked what it could up to
the wrong answer it would meet again: the masking design decides each requirement on its
own evidence, and the masked requirement's failure already decides the verdict.)"""

RUN_DECLINED_SHARE = 1 / 3
"""A run more than a third of whose tests were declined is not conformant and fails the
gate, whatever each requirement's row says: too much of the suite did not run to its end."""


def declined_tests(tests: list[dict[str, Any]]) -> dict[str, Any]:
    """Of ``tests``, those that ran and those of them that were declined: ``{"tests": N,
    "of": M, "not_made": how many of them stopped at a call not made because it hung or
    raised earlier in the run, "by": {the requirement or hang each cites: count}, "first":
    the first one's reason}``."""
    ran = [t for t in tests if t["status"] not in (Status.SKIPPED, Status.NOT_SUPPORTED)]
    declined = [t for t in ran if t["status"] == Status.DECLINED]
    # (a step steered around a requirement masked because it failed with a wrong answer
    # says "R is masked"; one whose call failed to answer earlier does not)
    not_made = [t for t in declined if " is masked; " not in str(t.get("skip_reason") or "")]
    by: dict[str, int] = {}
    for t in declined:
        key = str(t.get("declined_by") or "a step not taken")
        by[key] = by.get(key, 0) + 1
    first = next((t for t in declined), None)
    return {
        "tests": len(declined),
        "of": len(ran),
        "not_made": len(not_made),
        "by": dict(sorted(by.items())),
        "first": (
            f"{first['suite_id']}: {str(first.get('skip_reason') or '').splitlines()[0][:300]}"
            if first is not None and first.get("skip_reason")
            else (first["suite_id"] if first is not None else None)
        ),
    }


def too_many_declined(
    declined: dict[str, Any], share: float = DECLINED_SHARE, key: str = "tests"
) -> bool:
    """More than ``share`` of the tests that ran were declined (or all were); ``key``
    ``"not_made"``: counting only those stopped at a call that failed to answer earlier."""
    n, of = int(declined.get(key, declined["tests"])), int(declined["of"])
    return n > 0 and (n == of or n > share * of)


def _declined_text(declined: dict[str, Any], what: str, share: str) -> str:
    by = ", ".join(f"{k} {v}" for k, v in declined["by"].items())
    return (
        f"{declined['tests']} of {declined['of']} {what} were declined (steps not taken, citing "
        f"{by}), more than {share}: too little was checked to vouch for it; first: "
        f"{declined['first']}"
    )


def run_declined(results: dict[str, Any]) -> str | None:
    """Why a run that declined too many of its tests vouches for nothing, or None."""
    declined = declined_tests(results["results"])
    if not too_many_declined(declined, RUN_DECLINED_SHARE):
        return None
    return _declined_text(declined, "of the run's tests", "a third")


def _status(
    rid: str,
    carriers: list[dict[str, Any]],
    mine: list[tuple[dict[str, Any], dict[str, Any]]],
    checks: int,
) -> tuple[Status, str | None]:
    """The status of requirement ``rid`` and, when it is not decided, why."""
    if any(f.get("status") == Status.FAIL and not f.get("expected") for _t, f in mine):
        return Status.FAIL, None
    for status in (Status.CRASH, Status.TIMEOUT):
        # A call that raised or never returned is charged to the requirement its success
        # stands for: that requirement's crash or timeout alone; the other requirements of
        # its test are decided by the attempts that stepped past it (or left unknown).
        charged = [(t, f) for t, f in mine if f.get("status") == status and not f.get("expected")]
        if charged:
            t, f = charged[0]
            return status, f"{_first_line(f)} (in {t['suite_id']})"
    for status in (Status.CRASH, Status.TIMEOUT):
        # A backend that died or hung charged to no requirement (between calls, starting):
        # every requirement its test carries takes the status.
        hit = [t for t in carriers if t["status"] == status and _uncharged(t, status)]
        if hit:
            what = "died" if status is Status.CRASH else "hung"
            cause = next(
                (_first_line(f) for f in hit[0].get("failures") or [] if f.get("status") == status),
                "",
            )
            return status, f"the backend {what} in {hit[0]['suite_id']}" + (
                f": {cause}" if cause else ""
            )
    flaky = [(t, f) for t, f in mine if f.get("status") == Status.FLAKY and not f.get("expected")]
    if flaky:
        t, _f = flaky[0]
        return Status.FLAKY, (
            f"{t['suite_id']} failed once, and its trace did not fail again when replayed "
            "against a fresh backend"
        )
    if mine:
        return Status.XFAIL, None
    ran = [t for t in carriers if t["status"] not in (Status.SKIPPED, Status.NOT_SUPPORTED)]
    if checks == 0:
        if carriers and not ran and any(t["status"] == Status.NOT_SUPPORTED for t in carriers):
            return Status.NOT_SUPPORTED, _first_skip(carriers)
        if not carriers and checks == 0:
            return Status.UNKNOWN, "no test checks it in this run"
        return Status.UNKNOWN, "no check of it ran" + _why_not(ran or carriers)
    unfinished = [
        t for t in ran if not t.get("completed", t["status"] in (Status.PASS, Status.XFAIL))
    ]
    if unfinished:
        t = unfinished[0]
        cause = ", ".join(_cited_by(t)) or t["status"]
        more = f" (and {len(unfinished) - 1} more)" if len(unfinished) > 1 else ""
        if t.get("cut_short"):  # its process died, or the run ended, while it ran
            return (
                Status.UNKNOWN,
                f"{t['suite_id']}{more} could not run to its end: {t['cut_short']}",
            )
        return Status.UNKNOWN, (
            f"{t['suite_id']}{more} could not run to its end: stopped by {cause} after "
            f"{t.get('attempts', 1)} attempt(s)"
        )
    return Status.PASS, None


def _uncharged(t: dict[str, Any], status: Status) -> bool:
    """Did test ``t`` end in ``status`` with no failure of that status charged to a
    requirement (a backend that died between calls or hung starting; a record of an older
    suite)?  Then every requirement it carries takes the status."""
    mine = [f for f in t.get("failures") or [] if f.get("status") == status]
    return not mine or any(not f.get("requirement") for f in mine)


def _first_line(f: dict[str, Any]) -> str:
    """A failure's message's first line, without the requirement in brackets."""
    line = str(f.get("message") or "").split("\n", 1)[0]
    return re.sub(r"^\[[A-Z0-9-]+\] ", "", line)


UNDECIDED_WHEN_STOPPED = frozenset({Status.PASS, Status.UNKNOWN, Status.NOT_SUPPORTED})
"""What a requirement's status cannot be trusted to be when some of its tests were not
reached: a failure, a crash, a hang or an expected failure stands (it was seen); a pass, a
missing capability or an undecided row might have changed."""

NOT_REACHED = "not reached"


def not_reached(results: dict[str, Any]) -> dict[str, list[str]] | None:
    """For a run stopped before its end: per requirement, the tests that were to run and
    did not finish (None when the run was not stopped, or stopped before it had collected
    its tests: then nothing is known to have been reached)."""
    collected = results.get("collected")
    if not results.get("interrupted") or collected is None:
        return None
    finished = {t["suite_id"] for t in results["results"]}
    out: dict[str, list[str]] = {}
    for t in collected:
        for rid in t["requirements"]:
            missing = out.setdefault(rid, [])
            if not t.get("skipped") and t["suite_id"] not in finished:
                missing.append(t["suite_id"])
    return out


def _not_reached(missing: list[str] | None, ended: str) -> str:
    if not missing:
        return f"{NOT_REACHED}: the run did not reach its end ({ended}) before its tests were known"
    more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
    return (
        f"{NOT_REACHED}: {missing[0]}{more} did not finish: the run did not reach its end ({ended})"
    )


def _first_skip(tests: list[dict[str, Any]]) -> str | None:
    """Why the first unsupported test was not supported (without the "not supported: "
    mark that tells such a skip from others)."""
    reason = next(
        (t.get("skip_reason") for t in tests if t["status"] == Status.NOT_SUPPORTED), None
    )
    mark = "not supported: "
    return reason[len(mark) :] if reason and reason.startswith(mark) else reason


def _why_not(tests: list[dict[str, Any]]) -> str:
    declined = sorted({str(t["declined_by"]) for t in tests if t.get("declined_by")})
    errors = [t["suite_id"] for t in tests if t["status"] == Status.ERROR]
    parts = []
    if declined:
        parts.append(f"its tests stopped before steps that put {', '.join(declined)} at stake")
    if errors:
        parts.append(f"the suite could not run {', '.join(errors[:3])}")
    return f": {'; '.join(parts)}" if parts else ""


def _cited_by(t: dict[str, Any]) -> list[str]:
    return sorted({f["requirement"] for f in t.get("failures") or [] if f.get("requirement")})


def _outcomes(rid: str, ev: Tally) -> dict[str, list[str]] | None:
    """For a requirement whose spec allows several outcomes: which ones were seen."""
    if rid not in OUTCOMES:
        return None
    seen = ev.seen.get(rid, set())
    allowed = list(OUTCOMES[rid])
    return {
        "allowed": allowed,
        "seen": [o for o in allowed if o in seen],
        "not_seen": [o for o in allowed if o not in seen],
    }


SMALL_COPY = 64 * 1024
"""Copies smaller than this are *small*: below it, runtimes commonly take another data
path than for larger copies (a staging buffer, a DMA descriptor's length, a huge page
sit at or around 64 KiB).  A requirement whose checks judged, for some kind of host
memory, only copies smaller than this rests on small copies only for that kind, and the
terminal says so beside its status: its pass says nothing of the larger path."""

PAGE_KINDS = HOST_KINDS[:3]
"""The kinds of host memory whose coverage the report weighs: pinned, pageable,
registered (memory the model does not know is shown, but never called missing)."""


def coverage(rid: str, ev: Tally) -> dict[str, Any] | None:
    """What sizes and offsets the checks of ``rid`` rested on: per kind of host memory of
    the successful copies they judged, the smallest and largest count, and whether an odd
    symbol offset or host address was seen; the kinds seen only in copies smaller than
    ``SMALL_COPY``, and those never seen (None when no check of it judged a copy)."""
    kinds = ev.coverage.get(rid)
    if not kinds:
        return None
    return {
        "kinds": {k: kinds[k].to_json() for k in HOST_KINDS if k in kinds},
        "small_only": [k for k in PAGE_KINDS if k in kinds and kinds[k].largest < SMALL_COPY],
        "never": [k for k in PAGE_KINDS if k not in kinds],
        "small_below": SMALL_COPY,
    }


def _masked(carriers: list[dict[str, Any]], tallies: dict[int, Tally]) -> list[dict[str, Any]]:
    """What masking took from the tests of a requirement: per masked requirement, how many
    of its tests ran with it masked, the steps they declined and the violations set aside."""
    return _mask_rows((t, tallies[id(t)]) for t in carriers)


def _counterexample_source(
    rid: str, mine: list[tuple[dict[str, Any], dict[str, Any]]]
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The failure whose counterexample the report shows: one that cites the requirement
    itself, found and shrunk by its own test (not a copy of another's), unexpected before
    expected, the shortest."""
    if not mine:
        return None
    return min(
        mine,
        key=lambda tf: (
            tf[1].get("requirement") != rid,
            tf[1].get("same_as") is not None,
            bool(tf[1].get("expected")),
            tf[1].get("call_count") or 0,
        ),
    )


def _counterexample(test: dict[str, Any], failure: dict[str, Any]) -> dict[str, Any]:
    return {
        "test": test["suite_id"],
        **{k: failure.get(k) for k in _COUNTEREXAMPLE_KEYS},
        "calls": list(failure.get("calls") or []),
        "identity": failure.get("identity"),
    }


def _entry(
    entries: dict[str, dict[str, Any]],
    rid: str,
    mine: list[tuple[dict[str, Any], dict[str, Any]]],
) -> dict[str, Any] | None:
    """The expectations entry that covers this requirement's failures, if any."""
    key = (
        rid
        if rid in entries
        else next((f["expected"] for _t, f in mine if f.get("expected")), None)
    )
    if key is None:
        return None
    e = entries.get(key, {"key": key})
    return {"key": key, "reason": e.get("reason"), "link": e.get("link")}


def _flake(
    results: dict[str, Any], rid: str, mine: list[tuple[dict[str, Any], dict[str, Any]]]
) -> dict[str, Any] | None:
    """The flakes file's entry that accepts this requirement's flaky failures: the one that
    lists it, or one that lists (by test or requirement) every flaky failure charged to it."""
    entries = {e["key"]: e for e in (results.get("flakes") or {}).get("entries", [])}
    keys = {f.get("flake") for _t, f in mine if f.get("status") == Status.FLAKY}
    key = rid if rid in entries else (keys.pop() if len(keys) == 1 else None)
    if key is None:
        return None
    e = entries.get(key, {"key": key})
    return {"key": key, "reason": e.get("reason"), "link": e.get("link")}


def masking(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Per masked requirement, over the whole run: how many tests ran with it masked, the
    steps they declined and the violations of it they set aside."""
    return _mask_rows((t, Tally.from_json(t.get("tally"))) for t in results["results"])


def _mask_rows(tests: Iterable[tuple[dict[str, Any], Tally]]) -> list[dict[str, Any]]:
    """Per requirement masked in any of ``tests`` (a test's result and its tally), in ID
    order: how many of them ran with it masked, the steps they declined and the violations
    of it they set aside."""
    out: dict[str, dict[str, Any]] = {}
    for t, ev in tests:
        for m in t.get("masks") or []:
            row = out.setdefault(m, {"requirement": m, "tests": 0, "declined": 0, "set_aside": 0})
            row["tests"] += 1
            row["declined"] += ev.declined.get(m, 0)
            row["set_aside"] += ev.set_aside.get(m, 0)
    return sorted(out.values(), key=lambda r: str(r["requirement"]))


def summary(rows: list[dict[str, Any]]) -> dict[str, int]:
    out = {k.value: 0 for k in SUMMARY_KEYS}
    for r in rows:
        out[r["status"]] += 1
    out["total"] = len(rows)
    out["checks"] = sum(int(r.get("checks") or 0) for r in rows)
    return out


def _steered(tests: list[dict[str, Any]], rid: str) -> str:
    """For a stale requirement entry: the tests that do not carry ``rid`` and steered
    around it (declined a step, set a violation aside), which a requirement entry masks
    from the start, so that a bug only they find is never seen; "" when none did."""
    around = [
        t["suite_id"]
        for t in tests
        if rid not in t["requirements"]
        and any((t.get("tally") or {}).get(k, {}).get(rid) for k in ("declined", "set_aside"))
    ]
    if not around:
        return ""
    more = f" and {len(around) - 1} more" if len(around) > 1 else ""
    return (
        f" (the tests that do not carry it steered around it: {around[0]}{more}; "
        f"for a failure one of them finds, list {rid} in that test instead)"
    )


def _covers(key: str, sid: str) -> bool:
    """Does an expectations entry's test id (or prefix) ``key`` cover the test ``sid``?
    (The rule of ``conformance/gating/expectations.py``: the id itself, or a prefix of it
    ending at ``::`` or ``[``.)"""
    return bool(key) and (sid == key or sid.startswith(key + "::") or sid.startswith(key + "["))


def gate(results: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The gate: what changed against the expectations file.  It fails on a requirement
    that failed, crashed, hung or stayed undecided without an entry that accounts for it,
    and on an entry gone stale (what it expects to fail passed)."""
    tests = results["results"]
    exp = results.get("expectations") or {}
    entries = list(exp.get("entries", []))
    by_id = {r["id"]: r for r in rows}
    stale: list[str] = []
    stale_entries: list[dict[str, str]] = []
    unused: list[str] = []
    for e in entries:
        key = e["key"]
        if e.get("target") == "requirement":
            row = by_id.get(key)
            ran = [t for t in (row["tests"] if row else []) if t["status"] != Status.NOT_SUPPORTED]
            if not ran and not (row and row["checks"]):
                unused.append(key)
            elif row is not None and row["status"] == Status.PASS:
                stale.append(
                    f"{key} (entry {key}): no test failed citing it" + _steered(tests, key)
                )
                stale_entries.append({"key": key, "target": "requirement", "requirement": key})
        elif e.get("requirement"):
            # A requirement found in a test: stale when the tests it covers ran to their
            # end and none failed citing it (the entry expected none of their failures).
            ran = [
                t
                for t in tests
                if _covers(str(e.get("test") or ""), t["suite_id"])
                and t["status"] not in (Status.SKIPPED, Status.NOT_SUPPORTED)
            ]
            found = any(f.get("expected") == key for t in ran for f in t.get("failures") or [])
            if not ran:
                unused.append(key)
            elif not found and any(t.get("completed") for t in ran):
                done = next(t for t in ran if t.get("completed"))
                stale.append(
                    f"{done['suite_id']} (entry {key}): it ran to its end with no failure "
                    f"citing {e['requirement']}"
                )
                stale_entries.append(
                    {"key": key, "target": "test", "requirement": e["requirement"]}
                )
        else:
            mine = [t for t in tests if t.get("expected_failure") == key]
            if not mine:
                unused.append(key)
            passed = [t for t in mine if t["status"] == Status.XPASS]
            stale += [f"{t['suite_id']} (entry {key})" for t in passed]
            if passed:
                stale_entries.append({"key": key, "target": "test", "requirement": ""})
    listed = {e["key"] for e in entries if e.get("target") == "requirement"}
    # An entry accounts for its requirement whatever the run made of it (a failure, or a
    # run that could not get to it); the entry is reported as unused if no test ran.
    flakes = results.get("flakes") or {}
    accepted = sorted(r["id"] for r in rows if r["status"] == Status.FLAKY and r.get("flake"))
    new = [
        r["id"]
        for r in rows
        if r["status"] in BAD and r["id"] not in listed and r["id"] not in accepted
    ]
    reasons = [
        f"{r['id']} ({r['level']}): {r['status']}, not in the expectations file"
        for r in rows
        if r["id"] in new
    ]
    reasons += [f"unexpected pass of {p}: the entry is stale" for p in sorted(set(stale))]
    if not rows:
        reasons.append("no requirement was checked")
    if results.get("interrupted"):
        reasons.append(f"the run did not reach its end: {results['interrupted']}")
    too_many = run_declined(results)
    if too_many:
        reasons.append(too_many)
    return {
        "result": "fail" if reasons else "pass",
        "reasons": reasons,
        "file": exp.get("file"),
        "entries": entries,
        "new_failures": new,
        "unexpected_passes": sorted(set(stale)),
        "stale_entries": stale_entries,
        "expected_failures": sorted({r["id"] for r in rows if r["status"] == Status.XFAIL}),
        "unused": unused,
        "flakes": {
            "file": flakes.get("file"),
            "entries": list(flakes.get("entries") or []),
            "accepted": accepted,
        }
        if flakes.get("file")
        else None,
    }


def verdict(
    rows: list[dict[str, Any]],
    interrupted: str | None = None,
    shard: str | None = None,
    declined: str | None = None,
) -> tuple[str, list[str]]:
    """The conformance verdict: ('conformant' | 'not conformant', the reasons).  Every MUST
    of the profile must pass (or be not supported: a capability the backend declares it
    lacks); an expected failure is still a failure.  What SHOULD and MAY requirements
    lack is said after the reasons, and does not decide."""
    reasons = []
    if rows and all(r["status"] == Status.NOT_SUPPORTED for r in rows):
        # Nothing could be checked: the product does not offer what the spec describes.
        why = next((r["reason"] for r in rows if r.get("reason")), None)
        return "not supported", [f"every requirement is not supported: {why or 'see the rows'}"]
    for r in rows:
        if r["level"] == "MUST" and r["status"] in NOT_MET:
            why = f": {r['reason']}" if r.get("reason") and r["status"] == Status.UNKNOWN else ""
            expected = " (an expected failure)" if r["status"] == Status.XFAIL else ""
            reasons.append(f"{r['id']} (MUST): {r['status']}{expected}{why}")
    if not rows:
        # A run that checked nothing vouches for nothing.
        reasons.append("no requirement was checked")
    if interrupted:
        # What a run that did not reach its end did not reach was not checked: never a pass.
        reasons.append(f"the run did not reach its end: {interrupted}")
    if declined:
        # Declined is never passed (``run_declined``).
        reasons.append(declined)
    if shard:
        # Part of the suite vouches for nothing: the verdict is the merged shards'.
        reasons.append(
            f"only shard {shard} of the suite ran: merge the results of all its shards "
            "(acl-conformance report) for the verdict"
        )
    return ("not conformant" if reasons else "conformant"), reasons


def advisories(rows: list[dict[str, Any]]) -> list[str]:
    """SHOULD and MAY requirements that were not met (they do not decide the verdict)."""
    return [
        f"{r['id']} ({r['level']}): {r['status']}"
        for r in rows
        if r["level"] != "MUST" and r["status"] in NOT_MET
    ]


def headline(
    verdict_text: str,
    rows: list[dict[str, Any]],
    interrupted: bool | str = False,
    declined: dict[str, Any] | None = None,
) -> str:
    """``NOT CONFORMANT (2 expected failures)``, ``NOT CONFORMANT (interrupted)``, ``NOT
    CONFORMANT (did not reach its end)`` (``interrupted``: the note, or True),
    ``CONFORMANT (3 of 623 tests declined)`` and the like."""
    n = sum(1 for r in rows if r["level"] == "MUST" and r["status"] == Status.XFAIL)
    notes = [f"{n} expected failure{'s' if n != 1 else ''}"] if n else []
    if declined and declined["tests"]:
        notes.append(f"{declined['tests']} of {declined['of']} tests declined")
    if interrupted:
        notes.insert(0, interrupted if isinstance(interrupted, str) else "interrupted")
    return verdict_text.upper() + (f" ({', '.join(notes)})" if notes else "")
