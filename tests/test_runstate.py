"""The run's shared record of failed requirements, which decides what later tests mask."""

from __future__ import annotations

from pathlib import Path

from acl_conformance.conformance.harness.runstate import RunState


def test_a_clear_failure_is_masked(tmp_path: Path) -> None:
    run = RunState(tmp_path)
    run.mark_failed("KIND-REJECTED")
    assert run.failed() == {"KIND-REJECTED"}


def test_an_ambiguous_failure_masks_its_citation_until_another_reading_fails_clearly(
    tmp_path: Path,
) -> None:
    # A refused copy of g_u8 on the NULL stream: the NULL stream or the end-exact bound.
    run = RunState(tmp_path)
    run.mark_failed("STREAM-NULL-DEFAULT", ("BOUNDS-END-EXACT",))
    assert run.failed() == {"STREAM-NULL-DEFAULT"}
    # The bound fails with no other reading: the ambiguous failure is charged there (as
    # the report does), and tests that use the NULL stream are no longer stopped.
    run.mark_failed("BOUNDS-END-EXACT")
    assert run.failed() == {"BOUNDS-END-EXACT"}


def test_workers_share_the_record(tmp_path: Path) -> None:
    RunState(tmp_path).mark_failed("STREAM-FIFO", ("STREAM-FIFO", "EFFECT-BYTES"))
    assert RunState(tmp_path).failed() == {"STREAM-FIFO"}


def test_no_run_leaves_its_state_behind(tmp_path: Path) -> None:
    """Every pytest run that loads the plugin (the suite's, with or without workers, and any
    other) makes the run's shared state in the temporary folder; none is left there."""
    import os
    import subprocess
    import sys

    (tmp_path / "test_plain.py").write_text("def test_nothing():\n    assert True\n")
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    for extra in ([], ["-n", "2"]):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                *extra,
                "test_plain.py",
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout[-2000:]
        assert [p.name for p in (tmp_path / "tmp").glob("acl-conformance-run-*")] == [], extra
