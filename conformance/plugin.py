"""The pytest plugin (entry point ``pytest11``): options, markers, fixtures, checks.

Options (all start with ``--acl-``): the backend (``--acl-adapter``, default
``sim``; ``--acl-adapter-option KEY=VALUE``), the profile (``--acl-profile
spec|cann``), an expectations file, the Hypothesis profile (``ci``, ``dev``,
``thorough``) and an example budget.

Markers:

- ``requirement(*ids)``: the catalogue requirements a test checks.  When the
  whole suite is collected, collection fails if a requirement of the profile
  has no test; a test that names an unknown ID always fails collection.
- ``needs(**capabilities)``: skipped as *not supported* when the backend lacks
  a capability (``devices=2``, ``gate=True``, ...).
- ``profile(name)``: the test applies to that profile only.

The plugin does nothing to test runs that do not collect the suite.
"""

from __future__ import annotations

import builtins
import dataclasses
import datetime
import json
import re
import shlex
import sys
import time
import zlib
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import hypothesis
import pytest

from acl_conformance.adapters.registry import AdapterResolutionError
from acl_conformance.reference_impl.catalogue import BY_ID, PROFILES, for_profile
from acl_conformance.reference_impl.evidence import Evidence

from . import attempts, context, results, settings
from .expectations import Expectations, ExpectationsError
from .failure import (
    DECLINED,
    EXPECTED,
    KNOWN,
    LAST,
    BackendCrash,
    BackendTimeout,
    ConformanceFailure,
    Declined,
    ExpectedFailure,
    KnownFailure,
)
from .harness import Harness
from .runstate import RunState
from .trace import TRACE_FORMAT

NO_SYMBOL_APIS = (
    "the backend does not have the symbol APIs (aclrtMemcpyToSymbolAsync and its siblings)"
)
SUITE_PACKAGE = "acl_conformance.conformance.suite"
SUITE_DIR = Path(__file__).resolve().parent / "suite"
NOT_SUPPORTED = results.NOT_SUPPORTED


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("acl-conformance", "ACL conformance suite")
    g.addoption(
        "--acl-adapter",
        default="sim",
        help="backend: sim, module:attribute, or an entry point name (default sim)",
    )
    g.addoption(
        "--acl-adapter-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option for the adapter's factory (repeatable), e.g. schedule=random",
    )
    g.addoption(
        "--acl-profile",
        default="spec",
        choices=PROFILES,
        help="spec (the text) or cann (CANN's exact codes)",
    )
    g.addoption(
        "--acl-expectations",
        default=None,
        metavar="FILE",
        help="known failures of this backend (skipped)",
    )
    g.addoption(
        "--acl-hypothesis-profile",
        default="ci",
        choices=settings.PROFILE_NAMES,
        help="ci (derandomised, the default), dev, or thorough",
    )
    g.addoption(
        "--acl-seed",
        type=int,
        default=None,
        metavar="N",
        help="seed every Hypothesis test (each from N and its own id): the same N, the same run",
    )
    g.addoption(
        "--acl-examples", type=int, default=None, metavar="N", help="Hypothesis examples per test"
    )
    g.addoption(
        "--acl-call-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="per-call limit (TIMEOUT)",
    )
    g.addoption(
        "--acl-trace-dir",
        default=None,
        metavar="DIR",
        help="write each failing test's call trace here",
    )
    g.addoption(
        "--acl-requirement",
        action="append",
        default=[],
        metavar="ID",
        help="run only the tests that check this requirement (repeatable)",
    )
    g.addoption(
        "--acl-results",
        default=None,
        metavar="FILE",
        help="write every suite test's result as JSON",
    )
    g.addoption(
        "--acl-no-shrink",
        action="store_true",
        default=False,
        help="report the first failing sequence as found, without shrinking it",
    )
    g.addoption(
        "--acl-stop-on",
        default=None,
        metavar="ID",
        help="stop the run at the first failure that cites this requirement (self-checks)",
    )


def _suite_requested(config: pytest.Config) -> bool:
    for arg in config.invocation_params.args:
        a = str(arg)
        if SUITE_PACKAGE in a or str(SUITE_DIR) in str(Path(a.split("::")[0]).resolve()):
            return True
    return False


