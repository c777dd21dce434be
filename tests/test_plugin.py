"""The pytest plugin: options, the requirement markers' check, capability skips, expectations."""

from __future__ import annotations

import pytest
from plugin_support import by_suite_id
from plugin_support import on_kinds
from plugin_support import run_fake_suite
from plugin_support import write_fake_module

SUITE_LIKE = """
import pytest
from acl_conformance.conformance.authoring import ops

@pytest.mark.requirement({ids})
def test_copy(harness):
    src = harness.pageable(8, ops.pattern(1, 8))
    assert ops.to_symbol_async(harness, "g_u64", src, count=8).ok
"""


def _suite_item(pytester: pytest.Pytester, ids: str, name: str = "test_x.py") -> None:
    """A test module that the plugin treats as part of the suite package."""
    write_fake_module(pytester, SUITE_LIKE.format(ids=ids), name)


@pytest.fixture
def in_suite(monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester) -> None:
    from acl_conformance.conformance.plugin import shared

    monkeypatch.setattr(shared, "SUITE_DIR", (pytester.path / "fake_suite").resolve())
    # a suite with more modules than the test makes: not the whole suite
    monkeypatch.setattr(shared, "suite_modules", lambda: {"test_x.py", "test_y.py", "test_z.py"})


def test_unknown_requirement_fails_collection(pytester: pytest.Pytester, in_suite: None) -> None:
    _suite_item(pytester, '"NOT-A-REQUIREMENT"')
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "fake_suite")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown requirement id 'NOT-A-REQUIREMENT'*"])


def test_known_requirement_runs(pytester: pytest.Pytester, in_suite: None) -> None:
    _suite_item(pytester, '"KIND-ACCEPTED"')
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "fake_suite")
    result.assert_outcomes(passed=1)


def test_missing_requirements_fail_when_the_whole_suite_is_collected(
    pytester: pytest.Pytester, in_suite: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from acl_conformance.conformance.plugin import shared

    _suite_item(pytester, '"KIND-ACCEPTED"')
    monkeypatch.setattr(shared, "suite_modules", lambda: {"test_x.py"})
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "fake_suite")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*requirements of profile spec without a test:*BOUNDS-END-EXACT*"])


def test_a_listed_test_that_passes_is_an_unexpected_pass(
    pytester: pytest.Pytester, in_suite: None
) -> None:
    _suite_item(pytester, '"KIND-ACCEPTED"')
    exp = pytester.makefile(
        ".txt", expectations="test_x.py::test_copy  known bug  https://example.org/1\n"
    )
    result, doc = run_fake_suite(pytester, f"--acl-expectations={exp}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*[XPASS]*expectations file lists it (test_x.py::test_copy: known bug (https://example.org/1))*"
        ]
    )
    (rec,) = doc["results"]
    assert rec["status"] == "xpass" and rec["expected_failure"] == "test_x.py::test_copy"


FAILING = """
import pytest

@pytest.mark.requirement("KIND-ACCEPTED", "EFFECT-BYTES")
def test_copy(harness):
    harness.fail("KIND-ACCEPTED", "planted failure")
"""


@pytest.mark.parametrize("key", ["test_x.py::test_copy", "KIND-ACCEPTED"])
def test_a_listed_failure_is_an_expected_failure(
    pytester: pytest.Pytester, in_suite: None, key: str
) -> None:
    write_fake_module(pytester, FAILING)
    exp = pytester.makefile(".txt", expectations=f"{key}  known bug\n")
    result, doc = run_fake_suite(pytester, f"--acl-expectations={exp}")
    result.assert_outcomes(xfailed=1)
    (rec,) = doc["results"]
    assert rec["status"] == "xfail" and rec["expected_failure"] == key
    assert rec["failed_requirement"] == "KIND-ACCEPTED"
    assert doc["expectations"]["entries"][0]["target"] == (
        "requirement" if key == "KIND-ACCEPTED" else "test"
    )


