#!/usr/bin/env python3
"""Blind power measure: run acl-conformance against every blind23 backend and profile.

For every backend x profile, one at a time:

    PYTHONPATH=/work/blind23 /work/main/.venv/bin/acl-conformance run \
        --adapter blind23.backends:make --adapter-option name=<name> \
        --profile <p> --report-dir <dir> [--jobs N]

with a 5-minute limit per run (SIGTERM first, so the suite writes the report of what
finished, then SIGKILL), then reads <dir>/report.json and prints a table; also written to
/work/blind23/results.md.

  python measure.py [--only a,b] [--profiles spec,cann] [--jobs N] [--timeout S]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLI = os.environ.get("ACL_CLI", "/work/main/.venv/bin/acl-conformance")
FAILING = ("fail", "flaky", "timeout", "crash")


def load_expected() -> dict:
    return json.loads((HERE / "expected.json").read_text())


def run_one(name: str, profile: str, jobs: str | None, limit: float, out_root: Path) -> dict:
    report_dir = out_root / f"{name}--{profile}"
    report_dir.mkdir(parents=True, exist_ok=True)
    cmd = ["nice", CLI, "run", "--adapter", "blind23.backends:make",
           "--adapter-option", f"name={name}", "--profile", profile,
           "--report-dir", str(report_dir)]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    env = dict(os.environ)
    env["PYTHONPATH"] = str(HERE) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    t0 = time.monotonic()
    log = open(report_dir / "run.log", "w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    timed_out = False
    try:
        rc = proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGTERM)  # the run writes the report of what finished
        try:
            rc = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
    log.close()
    wall = time.monotonic() - t0
    row = {"rc": rc, "wall": wall, "timed_out": timed_out, "verdict": None,
           "failing": [], "unknown": 0, "dir": str(report_dir)}
    rj = report_dir / "report.json"
    if rj.exists():
        try:
            rep = json.loads(rj.read_text())
            row["verdict"] = rep.get("verdict")
            for r in rep.get("requirements", []):
                if r.get("status") in FAILING:
                    row["failing"].append(f"{r['id']}({r['status']}{'' if r.get('level') == 'MUST' else ',' + str(r.get('level'))})")
                elif r.get("status") == "unknown":
                    row["unknown"] += 1
            row["failing_ids"] = [r["id"] for r in rep.get("requirements", []) if r.get("status") in FAILING]
        except (ValueError, KeyError) as exc:
            row["verdict"] = f"bad report ({exc})"
    if row["verdict"] is None:
        row["verdict"] = "no report" + (" (killed)" if timed_out else f" (rc {rc})")
    elif timed_out:
        row["verdict"] += " (run timed out)"
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="", help="comma-separated backend names")
    ap.add_argument("--profiles", default="spec,cann", help="comma-separated: spec,cann")
    ap.add_argument("--jobs", default=None, help="passed to acl-conformance run --jobs")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per run (default 300)")
    ap.add_argument("--out", default=str(HERE / "runs"), help="where the report folders go")
    ap.add_argument("--results", default=str(HERE / "results.md"))
    args = ap.parse_args()

    expected = load_expected()
    names = [n for n in args.only.split(",") if n] or list(expected)
    unknown_names = [n for n in names if n not in expected]
    if unknown_names:
        ap.error(f"not in expected.json: {', '.join(unknown_names)}")
    profiles = [p for p in args.profiles.split(",") if p]
    out_root = Path(args.out)

    header = ("| backend | profile | expected | verdict | caught | right req | failing requirements "
              "| unknown | wall s |")
    sep = "|" + "---|" * 9
    lines = [header, sep]
    print(header); print(sep); sys.stdout.flush()
    tot = {"bugs": 0, "caught": 0, "right": 0, "legal": 0, "accepted": 0, "unknown": 0}
    for name in names:
        for profile in profiles:
            exp = expected[name][profile]
            also = expected[name].get("also", {}).get(profile, [])
            row = run_one(name, profile, args.jobs, args.timeout, out_root)
            conformant = row["verdict"] == "conformant"
            failing_ids = row.get("failing_ids", [])
            if exp == "legal":
                tot["legal"] += 1
                ok = conformant
                tot["accepted"] += ok
                caught, right = ("accepted" if ok else "REJECTED"), "-"
            else:
                tot["bugs"] += 1
                ok = not conformant and row["verdict"] not in (None,) and not row["verdict"].startswith("no report")
                tot["caught"] += ok
                is_right = exp in failing_ids
                tot["right"] += ok and is_right
                caught = "yes" if ok else "MISSED"
                if is_right:
                    right = "yes"
                elif any(a in failing_ids for a in also):
                    right = "alt:" + ",".join(a for a in also if a in failing_ids)
                else:
                    right = "no"
            tot["unknown"] += row["unknown"]
            line = (f"| {name} | {profile} | {exp} | {row['verdict']} | {caught} | {right} | "
                    f"{' '.join(row['failing']) or '-'} | {row['unknown']} | {row['wall']:.0f} |")
            lines.append(line)
            print(line); sys.stdout.flush()
    totals = [
        "",
        f"- bugs caught: {tot['caught']} / {tot['bugs']}",
        f"- caught under the right requirement: {tot['right']} / {tot['bugs']}",
        f"- legal accepted: {tot['accepted']} / {tot['legal']}",
        f"- total unknown requirements: {tot['unknown']}",
    ]
    for t in totals:
        print(t)
    Path(args.results).write_text(
        "# blind23 power measure\n\n"
        f"profiles: {', '.join(profiles)}; backends: {len(names)}; jobs: {args.jobs or 'default'}; "
        f"per-run limit {args.timeout:.0f} s; reports under {out_root}\n\n"
        + "\n".join(lines + totals) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