def _adapter_options(config: pytest.Config) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in config.getoption("acl_adapter_option"):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise pytest.UsageError(f"--acl-adapter-option {item!r}: expected KEY=VALUE")
        out[key.strip()] = value
    return out


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_Ordering(), "acl-conformance-ordering")
    config.addinivalue_line("markers", "requirement(*ids): catalogue requirements this test checks")
    config.addinivalue_line("markers", "needs(**capabilities): backend capabilities the test needs")
    config.addinivalue_line("markers", "profile(name): the test applies to this profile only")
    suite = context.Suite(
        adapter_name=config.getoption("acl_adapter"),
        adapter_options=_adapter_options(config),
        profile=config.getoption("acl_profile"),
        call_timeout=config.getoption("acl_call_timeout"),
    )
    context.install(suite)
    config.stash[_SUITE] = suite
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and workerinput.get("acl_run_dir"):
        suite.run = RunState(workerinput["acl_run_dir"])
    else:
        # The controller (or a run without workers) owns the run's shared state.
        suite.run = RunState.create()
        config.stash[_OWN_RUN] = suite.run
    config.pluginmanager.register(_XdistHooks(suite.run), "acl-conformance-xdist")
    path = config.getoption("acl_expectations")
    try:
        config.stash[_EXPECT] = Expectations.load(path) if path else Expectations.empty()
    except ExpectationsError as exc:
        raise pytest.UsageError(str(exc)) from None
    suite.expected = {
        rid: (e.key, e.describe()) for rid, e in config.stash[_EXPECT].requirements().items()
    }
    settings.register(config.getoption("acl_examples"), config.getoption("acl_no_shrink"))
    if _suite_requested(config):
        # Now, before the suite's modules are imported: a state machine's TestCase
        # takes its settings when the class is built.
        _load_settings(config)


def _load_settings(config: pytest.Config) -> None:
    settings.load(
        config.getoption("acl_hypothesis_profile"),
        config.getoption("acl_examples"),
        config.getoption("acl_no_shrink"),
    )


class _XdistHooks:
    """Hands the run's shared state to each pytest-xdist worker."""

    def __init__(self, run: RunState) -> None:
        self.run = run

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["acl_run_dir"] = str(self.run.dir)


_SUITE = pytest.StashKey[context.Suite]()
_OWN_RUN = pytest.StashKey[RunState]()
_LISTED = pytest.StashKey[str]()
"""On a test the expectations file lists by its id: the entry, described."""
_EXPECT = pytest.StashKey[Expectations]()
_ACTIVE = pytest.StashKey[bool]()


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    if not _suite_requested(config):
        return None
    suite = config.stash[_SUITE]
    try:
        suite.adapter()
    except AdapterResolutionError as exc:
        raise pytest.UsageError(str(exc)) from None
    hyp = config.getoption("acl_hypothesis_profile")
    given = config.getoption("acl_seed")
    seed = given if given is not None else ("derandomised" if hyp == "ci" else "random")
    opts = ", ".join(f"{k}={v}" for k, v in suite.adapter_options.items())
    return [
        f"acl-conformance: adapter={suite.adapter_name}{f' ({opts})' if opts else ''}, profile={suite.profile}",
        f"acl-conformance: backend version: {suite.backend_version}",
        f"acl-conformance: hypothesis profile={hyp}, seed={seed}"
        + (
            f", examples={config.getoption('acl_examples')}"
            if config.getoption("acl_examples")
            else ""
        ),
    ]


def _requirements_of(item: pytest.Item) -> list[str]:
    ids: list[str] = []
    for mark in item.iter_markers("requirement"):
        ids.extend(str(a) for a in mark.args)
    return ids


def suite_id(item: pytest.Item) -> str:
    """The test's id from its file name on (``test_kinds.py::test_x[1]``), wherever pytest
    found the file: the id used by expectations files and reports."""
    rest = item.nodeid.split("::", 1)[1] if "::" in item.nodeid else item.name
    return f"{item.path.name}::{rest}"


