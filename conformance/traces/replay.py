"""``acl-conformance replay TRACE``: a saved failing trace re-run against a backend.

Each recorded call is made again (handles and addresses mapped onto the new
run), judged by the model of the trace's profile, and printed beside what the
profile allows and what the recorded backend answered.  Calls are made at
the recorded pace (none sooner after the first than it was in the recorded
run).  Calls the recorded run made from several host threads are made again
from as many threads, one call at a time in the recorded order (a legal
interleaving, not necessarily the one that failed); a gate that a timer
opened while a call waited is opened from a timer again.

Exit status: 1 when the replay breaks a requirement (the failure reproduces),
0 when every call is allowed, 2 when the trace or the backend cannot be used.
"""

from __future__ import annotations

import concurrent.futures
import io
import time
import unittest
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from typing import TextIO

from acl_conformance.conformance.harness.failure import BackendCrash
from acl_conformance.conformance.harness.failure import ConformanceFailure
from acl_conformance.conformance.harness.handles import Handles
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.session import context
from acl_conformance.conformance.session import settings
from acl_conformance.reference_impl.constants import error_name
from acl_conformance.reference_impl.record import CallRecord

from .trace import Trace
from .trace import opened_during

TIMER_DELAY = 0.005
"""Seconds after a waiting call starts before a timer opens the gate it waits for."""


class _Threads:
    """One host thread per recorded thread; calls are run on it one at a time."""

    def __init__(self) -> None:
        self._pools: dict[int, concurrent.futures.ThreadPoolExecutor] = {}
        self._first: int | None = None

    def run(self, thread: int, fn: Callable[[], Any]) -> Any:
        if self._first is None:
            self._first = thread
        if thread == self._first:
            return fn()  # the first recorded thread is this one
        pool = self._pools.get(thread)
        if pool is None:
            pool = self._pools[thread] = concurrent.futures.ThreadPoolExecutor(1)
        return pool.submit(fn).result()

    def close(self) -> None:
        for p in self._pools.values():
            p.shutdown(wait=False, cancel_futures=True)


class _Pace:
    """Keeps a replay at the recorded pace: a call is not made before as long after the
    first call as it was in the recorded run (what a test's pauses let the backend's own
    threads do in between, a copy run early, must have the time to happen again)."""

    def __init__(self, calls: list[CallRecord]) -> None:
        starts = [c.started for c in calls if c.started]
        self._recorded0 = min(starts) if starts else 0.0
        self._replay0: float | None = None

    def wait(self, call: CallRecord) -> None:
        now = time.monotonic()
        if self._replay0 is None or not call.started:
            self._replay0 = self._replay0 if self._replay0 is not None else now
            return
        due = self._replay0 + min(call.started - self._recorded0, MAX_PAUSE_S)
        if due > now:
            time.sleep(due - now)


MAX_PAUSE_S = 60.0
"""A recorded pause longer than this (the run held by something else) is not kept whole."""


def _code(code: int | None) -> str:
    return "raised" if code is None else f"{error_name(code)} ({code})"


def replay(
    trace: Trace,
    adapter: str,
    options: dict[str, str],
    profile: str,
    out: TextIO,
    call_timeout: float | None = settings.CALL_TIMEOUT_SECONDS,
) -> int:
    suite = context.Suite(
        adapter_name=adapter, adapter_options=options, profile=profile, call_timeout=call_timeout
    )
    out.write(
        f"replaying {trace.path}: {len(trace.calls)} calls of {trace.test} "
        f"(recorded on {trace.adapter}, failing {trace.requirement or 'no requirement'})\n"
        f"against adapter {adapter}, profile {profile}\n"
    )
    broken, _records = _replay(trace, suite, out, announce=True)
    out.write("\n")
    if broken:
        out.write(f"reproduced: {', '.join(dict.fromkeys(broken))} broken\n")
        return 1
    out.write("not reproduced: every call was one the profile allows\n")
    return 0


@dataclass(frozen=True)
class Recheck:
    """A failing trace replayed against a fresh backend: did it fail again?"""

    reproduced: bool | None
    """True: it failed again; False: every call was allowed (the failure is flaky); None:
    not replayed (``note`` says why)."""
    broken: list[str]
    """The requirements the replay broke (``CRASH/TIMEOUT`` when the backend stopped)."""
    records: list[CallRecord]
    """The replay's own calls, as the fresh backend answered them."""
    note: str = ""
    started: int = 0
    """How many fresh backends the replays started."""

    def to_json(self) -> dict[str, Any]:
        return {"reproduced": self.reproduced, "broken": list(self.broken), "note": self.note}


RECHECKS = 5
"""Replays of a failing trace before its failure is called flaky: a replay keeps the
recorded pace, but the backend's threads may still run in another order."""


