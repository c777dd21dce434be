"""The suite checked against its own catalogue of mutants and legal variants.

For each variant and profile, a fresh pytest process runs the suite against
it (``--acl-adapter acl_conformance.adapters.variants:variant``):

- a *mutant* runs the tests of the requirement that must catch it; it is
  *caught* when one of them fails citing that requirement;
- a *legal variant* runs the whole suite; it is *accepted* when nothing fails;
- a *combination* of bugs runs the whole suite; it is *caught* when exactly the
  requirements its bugs break fail and every other requirement is decided.

Results carry the time to the first failure that cites the requirement (the
sum of the test durations up to it, in execution order) and the length of its
counterexample (the calls of the shrunk example, set-up reads left out).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from acl_conformance.adapters.variants import CATALOGUE, Variant

SUITE = "acl_conformance.conformance.suite"
ADAPTER = "acl_conformance.adapters.variants:variant"


@dataclass
class VariantResult:
    variant: str
    kind: str
    profile: str
    requirement: str | None
    verdict: str
    """'caught' / 'survived' for mutants, 'accepted' / 'rejected' for legal variants, or 'error'."""
    ok: bool
    seconds_to_first_failure: float | None = None
    counterexample_calls: int | None = None
    failing_tests: list[str] = field(default_factory=list)
    failed_requirements: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    detail: str = ""


def _pytest(
    variant: Variant, profile: str, extra: list[str], timeout: float
) -> tuple[dict[str, object] | None, str, float]:
    with tempfile.TemporaryDirectory(prefix="acl-selfcheck-") as tmp:
        out = Path(tmp) / "results.json"
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--pyargs",
            SUITE,
            "--acl-adapter",
            ADAPTER,
            "--acl-adapter-option",
            f"name={variant.name}",
            "--acl-profile",
            profile,
            "--acl-hypothesis-profile",
            "ci",
            "--acl-results",
            str(out),
            "--acl-call-timeout",
            "30",
            *extra,
        ]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=tmp)
        except subprocess.TimeoutExpired:
            return None, f"did not finish within {timeout:g} s", time.perf_counter() - t0
        wall = time.perf_counter() - t0
        tail = (proc.stdout.strip().splitlines() or [""])[-1]
        if not out.exists():
            return (
                None,
                f"pytest exited {proc.returncode} without results: {tail} {proc.stderr[-500:]}",
                wall,
            )
        return json.loads(out.read_text()), tail, wall


def check(
    variant: Variant,
    profile: str,
    timeout: float = 900.0,
    workers: int = 0,
    examples: int | None = None,
) -> VariantResult:
    """Run the suite against one variant under one profile (``examples``: a budget per
    Hypothesis test other than the ci profile's)."""
    req = variant.catches.get(profile)
    mutant = req is not None
    combo = mutant and bool(variant.breaks)
    extra = (
        ["--acl-requirement", req, "--acl-stop-on", req] if req is not None and not combo else []
    )
    if workers:
        extra += ["-n", str(workers)]
    if examples is not None:
        extra += ["--acl-examples", str(examples)]
    doc, tail, wall = _pytest(variant, profile, extra, timeout)
    kind = "mutant" if mutant else "legal"
    if doc is None:
        return VariantResult(
            variant.name, kind, profile, req, "error", False, wall_s=wall, detail=tail
        )
    results = list(doc["results"])  # type: ignore[call-overload]
    failed = [r for r in results if r["status"] in ("fail", "crash", "timeout", "error", "xpass")]
    elapsed = 0.0
    first: dict[str, object] | None = None
    for r in results:
        elapsed += float(r["duration_s"] or 0)
        if r in failed and (not mutant or r["failed_requirement"] == req):
            first = r
            break
    res = VariantResult(
        variant.name,
        kind,
        profile,
        req,
        "",
        False,
        wall_s=round(wall, 2),
        detail=tail,
        failing_tests=[str(r["suite_id"]) for r in failed],
        failed_requirements=sorted(
            {str(r["failed_requirement"]) for r in failed if r["failed_requirement"]}
        ),
    )
    if combo:
        from acl_conformance import reports

        rows = reports.build(doc, {}, {})["requirements"]
        bad = {r["id"]: r["status"] for r in rows if r["status"] != "pass"}
        res.failed_requirements = sorted(bad)
        res.ok = bad == dict.fromkeys(variant.breaks, "fail")
        res.verdict = "caught" if res.ok else "survived"
        res.detail = f"not passing: {bad}; expected to fail: {list(variant.breaks)}"
    elif mutant:
        res.ok = first is not None
        res.verdict = "caught" if res.ok else "survived"
    else:
        res.ok = not failed
        res.verdict = "accepted" if res.ok else "rejected"
    if first is not None:
        res.seconds_to_first_failure = round(elapsed, 3)
        res.counterexample_calls = first["call_count"]  # type: ignore[assignment]
    return res


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
        for p in profiles:
            if v.is_mutant(p) or v.is_legal(p):
                out.append((v, p))
    return out


def run(
    pairs: list[tuple[Variant, str]], jobs: int = 2, legal_workers: int = 0
) -> list[VariantResult]:
    """Check every pair, ``jobs`` at a time."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [
            pool.submit(check, v, p, workers=0 if v.is_mutant(p) else legal_workers)
            for v, p in pairs
        ]
        return [f.result() for f in futures]


def table(results: list[VariantResult]) -> str:
    head = f"{'variant':28} {'kind':6} {'profile':7} {'requirement':28} {'verdict':9} {'first fail s':>12} {'calls':>5}"
    lines = [head, "-" * len(head)]
    for r in results:
        t = f"{r.seconds_to_first_failure:.2f}" if r.seconds_to_first_failure is not None else "-"
        calls = str(r.counterexample_calls) if r.counterexample_calls is not None else "-"
        lines.append(
            f"{r.variant:28} {r.kind:6} {r.profile:7} {r.requirement or '-':28} {r.verdict:9} {t:>12} {calls:>5}"
        )
    return "\n".join(lines)


def to_json(results: list[VariantResult]) -> list[dict[str, object]]:
    return [asdict(r) for r in results]
