"""The plugin's side of a bug hunt (``--acl-hunt``): ``acl-conformance hunt`` runs the
suite's machines under HypoFuzz, which collects them through pytest (this plugin with
them) and then runs their examples itself, without pytest's test protocol.

So the hunt's work is done where every example passes: each failure a harness classifies
is saved as a find (``traces/finds.py``) as it is raised, and each example a machine
starts is counted in a progress file the command reads.  Collection keeps one shard of
each machine whose capabilities the backend has (the shards only split the gate's
budget; a hunt has no budget), skipping the rest as ``run`` does.
"""

from __future__ import annotations

import collections
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from acl_conformance.conformance.harness.failure import ConformanceFailure
from acl_conformance.conformance.session import context
from acl_conformance.conformance.traces import finds
from acl_conformance.conformance.traces.trace import TRACE_FORMAT

from . import shared

PROGRESS = ".progress"
"""Under the finds folder: one progress file per hunting process."""

WRITE_EVERY_S = 2.0


def active(config: pytest.Config) -> bool:
    """Whether this pytest run is a bug hunt's."""
    return bool(config.getoption("acl_hunt", None))


class Hunt:
    """What one hunting process keeps: where finds go, and its examples per machine."""

    def __init__(self, suite: context.Suite, finds_dir: Path) -> None:
        self.suite = suite
        self.root = finds_dir
        self.machine = ""
        self.counts: collections.Counter[str] = collections.Counter()
        self.saved: dict[str, int] = {}
        """Identity -> calls of the trace this process saved (a longer one is not offered)."""
        self.started = time.time()
        self._written = 0.0
        self.progress_file = finds_dir / PROGRESS / f"{socket.gethostname()}-{os.getpid()}.json"

    def example(self, machine: str) -> None:
        self.machine = machine
        self.counts[machine] += 1
        now = time.monotonic()
        if now - self._written >= WRITE_EVERY_S:
            self._written = now
            self.write_progress()

    def write_progress(self) -> None:
        doc = {"started": self.started, "now": time.time(), "examples": dict(self.counts)}
        self.progress_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.progress_file.with_name(self.progress_file.name + ".tmp")
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, self.progress_file)

    def failure(self, f: ConformanceFailure) -> None:
        identity = f.identity
        calls = len(f.trace)
        if identity in self.saved and self.saved[identity] <= calls:
            return
        self.saved[identity] = calls
        finds.save(self.root, identity, self.trace_doc(f))
        self.write_progress()

    def trace_doc(self, f: ConformanceFailure) -> dict[str, Any]:
        """The failure's trace file, as ``run`` writes one (``reporting._trace_doc``)."""
        s = self.suite
        return {
            "format": TRACE_FORMAT,
            "test": f"test_machines.py::Test{self.machine.removesuffix('Machine')} (hunt)",
            "adapter": s.adapter_name,
            "profile": s.profile,
            "status": "fail",
            "requirement": f.requirement,
            "message": str(f),
            "adapter_options": dict(s.adapter_options),
            **f.backend,
            "calls": [r.to_json() for r in f.trace],
        }


def configure(config: pytest.Config, suite: context.Suite) -> None:
    """Make ``suite`` a hunt's: its failures saved as finds, its examples counted.  No run
    state is shared: a failure another process found first is still this one's (the run's
    "known failure" is a skip, which would end the hunt of that machine)."""
    where = config.getoption("acl_finds") or str(Path(config.getoption("acl_hunt")) / "finds")
    hunt = Hunt(suite, Path(where))
    suite.run = None
    suite.on_failure = hunt.failure
    suite.on_example = hunt.example


def _needs_met(item: pytest.Item, suite: context.Suite) -> bool:
    need = item.get_closest_marker("needs")
    if need is None:
        return True
    caps = suite.adapter().capabilities()
    for name, wanted in need.kwargs.items():
        have = getattr(caps, name)
        if (isinstance(wanted, bool) and have != wanted) or (
            not isinstance(wanted, bool) and have < wanted
        ):
            return False
    return True


def select(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the first shard of each machine whose capabilities the backend declares."""
    suite = config.stash[shared.SUITE]
    keep, drop = [], []
    for item in items:
        case = getattr(item, "cls", None)
        machine = getattr(case, "state_machine", None)
        if machine is not None and machine.__name__.endswith("_0") and _needs_met(item, suite):
            keep.append(item)
        else:
            drop.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep
