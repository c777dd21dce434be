"""The suite checked against its own catalogue of mutants and legal variants.

For each variant and profile, a fresh pytest process runs the suite against it
(``--acl-adapter acl_conformance.adapters.variants:variant``).  By default the whole
suite runs, as a vendor runs it, with nothing told of the bug:

- a *mutant* is *caught* when the requirement it breaks fails (or is flaky; for a backend
  with a call that never returns, ``Variant.hangs``, times out; for one with a call that
  raises, ``Variant.crashes``, crashes) (other requirements that
  failed too are listed: one bug should make one row);
- a *combination* of bugs is caught when exactly the requirements its bugs break
  fail (or are flaky) and every other requirement is decided;
- a *legal variant* is *accepted* when no requirement fails, crashes, hangs or is
  left undecided.

The targeted mode (``targeted=True``) runs a mutant only against the tests of the
requirement it must break, and stops at the first failure that cites it: it proves
the targeted tests work, quickly, and is what the project's own tests use.  A variant
that is legal under the profile but whose oddity lies in known requirements (``area``:
a mutant of the other profile, or a legal oddity that names them) runs, in targeted
mode, the tests of those requirements; other legal variants run whole.

Each result carries the time to the first failure that cites the requirement (the
sum of the test durations up to it, in execution order), the test that found it, and
the length of its counterexample (the calls of the shrunk example, set-up reads left
out).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from collections.abc import Callable
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import as_completed
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from acl_conformance.adapters.variants import CATALOGUE
from acl_conformance.adapters.variants import Variant
from acl_conformance.conformance.session.suite_command import suite_command
from acl_conformance.conformance.session.supervise import Supervisor
from acl_conformance.reports.status import Status

ADAPTER = "acl_conformance.adapters.variants:variant"


@dataclass
class VariantResult:
    variant: str
    sort: str
    """'mutant', 'legal' or 'combination'."""
    profile: str
    requirement: str | None
    result: str
    """The variant result: 'caught' / 'survived' for mutants, 'accepted' / 'rejected' for
    legal variants, or 'error'."""
    ok: bool
    seconds_to_first_failure: float | None = None
    counterexample_calls: int | None = None
    first_test: str | None = None
    """The first test (in execution order) whose failure cites the requirement."""
    failing_tests: list[str] = field(default_factory=list)
    failed_requirements: list[str] = field(default_factory=list)
    also_failing: list[str] = field(default_factory=list)
    """Requirements that failed or stayed undecided besides the one the mutant breaks."""
    wall_s: float = 0.0
    mode: str = "whole"
    detail: str = ""


def _pytest(
    variant: Variant, profile: str, extra: list[str], timeout: float, sup: Supervisor
) -> tuple[dict[str, Any] | None, str, float]:
    with tempfile.TemporaryDirectory(prefix="acl-selfcheck-") as tmp:
        out = Path(tmp) / "results.json"
        cmd = suite_command(
            profile,
            adapter=ADAPTER,
            adapter_options=[f"name={variant.name}"],
            results=out,
            extra=extra,  # the call limit as a vendor's run has it (it adapts)
        )
        t0 = time.perf_counter()
        stdout, stderr = Path(tmp) / "stdout", Path(tmp) / "stderr"
        # into files, not pipes: nothing to drain while the supervisor waits
        with stdout.open("w") as o, stderr.open("w") as e:
            proc = sup.popen(cmd, stdout=o, stderr=e, cwd=tmp)
            try:
                rc = sup.wait(proc, timeout)
            except subprocess.TimeoutExpired:
                return None, f"did not finish within {timeout:g} s", time.perf_counter() - t0
        wall = time.perf_counter() - t0
        tail = (stdout.read_text().strip().splitlines() or [""])[-1]
        if not out.exists():
            return (
                None,
                f"pytest exited {rc} without results: {tail} {stderr.read_text()[-500:]}",
                wall,
            )
        doc: dict[str, Any] = json.loads(out.read_text())
        return doc, tail, wall


def _first_failure(
    results: list[dict[str, Any]], req: str | None
) -> tuple[float | None, dict[str, Any] | None, dict[str, Any] | None]:
    """(seconds until it, the test, the failure) of the first failure citing ``req`` (any
    failure when ``req`` is None), in execution order; and the shrunk counterexample of
    that requirement (its owner's failure) for its length."""
    elapsed = 0.0
    for r in results:
        elapsed += float(r.get("duration_s") or 0)
        for f in r.get("failures") or []:
            if f.get("status") in (Status.FAIL, Status.FLAKY, Status.TIMEOUT, Status.CRASH) and (
                req is None or f.get("requirement") == req
            ):
                return round(elapsed, 3), r, f
        if req is None and r["status"] in (
            Status.CRASH,
            Status.TIMEOUT,
            Status.ERROR,
            Status.XPASS,
        ):
            return round(elapsed, 3), r, None
    return None, None, None


_FAILING_TEST = frozenset(
    {Status.FAIL, Status.FLAKY, Status.CRASH, Status.TIMEOUT, Status.ERROR, Status.XPASS}
)
"""The statuses of a test that a variant's run counts as failing."""


def _shrunk_length(results: list[dict[str, Any]], req: str | None) -> int | None:
    """The length of the counterexample the report shows for ``req``: the failure found
    and shrunk by its own test (not a copy of another's), the shortest."""
    own = [
        f.get("call_count")
        for r in results
        for f in r.get("failures") or []
        if f.get("requirement") == req and f.get("same_as") is None and f.get("call_count")
    ]
    return min(own) if own else None


def area(variant: Variant, profile: str) -> tuple[str, ...]:
    """Where a variant legal under ``profile`` differs from the simulator: the requirements
    it names (``Variant.oddity_in``), or those it breaks under the other profile; empty
    for a mutant of ``profile`` and for a legal variant that differs everywhere."""
    if variant.is_mutant(profile) or variant.breaks:
        return ()
    return variant.oddity_in or tuple(dict.fromkeys(variant.catches.values()))


def combination_caught(not_passing: dict[str, str], breaks: Iterable[str]) -> bool:
    """Is a combination of bugs caught, given the status of each requirement that did not
    pass: exactly the requirements its bugs break, each failing or flaky?  (Flaky counts,
    as for one mutant: a timing bug's replay may miss on a loaded machine, and the gate
    fails on it all the same.)"""
    breaks = set(breaks)
    return set(not_passing) == breaks and all(
        not_passing[r] in (Status.FAIL, Status.FLAKY) for r in breaks
    )


def check(
    variant: Variant,
    profile: str,
    timeout: float = 900.0,
    workers: int = 0,
    examples: int | None = None,
    targeted: bool = False,
    sup: Supervisor | None = None,
) -> VariantResult:
    """Run the suite against one variant under one profile (``examples``: a budget per
    Hypothesis test other than the standard Hypothesis settings profile's; ``targeted``: a
    mutant against the tests of its requirement only; ``sup``: the supervisor of the pytest
    processes, which stops them when the command is interrupted)."""
    from acl_conformance import reports

    req = variant.catches.get(profile)
    mutant = req is not None
    combo = mutant and bool(variant.breaks)
    odd = area(variant, profile)
    targeted = targeted and ((mutant and not combo) or bool(odd))
    extra: list[str] = []
    if targeted and req:
        extra = ["--acl-requirement", req, "--acl-stop-on", req]
    elif targeted:
        extra = [x for r in odd for x in ("--acl-requirement", r)]
    if workers:
        extra += ["-n", str(workers), "--dist", "worksteal"]
    if examples is not None:
        extra += ["--acl-examples", str(examples)]
    if sup is None:
        with Supervisor() as own:
            doc, tail, wall = _pytest(variant, profile, extra, timeout, own)
    else:
        doc, tail, wall = _pytest(variant, profile, extra, timeout, sup)
    sort = "combination" if combo else variant.sort
    mode = "targeted" if targeted else "whole"
    if doc is None:
        return VariantResult(
            variant.name, sort, profile, req, "error", False, wall_s=wall, mode=mode, detail=tail
        )
    results: list[dict[str, Any]] = list(doc["results"])
    rows = reports.build(doc, {}, {})["requirements"]
    bad = {
        r["id"]: r["status"]
        for r in rows
        if r["status"] != Status.PASS and r["status"] != Status.NOT_SUPPORTED
    }
    seconds, first_test, first = _first_failure(results, req)
    res = VariantResult(
        variant.name,
        sort,
        profile,
        req,
        "",
        False,
        seconds_to_first_failure=seconds,
        counterexample_calls=_shrunk_length(results, req) if mutant else None,
        first_test=str(first_test["suite_id"]) if first_test else None,
        failing_tests=[str(r["suite_id"]) for r in results if r["status"] in _FAILING_TEST],
        failed_requirements=sorted(bad),
        wall_s=round(wall, 2),
        mode=mode,
        detail=tail,
    )
    if combo:
        res.ok = combination_caught(bad, variant.breaks)
        res.also_failing = sorted(set(bad) - set(variant.breaks))
        res.detail = f"not passing: {bad}; expected to fail: {list(variant.breaks)}"
    elif mutant:
        # A flaky bug must be told from a bug that shows every time: reported flaky.  A
        # bug that shows every time may still be reported flaky when its trace depends on
        # timing that a replay does not meet (a loaded machine): the gate fails on it all
        # the same, so it is caught.
        status = bad.get(str(req))
        if targeted and first is not None and status in (None, Status.UNKNOWN):
            # A targeted run stops at the first failure citing the requirement: what
            # the row would make of it once the whole suite ran is not known (a failure
            # with other readings may be charged to one of them, which this part of the
            # suite found clear); the failure itself is what targeted mode asks for.
            status = Status(first["status"])
        if variant.hangs:
            # A call that never returns: one hang, charged to its requirement (timeout).
            res.ok = status == Status.TIMEOUT
        elif variant.crashes:
            # A call that raises: charged to the requirement its success stands for.
            res.ok = status == Status.CRASH
        elif variant.flaky:
            res.ok = status == Status.FLAKY
        else:
            res.ok = status in (Status.FAIL, Status.FLAKY)
        res.also_failing = sorted(set(bad) - {req})
    else:
        res.ok = not bad and not res.failing_tests
    lost = uncharged_restarts(doc)
    if lost:
        # The observer under test: a backend's failure that only started a new instance.
        res.ok = False
        res.detail = f"{res.detail}; restarts charged to nothing: {'; '.join(lost[:3])}".strip("; ")
    res.result = (
        ("caught" if res.ok else "survived") if mutant else ("accepted" if res.ok else "rejected")
    )
    return res


def uncharged_restarts(doc: dict[str, Any]) -> list[str]:
    """The restarts of a run's backend instances that a backend's hang, crash or wrong
    answer caused with no failure of it charged to the test that met it (a defect of the
    suite: nothing a backend does wrong may vanish into "a new instance was started"), one
    line each.  A restart the suite made for its own reasons (a reset it could not make,
    with no failure of the backend behind it) is not one."""
    failed: dict[str, set[str]] = {}
    for t in doc.get("results") or []:
        for f in t.get("failures") or []:
            failed.setdefault(str(t.get("suite_id")), set()).add(str(f.get("status")))
            failed.setdefault(str(t.get("nodeid")), set()).add(str(f.get("status")))
    out = []
    for r in (doc.get("instances") or {}).get("restarts") or []:
        if not r.get("charged") and not r.get("requirement") and r.get("reason") == "failed reset":
            continue  # the suite's own: no failure of the backend behind it
        test = str(r.get("test") or "")
        short = test.rsplit("/", 1)[-1]
        if not (failed.get(test) or failed.get(short) or _any_endswith(failed, test)):
            out.append(f"{r.get('reason')} in {test or 'no test'}: {r.get('call') or r.get('why')}")
    return out


def _any_endswith(failed: dict[str, set[str]], test: str) -> bool:
    """Does a test that failed have id ``test`` (pytest's node id, as the restart names it)
    or end like it?"""
    return bool(test) and any(test.endswith(k) or k.endswith(test) for k in failed)


def plan(
    profiles: Iterable[str] = ("spec", "cann"), names: Iterable[str] | None = None
) -> list[tuple[Variant, str]]:
    """Every (variant, profile) pair that means something: mutants where they are mutants,
    legal variants where they are legal."""
    wanted = set(names) if names is not None else None
    out = []
    for v in CATALOGUE:
        if wanted is not None and v.name not in wanted:
            continue
        if v.hunt_only and wanted is None:
            continue  # found by a bug hunt, not by the ci run: not a surviving mutant
        for p in profiles:
            if v.is_mutant(p) or v.is_legal(p):
                out.append((v, p))
    return out


def run(
    pairs: list[tuple[Variant, str]],
    jobs: int = 1,
    workers: int = 2,
    targeted: bool = False,
    progress: Callable[[int, int, VariantResult], None] | None = None,
    sup: Supervisor | None = None,
) -> list[VariantResult]:
    """Check every pair, ``jobs`` at a time, each run with ``workers`` pytest-xdist workers
    (0: none); ``progress`` hears of each result as it comes.  Results in plan order.
    Under a supervisor, an interruption stops every run and raises
    :class:`~.supervise.Interrupted`."""
    done: dict[int, VariantResult] = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {
            pool.submit(check, v, p, workers=workers, targeted=targeted, sup=sup): k
            for k, (v, p) in enumerate(pairs)
        }
        for f in as_completed(futures):
            k = futures[f]
            done[k] = f.result()
            if progress is not None:
                progress(len(done), len(pairs), done[k])
    return [done[k] for k in range(len(pairs))]


HEAD = (
    f"{'variant':26} {'sort':6} {'profile':7} {'requirement':27} {'result':9} "
    f"{'first fail s':>12} {'calls':>5} {'wall s':>6}  first failing test; also failing"
)


def row(r: VariantResult) -> str:
    t = f"{r.seconds_to_first_failure:.2f}" if r.seconds_to_first_failure is not None else "-"
    calls = str(r.counterexample_calls) if r.counterexample_calls is not None else "-"
    tail = r.first_test or "-"
    if r.also_failing:
        tail += f"; also: {', '.join(r.also_failing)}"
    elif r.sort == "legal" and not r.ok:
        tail = f"not passing: {', '.join(r.failed_requirements) or r.detail}"
    return (
        f"{r.variant:26} {r.sort[:6]:6} {r.profile:7} {r.requirement or '-':27} {r.result:9} "
        f"{t:>12} {calls:>5} {r.wall_s:>6.1f}  {tail}"
    )


def progress_row(k: int, n: int, r: VariantResult) -> str:
    """The line said as a pair finishes: ``[12/66] name (profile)  caught  3.2 s``."""
    width = max(len(v.name) for v in CATALOGUE) + 7
    return f"[{k}/{n}] {f'{r.variant} ({r.profile})':{width}}  {r.result:9} {r.wall_s:6.1f} s"


def table(results: list[VariantResult]) -> str:
    return "\n".join([HEAD, "-" * len(HEAD), *(row(r) for r in results)])


def score(results: list[VariantResult]) -> str:
    mutants = [r for r in results if r.sort != "legal"]
    legal = [r for r in results if r.sort == "legal"]
    caught = sum(r.ok for r in mutants)
    clean = sum(r.ok and not r.also_failing for r in mutants)
    pct = 100.0 * caught / len(mutants) if mutants else 100.0
    return (
        f"mutation score: {caught}/{len(mutants)} caught ({pct:.0f}%), {clean} of them with no "
        f"other requirement failing; legal variants accepted: {sum(r.ok for r in legal)}/"
        f"{len(legal)}"
    )


SCHEMA = "acl-conformance-selfcheck/2"
"""The schema of selfcheck.json: ``{"schema": SCHEMA, "results": [a VariantResult, ...]}``.
Schema 1 (no ``schema`` field) was the bare list, each result's ``result`` called
``verdict``."""


def to_json(results: list[VariantResult]) -> dict[str, Any]:
    """selfcheck.json's document."""
    return {"schema": SCHEMA, "results": [asdict(r) for r in results]}


def from_json(doc: dict[str, Any] | list[dict[str, Any]]) -> list[VariantResult]:
    """The results of a selfcheck.json document, of schema 2 or of schema 1."""
    rows = doc if isinstance(doc, list) else doc["results"]
    return [
        VariantResult(**{("result" if k == "verdict" else k): v for k, v in row.items()})
        for row in rows
    ]