FOUND_BY_TWO = """
import pytest

@pytest.mark.requirement("EFFECT-BYTES")
@pytest.mark.parametrize("how", ["first one", "listed one"])
def test_copy(harness, how):
    harness.fail("KIND-ACCEPTED", "planted failure")
"""


def test_a_requirement_found_in_a_test_is_met_there_and_steered_around_elsewhere(
    pytester: pytest.Pytester, in_suite: None
) -> None:
    """An entry ``R in TEST``: the test it names meets the failure (expected); the other
    tests that do not carry R steer around it from the start, even one that runs first
    and would meet it too (the run's failures do not hang on its order)."""
    write_fake_module(pytester, FOUND_BY_TWO)
    exp = pytester.makefile(
        ".txt", expectations='KIND-ACCEPTED in "test_x.py::test_copy[listed one]"  known bug\n'
    )
    result, doc = run_fake_suite(pytester, f"--acl-expectations={exp}")
    result.assert_outcomes(skipped=1, xfailed=1)  # no failure: nothing new
    recs = by_suite_id(doc)
    first, listed = (
        recs["test_x.py::test_copy[first one]"],
        recs["test_x.py::test_copy[listed one]"],
    )
    assert first["status"] == "declined" and first["declined_by"] == "KIND-ACCEPTED"
    assert listed["status"] == "xfail"
    assert listed["expected_failure"] == 'KIND-ACCEPTED in "test_x.py::test_copy[listed one]"'
    assert listed["masks"] == ["KIND-ACCEPTED"]  # its second attempt: the first had it unmasked
    (entry,) = doc["expectations"]["entries"]
    assert (entry["target"], entry["requirement"], entry["test"]) == (
        "test",
        "KIND-ACCEPTED",
        "test_x.py::test_copy[listed one]",
    )


def test_a_failure_citing_another_requirement_is_still_a_failure(
    pytester: pytest.Pytester, in_suite: None
) -> None:
    write_fake_module(pytester, FAILING)
    exp = pytester.makefile(".txt", expectations="EFFECT-BYTES  a different known bug\n")
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "fake_suite", f"--acl-expectations={exp}"
    )
    result.assert_outcomes(failed=1)


def test_malformed_expectations_are_a_usage_error(
    pytester: pytest.Pytester, in_suite: None
) -> None:
    _suite_item(pytester, '"KIND-ACCEPTED"')
    exp = pytester.makefile(".txt", expectations="KIND-ACCEPTED\n")
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "fake_suite", f"--acl-expectations={exp}"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*line 1: 'KIND-ACCEPTED' has no reason*"])


