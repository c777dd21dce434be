"""``acl-conformance hunt``: the suite's machines under HypoFuzz, for as long as asked.

The gate is sized to decide in a minute; a bug that needs a rarer sequence is found by
spending more CPU.  HypoFuzz (an optional extra: it is AGPL-3.0, and the gate never
imports it) fuzzes the same machines, in ``--workers`` processes that share Hypothesis'
example database (``--database``: a directory, on shared storage for several hosts, or
Redis), with the same adapter, profile, capability skips and judgement as ``run`` (the
plugin's ``--acl-hunt``).  Each failure is saved as a find (``traces/finds.py``);
``acl-conformance run --replay DIR`` replays them before the suite.

Exit status: 0 when no find is saved, 1 when there are finds, 2 on a usage error
(HypoFuzz not installed among them).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TextIO

from acl_conformance.conformance.session.suite_command import SUITE
from acl_conformance.conformance.session.supervise import Supervisor
from acl_conformance.conformance.traces import finds
from acl_conformance.reference_impl.catalogue import PROFILES

from .runner import RunError
from .runner import check_backend

INSTALL = (
    'the bug hunt needs HypoFuzz (AGPL-3.0, an optional extra): pip install "acl-conformance[hunt]"'
    " (or pip install hypofuzz)"
)

PROGRESS_EVERY_S = 10.0
MACHINES = f"{SUITE}.test_machines"
"""What the hunt fuzzes: the suite's stateful machines."""

_FUZZ = "import hypofuzz.entrypoint, hypothesis.extra.cli as c; c.main()"
"""HypoFuzz's ``hypothesis fuzz``, run by this interpreter (whatever its scripts' folder)."""


@dataclass
class HuntOptions:
    adapter: str = "sim"
    adapter_options: list[str] = field(default_factory=list)
    profile: str = "spec"
    minutes: float = 10.0
    workers: int = 1
    database: str = "acl-conformance-hunt"
    finds: Path | None = None
    """Where finds go (default: ``database``/finds; needed with a Redis database)."""
    call_timeout: float | None = None

    @property
    def redis(self) -> bool:
        return self.database.startswith(("redis://", "rediss://", "unix://"))

    @property
    def finds_dir(self) -> Path:
        return self.finds if self.finds is not None else Path(self.database) / "finds"


def have_hypofuzz() -> bool:
    return importlib.util.find_spec("hypofuzz") is not None


def check(opts: HuntOptions) -> None:
    """Reject what cannot run (RunError, one line)."""
    if not have_hypofuzz():
        raise RunError(INSTALL)
    if opts.profile not in PROFILES:
        raise RunError(f"--profile {opts.profile!r}: expected one of {', '.join(PROFILES)}")
    if not opts.minutes > 0:
        raise RunError(f"--minutes {opts.minutes:g}: must be more than 0")
    if opts.workers < 1:
        raise RunError(f"--workers {opts.workers}: must be at least 1")
    if opts.redis and opts.finds is None:
        raise RunError(f"--database {opts.database}: with Redis, say where finds go (--finds DIR)")
    check_backend(opts.call_timeout, opts.adapter_options)


MACHINE_NAMES = ("SingleDevice", "MultiDevice", "Threads")
"""The machines, the one most requirements rest on first."""


def plan(workers: int, machines: tuple[str, ...] = MACHINE_NAMES) -> list[list[str]]:
    """The machines each of ``workers`` processes hunts: one machine each for all but the
    last, which takes the rest (with more workers than machines, the round starts again).
    HypoFuzz itself would give every process every machine and spend its time where new
    behaviour comes fastest: a machine of several host threads finds new behaviour in
    every interleaving, and would starve the others."""
    if workers >= len(machines):
        return [[machines[k % len(machines)]] for k in range(workers)]
    return [[m] for m in machines[: workers - 1]] + [list(machines[workers - 1 :])]


def command(opts: HuntOptions, rootdir: Path, machines: list[str] | None = None) -> list[str]:
    """HypoFuzz's command line for one process: ``hypothesis fuzz -n 1`` over the
    ``machines`` (default: all), with the plugin's options of the run and its hunt."""
    database = opts.database if opts.redis else str(Path(opts.database).resolve())
    pytest_args = ["-c", "/dev/null", "--rootdir", str(rootdir), "-p", "no:cacheprovider"]
    pytest_args += ["-q", "--pyargs", MACHINES, "--acl-adapter", opts.adapter]
    pytest_args += [a for o in opts.adapter_options for a in ("--acl-adapter-option", o)]
    pytest_args += ["--acl-profile", opts.profile, "--acl-hunt", database]
    pytest_args += ["--acl-finds", str(opts.finds_dir.resolve())]
    if opts.call_timeout is not None:
        pytest_args += ["--acl-call-timeout", str(opts.call_timeout)]
    if machines:
        pytest_args += ["-k", " or ".join(machines)]
    fuzz = ["fuzz", "-n", "1", "--no-dashboard"]
    return [sys.executable, "-c", _FUZZ, *fuzz, "--", *pytest_args]


