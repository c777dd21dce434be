"""``acl-conformance run --replay DIR``: a bug hunt's saved finds replayed before the
suite, each against a fresh backend of the run's adapter under the run's profile; the
gate fails on every find that still fails.

A find is replayed as ``acl-conformance replay`` replays a trace (``traces/replay.py``),
up to ``replay.RECHECKS`` times until it fails (a timing bug may need more than one try);
a find that never fails again is said so, and does not fail the gate (the backend was
fixed).  A find whose calls come from several host threads is replayed one call at a
time in its recorded order (a legal interleaving): a failure there still fails the gate,
and a replay that passes decides nothing (the failure may need the threads' overlap), so
it fails the gate too, as undecided: a check that did not finish is never a pass.  The
ci gate itself stays derandomised: the finds are files, not a database.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import TextIO

from acl_conformance.conformance.traces import finds
from acl_conformance.conformance.traces import replay
from acl_conformance.conformance.traces.trace import TraceError


@dataclass(frozen=True)
class Replayed:
    """One find, replayed."""

    find: finds.Find
    still_fails: bool
    broken: list[str]
    seconds: float
    note: str = ""
    undecided: bool = False
    """Replayed, and neither failed again nor shown to pass (``note`` says why)."""

    def line(self) -> str:
        if self.still_fails:
            what = f"STILL FAILS ({', '.join(dict.fromkeys(self.broken))} broken)"
        elif self.undecided:
            what = f"UNDECIDED ({self.note})"
        else:
            what = self.note or "no longer fails: every call was one the profile allows"
        return f"  {self.find.identity}: {what}; {self.seconds:.1f} s ({self.find.trace_file})"


def finds_dir(where: Path) -> Path:
    """The folder of finds ``--replay`` names: ``where``/finds when there is one (a hunt's
    database folder), else ``where`` itself."""
    return where / "finds" if (where / "finds").is_dir() else where


def replay_all(
    where: Path,
    adapter: str,
    options: dict[str, str],
    profile: str,
    call_timeout: float | None,
    out: TextIO,
) -> list[Replayed]:
    """Replay every find saved under ``where``, a line each on ``out``."""
    found = finds.load_all(finds_dir(where))
    out.write(f"replaying {len(found)} saved finds from {where} (adapter {adapter}, {profile})\n")
    done = []
    for f in found:
        t0 = time.monotonic()
        try:
            r = replay.recheck(
                f.load(), adapter, options, profile, call_timeout, one_at_a_time=True
            )
        except TraceError as exc:
            r = replay.Recheck(None, [], [], f"not replayed: {exc}")
        seconds = time.monotonic() - t0
        undecided = r.reproduced is None
        done.append(Replayed(f, bool(r.reproduced), list(r.broken), seconds, r.note, undecided))
        out.write(done[-1].line() + "\n")
        out.flush()
    return done


def mark(report: dict[str, Any], replayed: list[Replayed]) -> None:
    """Fail the gate of ``report`` for each find that still fails or was left undecided
    (a reason each)."""
    reasons = [
        f"a saved find of the bug hunt still fails: {r.find.identity} (replay {r.find.trace_file})"
        for r in replayed
        if r.still_fails
    ]
    reasons += [
        f"a saved find of the bug hunt is undecided: {r.find.identity} ({r.note}; "
        f"once the bug is fixed, remove {r.find.folder})"
        for r in replayed
        if r.undecided
    ]
    if not reasons:
        return
    for key in ("gate", "expectations"):
        part = report.get(key)
        if isinstance(part, dict) and "result" in part:
            part["result"] = "fail"
            part["reasons"] = [*part.get("reasons", []), *reasons]
