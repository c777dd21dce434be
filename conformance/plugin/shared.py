"""What the plugin's modules share: which tests are the suite's, their ids and
requirements, and the keys of what the plugin keeps on the run's config."""

from __future__ import annotations

from pathlib import Path

import pytest

from acl_conformance.conformance.gating.expectations import Expectations
from acl_conformance.conformance.gating.expectations import id_from_file
from acl_conformance.conformance.session import context
from acl_conformance.conformance.session import settings

SUITE_PACKAGE = "acl_conformance.conformance.suite"
SUITE_DIR = Path(__file__).resolve().parent.parent / "suite"

SUITE = pytest.StashKey[context.Suite]()
"""On the config: the run's backend and options."""
EXPECT = pytest.StashKey[Expectations]()
"""On the config: the expectations file (empty when none was given)."""
SKIPS = pytest.StashKey[Expectations]()
"""On the config: the skips file (empty when none was given)."""
FLAKES = pytest.StashKey[Expectations]()
"""On the config: the flakes file (empty when none was given)."""
LISTED = pytest.StashKey[str]()
"""On a test the expectations file lists by its id: the entry, described."""


def suite_requested(config: pytest.Config) -> bool:
    """Whether the command line names the suite (its package, or a path inside it)."""
    for arg in config.invocation_params.args:
        a = str(arg)
        if SUITE_PACKAGE in a or str(SUITE_DIR) in str(Path(a.split("::")[0]).resolve()):
            return True
    return False


def is_suite_item(item: pytest.Item) -> bool:
    """Whether ``item`` is one of the suite's tests."""
    # By file, not module name: an editable install imports the suite's modules
    # under whatever name pytest's import mode derives.
    return Path(str(item.path)).resolve().parent == SUITE_DIR


def suite_modules() -> set[str]:
    """The file names of the suite's test modules."""
    return {p.name for p in SUITE_DIR.glob("test_*.py")}


def name_in_file(item: pytest.Item) -> str:
    """The test's node id after its file (``test_x[1]``, ``TestMachine::runTest``)."""
    return item.nodeid.partition("::")[2] or item.name


def suite_id(item: pytest.Item) -> str:
    """The test's id from its file name on (``test_kinds.py::test_x[1]``), wherever pytest
    found the file: the id used by expectations files and reports.  From the file's path,
    not the node id: for a file outside pytest's rootdir (``acl-conformance run`` sets the
    rootdir to the report directory) the node id has no file part (``::test_x[1]``)."""
    return id_from_file(item.path, name_in_file(item))


def location_id(nodeid: str, location: tuple[str, int | None, str]) -> str:
    """:func:`suite_id` of a test known by its node id and location only (pytest-xdist's
    controller)."""
    return id_from_file(location[0], nodeid.partition("::")[2])


def requirements_of(item: pytest.Item) -> list[str]:
    """The requirement IDs the test's ``requirement`` markers name."""
    ids: list[str] = []
    for mark in item.iter_markers("requirement"):
        ids.extend(str(a) for a in mark.args)
    return ids


def load_settings(config: pytest.Config) -> None:
    """Load the Hypothesis settings profile the options name (a bug hunt's own, sharing
    its database, under ``--acl-hunt``)."""
    hunt = config.getoption("acl_hunt", None)
    if hunt:
        try:
            database = settings.hunt_database(hunt)
        except settings.HuntDatabaseError as exc:
            raise pytest.UsageError(str(exc)) from None
        settings.load_hunt(database, config.getoption("acl_examples"))
        return
    settings.load(
        config.getoption("acl_hypothesis_profile"),
        config.getoption("acl_examples"),
        config.getoption("acl_no_shrink"),
    )