def _is_suite_item(item: pytest.Item) -> bool:
    # By file, not module name: an editable install imports the suite's modules
    # under whatever name pytest's import mode derives.
    return Path(str(item.path)).resolve().parent == SUITE_DIR


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    suite_items = [i for i in items if _is_suite_item(i)]
    config.stash[_ACTIVE] = bool(suite_items)
    if not suite_items:
        return
    _load_settings(config)
    profile = config.getoption("acl_profile")
    errors = []
    covered: set[str] = set()
    for item in suite_items:
        ids = _requirements_of(item)
        if not ids:
            errors.append(f"{item.nodeid}: no requirement marker")
        for rid in ids:
            if rid not in BY_ID:
                errors.append(f"{item.nodeid}: unknown requirement id {rid!r}")
            covered.add(rid)
    modules = {i.path.name for i in suite_items}
    whole = modules >= _suite_modules()
    if whole:
        missing = [r.id for r in for_profile(profile) if r.id not in covered]
        if missing:
            errors.append(f"requirements of profile {profile} without a test: {', '.join(missing)}")
    if errors:
        raise pytest.UsageError("acl-conformance collection failed:\n  " + "\n  ".join(errors))
    wanted = set(config.getoption("acl_requirement"))
    if wanted:
        unknown = wanted - set(BY_ID)
        if unknown:
            raise pytest.UsageError(
                f"--acl-requirement: unknown requirement id(s) {', '.join(sorted(unknown))}"
            )
        dropped = [i for i in suite_items if not wanted & set(_requirements_of(i))]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            keep = {id(i) for i in dropped}
            items[:] = [i for i in items if id(i) not in keep]
            suite_items = [i for i in suite_items if id(i) not in keep]
    expectations = config.stash[_EXPECT]
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        # For the controller: what a test is, should its worker die while running it
        # (then no report of the test's own reaches the controller).
        workeroutput["acl_items"] = {
            i.nodeid: [suite_id(i), _requirements_of(i)] for i in suite_items
        }
    for item in suite_items:
        # On the item, so that every report of it (setup skips too) carries them.
        item.user_properties.append(("suite_id", suite_id(item)))
        item.user_properties.append(("requirements", " ".join(_requirements_of(item))))
        entry = expectations.match(suite_id(item))
        if entry is not None:
            # Run, not skipped: a listed test that passes is an unexpected pass (the entry
            # is stale), which only running can tell.  Whatever it fails on is expected
            # (see the report hook); it runs without shrinking (_expected_without_shrinking).
            item.user_properties.append(("expected_failure", entry.key))
            item.stash[_LISTED] = entry.describe()
        only = item.get_closest_marker("profile")
        if only is not None and profile not in only.args:
            item.add_marker(
                pytest.mark.skip(reason=f"applies to profile {', '.join(only.args)} only")
            )


class _Ordering:
    """Clause tests first, state machines last.

    A clause test pins a bug down in a few calls, where a machine would spend its
    time shrinking.  Under pytest-xdist the machines' shards, left at the end, are
    handed out one by one to whichever worker is free, so the workers end together.
    A plugin object of its own (pytest only takes hooks named pytest_*, one per
    name and object) whose wrapper sorts after every other plugin's reordering
    (pytest's own groups tests by fixture).
    """

    @pytest.hookimpl(wrapper=True)
    def pytest_collection_modifyitems(
        self, items: list[pytest.Item]
    ) -> Generator[None, None, None]:
        yield
        items.sort(key=lambda i: _is_suite_item(i) and i.path.name == "test_machines.py")


def seed_for(base: int, item: pytest.Item) -> int:
    """The seed of one test in a run seeded with ``base``: the same for the same test
    however the run is split or ordered, different from test to test."""
    return zlib.crc32(f"{base}:{suite_id(item)}".encode())


def _seed_hypothesis(item: pytest.Item) -> None:
    """Seed the item's Hypothesis test (``--acl-seed``; machine shards always, so that
    each shard explores examples of its own even when the profile is derandomised)."""
    base = item.config.getoption("acl_seed")
    cls = getattr(item, "cls", None)
    machine = getattr(getattr(cls, "runTest", None), "_hypothesis_state_machine_class", None)
    if machine is not None:
        if base is None and item.config.getoption("acl_hypothesis_profile") != "ci":
            return  # dev and thorough are random on purpose
        hypothesis.seed(seed_for(0 if base is None else base, item))(machine)
    elif base is not None and hasattr(getattr(item, "obj", None), "hypothesis"):
        # Set just before the test runs: parametrized items share one function.
        hypothesis.seed(seed_for(base, item))(item.obj)  # type: ignore[attr-defined]


