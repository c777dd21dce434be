"""The bug hunt (issue 22): the finds store, ``run --replay``, ``hunt`` without HypoFuzz,
and the hunt-only variants (the ci run misses them).

The hunts themselves take minutes: they run only with ACL_CONFORMANCE_HUNT_TESTS=1
(``tox -e hunt``, which installs the ``hunt`` extra); see docs/testing-the-suite.md.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from acl_conformance.adapters.variants import BY_NAME
from acl_conformance.adapters.variants import CATALOGUE
from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.command_line import finds_gate
from acl_conformance.conformance.command_line import hunt
from acl_conformance.conformance.command_line import selfcheck
from acl_conformance.conformance.command_line.cli import main
from acl_conformance.conformance.harness.failure import ConformanceFailure
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.plugin.hunt import Hunt
from acl_conformance.conformance.session import context
from acl_conformance.conformance.suite.suite_helpers import copy_and_synchronize
from acl_conformance.conformance.traces import finds

VARIANTS = "acl_conformance.adapters.variants:variant"
BEHIND = "registered-copy-behind-two-loses-last-byte"
REGISTERED_DEFAULT = "registered-default-odd-copy-loses-last-byte"
HUNT_ONLY = [v.name for v in CATALOGUE if v.hunt_only]
OPT_IN = pytest.mark.skipif(
    os.environ.get("ACL_CONFORMANCE_HUNT_TESTS") != "1",
    reason="multi-minute hunts: set ACL_CONFORMANCE_HUNT_TESTS=1 (tox -e hunt)",
)


def _registered_copy(
    h: Harness, offset: int, count: int, tag: int = 5, kind: int = ops.H2D
) -> None:
    """A copy to g_arr4k from host memory registered with aclrtHostRegister, synchronised."""
    buf = h.pageable(8192, ops.pattern(tag, 8192))
    page = ((buf.address + 4095) & ~4095) - buf.address
    h.call("host_register", ptr=buf.address + page, size=4096)
    copy_and_synchronize(h, "g_arr4k", buf, count=count, offset=offset, kind=kind, src_offset=page)


def _copies_behind(h: Harness, queued: int, tag: int = 5) -> None:
    """``queued`` copies to g_arr4k on one stream, then one from memory registered with
    aclrtHostRegister (offset 100, 7 bytes) on the same stream, then one synchronisation."""
    buf = h.pageable(8192, ops.pattern(tag, 8192))
    page = ((buf.address + 4095) & ~4095) - buf.address
    h.call("host_register", ptr=buf.address + page, size=4096)
    other = h.pinned(64, ops.pattern(tag + 1, 64))
    s = h.stream()
    for k in range(queued):
        ops.to_symbol_async(h, "g_arr4k", other, count=64, offset=512 + 64 * k, stream=s)
    ops.to_symbol_async(h, "g_arr4k", buf, count=7, offset=100, stream=s, src_offset=page)
    ops.sync(h, s)


def _behind_failure() -> tuple[context.Suite, ConformanceFailure]:
    """A failure of the queued-copies variant, as a harness classifies it (what a hunt
    saves)."""
    suite = context.Suite(adapter_name=VARIANTS, adapter_options={"name": BEHIND})
    seen: list[ConformanceFailure] = []
    suite.on_failure = seen.append
    with pytest.raises(ConformanceFailure), suite.harness() as h:
        _copies_behind(h, 2)
        h.observe("g_arr4k")
    assert seen, "the harness told the suite of no failure"
    return suite, seen[0]


def _save(root: Path, suite: context.Suite, f: ConformanceFailure) -> Path | None:
    return finds.save(root, f.identity, Hunt(suite, root).trace_doc(f))


def test_the_variant_breaks_only_registered_copies_behind_two_unsynchronised() -> None:
    suite, f = _behind_failure()
    assert f.requirement == "EFFECT-BYTES"
    with suite.harness() as h:  # one copy ahead, or synchronised between: correct
        _copies_behind(h, 1, tag=6)
        h.observe("g_arr4k")
        s = h.stream()
        src = h.pinned(7, ops.pattern(7, 7))  # page-locked memory behind two: correct
        for k in range(2):
            ops.to_symbol_async(h, "g_arr4k", src, count=7, offset=1024 + 8 * k, stream=s)
        ops.to_symbol_async(h, "g_arr4k", src, count=7, offset=2048, stream=s)
        ops.sync(h, s)
        h.observe("g_arr4k")
        _copies_behind(h, 0, tag=8)
        _copies_behind(h, 0, tag=9)  # the stream's count starts again after a synchronisation
        h.observe("g_arr4k")


def test_the_default_kind_variant_breaks_only_odd_default_copies_from_registered_memory() -> None:
    suite = context.Suite(adapter_name=VARIANTS, adapter_options={"name": REGISTERED_DEFAULT})
    with pytest.raises(ConformanceFailure) as e, suite.harness() as h:
        _registered_copy(h, 10, 5, kind=ops.DEFAULT)
        h.observe("g_arr4k")
    assert e.value.requirement == "EFFECT-BYTES"
    # HOST_TO_DEVICE, an even count, a single byte, or page-locked memory: correct
    with suite.harness() as h:
        _registered_copy(h, 10, 5, tag=6)
        h.observe("g_arr4k")
        _registered_copy(h, 10, 4, tag=7, kind=ops.DEFAULT)
        h.observe("g_arr4k")
        _registered_copy(h, 20, 1, tag=9, kind=ops.DEFAULT)
        h.observe("g_arr4k")
        src = h.pinned(5, ops.pattern(8, 5))
        copy_and_synchronize(h, "g_arr4k", src, count=5, offset=10, kind=ops.DEFAULT)
        h.observe("g_arr4k")


def test_finds_are_saved_once_per_identity_keeping_the_shortest(tmp_path: Path) -> None:
    suite, f = _behind_failure()
    doc = Hunt(suite, tmp_path).trace_doc(f)
    longer = {**doc, "calls": [*doc["calls"], *doc["calls"][-1:]]}
    first = finds.save(tmp_path, f.identity, longer)
    assert first is not None
    assert finds.save(tmp_path, f.identity, longer) is None  # the same size: kept as it is
    assert finds.save(tmp_path, f.identity, doc) == first  # shorter: replaces it
    assert finds.save(tmp_path, f.identity, longer) is None
    saved = finds.load_all(tmp_path)
    assert [s.identity for s in saved] == [f.identity]
    assert len(json.loads(saved[0].trace_file.read_text())["calls"]) == len(doc["calls"])
    assert "aclrtMemcpyToSymbolAsync" in (first / finds.REPRODUCER).read_text()
    other = {**doc, "requirement": "EFFECT-NO-STRAY"}
    assert finds.save(tmp_path, "EFFECT-NO-STRAY at aclrtMemcpyToSymbolAsync", other)
    assert len(finds.load_all(tmp_path)) == 2


def test_a_hunting_process_saves_each_failure_as_it_is_classified(tmp_path: Path) -> None:
    suite = context.Suite(adapter_name=VARIANTS, adapter_options={"name": BEHIND})
    h = Hunt(suite, tmp_path)
    suite.on_failure = h.failure
    suite.on_example = h.example
    suite.example_started("SingleDeviceMachine")
    with pytest.raises(ConformanceFailure), suite.harness() as harness:
        _copies_behind(harness, 2)
        harness.observe("g_arr4k")
    [saved] = finds.load_all(tmp_path)
    assert saved.identity.startswith("EFFECT-BYTES at ")
    progress = hunt.Progress.read(tmp_path / ".progress", since=0)
    assert progress.examples == {"SingleDeviceMachine": 1}


def test_replay_of_finds_fails_on_the_variant_and_passes_on_the_simulator(tmp_path: Path) -> None:
    suite, f = _behind_failure()
    _save(tmp_path / "finds", suite, f)
    out = io.StringIO()
    bad = finds_gate.replay_all(tmp_path, VARIANTS, {"name": BEHIND}, "spec", None, out)
    assert [r.still_fails for r in bad] == [True] and "EFFECT-BYTES" in bad[0].broken
    good = finds_gate.replay_all(tmp_path, "sim", {}, "spec", None, out)
    assert [r.still_fails for r in good] == [False]
    assert "STILL FAILS" in out.getvalue() and "no longer fails" in out.getvalue()
    report = {"gate": {"result": "pass", "reasons": []}}
    finds_gate.mark(report, good)
    assert report["gate"]["result"] == "pass"
    finds_gate.mark(report, bad)
    assert report["gate"]["result"] == "fail" and f.identity in report["gate"]["reasons"][0]


def test_run_replay_fails_the_gate_on_a_find_that_still_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite, f = _behind_failure()
    _save(tmp_path / "hunt" / "finds", suite, f)
    common = ["run", "--replay", str(tmp_path / "hunt"), "--requirement", "SYMBOL-NULL"]
    common += ["--jobs", "1"]
    rc = main([*common, "--adapter", VARIANTS, "--adapter-option", f"name={BEHIND}",
               "--report-dir", str(tmp_path / "bad")])  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 1, out
    assert "STILL FAILS" in out and "a saved find of the bug hunt still fails" in out
    report = json.loads((tmp_path / "bad" / "report.json").read_text())
    assert report["gate"]["result"] == "fail"
    rc = main([*common, "--report-dir", str(tmp_path / "good")])
    assert rc == 0, capsys.readouterr().out


def test_run_replay_of_no_directory_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--replay", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--replay" in err[0]


def test_hunt_without_hypofuzz_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(hunt, "have_hypofuzz", lambda: False)
    assert main(["hunt", "--minutes", "1", "--database", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install" in err[0] and "hunt" in err[0]


def test_the_gate_never_imports_hypofuzz() -> None:
    """Nothing of the suite's imports HypoFuzz.  (Once it is installed, Hypothesis itself
    loads it as a plugin of its own, through its entry points, in every process that
    imports Hypothesis: HYPOTHESIS_NO_PLUGINS turns that off here, so that only the
    suite's own imports count.)"""
    code = (
        "import sys\n"
        "import acl_conformance.conformance.command_line.cli\n"
        "import acl_conformance.conformance.plugin\n"
        "import acl_conformance.conformance.suite.test_machines\n"
        "assert 'hypofuzz' not in sys.modules, 'hypofuzz imported'\n"
    )
    env = {**os.environ, "HYPOTHESIS_NO_PLUGINS": "1"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_hunt_command_runs_the_machines_with_the_runs_options(tmp_path: Path) -> None:
    opts = hunt.HuntOptions(
        adapter="x:y", adapter_options=["a=1"], profile="cann", workers=3, database=str(tmp_path)
    )
    cmd = hunt.command(opts, tmp_path, ["SingleDevice", "Threads"])
    tail = cmd[cmd.index("--") + 1 :]
    assert cmd[cmd.index("-n") + 1] == "1" and "--no-dashboard" in cmd
    assert tail[tail.index("-k") + 1] == "SingleDevice or Threads"
    assert hunt.MACHINES in tail and "--acl-hunt" in tail and "--acl-finds" in tail
    for flag, value in (("--acl-adapter", "x:y"), ("--acl-adapter-option", "a=1"),
                        ("--acl-profile", "cann")):  # fmt: skip
        assert tail[tail.index(flag) + 1] == value


def test_each_process_hunts_its_own_machines() -> None:
    machines = ("A", "B", "C")
    assert hunt.plan(1, machines) == [["A", "B", "C"]]
    assert hunt.plan(2, machines) == [["A"], ["B", "C"]]
    assert hunt.plan(4, machines) == [["A"], ["B"], ["C"], ["A"]]
    assert hunt.MACHINE_NAMES[0] == "SingleDevice"


def test_redis_hunt_needs_a_finds_folder() -> None:
    opts = hunt.HuntOptions(database="redis://localhost:6379/0")
    if not hunt.have_hypofuzz():
        pytest.skip("HypoFuzz is not installed (checked first)")
    with pytest.raises(hunt.RunError, match="--finds"):
        hunt.check(opts)


@pytest.mark.parametrize("name", HUNT_ONLY)
def test_the_ci_run_misses_the_hunt_only_variants(name: str) -> None:
    """The premise: the gate's derandomised budget does not reach these bugs (the tests of
    the requirement each breaks; ``python bench/hunt_reach.py`` counts, for the whole ci
    run too, how many copies meet each variant's condition)."""
    v = BY_NAME[name]
    assert v.hunt_only and len(HUNT_ONLY) >= 2
    r = selfcheck.check(v, "spec", timeout=600, targeted=True)
    assert r.result != "caught", f"the ci run caught {name}: it is not hunt-only ({r.detail})"


def test_selfcheck_does_not_count_hunt_only_variants() -> None:
    names = {v.name for v, _p in selfcheck.plan()}
    assert not names & set(HUNT_ONLY)


# -- opt-in: the hunts themselves (minutes each) ---------------------------------------


def _hunt(tmp_path: Path, minutes: float, profile: str, *variant: str) -> tuple[int, Path]:
    db = tmp_path / "db"
    args = ["hunt", "--minutes", str(minutes), "--workers", "2", "--database", str(db)]
    args += ["--profile", profile]
    if variant:
        args += ["--adapter", VARIANTS, "--adapter-option", f"name={variant[0]}"]
    return main(args), db


@OPT_IN
@pytest.mark.parametrize("profile", ["spec", "cann"])
def test_a_two_minute_hunt_of_the_simulator_finds_nothing(tmp_path: Path, profile: str) -> None:
    rc, db = _hunt(tmp_path, 2, profile)
    assert rc == 0 and not finds.load_all(db / "finds")


@OPT_IN
@pytest.mark.parametrize("name", HUNT_ONLY)
def test_a_hunt_finds_the_variant_and_run_replay_fails_on_it(tmp_path: Path, name: str) -> None:
    rc, db = _hunt(tmp_path, 4, "spec", name)
    assert rc == 1 and finds.load_all(db / "finds")
    rc = main(["run", "--replay", str(db), "--adapter", VARIANTS, "--adapter-option",
               f"name={name}", "--report-dir", str(tmp_path / "report")])  # fmt: skip
    assert rc == 1
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert any("still fails" in r for r in report["gate"]["reasons"])


def test_a_find_from_several_threads_is_replayed_one_call_at_a_time(tmp_path: Path) -> None:
    """Its failure shown again in a legal interleaving still fails the gate; a replay that
    passes decides nothing (the failure may need the threads' overlap): undecided, and the
    gate fails too (a check that did not finish is never a pass)."""
    suite, f = _behind_failure()
    doc = Hunt(suite, tmp_path).trace_doc(f)
    # the source allocated and written by a second host thread
    calls = [
        {**c, "thread": 1} if c["name"] in ("malloc_pageable", "write_host") and k < 3 else c
        for k, c in enumerate(doc["calls"])
    ]
    assert {c["thread"] for c in calls} == {0, 1}
    finds.save(tmp_path / "finds", f.identity, {**doc, "calls": calls})
    out = io.StringIO()
    bad = finds_gate.replay_all(tmp_path, VARIANTS, {"name": BEHIND}, "spec", None, out)
    assert [(r.still_fails, r.undecided) for r in bad] == [(True, False)], out.getvalue()
    good = finds_gate.replay_all(tmp_path, "sim", {}, "spec", None, out)
    assert [(r.still_fails, r.undecided) for r in good] == [(False, True)], out.getvalue()
    assert "UNDECIDED" in out.getvalue() and "2 host threads" in out.getvalue()
    report = {"gate": {"result": "pass", "reasons": []}}
    finds_gate.mark(report, good)
    assert report["gate"]["result"] == "fail"
    assert (
        "undecided" in report["gate"]["reasons"][0] and f.identity in report["gate"]["reasons"][0]
    )