def test_wrong_adapter_is_one_clear_line(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess(*on_kinds("--acl-adapter", "nope"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*adapter 'nope'*available: sim*"])


def test_header_names_adapter_backend_profile_and_seed(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess(*on_kinds("--co", "--acl-profile", "cann"))
    result.stdout.fnmatch_lines(
        [
            "acl-conformance: adapter=sim, profile=cann",
            "acl-conformance: backend version: acl-conformance-simulator*",
            "acl-conformance: hypothesis profile=standard, seed=derandomised",
        ]
    )


def test_capability_missing_is_not_supported(pytester: pytest.Pytester, in_suite: None) -> None:
    write_fake_module(
        pytester,
        "import pytest\n"
        "@pytest.mark.requirement('DEVICE-INSTANCE')\n"
        "@pytest.mark.needs(devices=3)\n"
        "def test_three(harness):\n    pass\n",
        "test_y.py",
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rs", "fake_suite")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        ["*not supported: the backend declares devices=2, the test needs devices=3*"]
    )


def test_not_supported_from_the_test_body_is_not_supported_too(
    pytester: pytest.Pytester, in_suite: None
) -> None:
    """A capability found missing in the body of a test (not only by its marker) makes the
    test not_supported in the results, not a plain skip that would leave its requirement
    unknown."""
    write_fake_module(
        pytester,
        "import pytest\n"
        "from acl_conformance.conformance.gating.results import NOT_SUPPORTED\n"
        "@pytest.mark.requirement('STREAM-NULL-DEFAULT')\n"
        "def test_body(harness):\n"
        "    pytest.skip(f'{NOT_SUPPORTED}the backend declares no default stream')\n"
        "@pytest.mark.requirement('STREAM-NULL-DEFAULT')\n"
        "def test_other(harness):\n"
        "    pytest.skip('does not apply')\n",
        "test_y.py",
    )
    _, doc = run_fake_suite(pytester)
    statuses = {sid: r["status"] for sid, r in by_suite_id(doc).items()}
    assert statuses == {"test_y.py::test_body": "not_supported", "test_y.py::test_other": "skipped"}


RERUN = """
import pytest
from acl_conformance.conformance.authoring import ops

@pytest.mark.requirement("KIND-ACCEPTED", "EFFECT-BYTES")
def test_copy(harness, acl_suite):
    src = harness.pageable(8, ops.pattern(1, 8))
    assert ops.to_symbol_async(harness, "g_u64", src, count=8).ok
    harness.fail("KIND-ACCEPTED", "planted failure")  # masked in the re-run: it ends there
    harness.observe("g_u64")

@pytest.mark.requirement("KIND-ACCEPTED", "EFFECT-BYTES")
def test_fails_once(harness, acl_suite):
    src = harness.pageable(8, ops.pattern(2, 8))
    assert ops.to_symbol_async(harness, "g_u64", src, count=8).ok
    if "EFFECT-BYTES" not in acl_suite.masks:
        harness.fail("EFFECT-BYTES", "planted failure")
    harness.observe("g_u64")
"""


def test_a_failed_test_runs_again_with_the_failure_masked(
    pytester: pytest.Pytester, in_suite: None
) -> None:
    """A test stopped by a failure runs again with that requirement masked, so that what
    it would have gone on to check is still checked; the failures of both are kept."""
    write_fake_module(pytester, RERUN)
    result, doc = run_fake_suite(pytester)
    result.assert_outcomes(failed=2)
    recs = by_suite_id(doc)
    copy = recs["test_x.py::test_copy"]
    assert copy["status"] == "fail" and copy["attempts"] == 2 and copy["completed"]
    assert copy["masks"] == ["KIND-ACCEPTED"] and copy["declined_by"] == "KIND-ACCEPTED"
    assert [f["requirement"] for f in copy["failures"]] == ["KIND-ACCEPTED"]
    once = recs["test_x.py::test_fails_once"]
    assert once["attempts"] == 2 and once["completed"]
    assert once["tally"]["checks"]["EFFECT-BYTES"] >= 1  # the re-run read it back
    # the same failure again in another test: not shrunk again, it cites the first finder
    (f,) = once["failures"]
    assert f["requirement"] == "EFFECT-BYTES" and f["same_as"] is None
    assert copy["failures"][0]["identity"] == "KIND-ACCEPTED at a check of the test"


KNOWN_TWICE = """
import pytest

@pytest.mark.requirement("KIND-ACCEPTED")
def test_first(harness):
    harness.fail("KIND-ACCEPTED", "planted failure")

@pytest.mark.requirement("KIND-ACCEPTED")
def test_second(harness):
    harness.fail("KIND-ACCEPTED", "planted failure")
"""


def test_a_failure_found_again_is_known_and_cites_its_first_finder(
    pytester: pytest.Pytester, in_suite: None
) -> None:
    write_fake_module(pytester, KNOWN_TWICE)
    result, doc = run_fake_suite(pytester)
    result.assert_outcomes(failed=2)
    recs = by_suite_id(doc)
    assert recs["test_x.py::test_first"]["failures"][0]["same_as"] is None
    second = recs["test_x.py::test_second"]["failures"][0]
    assert second["same_as"] == "test_x.py::test_first" and second["trace_file"] is None


DECLINES = """
import pytest
from acl_conformance.conformance.authoring import ops

@pytest.mark.requirement("HYGIENE-NO-WRITE")
def test_rejected_kind(harness):
    src = harness.pageable(8, ops.pattern(1, 8))
    ops.to_symbol_async(harness, "g_u64", src, count=8, kind=ops.D2H)
    harness.observe("g_u64")
"""


def test_a_step_that_puts_a_listed_requirement_at_stake_is_declined(
    pytester: pytest.Pytester, in_suite: None
) -> None:
    """KIND-REJECTED is listed: a test that does not carry it does not make the call that
    must be rejected for it (the backend is known to get it wrong), and says so."""
    write_fake_module(pytester, DECLINES)
    exp = pytester.makefile(".txt", expectations="KIND-REJECTED  D2H accepted\n")
    result, doc = run_fake_suite(pytester, f"--acl-expectations={exp}")
    result.assert_outcomes(skipped=1)
    (rec,) = doc["results"]
    assert rec["status"] == "declined" and rec["declined_by"] == "KIND-REJECTED"
    assert rec["tally"]["declined"] == {"KIND-REJECTED": 1}
    assert "aclrtMemcpyToSymbolAsync" in rec["skip_reason"]


MACHINES = """
import pytest
from hypothesis import settings
from hypothesis.stateful import rule
from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.machines.common import HarnessMachine

class Listed(HarnessMachine):
    @rule()
    def fail(self):
        self.h.fail("KIND-ACCEPTED", "planted failure")

class Declines(HarnessMachine):
    @rule()
    def rejected(self):
        src = self.h.pageable(8, ops.pattern(1, 8))
        ops.to_symbol_async(self.h, "g_u64", src, count=8, kind=ops.D2H)

class First(HarnessMachine):
    @rule()
    def fail(self):
        self.h.fail("STREAM-QUERY", "planted failure")

class Second(First):
    pass

FEW = settings(max_examples=2, stateful_step_count=2, deadline=None)
TestListed = pytest.mark.requirement("KIND-ACCEPTED")(Listed.TestCase)
TestDeclines = pytest.mark.requirement("HYGIENE-NO-WRITE")(Declines.TestCase)
TestFirst = pytest.mark.requirement("STREAM-QUERY")(First.TestCase)
TestSecond = pytest.mark.requirement("STREAM-QUERY")(Second.TestCase)
for _case in (TestListed, TestDeclines, TestFirst, TestSecond):
    _case.settings = FEW
del _case
"""


def test_a_machine_s_stops_are_reported_with_what_they_know(
    pytester: pytest.Pytester, in_suite: None
) -> None:
    """A state machine runs as a unittest TestCase, which hands pytest the reason of a skip
    only: an expected failure still names its entry, a declined step the requirement that
    declined it, and a failure another test found first that test."""
    write_fake_module(pytester, MACHINES)
    exp = pytester.makefile(
        ".txt", expectations="KIND-ACCEPTED  planted\nKIND-REJECTED  D2H accepted\n"
    )
    _result, doc = run_fake_suite(pytester, f"--acl-expectations={exp}")
    recs = by_suite_id(doc)
    listed = recs["test_x.py::TestListed::runTest"]
    assert listed["status"] == "xfail" and listed["expected_failure"] == "KIND-ACCEPTED"
    assert listed["failures"][0]["message"].startswith("[KIND-ACCEPTED] planted failure")
    declined = recs["test_x.py::TestDeclines::runTest"]
    assert declined["status"] == "declined" and declined["declined_by"] == "KIND-REJECTED"
    second = recs["test_x.py::TestSecond::runTest"]["failures"][0]
    assert second["same_as"] == "test_x.py::TestFirst::runTest"


SHARDS = """
import json, os
import pytest
from hypothesis import strategies as st
from hypothesis.stateful import rule
from acl_conformance.conformance.machines.common import HarnessMachine
from acl_conformance.conformance.suite.test_machines import shards

class Draws(HarnessMachine):
    @rule(n=st.integers(0, 2**32))
    def draw(self, n):
        with open(os.environ["DRAWS"], "a") as f:
            f.write(json.dumps([type(self).__name__, n]) + "\\n")

globals().update(shards(Draws, 2, pytest.mark.requirement("STREAM-QUERY")))
"""


def test_each_machine_shard_draws_examples_of_its_own(
    pytester: pytest.Pytester, in_suite: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shards of one machine are seeded apart (the standard Hypothesis settings profile is derandomised: unseeded,
    every shard would draw the same examples), and ``--acl-seed`` draws others."""
    import json

    write_fake_module(pytester, SHARDS)

    def draws(*args: str) -> dict[str, list[int]]:
        path = pytester.path / f"draws{len(args)}.jsonl"
        monkeypatch.setenv("DRAWS", str(path))
        run_fake_suite(pytester, "--acl-examples", "4", *args)
        out: dict[str, list[int]] = {}
        for line in path.read_text().splitlines():
            shard, n = json.loads(line)
            out.setdefault(shard, []).append(n)
        return out

    plain = draws()
    assert sorted(plain) == ["Draws_0", "Draws_1"]
    assert plain["Draws_0"] != plain["Draws_1"]
    assert draws("--acl-seed", "7")["Draws_0"] != plain["Draws_0"]


LISTED_UNSHRUNK = """
import json, os
import pytest
from hypothesis import given, strategies as st
from hypothesis.stateful import rule
from acl_conformance.conformance.session import context
from acl_conformance.conformance.machines.common import HarnessMachine
from acl_conformance.conformance.suite.test_machines import shards

def note(name, n, requirement):
    if requirement in context.current().masks:
        return  # a later attempt (its first failure masked)
    with open(os.environ["DRAWS"], "a") as f:
        f.write(json.dumps([name, n]) + "\\n")

@pytest.mark.requirement("STREAM-QUERY", "KIND-ACCEPTED")
@pytest.mark.parametrize("which", ["listed", "other"])
@given(n=st.integers(0, 2**32))
def test_big(acl_suite, which, n):
    requirement = "STREAM-QUERY" if which == "listed" else "KIND-ACCEPTED"
    note(which, n, requirement)
    if n > 1000:
        with acl_suite.harness() as h:
            h.fail(requirement, "planted")

class Big(HarnessMachine):
    @rule(n=st.integers(0, 2**32))
    def draw(self, n):
        note("machine", n, "EFFECT-BYTES")
        if n > 1000:
            self.h.fail("EFFECT-BYTES", "planted")

globals().update(shards(Big, 1, pytest.mark.requirement("EFFECT-BYTES")))
"""


def test_a_listed_test_runs_without_shrinking(
    pytester: pytest.Pytester, in_suite: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test the expectations file lists by its id only tells whether it still fails: its
    failure is reported as found (a @given test, for that item only; a machine), while a
    test that is not listed shrinks its failure to the smallest."""
    import json

    write_fake_module(pytester, LISTED_UNSHRUNK)
    exp = pytester.makefile(
        ".txt",
        expectations="test_x.py::test_big[listed]  planted\n"
        "test_x.py::TestBig_0::runTest  planted\n",
    )
    path = pytester.path / "draws.jsonl"
    monkeypatch.setenv("DRAWS", str(path))
    _result, doc = run_fake_suite(pytester, f"--acl-expectations={exp}")
    drawn: dict[str, list[int]] = {}
    for line in path.read_text().splitlines():
        name, n = json.loads(line)
        drawn.setdefault(name, []).append(n)
    recs = by_suite_id(doc)
    assert recs["test_x.py::test_big[listed]"]["status"] == "xfail"
    assert recs["test_x.py::TestBig_0::runTest"]["status"] == "xfail"
    assert recs["test_x.py::test_big[other]"]["status"] == "fail"
    for name in ("listed", "machine"):
        ns = drawn[name]
        first = next(i for i, n in enumerate(ns) if n > 1000)
        assert len(ns) - first <= 3 and ns[-1] > 1001, (name, ns[first:])
    assert drawn["other"][-1] == 1001  # shrunk
