"""Collection: the requirement markers' check, the ``--acl-requirement`` selection, the
tests the expectations and skips files list, profile-only tests, and the order."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from acl_conformance.conformance.gating import results
from acl_conformance.conformance.gating import shards
from acl_conformance.reference_impl.catalogue import BY_ID
from acl_conformance.reference_impl.catalogue import for_profile

from . import hunt
from . import shared


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    suite_items = [i for i in items if shared.is_suite_item(i)]
    if not suite_items:
        return
    shared.load_settings(config)
    profile = config.getoption("acl_profile")
    _check_markers(suite_items, profile)
    suite_items = _select(config, items, suite_items)
    if hunt.active(config):
        hunt.select(config, items)
        suite_items = [i for i in items if shared.is_suite_item(i)]
    suite_items, shard = _shard(config, items, suite_items)
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        # For the controller: what a test is, should its worker die while running it
        # (then no report of the test's own reaches the controller).
        workeroutput["acl_items"] = {
            i.nodeid: [shared.suite_id(i), shared.requirements_of(i)] for i in suite_items
        }
    for item in suite_items:
        _mark(item, config, profile)
    path = config.getoption("acl_results")
    if path:
        # What the run is to run, for a run stopped before its end: which requirements
        # had tests not reached (each pytest-xdist worker collects, and writes the same).
        results.write_collected(
            results.collected_path(Path(path)),
            [
                {
                    "nodeid": i.nodeid,
                    "suite_id": shared.suite_id(i),
                    "requirements": shared.requirements_of(i),
                    "skipped": i.get_closest_marker("skip") is not None,
                }
                for i in suite_items
            ],
        )
        if shard is not None:
            results.write_shard(results.shard_path(Path(path)), shard)


def _check_markers(suite_items: list[pytest.Item], profile: str) -> None:
    """Every test names known requirements; the whole suite covers the profile's."""
    errors = []
    covered: set[str] = set()
    for item in suite_items:
        ids = shared.requirements_of(item)
        if not ids:
            errors.append(f"{item.nodeid}: no requirement marker")
        for rid in ids:
            if rid not in BY_ID:
                errors.append(f"{item.nodeid}: unknown requirement id {rid!r}")
            covered.add(rid)
    modules = {i.path.name for i in suite_items}
    if modules >= shared.suite_modules():
        missing = [r.id for r in for_profile(profile) if r.id not in covered]
        if missing:
            errors.append(f"requirements of profile {profile} without a test: {', '.join(missing)}")
    if errors:
        raise pytest.UsageError("acl-conformance collection failed:\n  " + "\n  ".join(errors))


def _select(
    config: pytest.Config, items: list[pytest.Item], suite_items: list[pytest.Item]
) -> list[pytest.Item]:
    """Deselect the tests of no requirement ``--acl-requirement`` names; the suite's
    tests that are left."""
    wanted = set(config.getoption("acl_requirement"))
    if not wanted:
        return suite_items
    unknown = wanted - set(BY_ID)
    if unknown:
        raise pytest.UsageError(
            f"--acl-requirement: unknown requirement id(s) {', '.join(sorted(unknown))}"
        )
    dropped = [i for i in suite_items if not wanted & set(shared.requirements_of(i))]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        keep = {id(i) for i in dropped}
        items[:] = [i for i in items if id(i) not in keep]
    return [i for i in suite_items if id(i) not in {id(d) for d in dropped}]


def _shard(
    config: pytest.Config, items: list[pytest.Item], suite_items: list[pytest.Item]
) -> tuple[list[pytest.Item], dict[str, Any] | None]:
    """``--acl-shard K/N``: deselect the tests of the other parts (the same in every
    pytest-xdist worker: the partition depends only on the suite ids collected and the
    durations file); the suite's tests that are left, and what the shard is
    (``shards.info``; None without ``--acl-shard``)."""
    text = config.getoption("acl_shard")
    if not text:
        return suite_items, None
    where = config.getoption("acl_durations")
    try:
        shard = shards.parse(text, "--acl-shard")
        seconds = shards.load_durations(Path(where), "--acl-durations") if where else None
    except shards.ShardError as exc:
        raise pytest.UsageError(str(exc)) from None
    ids = [shared.suite_id(i) for i in suite_items]
    mine = set(shards.partition(ids, shard.count, seconds)[shard.index - 1])
    dropped = [i for i, sid in zip(suite_items, ids, strict=True) if sid not in mine]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        gone = {id(i) for i in dropped}
        items[:] = [i for i in items if id(i) not in gone]
    # The options that decide the results and are not in the results document itself:
    # shards made with others are not parts of one run.
    options = {
        "no_shrink": bool(config.getoption("acl_no_shrink")),
        "call_timeout": config.getoption("acl_call_timeout"),
        "skips": sorted(e.key for e in config.stash[shared.SKIPS].entries),
        "stop_on": config.getoption("acl_stop_on"),
    }
    kept = [i for i, sid in zip(suite_items, ids, strict=True) if sid in mine]
    return kept, shards.info(shard, ids, seconds, options)


def _mark(item: pytest.Item, config: pytest.Config, profile: str) -> None:
    """What the reports of one suite test carry, and why it is skipped, if it is."""
    sid = shared.suite_id(item)
    requirements = shared.requirements_of(item)
    # On the item, so that every report of it (setup skips too) carries them.
    item.user_properties.append(("suite_id", sid))
    item.user_properties.append(("requirements", " ".join(requirements)))
    entry = config.stash[shared.EXPECT].match(sid)
    if entry is not None:
        # Run, not skipped: a listed test that passes is an unexpected pass (the entry
        # is stale), which only running can tell.  Whatever it fails on is expected
        # (see the report hook); it runs without shrinking (seeding.expected_without_shrinking).
        item.user_properties.append(("expected_failure", entry.key))
        item.stash[shared.LISTED] = entry.describe()
    skips = config.stash[shared.SKIPS]
    skip = skips.match_test(sid, requirements)
    if skip is not None:
        item.add_marker(pytest.mark.skip(reason=f"listed in {skips.source}: {skip.describe()}"))
    only = item.get_closest_marker("profile")
    if only is not None and profile not in only.args:
        item.add_marker(pytest.mark.skip(reason=f"applies to profile {', '.join(only.args)} only"))


class Ordering:
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
        items.sort(key=lambda i: shared.is_suite_item(i) and i.path.name == "test_machines.py")
