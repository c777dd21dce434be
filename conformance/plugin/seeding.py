"""One test's Hypothesis run: its seed, the command that runs it again, and no shrinking
for a test expected to fail."""

from __future__ import annotations

import shlex
import zlib
from collections.abc import Callable
from pathlib import Path

import hypothesis
import pytest
from hypothesis.stateful import RuleBasedStateMachine

from acl_conformance.conformance.session import settings

from . import shared
from .shared import name_in_file
from .shared import suite_id

_UNDO_NO_SHRINK = pytest.StashKey[Callable[[], None]]()
"""On a test run without shrinking: what puts its settings back afterwards."""

MACHINE = "state_machine"
"""The attribute of a suite's machine TestCase that names its state machine class (set
where the TestCase is made, ``suite/test_machines.py``): the plugin seeds that class."""


def seed_for(base: int, item: pytest.Item) -> int:
    """The seed of one test in a run seeded with ``base``: the same for the same test
    however the run is split or ordered, different from test to test."""
    return zlib.crc32(f"{base}:{suite_id(item)}".encode())


def seed_hypothesis(item: pytest.Item) -> None:
    """Seed the item's Hypothesis test (``--acl-seed``; machine shards always, so that
    each shard explores examples of its own even when the profile is derandomised)."""
    base = item.config.getoption("acl_seed")
    machine = getattr(getattr(item, "cls", None), MACHINE, None)
    if isinstance(machine, type) and issubclass(machine, RuleBasedStateMachine):
        if base is None and item.config.getoption("acl_hypothesis_profile") != "standard":
            return  # dev and thorough are random on purpose
        hypothesis.seed(seed_for(0 if base is None else base, item))(machine)
    elif base is not None and hasattr(getattr(item, "obj", None), "hypothesis"):
        # Set just before the test runs: parametrized items share one function.
        hypothesis.seed(seed_for(base, item))(item.obj)  # type: ignore[attr-defined]


REPRODUCE_PYTHON = "python"
"""How the reproduce line names the interpreter: whichever ``python`` has acl-conformance
installed where the line is run (never the path of the venv the run was made in)."""


def pyargs_address(item: pytest.Item) -> str:
    """What names this one test to ``pytest --pyargs`` from any folder and any install: the
    suite's module by its import name, then the test's name in it
    (``acl_conformance.conformance.suite.test_kinds::test_x[1]``).  A test outside the
    suite (the plugin's own tests) keeps its path."""
    if shared.is_suite_item(item):
        return f"{shared.SUITE_PACKAGE}.{Path(str(item.path)).stem}::{name_in_file(item)}"
    return f"{item.path}::{name_in_file(item)}"


def reproduce_command(item: pytest.Item) -> str:
    """The command that runs this one test again, with the same backend, profile, seed,
    example budget and call time limit: ``python -m pytest --pyargs <module>::<test>``, with
    no path in it, so that it runs from any folder of any machine where acl-conformance and
    the adapter are installed."""
    cfg = item.config
    args = [REPRODUCE_PYTHON, "-m", "pytest", "-p", "no:cacheprovider"]
    if shared.is_suite_item(item):
        args.append("--pyargs")
    args += [
        pyargs_address(item),
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
    timeout = cfg.getoption("acl_call_timeout")
    if timeout is not None:
        args += ["--acl-call-timeout", f"{float(timeout):g}"]
    if cfg.getoption("acl_no_shrink"):
        args.append("--acl-no-shrink")
    profile = cfg.getoption("acl_hypothesis_profile")
    profile = settings.HYPOTHESIS_PROFILE_ALIASES.get(profile, profile)
    same = cfg.getoption("acl_seed") is not None or profile == "standard"
    return shlex.join(args) + (
        "\n(the same command gives the same example; a blob printed above replays it exactly)"
        if same
        else "\n(this profile draws at random: replay the blob printed above with "
        "@reproduce_failure, or run again with --acl-seed)"
    )


def expected_without_shrinking(item: pytest.Item) -> None:
    """A listed (expected) failure is only run to tell whether it still fails: without
    Hypothesis' shrink phase, which is where a failing test spends its time.  For this run
    only (parametrized items share one function; a machine's shards one TestCase each):
    :func:`restore_shrinking` puts the settings back at teardown."""
    if "expected_failure" not in dict(item.user_properties):
        return
    cls = getattr(item, "cls", None)
    case = cls if getattr(cls, "runTest", None) is not None else None
    if case is not None and isinstance(getattr(case, "settings", None), hypothesis.settings):
        # A state machine's TestCase: its settings are a public attribute.
        saved = case.settings
        case.settings = hypothesis.settings(saved, phases=settings.NO_SHRINK)
        item.stash[_UNDO_NO_SHRINK] = lambda: setattr(case, "settings", saved)
        return
    undo = settings.without_shrinking(getattr(item, "obj", None))
    if undo is not None:
        item.stash[_UNDO_NO_SHRINK] = undo


def restore_shrinking(item: pytest.Item) -> None:
    """Put back what :func:`expected_without_shrinking` changed."""
    undo = item.stash.get(_UNDO_NO_SHRINK, None)
    if undo is not None:
        del item.stash[_UNDO_NO_SHRINK]
        undo()