@dataclass
class Progress:
    """The hunt's examples so far, from the progress files its processes write."""

    examples: dict[str, int] = field(default_factory=dict)
    earliest: float | None = None

    @classmethod
    def read(cls, progress_dir: Path, since: float) -> Progress:
        """The progress files under ``progress_dir`` written since ``since`` (this hunt's;
        another host's hunt on the same folder counts too)."""
        p = cls()
        for f in sorted(progress_dir.glob("*.json")):
            try:
                doc = json.loads(f.read_text())
            except (OSError, ValueError):
                continue
            if doc.get("now", 0) < since:
                continue
            for machine, n in doc.get("examples", {}).items():
                p.examples[machine] = p.examples.get(machine, 0) + int(n)
            start = float(doc.get("started", since))
            p.earliest = start if p.earliest is None else min(p.earliest, start)
        return p

    @property
    def total(self) -> int:
        return sum(self.examples.values())


def progress_line(elapsed: float, now: Progress, before: Progress, dt: float, n_finds: int) -> str:
    """One line: examples per second in all and per machine (over the last ``dt`` s),
    examples so far, finds so far."""
    rate = (now.total - before.total) / dt if dt > 0 else 0.0
    per = ", ".join(
        f"{m.removesuffix('Machine')} {(n - before.examples.get(m, 0)) / dt:.1f}/s ({n})"
        for m, n in sorted(now.examples.items())
    )
    return (
        f"[{elapsed / 60:4.1f} min] {rate:.1f} examples/s, {now.total} so far"
        f"{'; ' + per if per else ''}; finds {n_finds}"
    )


def hunt(opts: HuntOptions, out: TextIO | None = None) -> int:
    """The whole command: check, hunt for ``opts.minutes``, say what was found."""
    out = sys.stdout if out is None else out
    check(opts)
    root = opts.finds_dir
    progress_dir = root / ".progress"
    progress_dir.mkdir(parents=True, exist_ok=True)
    log = progress_dir / f"hunt-{int(time.time())}.log"
    known = {f.identity for f in finds.load_all(root)}
    out.write(
        f"hunting with HypoFuzz: adapter {opts.adapter}, profile {opts.profile}, "
        f"{opts.workers} workers, {opts.minutes:g} min; database {opts.database}; finds {root}"
        f"{f' ({len(known)} saved already)' if known else ''}\n"
    )
    out.flush()
    started = time.time()
    t0 = time.monotonic()
    end = t0 + opts.minutes * 60
    logs = []
    with Supervisor() as sup:
        procs = []
        for k, machines in enumerate(plan(opts.workers)):
            logs.append(progress_dir / f"hunt-{int(started)}-{k}.log")
            with logs[-1].open("w") as log_file:
                procs.append(
                    sup.popen(
                        command(opts, progress_dir.resolve(), machines),
                        stdout=log_file,
                        stderr=subprocess.STDOUT,
                        cwd=progress_dir,
                    )
                )
        before, at = Progress(), time.monotonic()
        while time.monotonic() < end:
            time.sleep(min(0.5, max(0.0, end - time.monotonic())))
            sup.check()
            if all(p.poll() is not None for p in procs):
                break  # a process whose machines the backend cannot run ends at once
            if time.monotonic() - at >= PROGRESS_EVERY_S:
                now = Progress.read(progress_dir, started)
                n = len(finds.load_all(root))
                out.write(
                    progress_line(time.monotonic() - t0, now, before, time.monotonic() - at, n)
                    + "\n"
                )
                out.flush()
                before, at = now, time.monotonic()
        # time is up (or every process stopped): the supervisor ends them on leaving
        stopped = [
            (p.returncode, log) for p, log in zip(procs, logs, strict=True) if p.poll() is not None
        ]
    if len(stopped) == len(procs) and time.monotonic() < end and not finds.load_all(root):
        rc, log = stopped[0]
        tail = log.read_text(errors="replace").strip().splitlines()[-5:]
        raise RunError(f"HypoFuzz stopped (exit {rc}): {' | '.join(tail)} (log: {log})")
    total = Progress.read(progress_dir, started)
    found = finds.load_all(root)
    new = [f for f in found if f.identity not in known]
    wall = time.monotonic() - t0
    out.write(
        f"hunted {wall / 60:.1f} min: {total.total} examples "
        f"({total.total / wall if wall else 0:.1f}/s); {len(new)} new finds, {len(found)} saved\n"
    )
    for f in found:
        when = ""
        if f in new:
            found_at = f.found
            when = " (new" + (
                f", found {max(0.0, found_at - started):.0f} s in)" if found_at else ")"
            )
        out.write(f"  {f.identity}{when}: {f.folder}\n")
    if found:
        out.write(
            f"replay them: acl-conformance run --replay {opts.database if not opts.redis else root}"
            f" --adapter {opts.adapter}"
            + "".join(f" --adapter-option {o}" for o in opts.adapter_options)
            + f" --profile {opts.profile}\n"
        )
    return 1 if found else 0
