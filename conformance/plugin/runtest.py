"""Running one suite test: its attempts, its set-up (seed, masks, capability skips),
its teardown, and the fixtures the suite's tests use."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from collections.abc import Generator
from collections.abc import Iterator

import pytest

from acl_conformance.conformance.gating import results
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.session import attempts
from acl_conformance.conformance.session import context
from acl_conformance.reference_impl.evidence import Tally

from . import shared
from .seeding import expected_without_shrinking
from .seeding import restore_shrinking
from .seeding import seed_hypothesis

NO_SYMBOL_APIS = (
    "the backend does not have the symbol APIs (aclrtMemcpyToSymbolAsync and its siblings)"
)
NOT_SUPPORTED = results.NOT_SUPPORTED
_BACKEND_SENT = pytest.StashKey[bool]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    if not shared.is_suite_item(item):
        return None
    attempts.run(item, nextitem)
    return True


def _masks(item: pytest.Item, suite: context.Suite) -> frozenset[str]:
    """What this attempt of the test masks: the requirements the expectations file lists
    (alone, or as found in some test) and those already failed in this run, unless the
    test carries them itself (checking them is its job, and how a stale entry shows) or
    the file lists them as found in this very test (``REQUIREMENT in TEST``: the test must
    meet the failure for the gate to tell a backend that still has it from a fixed one),
    and what its own earlier attempts failed on.  The other tests steer around a
    requirement found in a test from the start, whichever runs first: a run gets the
    same failures whatever order its workers take the tests in."""
    carried = set(shared.requirements_of(item)) | set(suite.found_here)
    listed = item.config.stash[shared.EXPECT]
    found = {e.requirement for e in listed.entries if e.is_found_in_test}
    known = set(suite.expected) | found | (suite.run.failed() if suite.run is not None else set())
    own: frozenset[str] = item.stash.get(attempts.MASKS, frozenset())
    return frozenset((known - carried) | own)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if not shared.is_suite_item(item):
        return
    seed_hypothesis(item)
    expected_without_shrinking(item)
    config = item.config
    suite = config.stash[shared.SUITE]
    suite.next_test()
    suite.cleanup_failures.clear()  # (each test's own: nothing carries over)
    suite.found_here = {
        r: (e.key, e.describe())
        for r, e in config.stash[shared.EXPECT].found_in(shared.suite_id(item)).items()
    }
    suite.masks = _masks(item, suite)
    suite.tally = Tally()
    suite.test_id = shared.suite_id(item)
    caps = suite.adapter().capabilities()
    if not config.stash.get(_BACKEND_SENT, False):
        # Once per process, on a test's reports: the backend's identity reaches the
        # results document even when the tests ran in pytest-xdist workers.
        info = {
            "name": suite.adapter().name,
            "version": suite.backend_version,
            "capabilities": dataclasses.asdict(caps),
        }
        item.user_properties.append(("backend", info))
        config.stash[_BACKEND_SENT] = True
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
    restore_shrinking(item)


@pytest.fixture(scope="session")
def acl_suite(pytestconfig: pytest.Config) -> context.Suite:
    """The run's backend and options."""
    return pytestconfig.stash[shared.SUITE]


_OPEN = pytest.StashKey[list[Callable[[bool], None]]]()
"""On a test: how to close each harness its fixtures handed out (``True``: its call
failed)."""


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, object, object]:
    """A test function that returned: its harnesses are cleaned up now, inside its call,
    so that a hang, crash or wrong answer of the clean-up (``Harness.release``) is the
    test's own failure, reported as any of its calls' would be."""
    try:
        result = yield
    except BaseException:
        # Closed within the call all the same, quietly: the test's own failure is the one
        # raised, a failure of the clean-up is added to its report (``Suite.cleanup_failures``).
        for close in pyfunc_call_closers(pyfuncitem):
            close(True)
        raise
    for close in pyfunc_call_closers(pyfuncitem):
        close(False)
    return result


def pyfunc_call_closers(item: pytest.Item) -> list[Callable[[bool], None]]:
    """The closers of the harnesses ``item``'s fixtures handed out and not yet closed."""
    closers = item.stash.get(_OPEN, [])
    item.stash[_OPEN] = []
    return closers


def _handed_out(
    request: pytest.FixtureRequest, suite: context.Suite, fresh: bool
) -> Iterator[Harness]:
    """A harness for a test function: closed at the end of its call when it returned
    (its clean-up's failure is the test's), else at teardown (quietly: the test's own
    failure is the one reported)."""
    h = suite.open_harness(fresh)
    closed = False

    def close(body_failed: bool) -> None:
        nonlocal closed
        if not closed:
            closed = True
            suite.close_harness(h, body_failed=body_failed)

    request.node.stash.setdefault(_OPEN, []).append(close)
    try:
        yield h
    finally:
        close(True)


@pytest.fixture
def harness(acl_suite: context.Suite, request: pytest.FixtureRequest) -> Iterator[Harness]:
    """A harness over the shared backend, cleaned up after the test."""
    yield from _handed_out(request, acl_suite, fresh=False)


@pytest.fixture
def fresh_harness(acl_suite: context.Suite, request: pytest.FixtureRequest) -> Iterator[Harness]:
    """A harness over a backend of its own (for device resets and other global state)."""
    yield from _handed_out(request, acl_suite, fresh=True)