def reproduce_command(item: pytest.Item) -> str:
    """The command that runs this one test again, with the same backend, profile and seed."""
    cfg = item.config
    rest = item.nodeid.split("::", 1)[1] if "::" in item.nodeid else item.name
    args = [
        "pytest",
        f"{item.path}::{rest}",
        "--acl-adapter",
        cfg.getoption("acl_adapter"),
        *(a for o in cfg.getoption("acl_adapter_option") for a in ("--acl-adapter-option", o)),
        "--acl-profile",
        cfg.getoption("acl_profile"),
        "--acl-hypothesis-profile",
        cfg.getoption("acl_hypothesis_profile"),
    ]
    if cfg.getoption("acl_seed") is not None:
        args += ["--acl-seed", str(cfg.getoption("acl_seed"))]
    if cfg.getoption("acl_examples"):
        args += ["--acl-examples", str(cfg.getoption("acl_examples"))]
    same = cfg.getoption("acl_seed") is not None or cfg.getoption("acl_hypothesis_profile") == "ci"
    return shlex.join(args) + (
        "\n(the same command gives the same example; a blob printed above replays it exactly)"
        if same
        else "\n(this profile draws at random: replay the blob printed above with "
        "@reproduce_failure, or run again with --acl-seed)"
    )


def _suite_modules() -> set[str]:
    """The file names of the suite's test modules."""
    return {p.name for p in SUITE_DIR.glob("test_*.py")}


_SHRINKING = pytest.StashKey[Any]()


def _expected_without_shrinking(item: pytest.Item) -> None:
    """A listed (expected) failure is only run to tell whether it still fails: without
    Hypothesis' shrink phase, which is where a failing test spends its time."""
    if "expected_failure" not in dict(item.user_properties):
        return
    phases = [p for p in hypothesis.Phase if p is not hypothesis.Phase.shrink]
    cls = getattr(item, "cls", None)
    case = cls if getattr(cls, "runTest", None) is not None else None
    if case is not None and isinstance(getattr(case, "settings", None), hypothesis.settings):
        item.stash[_SHRINKING] = (case, "settings", case.settings)
        case.settings = hypothesis.settings(case.settings, phases=phases)
        return
    fn = getattr(item, "obj", None)
    current = getattr(fn, "_hypothesis_internal_use_settings", None)
    if isinstance(current, hypothesis.settings):
        # Hypothesis keeps a @given test's settings on this attribute; set for this
        # run only (parametrized items share the function) and put back at teardown.
        item.stash[_SHRINKING] = (fn, "_hypothesis_internal_use_settings", current)
        fn._hypothesis_internal_use_settings = hypothesis.settings(current, phases=phases)  # type: ignore[union-attr]


_BACKEND_SENT = pytest.StashKey[bool]()


def _masks(item: pytest.Item, suite: context.Suite) -> frozenset[str]:
    """What this attempt of the test masks: the requirements listed as expected failures
    and those already failed in this run, unless the test carries them itself (checking
    them is its job, and how a stale entry shows), and what its own earlier attempts
    failed on."""
    carried = set(_requirements_of(item))
    known = set(suite.expected) | (suite.run.failed() if suite.run is not None else set())
    own: frozenset[str] = item.stash.get(attempts.MASKS, frozenset())
    return frozenset((known - carried) | own)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if not _is_suite_item(item):
        return
    _seed_hypothesis(item)
    _expected_without_shrinking(item)
    config = item.config
    suite = config.stash[_SUITE]
    suite.next_test()
    suite.masks = _masks(item, suite)
    suite.evidence = Evidence()
    suite.test_id = suite_id(item)
    if not config.stash.get(_BACKEND_SENT, False):
        # Once per process, on a test's reports: the backend's identity reaches the
        # results document even when the tests ran in pytest-xdist workers.
        suite = config.stash[_SUITE]
        caps = suite.adapter().capabilities()
        info = {
            "name": suite.adapter().name,
            "version": suite.backend_version,
            "capabilities": dataclasses.asdict(caps),
        }
        item.user_properties.append(("backend", info))
        config.stash[_BACKEND_SENT] = True
    caps = suite.adapter().capabilities()
    if not caps.symbol_apis:
        pytest.skip(f"{NOT_SUPPORTED}{NO_SYMBOL_APIS}")
    need = item.get_closest_marker("needs")
    if need is None:
        return
    for name, wanted in need.kwargs.items():
        have = getattr(caps, name)
        if (isinstance(wanted, bool) and have != wanted) or (
            not isinstance(wanted, bool) and have < wanted
        ):
            pytest.skip(
                f"{NOT_SUPPORTED}the backend declares {name}={have!r}, the test needs {name}={wanted!r}"
            )


