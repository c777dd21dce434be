"""pytest-xdist: the run's shared state handed to each worker, and what each worker
said of its tests (for a test whose worker died while running it)."""

from __future__ import annotations

from typing import Any

import pytest

from acl_conformance.conformance.harness.runstate import RunState
from acl_conformance.conformance.session import placement

ITEMS = pytest.StashKey[dict[str, list[Any]]]()
"""On the controller's config: each test's suite id and requirements, by node id."""
INSTANCES = pytest.StashKey[list[dict[str, Any]]]()
"""On the controller's config: the backend instances each worker started
(results.instances)."""
LOST = pytest.StashKey[dict[str, str]]()
"""On the controller's config: each worker that went down with an error (it died, or was
killed), and the error (``Not properly terminated``)."""
SCHEDULED = pytest.StashKey[list[str]]()
"""On the controller's config: the node ids the workers collected (every one to be run)."""


class XdistHooks:
    """The controller's side of the plugin under pytest-xdist (a plugin object of its own:
    its hooks are optional, and need not exist without pytest-xdist)."""

    def __init__(self, config: pytest.Config, run: RunState) -> None:
        self.config = config
        self.run = run
        self.per_worker: int | None = config.getoption("acl_devices_per_worker", None)
        self.owners: dict[int, str] = {}
        """Device group -> the worker that owns it now (``--acl-devices-per-worker``)."""

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["acl_run_dir"] = str(self.run.dir)
        if self.per_worker is not None:
            # The lowest group no live worker owns: worker gwI starts with group I, and a
            # worker started in place of one that died (with a new name) takes the group
            # the dead one left, so that no two live workers share a device.
            group = min(set(range(len(self.owners) + 1)) - set(self.owners))
            self.owners[group] = node.gateway.id
            ids = placement.device_groups(group + 1, self.per_worker)[group]
            node.workerinput["acl_device_ids"] = placement.ids_text(ids)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """A worker ended; keep what it said of its items, free its devices."""
        name = node.gateway.id
        if error:
            self.config.stash.setdefault(LOST, {})[name] = " ".join(str(error).split())[:300]
        self.owners = {g: w for g, w in self.owners.items() if w != name}
        output = getattr(node, "workeroutput", {})
        items = output.get("acl_items")
        if items:
            self.config.stash.setdefault(ITEMS, {}).update(items)
        instances = output.get("acl_instances")
        if instances:
            self.config.stash.setdefault(INSTANCES, []).append(instances)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """What the workers are to run (each collects the same): known to the controller,
        so that a test that never ran is noticed (the run did not reach its end)."""
        if SCHEDULED not in self.config.stash:
            self.config.stash[SCHEDULED] = list(ids)
