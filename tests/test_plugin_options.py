"""The plugin's newer options: the skips file, Hypothesis' own options refused, the
heartbeat; and files that are not UTF-8 refused in one line."""

from __future__ import annotations

import pytest
from plugin_support import by_suite_id
from plugin_support import on_kinds
from plugin_support import run_fake_suite
from plugin_support import write_fake_module

TWO_TESTS = """
import pytest
from acl_conformance.conformance.authoring import ops

@pytest.mark.requirement("KIND-ACCEPTED")
def test_copy(harness):
    src = harness.pageable(8, ops.pattern(1, 8))
    assert ops.to_symbol_async(harness, "g_u64", src, count=8).ok

@pytest.mark.requirement("EFFECT-BYTES")
def test_not_to_run(harness):
    raise AssertionError("a listed test ran")
"""


@pytest.fixture
def fake_suite(monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester) -> None:
    """A suite package of one module (not the whole suite) that the plugin treats as its own."""
    from acl_conformance.conformance.plugin import shared

    write_fake_module(pytester, TWO_TESTS)
    monkeypatch.setattr(shared, "SUITE_DIR", (pytester.path / "fake_suite").resolve())
    monkeypatch.setattr(shared, "suite_modules", lambda: {"test_x.py", "test_y.py"})


def _error_lines(result: pytest.RunResult) -> list[str]:
    return [line for line in result.stderr.lines if line.strip()]


@pytest.mark.parametrize("key", ["test_x.py::test_not_to_run", "test_x.py", "EFFECT-BYTES"])
def test_a_listed_test_is_skipped_without_running(
    pytester: pytest.Pytester, fake_suite: None, key: str
) -> None:
    skips = pytester.makefile(".txt", skips=f"{key}  hangs the driver\n")
    if key == "test_x.py":  # the whole file: nothing runs
        expected = {"test_x.py::test_copy": "skipped", "test_x.py::test_not_to_run": "skipped"}
    else:
        expected = {"test_x.py::test_copy": "pass", "test_x.py::test_not_to_run": "skipped"}
    result, doc = run_fake_suite(pytester, f"--acl-skips={skips}")
    assert result.ret == pytest.ExitCode.OK
    recs = by_suite_id(doc)
    assert {sid: r["status"] for sid, r in recs.items()} == expected
    reason = recs["test_x.py::test_not_to_run"]["skip_reason"]
    assert reason == f"listed in {skips}: {key}: hangs the driver"


@pytest.mark.parametrize(
    "option,what", [("--acl-skips", "skips file"), ("--acl-expectations", "expectations file")]
)
@pytest.mark.parametrize(
    "content,message",
    [
        (b"test_x.py::test_copy\n", "line 1: 'test_x.py::test_copy' has no reason (write why"),
        (b"test_x.py::test_copy  caf\xe9\n", "not UTF-8 text (byte 25 is 0xe9)"),
    ],
)
def test_a_malformed_file_is_one_line(
    pytester: pytest.Pytester,
    fake_suite: None,
    option: str,
    what: str,
    content: bytes,
    message: str,
) -> None:
    path = pytester.path / "listing.txt"
    path.write_bytes(content)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "fake_suite", option, str(path))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    (line,) = _error_lines(result)
    assert line.startswith(f"ERROR: {what} {path}") and message in line


@pytest.mark.parametrize(
    "args,option,instead",
    [
        (["--hypothesis-profile", "dev"], "--hypothesis-profile", "--acl-hypothesis-profile"),
        (
            ["--hypothesis-profile", "default", "--hypothesis-seed", "5"],
            "--hypothesis-profile",
            "--acl-hypothesis-profile",
        ),
        (["--hypothesis-seed", "5"], "--hypothesis-seed", "--acl-seed N"),
    ],
)
def test_hypothesis_own_options_are_refused_in_one_line(
    pytester: pytest.Pytester, args: list[str], option: str, instead: str
) -> None:
    """The suite loads its own Hypothesis profile and seeds its tests itself, so that
    Hypothesis' own profile and seed would be overridden (or fail on the suite's profile
    names): a run of the suite refuses them, naming what to use instead."""
    result = pytester.runpytest_subprocess(*on_kinds("--co", *args))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    (line,) = _error_lines(result)
    assert line.startswith(f"ERROR: {option} is not used by the acl-conformance suite: use")
    assert instead in line


def test_hypothesis_own_options_stay_for_other_runs(pytester: pytest.Pytester) -> None:
    """Outside the suite (the project's own tests) Hypothesis' options are Hypothesis'."""
    pytester.makepyfile(test_other="def test_one():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--hypothesis-seed", "5")
    result.assert_outcomes(passed=1)


def test_the_header_names_the_profile_and_seed_given(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        *on_kinds("--co", "--acl-hypothesis-profile", "dev", "--acl-seed", "5")
    )
    result.stdout.fnmatch_lines(["acl-conformance: hypothesis profile=dev, seed=5"])


@pytest.mark.parametrize("given", ["standard", "ci"])
def test_the_standard_profile_answers_to_its_old_name_ci(
    pytester: pytest.Pytester, fake_suite: None, given: str
) -> None:
    """``--acl-hypothesis-profile ci`` (the old name, on vendors' command lines) still runs
    the standard profile, and the run says standard."""
    result, doc = run_fake_suite(pytester, "--acl-hypothesis-profile", given, "-v")
    result.stdout.fnmatch_lines(
        ["acl-conformance: hypothesis profile=standard, seed=derandomised*"]
    )
    assert doc["hypothesis_profile"] == "standard"
    assert by_suite_id(doc)["test_x.py::test_copy"]["status"] == "pass"


def test_an_unknown_hypothesis_profile_is_refused(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(*on_kinds("--co", "--acl-hypothesis-profile", "fast"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "invalid choice: 'fast'" in result.stderr.str()


SLOW = """
import time

def test_slow():
    time.sleep(3.2)

def test_quick():
    pass
"""


@pytest.mark.parametrize("workers", [[], ["-n", "1"]], ids=["no-workers", "xdist"])
def test_heartbeat_names_a_long_test_while_it_runs(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    pytester.makepyfile(test_slow=SLOW)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-q", "--acl-heartbeat", "1", *workers
    )
    result.assert_outcomes(passed=2)
    said = [line for line in result.stdout.lines if line.startswith("still running")]
    assert said[:2] == [
        "still running test_slow.py::test_slow (1 s)",
        "still running test_slow.py::test_slow (2 s)",
    ]
    assert not any("test_quick" in line for line in said)


def test_no_heartbeat_by_default(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_slow=SLOW)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=2)
    assert not any("still running" in line for line in result.stdout.lines)


def test_heartbeat_needs_a_positive_period(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_slow=SLOW)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--acl-heartbeat", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert _error_lines(result) == ["ERROR: --acl-heartbeat 0: expected a number of seconds > 0"]


def test_progress_names_each_suite_test_with_its_status(
    pytester: pytest.Pytester, fake_suite: None
) -> None:
    skips = pytester.makefile(".txt", skips="EFFECT-BYTES  hangs the driver\n")
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "-q", "fake_suite", f"--acl-skips={skips}", "--acl-progress"
    )
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["pass test_x.py::test_copy (*s)", "skipped test_x.py::test_not_to_run (*s)"]
    )
    assert not any(
        line.startswith((".", "s")) and "test_x" not in line for line in result.stdout.lines
    )
