"""The run's shared state: which backend, which profile, and the live adapter.

The pytest plugin creates one :class:`Suite` per session (per xdist worker);
clause tests reach it through fixtures, state machines through ``current()``
(Hypothesis machines cannot take pytest fixtures).

How long one backend instance serves is the adapter's ``isolation``:

- ``"run"``: one instance serves every harness of the worker;
- ``"reset"``: the same, and after each harness the suite brings the backend back to a
  known state through the contract (``reset.py``: what the harness made released, the
  variables it wrote rewritten to their first-read bytes and read back, device 0
  current); a reset that fails drops the instance;
- ``"test"``: a fresh instance for each test;
- ``"example"``: a fresh one for every harness (each Hypothesis example and shrink step).

Whatever the isolation, a crash or a hang drops the instance, and a harness that asks for
a pristine backend (``harness(fresh=True)``) gets one of its own.  Under ``reset`` and
``test``, a harness on an instance that served an earlier one is *provisional*: a test
attempt that fails on one is run again with a fresh instance for every harness
(``attempts.py``); if that passes, the failure was the earlier harnesses' leftovers, the
test passes ("recovered by a fresh backend instance", :attr:`Suite.recovered`) and the
worker takes a fresh instance per harness from then on.  :attr:`Suite.instances_started`
counts the instances started, by reason.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import os
import threading
import unittest
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import TypeVar

from acl_conformance.adapters.base import Adapter
from acl_conformance.adapters.registry import resolve
from acl_conformance.adapters.traced import Traced
from acl_conformance.conformance.harness import reset
from acl_conformance.conformance.harness.failure import BackendCrash
from acl_conformance.conformance.harness.failure import BackendTimeout
from acl_conformance.conformance.harness.failure import ConformanceFailure
from acl_conformance.conformance.harness.failure import Declined
from acl_conformance.conformance.harness.hangs import CallLimit
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.harness.runstate import RunState
from acl_conformance.conformance.harness.teardown import Call
from acl_conformance.reference_impl.evidence import Tally

from . import settings

T = TypeVar("T")

FIXTURES_NEEDED = (
    "g_u8",
    "g_u32",
    "g_u64",
    "g_struct12",
    "g_struct24",
    "g_arr256",
    "g_arr4k",
    "g_arr1m",
    "g_arr16m",
)
"""The fixture variables the suite's tests copy into (docs/design.md, "Fixture variables");
their sizes are whatever the backend declares (GETSYMBOL-SIZE checks them)."""


START = "start"
"""The first instance of the worker."""
CRASH = "crash"
"""The instance before crashed (or raised)."""
TIMEOUT = "timeout"
"""A call of the instance before did not return in time."""
FAILED_RESET = "failed reset"
"""The instance before could not be reset after a harness (``Suite.reset_failures``)."""
ISOLATION_TEST = "isolation test"
"""A new test (the adapter's ``isolation`` is ``"test"``)."""
ISOLATION_EXAMPLE = "isolation example"
"""A new harness (the adapter's ``isolation`` is ``"example"``)."""
FRESH_HARNESS = "fresh harness"
"""A harness that needs a pristine backend (``harness(fresh=True)``: device resets, replay)."""
RECHECK = "recheck on a fresh backend instance"
"""A test attempt that failed on a reused instance, run again on fresh ones."""
AFTER_RECOVERY = "after a recovery"
"""A new harness after a recheck passed (``Suite.recovered``): one instance per harness."""
REPLAY = "replay of a failing trace"
"""A failing trace replayed against a fresh backend, to tell a flaky failure from one that
fails again (``replay.recheck``)."""
REASONS = (
    START,
    CRASH,
    TIMEOUT,
    FAILED_RESET,
    ISOLATION_TEST,
    ISOLATION_EXAMPLE,
    FRESH_HARNESS,
    RECHECK,
    AFTER_RECOVERY,
    REPLAY,
)
"""Every reason :attr:`Suite.instances_started` counts."""
ISOLATIONS = ("run", "reset", "test", "example")
"""The values of an adapter's ``isolation`` (``adapters/base.py``), least isolated first."""


class BackendSetupError(Exception):
    """The backend started but cannot be tested as it is (it declares too little); the
    message is one line for the vendor."""


@dataclass
class Suite:
    """One run's backend and options; hands out harnesses over a live adapter."""

    adapter_name: str = "sim"
    adapter_options: Mapping[str, str] = field(default_factory=dict)
    profile: str = "spec"
    call_timeout: float | None = settings.CALL_TIMEOUT_SECONDS
    """The limit on one backend call given on the command line; None: it adapts to the
    backend (``hangs.CallLimit``)."""
    _call_limit: CallLimit = field(default_factory=CallLimit)
    _adapter: Traced | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    backend_version: str = ""
    expected: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Requirement -> (expectations entry, its description): failures citing it are expected."""
    found_here: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Requirement -> (entry, description) of the expectations entries ``REQUIREMENT in
    TEST`` that cover the test running now (set by the plugin per test): there, failures
    citing it are expected too, before :attr:`expected`."""
    run: RunState | None = None
    """What the run's tests share (failed requirements, failure owners)."""
    masks: frozenset[str] = frozenset()
    """The requirements masked for the test running now (set by the plugin per attempt)."""
    tally: Tally = field(default_factory=Tally)
    """The checks of the test running now (every harness it makes adds to it)."""
    test_id: str = ""
    instances_started: collections.Counter[str] = field(default_factory=collections.Counter)
    """How many backend instances (adapters; for the ``cann`` adapter, agents) this Suite
    started, by reason (:data:`REASONS`); each worker of pytest-xdist has its own Suite."""
    recovered: list[str] = field(default_factory=list)
    """The tests whose failure on a reused instance did not come back when the attempt ran
    again on fresh ones (each one "recovered by a fresh backend instance"), in order."""
    recovered_failures: list[str] = field(default_factory=list)
    """For each test of :attr:`recovered`, in order: what it failed on, on the reused
    instance (one line: the requirement and the message)."""
    reset_failures: list[str] = field(default_factory=list)
    """Why each failed reset failed, one line each, in order."""
    attempt_reused: bool = False
    """Whether a harness of the test attempt running now was served by an instance that had
    served an earlier harness (under isolation ``reset`` or ``test``): its failure is
    rechecked on fresh instances (``attempts.py``).  Cleared by :meth:`next_test`."""
    on_failure: Callable[[ConformanceFailure], None] | None = None
    """A bug hunt's: told of every failure a harness of this Suite classifies (each is
    saved as a find); None in a run."""
    on_example: Callable[[str], None] | None = None
    """A bug hunt's: told the name of each machine that starts an example (its progress)."""
    _forced: str | None = None
    """The isolation used instead of the adapter's, once a recheck passed."""
    _rechecking: bool = False
    _served: int = 0
    """Harnesses the shared instance has served."""
    restarts_listed: list[dict[str, Any]] = field(default_factory=list)
    """Each restart after a failure, in order: why (a reason of :data:`REASONS`), the test,
    the call that caused it, the requirement its failure is charged to, and whether that
    failure was charged to the test (``results.instances``)."""
    cleanup_failures: list[BaseException] = field(default_factory=list)
    """Failures of a harness's clean-up or reset met after its test had already failed:
    the test's report adds them to its own failure (``plugin/reporting.py``), so that none
    is lost behind the one pytest reports."""
    _open: dict[int, tuple[bool, str]] = field(default_factory=dict)
    """Harnesses handed out and not yet closed: id -> (on an instance of its own, the
    isolation when it was opened)."""
    _initial: dict[tuple[int, str], bytes] = field(default_factory=dict)
    """(device, variable) -> the bytes first read there from the shared instance."""
    _why: str = START
    """Why the next shared instance will be started."""
    _sticky: tuple[str, BackendCrash] | None = None
    """(pytest test id, failure): the backend hung or crashed during that test, so every
    later harness the same test asks for fails the same way at once, without calling the
    backend.  Hypothesis replays a failing example many times while it shrinks it; against
    a backend that hangs, each replay would cost a whole call timeout."""

    @property
    def call_limit(self) -> CallLimit:
        """The limit every harness of this process uses: :attr:`call_timeout` when given,
        else one that adapts to the backend (``hangs.CallLimit``), shared by the harnesses
        so that each learns from the calls the others saw."""
        if self._call_limit.fixed != self.call_timeout:
            self._call_limit = CallLimit(self.call_timeout)
        return self._call_limit

    def __repr__(self) -> str:
        return f"Suite(adapter={self.adapter_name!r}, profile={self.profile!r})"

    def new_adapter(self, reason: str = FRESH_HARNESS) -> Traced:
        """A freshly resolved and initialised backend, counted in :attr:`instances_started` under
        ``reason`` (raises AdapterResolutionError; BackendTimeout when aclInit or
        aclsysGetVersionStr does not return)."""
        inner: Adapter = resolve(self.adapter_name, dict(self.adapter_options))
        self.instances_started[reason] += 1
        adapter = Traced.around(inner)
        code = self._bounded(adapter, "aclInit(NULL)", lambda: adapter.init(None))
        if code != 0:
            self._close(adapter)
            raise RuntimeError(f"aclInit(NULL) on backend {self.adapter_name!r} returned {code}")
        rc, version = self._bounded(adapter, "aclsysGetVersionStr", adapter.get_version_str)
        self.backend_version = (
            version if rc == 0 else f"unknown (aclsysGetVersionStr returned {rc})"
        )
        try:
            self._check_declarations(adapter)
        except BaseException:
            self._close(adapter)
            raise
        return adapter

    def _check_declarations(self, adapter: Traced) -> None:
        """What the backend declares of itself: readable, and enough to run the suite."""
        try:
            self._bounded(adapter, "capabilities()", adapter.capabilities)
            declared = self._bounded(adapter, "fixtures()", adapter.fixtures)
        except BackendCrash:
            raise
        except Exception as exc:
            what = " ".join(f"{type(exc).__name__}: {exc}".split())
            raise BackendSetupError(f"its declarations could not be read: {what}") from None
        sizes = {f.name: f.size for f in declared}
        missing = [n for n in FIXTURES_NEEDED if n not in sizes]
        if missing:
            raise BackendSetupError(
                f"it declares no fixture variable {', '.join(missing)}; the suite copies "
                f"into {', '.join(FIXTURES_NEEDED)} (see the README, 'Testing your backend')"
            )
        empty = [n for n in FIXTURES_NEEDED if sizes[n] <= 0]
        if empty:
            raise BackendSetupError(f"it declares {', '.join(empty)} with no bytes")

    def _bounded(
        self, adapter: Traced, what: str, call: Callable[[], T], *, closing: bool = False
    ) -> T:
        """``call()`` within the call timeout.  Start-up and shut-down calls go through no
        harness, and a backend that hangs there must end its test or the run with a
        message, not hang it (raises BackendTimeout)."""
        box: list[Any] = []

        def run() -> None:
            try:
                box.append((True, call()))
            except BaseException as exc:  # handed to the caller below
                box.append((False, exc))

        # A daemon thread: one that never returns must not keep the process alive.
        worker = threading.Thread(target=run, name=f"acl-bounded-{what}", daemon=True)
        worker.start()
        limit = self.call_limit.startup_seconds()
        worker.join(limit)
        if not box:
            if not closing:
                # Let the backend clean up (kill an agent process) without waiting for it.
                threading.Thread(target=adapter.close, daemon=True).start()
            raise BackendTimeout(
                f"{what} on backend {self.adapter_name!r} did not return within {limit:g} s"
            )
        ok, value = box[0]
        if not ok:
            raise value
        return value  # type: ignore[no-any-return]

    def _close(self, adapter: Traced) -> None:
        """Release a backend; one whose release hangs is abandoned (BackendTimeout)."""
        self._bounded(adapter, "releasing the backend (close)", adapter.close, closing=True)

    def adapter(self) -> Traced:
        """The shared instance (started if there is none)."""
        with self._lock:
            if self._adapter is None:
                self._adapter = self.new_adapter(self._why)
                self._served = 0
                self._initial = {}
            return self._adapter

    def declared_isolation(self) -> str:
        """How long one instance of the backend may serve, as the adapter declares
        (``isolation``, default ``"run"``; see the module's docstring)."""
        return str(getattr(self.adapter().inner, "isolation", "run"))

    def isolation(self) -> str:
        """How long one instance serves now: the adapter's ``isolation``, or ``"example"``
        once a recheck on fresh instances passed (:attr:`recovered`)."""
        return self._forced or self.declared_isolation()

    def next_test(self) -> None:
        """A new test (or attempt) begins: a backend isolated per test starts afresh."""
        self.attempt_reused = False
        # A hang of an earlier attempt is not met again: its situation is declined now.
        self._sticky = None
        if self._adapter is not None and self.isolation() == "test":
            self.discard(restart=False, reason=ISOLATION_TEST)

    def discard(
        self,
        restart: bool = True,
        reason: str = CRASH,
        cause: BaseException | str | None = None,
        charged: bool = False,
    ) -> None:
        """Drop the adapter (it hung or crashed; or its isolation ends); the next test gets
        a fresh one, counted under ``reason``.  ``restart``: count it as a restart after a
        failure, listed in :attr:`restarts_listed` with its ``cause`` (the backend's failure, or
        why the suite could not go on with the instance) and whether that failure was
        ``charged`` to a test."""
        with self._lock:
            if self._adapter is not None and restart:
                self.restarts_listed.append(_restart(reason, cause, charged))
            if self._adapter is not None:
                try:
                    self._close(self._adapter)
                except BackendTimeout:
                    pass  # it hung once already: abandoned, the next test gets a fresh one
                finally:
                    self._adapter = None
                    self._why = reason

    @contextmanager
    def recheck(self) -> Iterator[None]:
        """Inside the block every harness gets a fresh instance (counted as :data:`RECHECK`),
        and a hang or crash met earlier in the same test is forgotten: the test runs as it
        would with a fresh backend for every harness."""
        self._rechecking = True
        self._sticky = None
        try:
            yield
        finally:
            self._rechecking = False

    def recovered_by_fresh_instance(self, test: str, failure: str = "") -> None:
        """A test failed on a reused instance and passed on fresh ones: note it, and serve
        every later harness of the worker with a fresh instance.  Per harness rather than
        per test: the recheck that passed gave each harness its own instance, which is the
        only isolation known to be enough (state that crosses examples of one test, such as
        a table that fills up while a failure is shrunk, would still cross under ``test``).
        ``failure``: what it failed on, on the reused instance."""
        self.recovered.append(test)
        self.recovered_failures.append(failure)
        self._forced = "example"

    def example_started(self, machine: str) -> None:
        """Machine ``machine`` starts an example (counted by a bug hunt)."""
        if self.on_example is not None:
            self.on_example(machine)

    def _why_own_instance(self, fresh: bool, mode: str) -> str | None:
        """Why the next harness gets an instance of its own, or None: the shared one."""
        if fresh:
            return FRESH_HARNESS
        if self._rechecking:
            return RECHECK
        if mode == "example":
            return AFTER_RECOVERY if self._forced else ISOLATION_EXAMPLE
        return None

    @contextmanager
    def harness(self, fresh: bool = False) -> Iterator[Harness]:
        """A harness over the shared adapter, or over a fresh one (``fresh``) for tests that
        need the backend's whole state pristine (device resets).  A failure of the clean-up
        after the block (a hang, a crash, a wrong answer: ``Harness.release``) is raised
        when the block itself ended without one."""
        h = self.open_harness(fresh)
        failed = False
        try:
            # One example of a Hypothesis test (``with suite.harness() as h``) stopped at a
            # masked step: it checked what it could; the test goes on with the next.
            with contextlib.suppress(Declined):
                try:
                    yield h
                except Declined:
                    raise
                except BaseException:
                    failed = True
                    raise
        finally:
            self.close_harness(h, body_failed=failed)

    def open_harness(self, fresh: bool = False) -> Harness:
        """A harness (see :meth:`harness`); give it back with :meth:`close_harness`."""
        sticky = self._sticky
        if sticky is not None and sticky[0] == _current_test():
            raise copy.copy(sticky[1])
        mode = self.isolation()
        reason = self._why_own_instance(fresh, mode)
        own = reason is not None
        reused = False
        if reason is not None:
            adapter = self.new_adapter(reason)
        else:
            adapter = self.adapter()
            reused = self._served > 0 and mode in ("reset", "test")
            self.attempt_reused = self.attempt_reused or reused
        h = Harness(
            adapter,
            self.profile,
            call_timeout=self.call_limit,
            tally=self.tally,
            masks=self.masks,
            run=self.run,
            test_id=self.test_id,
            expected={**self.expected, **self.found_here},
            provisional=reused,
        )
        h.model.assume_initialized()  # the adapter was initialised (aclInit) once
        h.model.assume_references(adapter.references())  # from the harnesses it served
        h.on_failure = self.on_failure
        self._open[id(h)] = (own, mode)
        try:
            with h.setup():
                h.call("set_device", device_id=0)
        except BaseException:
            self.close_harness(h, body_failed=True)
            raise
        return h

    def close_harness(self, h: Harness, *, body_failed: bool) -> None:
        """Clean up after harness ``h`` (``Harness.release``; under isolation ``reset`` the
        reset, ``reset.py``), both judged as a test's calls are, and let it go.  The
        clean-up's failure is raised unless ``body_failed`` (the test already failed: its
        own failure is the one reported; the backend is dropped all the same)."""
        opened = self._open.pop(id(h), None)
        if opened is None:
            return  # closed already
        own, mode = opened
        adapter = h.adapter
        failure: BaseException | None = None
        try:
            failure = h.release()
            if (
                failure is None
                and not own
                and not h.poisoned
                and adapter is self._adapter
                and mode == "reset"
            ):
                failure = self._reset(h)
        finally:
            h.close()
            self.cleanup_failures += h.more_failures
            if h.poison_error is not None and _current_test():
                self._sticky = (_current_test(), h.poison_error)
            if own:
                self._close(adapter)
            elif h.poisoned:
                timeout = isinstance(h.poison_error, BackendTimeout)
                self.discard(
                    reason=TIMEOUT if timeout else CRASH, cause=h.poison_error, charged=True
                )
            elif adapter is self._adapter:
                self._served += 1
                if failure is not None:
                    # A wrong answer in the clean-up: the instance is not trusted to be clean.
                    self.discard(reason=FAILED_RESET, cause=failure, charged=True)
                elif mode != "reset":
                    for key, data in h.first_reads.items():
                        self._initial.setdefault(key, data)
        if failure is not None:
            if not body_failed:
                raise failure
            self.cleanup_failures.append(failure)

    def _reset(self, h: Harness) -> BaseException | None:
        """Bring the shared instance back to the known state after ``h`` (``reset.py``),
        through ``h``'s judged path; the failure a call of it met, or None.  A reset that
        cannot be made drops the instance (the next one counted as :data:`FAILED_RESET`)."""
        # What the harness read first must be what the first harness read there: the
        # resets before it restored every byte a copy wrote, and nothing else may change.
        moved = [
            f"{name} on device {d}"
            for (d, name), data in sorted(h.first_reads.items())
            if self._initial.setdefault((d, name), data) != data
        ]
        problem = "; ".join(h.release_problems[:3])
        failure: BaseException | None = None
        if moved:
            problem = (
                f"{', '.join(moved)} held other bytes when the harness first read it than "
                "the first harness read there: something the resets do not undo wrote it"
            )
        elif problem:
            problem = f"the clean-up after the harness failed: {problem}"
        else:
            ranges = reset.plan(h.ledger, h.fixtures)
            h.stage = "the suite's reset of the backend for the next test"
            # The clean-up freed the scratch buffers: a read the reset makes allocates
            # its own, freed at its end.
            h.scratch.forget()
            call: Call = lambda name, args: h.call(name, **args)  # noqa: E731
            try:
                reset.restore(
                    call,
                    h.fixtures,
                    self._initial,
                    ranges,
                    h.ledger.devices_reset,
                    _looker(h),
                    lambda: {d: h.model.device_references(d) for d in h.adapter.references()},
                )
                reset.free(call, [b.address for b in h.scratch.forget()])
                # Variables the reset read for the first time (a device reset's): what
                # they hold now is what the next harness will read first.
                for key, data in h.first_reads.items():
                    self._initial.setdefault(key, data)
            except reset.ResetFailed as exc:
                problem = str(exc)
            except (Exception, unittest.SkipTest) as exc:  # judged: a hang, crash or failure
                failure = exc
        if problem:
            self.reset_failures.append(problem)
            self.discard(reason=FAILED_RESET, cause=problem)
        return failure

    def close(self) -> str | None:
        """aclFinalize and release the shared backend, each within the call timeout;
        what went wrong, in one line, or None."""
        with self._lock:
            adapter, self._adapter = self._adapter, None
        if adapter is None:
            return None
        problems = []
        for what, call in (("aclFinalize", adapter.finalize), ("close", adapter.close)):
            try:
                self._bounded(adapter, what, call, closing=True)
            except Exception as exc:
                problems.append(str(exc) if isinstance(exc, BackendCrash) else repr(exc))
        return "; ".join(problems) or None


def _looker(h: Harness) -> reset.Look:
    """How the reset reads a variable whole through ``h``'s judged path: the harness's
    starting read of it when it has not read it yet (one read, not a starting read and
    then another), else aclrtMemcpyFromSymbol."""

    def look(device: int, name: str) -> bytes:
        read_before = (device, name) in h.first_reads
        h.baselines.learn(h.thread_no(), device, h.fixtures[name])
        if not read_before and (device, name) in h.first_reads:
            return h.first_reads[(device, name)]
        return h.observe(name)

    return look


def _restart(reason: str, cause: BaseException | str | None, charged: bool) -> dict[str, Any]:
    """One restart as the results document lists it (``results.instances``)."""
    text = str(cause) if cause is not None else ""
    return {
        "reason": reason,
        "test": _current_test(),
        "why": text.strip().splitlines()[0][:300] if text.strip() else "",
        "call": getattr(cause, "call", None) or _failed_call(cause),
        "requirement": getattr(cause, "requirement", None),
        "charged": charged,
    }


def _failed_call(cause: BaseException | str | None) -> str | None:
    """The call a failure names (its first violation's), if any."""
    violations = getattr(cause, "violations", None)
    call = violations[0].call if violations else None
    return call.label if call is not None else None


def _current_test() -> str:
    """The running pytest test's id (PYTEST_CURRENT_TEST without its phase), or ''."""
    return os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]


_current: Suite | None = None


def install(suite: Suite) -> None:
    global _current
    _current = suite


def current() -> Suite:
    """The run's suite (set by the plugin; a default simulator run if none was set)."""
    global _current
    if _current is None:
        _current = Suite()
    return _current