def pytest_runtest_teardown(item: pytest.Item) -> None:
    saved = item.stash.get(_SHRINKING, None)
    if saved is not None:
        target, attr, value = saved
        setattr(target, attr, value)


@pytest.fixture(scope="session")
def acl_suite(pytestconfig: pytest.Config) -> context.Suite:
    """The run's backend and options."""
    return pytestconfig.stash[_SUITE]


@pytest.fixture
def harness(acl_suite: context.Suite) -> Iterator[Harness]:
    """A harness over the shared backend, cleaned up after the test."""
    with acl_suite.harness() as h:
        yield h


@pytest.fixture
def fresh_harness(acl_suite: context.Suite) -> Iterator[Harness]:
    """A harness over a backend of its own (for device resets and other global state)."""
    with acl_suite.harness(fresh=True) as h:
        yield h


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[Any]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if not _is_suite_item(item) or call.when != "call":
        return report
    suite = item.config.stash[_SUITE]
    report.user_properties.append(("evidence", suite.evidence.to_json()))
    report.user_properties.append(("masks", sorted(suite.masks)))
    reason = results.skip_reason(report) if report.skipped else ""
    expected: str | None = None
    same_as: str | None = None
    failure: BaseException | None
    if reason.startswith(DECLINED):
        report.user_properties.append(("acl_status", "declined"))
        declined = LAST.get(DECLINED)
        if isinstance(declined, Declined):
            report.user_properties.append(("declined_by", declined.requirement))
        return report
    if reason.startswith(EXPECTED) and not hasattr(report, "wasxfail"):
        # A failure the expectations file lists by requirement (ExpectedFailure):
        # reported as pytest reports an xfail.
        report.wasxfail = reason
        exp = LAST.get(EXPECTED)
        expected = exp.key if isinstance(exp, ExpectedFailure) else reason.removeprefix(EXPECTED)
        failure = exp.failure if isinstance(exp, ExpectedFailure) else None
        report.user_properties.append(("expected_failure", expected))
    elif reason.startswith(KNOWN):
        # The same failure as another test found (and shrinks): a failure of this test too.
        known = LAST.get(KNOWN)
        failure = known.failure if isinstance(known, KnownFailure) else None
        same_as = known.owner if isinstance(known, KnownFailure) else None
        report.outcome = "failed"
        report.longrepr = reason
    else:
        failure = _unwrap(call.excinfo.value if call.excinfo is not None else None)
    listed = item.stash.get(_LISTED, None)
    if failure is None:
        if listed is not None and report.failed and same_as is None:
            # A listed test stopped by something that is not a judgement of the model.
            report.outcome = "skipped"
            report.wasxfail = f"{EXPECTED}{listed}"
        elif listed is not None and report.passed and item.stash.get(attempts.ATTEMPT, 1) == 1:
            # Listed as failing, and passed: the entry is stale.
            report.outcome = "failed"
            report.longrepr = f"[XPASS] {suite_id(item)} passed, but the expectations file lists it ({listed}): the entry is stale"
            report.user_properties.append(("acl_status", "xpass"))
        return report
    if listed is not None and expected is None:
        # A test the expectations file lists: whatever it fails on is expected.
        carried = dict(item.user_properties).get("expected_failure")
        expected = str(carried) if carried is not None else None
        report.outcome = "skipped"
        report.wasxfail = f"{EXPECTED}{listed}"
        report.longrepr = None
    record = _failure_record(item, failure, expected, same_as)
    report.user_properties.append(("acl_failure", record))
    if expected is None:
        report.user_properties.append(("acl_status", record["kind"]))
    for key in ("reproduce", "calls", "call_count", "message", "trace_file"):
        report.user_properties.append((key, record[key]))
    if isinstance(failure, ConformanceFailure):
        report.user_properties.append(("failed_requirement", failure.requirement or ""))
        report.user_properties.append(("also_explained_by", " ".join(failure.also)))
        report.user_properties.append(("allowed", record["allowed"]))
        report.user_properties.append(("observed", record["observed"]))
        stop_on = item.config.getoption("acl_stop_on")
        if stop_on and failure.requirement == stop_on:
            item.session.shouldstop = f"a failure cites {stop_on}"
    if same_as is None:
        report.sections.append(("acl-conformance: reproduce", reproduce_command(item)))
    return report


