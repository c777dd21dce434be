"""Bugs the suite meets in its own calls (issue 34, item 5), each through the whole suite.

For every catalogue variant of ``adapters/variants/outside_body_mutants.py`` (a hang, a
crash or a wrong answer in the suite's clean-up after a test, its reset between
harnesses, its set-up reads), under both profiles and in both modes, runs
``acl-conformance run`` as a vendor would and prints one row: the exit status, the
verdict, the status of the requirement the variant must be charged to, how many other
requirements are not ``pass`` (``unknown`` among them), the tests declined, the restarts
charged to nothing (``selfcheck.uncharged_restarts``) and the wall time.

``python bench/outside_body.py [spec|cann ...] [ci|conformance ...] [VARIANT ...]``

Last line: ``outside_body: <n> of <m> runs not conformant, exit 1, charged as the
catalogue says, with no other requirement left unknown (but where the verdict says the
run declined more than a third of its tests); slowest <s> s``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from acl_conformance.adapters.variants import BY_NAME
from acl_conformance.adapters.variants import outside_body_mutants
from acl_conformance.conformance.command_line.selfcheck import uncharged_restarts

VARIANTS = [
    v.name
    for v in BY_NAME.values()
    if getattr(v.build, "__module__", "") == outside_body_mutants.__name__ and v.catches
]


def one(name: str, profile: str, mode: str) -> dict[str, object]:
    """Run the suite against variant ``name``; what the row shows."""
    v = BY_NAME[name]
    with tempfile.TemporaryDirectory(prefix="acl-bench-ob-") as tmp:
        out = Path(tmp) / "report"
        cmd = [
            sys.executable,
            "-m",
            "acl_conformance",
            "run",
            "--adapter",
            "acl_conformance.adapters.variants:variant",
            "--adapter-option",
            f"name={name}",
            "--profile",
            profile,
            "--mode",
            mode,
            "--report-dir",
            str(out),
        ]
        t0 = time.monotonic()
        rc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp).returncode
        wall = time.monotonic() - t0
        report = json.loads((out / "report.json").read_text())
        results = json.loads((out / "results.json").read_text())
    status = {r["id"]: r["status"] for r in report["requirements"]}
    want = v.catches[profile]
    expected = "timeout" if v.hangs else "crash" if v.crashes else "fail"
    others = {r: s for r, s in status.items() if r != want and s not in ("pass", "not_supported")}
    lost = uncharged_restarts(results)
    # unknown rows only where the verdict says the run declined more than a third of its
    # tests (a call as common as the synchronous read that hangs: little can be observed)
    declined_run = any("of the run's tests were declined" in x for x in report["verdict_reasons"])
    ok = (
        rc == 1
        and report["verdict"] == "not conformant"
        and status.get(want) in (expected, "flaky" if expected == "fail" else expected)
        and (declined_run or not [s for s in others.values() if s == "unknown"])
        and not lost
    )
    return {
        "variant": name,
        "profile": profile,
        "mode": mode,
        "rc": rc,
        "verdict": report["verdict"],
        "charged": f"{want} {status.get(want)}",
        "others": others,
        "declined": report["summary"].get("tests_declined"),
        "lost": lost,
        "wall": wall,
        "ok": ok,
    }


def main(argv: list[str]) -> int:
    profiles = [a for a in argv if a in ("spec", "cann")] or ["spec", "cann"]
    modes = [a for a in argv if a in ("ci", "conformance")] or ["ci", "conformance"]
    names = [a for a in argv if a in VARIANTS] or VARIANTS
    rows = []
    for name in names:
        for profile in profiles:
            for mode in modes:
                row = one(name, profile, mode)
                rows.append(row)
                print(
                    f"{row['variant']:36} {row['profile']:5} {row['mode']:12} rc={row['rc']} "
                    f"{row['verdict']:15} {row['charged']:34} declined={row['declined']:<4} "
                    f"others={row['others']} lost={len(row['lost'])} "
                    f"{row['wall']:.0f} s {'ok' if row['ok'] else 'WRONG'}",
                    flush=True,
                )
    good = sum(1 for r in rows if r["ok"])
    slowest = max(float(str(r["wall"])) for r in rows) if rows else 0.0
    print(
        f"outside_body: {good} of {len(rows)} runs not conformant, exit 1, charged as the "
        f"catalogue says, with no other requirement left unknown (but where the verdict says "
        f"the run declined more than a third of its tests); slowest {slowest:.0f} s"
    )
    return 0 if good == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