def recheck(
    trace: Trace,
    adapter: str,
    options: dict[str, str],
    profile: str,
    call_timeout: float | None = settings.CALL_TIMEOUT_SECONDS,
    tries: int = RECHECKS,
    one_at_a_time: bool = False,
) -> Recheck:
    """Replay ``trace`` quietly against a fresh backend of ``adapter`` (up to ``tries``
    times, each on a fresh backend, until it fails again): a failure that does not fail
    again is flaky (real hardware varies from run to run).

    Calls made from several host threads are replayed one at a time, in the recorded
    order: a legal interleaving, not necessarily the one that failed.  So by default such
    a trace is not replayed (a failure that needs the threads' overlap would pass for
    flaky); with ``one_at_a_time`` it is, and a failure it shows is a real one, while a
    replay that passes leaves it undecided (``reproduced`` None, ``note`` says why)."""
    threads = {c.thread for c in trace.calls}
    if len(threads) > 1 and not one_at_a_time:
        return Recheck(
            None, [], [], f"not replayed: its calls come from {len(threads)} host threads"
        )
    found = Recheck(None, [], [], "not replayed")
    started = 0
    for _ in range(max(1, tries)):
        suite = context.Suite(
            adapter_name=adapter,
            adapter_options=options,
            profile=profile,
            call_timeout=call_timeout,
        )
        try:
            broken, records = _replay(trace, suite, io.StringIO())
        except Exception as exc:  # the fresh backend could not be had: nothing is decided
            what = " ".join(f"{type(exc).__name__}: {exc}".split())
            return Recheck(None, [], [], f"not replayed: {what}"[:500], started + 1)
        finally:
            started += sum(suite.instances_started.values())
        found = Recheck(bool(broken), broken, records, started=started)
        if broken:
            break
    if len(threads) > 1 and found.reproduced is False:
        return Recheck(
            None,
            [],
            found.records,
            f"undecided: not reproduced with its {len(threads)} host threads' calls made one "
            "at a time, and the failure may need their overlap",
            found.started,
        )
    return found


def _replay(
    trace: Trace, suite: context.Suite, out: TextIO, announce: bool = False
) -> tuple[list[str], list[CallRecord]]:
    """Make the calls of ``trace`` again on a fresh backend of ``suite``, each judged by the
    model, a line each on ``out``: (the requirements broken, the calls as made)."""
    broken: list[str] = []
    records: list[CallRecord] = []
    try:
        records = _replay_in(trace, suite, out, announce, broken)
    except (ConformanceFailure, BackendCrash, unittest.SkipTest) as exc:
        # The clean-up after the replayed calls went wrong (judged as a test's is): the
        # backend broke something there too.
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        out.write(f"  the clean-up after the replay: {first}\n")
        broken.append(getattr(exc, "requirement", None) or "CRASH/TIMEOUT")
    return broken, records


def _replay_in(
    trace: Trace, suite: context.Suite, out: TextIO, announce: bool, broken: list[str]
) -> list[CallRecord]:
    """The calls of ``trace`` made again (``_replay``); the clean-up's failure is raised."""
    threads = _Threads()
    with suite.harness(fresh=True) as h:
        if announce:
            out.write(f"backend: {suite.backend_version}\n\n")
        tr = Handles(
            trace.fixtures,
            trace.invalid_handle,
            {f.name: f.address for f in h.fixtures.values()},
            h.adapter.invalid_handle(),
        )
        timed = opened_during(trace.calls)
        by_timer = {g.seq for gs in timed.values() for g in gs}
        pace = _Pace(trace.calls)
        try:
            for call in trace.calls:
                if call.name == "read_host" or call.seq in by_timer:
                    continue  # the harness reads back what it observes; timers open gates
                pace.wait(call)
                for g in timed.get(call.seq, []):
                    h.open_later(tr.now("gate", int(g.args["gate"])), TIMER_DELAY)
                line = _replay_one(h, threads, tr, call, broken)
                out.write(line + "\n")
        except BackendCrash as exc:
            out.write(f"  the backend stopped answering: {exc}\n")
            broken.append("CRASH/TIMEOUT")
        finally:
            threads.close()
            records = list(h.trace_records())
    return records


def _replay_one(
    h: Harness, threads: _Threads, tr: Handles, call: CallRecord, broken: list[str]
) -> str:
    args = tr.args_now(call)
    thread_no: list[int] = []

    def make() -> tuple[CallRecord | None, ConformanceFailure | None]:
        thread_no.append(h.thread_no())
        if call.name == "open_gate":
            h.open_stream_gate(int(args["gate"]))
            return None, None
        try:
            return h.call(call.name, **args), None
        except ConformanceFailure as f:
            return None, f

    result, failure = threads.run(call.thread, make)
    step = h.last_steps.get(thread_no[0]) if thread_no else None
    label = step.judgement.label if step is not None else f"{call.name}"
    got = result.code if result is not None else None
    if result is not None:
        tr.learn(call, now=result.outputs)
    elif failure is not None and step is not None:
        # The call answered (the model judged it): its outputs are in the step's record.
        got = step.record.code
        tr.learn(call, now=step.record.outputs)
    if failure is None:
        # A call the profile allows takes one line, so that a long trace with one wrong
        # read replays in a screenful: the wrong call's block is what the reader wants.
        same = "as recorded" if got == call.code else f"recorded {_code(call.code)}"
        return f"{label}  -> {_code(got)}, {same}: ok"
    text = f"{label}\n    backend {_code(got)}; recorded {_code(call.code)}"
    if step is not None:
        text += f"; allowed {step.judgement.allowed_text()}"
    for v in failure.violations:
        broken.append(v.requirement or "unattributed")
        text += "\n    MISMATCH " + v.render().replace("\n", "\n    ")
    return text