def _failure_record(
    item: pytest.Item, failure: BaseException, expected: str | None, same_as: str | None
) -> dict[str, Any]:
    """One failure of one attempt of a test, as the results document keeps it."""
    kind = (
        "timeout"
        if isinstance(failure, BackendTimeout)
        else "crash"
        if isinstance(failure, BackendCrash)
        else "fail"
    )
    history: list[str] = list(getattr(failure, "history", []))
    first = (
        failure.violations[0]
        if isinstance(failure, ConformanceFailure) and failure.violations
        else None
    )
    trace_file = None
    if same_as is None:
        trace_file = _write_trace(item, failure, kind)
    return {
        "requirement": getattr(failure, "requirement", None),
        "also": list(getattr(failure, "also", ())),
        "identity": failure.identity if isinstance(failure, ConformanceFailure) else None,
        "kind": kind,
        "expected": expected,
        "same_as": same_as,
        "calls": history[-60:],
        "call_count": len(history),
        "allowed": first.allowed if first is not None else None,
        "observed": first.observed if first is not None else None,
        "message": str(failure)[:8000],
        "trace_file": trace_file,
        "reproduce": reproduce_command(item).splitlines()[0],
        "attempt": item.stash.get(attempts.ATTEMPT, 1),
    }


def _write_trace(item: pytest.Item, failure: BaseException, kind: str) -> str | None:
    trace_dir = item.config.getoption("acl_trace_dir")
    if not trace_dir:
        return None
    attempt = item.stash.get(attempts.ATTEMPT, 1)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", item.nodeid)[-150:]
    path = Path(trace_dir) / (stem + (f"__attempt{attempt}" if attempt > 1 else "") + ".trace.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "format": TRACE_FORMAT,
        "test": suite_id(item),
        "adapter": item.config.getoption("acl_adapter"),
        "profile": item.config.getoption("acl_profile"),
        "status": kind,
        "requirement": getattr(failure, "requirement", None),
        "message": str(failure),
        "adapter_options": _adapter_options(item.config),
        **getattr(failure, "backend", {}),
        "calls": [r.to_json() for r in getattr(failure, "trace", [])],
    }
    path.write_text(json.dumps(doc, indent=1))
    return str(path)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    if not _is_suite_item(item):
        return None
    attempts.run(item, nextitem)
    return True


_GROUP: Any = getattr(builtins, "BaseExceptionGroup", None)


def _unwrap(exc: BaseException | None) -> BaseException | None:
    """The suite's own failure inside whatever Hypothesis or pytest wrapped it in."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, (ConformanceFailure, BackendCrash)):
            return exc
        if _GROUP is not None and isinstance(exc, _GROUP):
            for sub in exc.exceptions:
                found = _unwrap(sub)
                if found is not None:
                    return found
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


_RESULTS = pytest.StashKey[list[dict[str, Any]]]()
_STARTED = pytest.StashKey[tuple[str, float]]()
_BACKEND = pytest.StashKey[dict[str, Any]]()
_ITEMS = pytest.StashKey[dict[str, list[Any]]]()
_DIED = pytest.StashKey[list[pytest.TestReport]]()
_CONFIG: list[pytest.Config] = []


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    _CONFIG[:] = [session.config]
    if _suite_requested(session.config):
        # Before anything runs (and whatever the verbosity): a backend that cannot be
        # had is one line and a usage error, not an error per test.
        suite = session.config.stash[_SUITE]
        try:
            suite.adapter()
        except AdapterResolutionError as exc:
            raise pytest.UsageError(str(exc)) from None
        except context.BackendSetupError as exc:
            raise pytest.UsageError(f"adapter {suite.adapter_name!r}: {exc}") from None
        except Exception as exc:  # the backend was found but would not start
            what = " ".join(f"{type(exc).__name__}: {exc}".split())
            raise pytest.UsageError(
                f"adapter {suite.adapter_name!r}: the backend could not be started: {what}"
            ) from None
    session.config.stash[_STARTED] = (
        datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        time.monotonic(),
    )


def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist, in the controller: a worker ended; keep what it said of its items."""
    items = getattr(node, "workeroutput", {}).get("acl_items")
    if items and _CONFIG:
        _CONFIG[0].stash.setdefault(_ITEMS, {}).update(items)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect each suite test's outcome (in the controller too, under xdist)."""
    props = dict(report.user_properties)
    if not _CONFIG:
        return
    if "suite_id" not in props:
        if report.failed and "crashed while running" in str(report.longrepr):
            # pytest-xdist's report for a test whose worker died: resolved at the end,
            # when the surviving workers have said what each test is.
            _CONFIG[0].stash.setdefault(_DIED, []).append(report)
        return
    backend: Any = props.get("backend")
    if isinstance(backend, dict):
        _CONFIG[0].stash[_BACKEND] = backend
    status = results.status_of(report, props)
    if status is None:
        return
    _CONFIG[0].stash.setdefault(_RESULTS, []).append(results.record(report, status))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    suite = config.stash.get(_SUITE, None)
    path = config.getoption("acl_results")
    if path and not hasattr(config, "workerinput"):
        _write_results(config, suite, Path(path), int(exitstatus))
    if suite is not None:
        problem = suite.close()
        if problem and not hasattr(config, "workerinput"):
            # Every test has been judged by now; say it, but do not hang the run on it.
            sys.stderr.write(f"{results.END_OF_RUN}{problem}\n")


def _write_results(
    config: pytest.Config, suite: context.Suite | None, path: Path, exitstatus: int
) -> None:
    recorded: list[dict[str, Any]] = config.stash.get(_RESULTS, [])
    records = list(recorded)
    items = config.stash.get(_ITEMS, {})
    for rep in config.stash.get(_DIED, []):
        sid, reqs = items.get(rep.nodeid, [rep.nodeid.rsplit("/", 1)[-1], []])
        rep.user_properties = [
            ("suite_id", sid),
            ("requirements", " ".join(reqs)),
            ("message", f"the test's process died: {str(rep.longrepr).strip()[:2000]}"),
        ]
        records.append(results.record(rep, "crash"))
    expectations = config.stash[_EXPECT]
    backend = config.stash.get(_BACKEND, {})
    started, t0 = config.stash.get(_STARTED, ("", time.monotonic()))
    doc = results.document(
        adapter=config.getoption("acl_adapter"),
        adapter_options=_adapter_options(config),
        profile=config.getoption("acl_profile"),
        backend_name=backend.get("name") or config.getoption("acl_adapter"),
        backend_version=backend.get("version")
        or (suite.backend_version if suite is not None else ""),
        capabilities=backend.get("capabilities"),
        hypothesis_profile=config.getoption("acl_hypothesis_profile"),
        seed=config.getoption("acl_seed"),
        examples=config.getoption("acl_examples"),
        workers=int(getattr(config.option, "numprocesses", 0) or 0),
        started=started,
        duration_s=time.monotonic() - t0,
        exitstatus=exitstatus,
        results=records,
        selected=list(config.getoption("acl_requirement")),
        expectations={
            "file": expectations.source or None,
            "entries": [
                {
                    "key": e.key,
                    "kind": "requirement" if e.is_requirement else "test",
                    "reason": e.reason,
                    "link": e.link,
                }
                for e in expectations.entries
            ],
        },
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1))
