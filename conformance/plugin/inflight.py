"""What each process is doing, kept on disk as it goes: the test it runs, and a short
note of each failure it is recording, written *before* the expensive work of recording it
(the trace, the replay).  When a worker dies (the kernel's OOM killer, a backend that
takes its process down) or stops with an internal error, the controller reads the dead
worker's file: the test that was running is named, and a failure being recorded when it
happened is kept (its requirement, test, call and trace path) instead of being lost.

One small file per process beside the results file (``results.inflight.gw0.json``),
replaced whole on every change (a reader never sees half of one)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from acl_conformance.conformance.gating import results

_NOTE = pytest.StashKey[dict[str, Any]]()


def worker_name(config: pytest.Config) -> str:
    """``gw0``..., or ``main`` for a run without pytest-xdist workers."""
    workerinput = getattr(config, "workerinput", None)
    return str(workerinput.get("workerid", "main")) if workerinput else "main"


path = results.inflight_path


def _path_of(config: pytest.Config) -> Path | None:
    results_path = config.getoption("acl_results", None)
    return path(Path(results_path), worker_name(config)) if results_path else None


def _write(config: pytest.Config, note: dict[str, Any]) -> None:
    target = _path_of(config)
    if target is None:
        return
    config.stash[_NOTE] = note
    try:
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_text(json.dumps(note))
        os.replace(tmp, target)
    except (OSError, ValueError, TypeError):
        pass  # a note that cannot be kept must not stop the test it describes


class InFlight:
    """Notes the test each process starts and ends (registered by ``pytest_configure``)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def _mine(self) -> bool:
        """Tests run in this process (not a pytest-xdist controller, which hears of every
        worker's tests)."""
        return self.config.pluginmanager.get_plugin("dsession") is None

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        if not self._mine():
            return
        _write(
            self.config,
            {"worker": worker_name(self.config), "nodeid": nodeid, "failures": []},
        )

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        if not self._mine():
            return
        _write(self.config, {"worker": worker_name(self.config), "nodeid": None, "last": nodeid})


def recording(config: pytest.Config, failure: dict[str, Any]) -> None:
    """Before a failure is recorded: its short note (``recorded`` False until it is)."""
    found: dict[str, Any] = config.stash.get(_NOTE, {})
    note = dict(found)
    if not note.get("nodeid"):
        return
    note["failures"] = [*note.get("failures", []), {**failure, "recorded": False}]
    _write(config, note)


def recorded(config: pytest.Config, failure: dict[str, Any]) -> None:
    """Once the failure noted last is recorded whole: its note, updated."""
    found: dict[str, Any] = config.stash.get(_NOTE, {})
    note = dict(found)
    if not note.get("failures"):
        return
    note["failures"] = [*note["failures"][:-1], {**failure, "recorded": True}]
    _write(config, note)


read = results.read_inflight
read_all = results.read_all_inflight


def remove_all(results_path: Path) -> None:
    for p in results_path.parent.glob(f"{results_path.stem}.inflight.*.json"):
        p.unlink(missing_ok=True)
