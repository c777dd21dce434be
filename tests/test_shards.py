"""Shards of a run (``acl-conformance run --shard K/N``) and their merge
(``acl-conformance report A/results.json B/results.json ...``).

The partition is checked as a function (exact, deterministic, balanced); the whole path
by running the simulator once unsharded and in three shards with one seed, merging the
shards and comparing the merged report with the unsharded one.  Shards that do not
belong together are refused in one line, exit 2.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from acl_conformance.conformance.command_line import cli
from acl_conformance.conformance.command_line import runner
from acl_conformance.conformance.gating import shards

# Its tests share a costly module fixture: one worker makes it, once (tox: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("test_shards")

RUN = ["--examples", "2", "--seed", "7", "--jobs", "2"]
"""Few examples and one seed: the unsharded run and the shards run the same tests alike."""


# -- the partition ---------------------------------------------------------------------------


def _ids(n: int) -> list[str]:
    return [f"test_m{i % 7}.py::test_{i}[{i * 31 % 17}]" for i in range(n)]


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7, 50])
@pytest.mark.parametrize("timed", [False, True])
def test_the_parts_are_exactly_the_tests_each_once(count: int, timed: bool) -> None:
    ids = _ids(40)
    seconds = {i: (k * 7919 % 101) / 10 for k, i in enumerate(ids)} if timed else None
    parts = shards.partition(ids, count, seconds)
    assert len(parts) == count
    flat = [i for p in parts for i in p]
    assert sorted(flat) == sorted(ids)  # every test, none twice


def test_the_partition_is_the_same_whatever_the_order_of_collection() -> None:
    ids = _ids(60)
    seconds = {i: float(len(i) % 5) for i in ids[::2]}  # half known, ties included
    first = shards.partition(ids, 4, seconds)
    for seed in range(5):
        shuffled = list(ids)
        random.Random(seed).shuffle(shuffled)
        assert shards.partition(shuffled, 4, dict(reversed(seconds.items()))) == first


def test_without_durations_the_parts_differ_by_one_test_at_most() -> None:
    sizes = [len(p) for p in shards.partition(_ids(41), 4)]
    assert max(sizes) - min(sizes) <= 1 and sum(sizes) == 41


def test_with_durations_the_parts_are_balanced_by_time() -> None:
    ids = _ids(40)
    # One slow test per five: counted by tests, the parts would be far apart in time.
    seconds = {i: (30.0 if k % 5 == 0 else 1.0) for k, i in enumerate(ids)}
    loads = [sum(seconds[i] for i in p) for p in shards.partition(ids, 4, seconds)]
    mean = sum(loads) / 4
    # Greedy longest-first: no part exceeds the mean by more than the longest test.
    assert max(loads) <= mean + max(seconds.values())
    assert max(loads) / mean < 1.2
    by_count = [sum(seconds[i] for i in p) for p in shards.partition(ids, 4)]
    assert max(loads) < max(by_count)


def test_a_test_without_a_recorded_time_weighs_the_mean() -> None:
    parts = shards.partition(["a", "b", "c", "new"], 2, {"a": 10.0, "b": 1.0, "c": 1.0})
    # new weighs 4 (the mean): a alone, then b, c and new together (6 < 10).
    assert parts == [["a"], ["new", "b", "c"]]


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0", "-1/2", ""])
def test_a_malformed_shard_is_refused(text: str) -> None:
    with pytest.raises(shards.ShardError, match="expected K/N"):
        shards.parse(text)


def _doc(k: int, n: int, tests: list[str], **more: Any) -> dict[str, Any]:
    """A shard's results document, as far as the merge reads it."""
    return {
        "schema": "acl-conformance-results/3",
        "adapter": "sim",
        "profile": "spec",
        "seed": 1,
        "selected": [],
        "duration_s": 10.0 * k,
        "shard": {"index": k, "count": n, "digest": "d", "durations": None, "options": {}},
        "results": [{"suite_id": t, "requirements": ["R"], "status": "pass"} for t in tests],
        **more,
    }


def test_the_merge_is_every_shards_tests_in_the_order_of_their_index() -> None:
    merged = shards.merge([("b", _doc(2, 2, ["y"])), ("a", _doc(1, 2, ["x", "z"]))])
    assert [r["suite_id"] for r in merged["results"]] == ["x", "z", "y"]
    assert merged["shards"]["count"] == 2 and merged["shard"] is None
    assert merged["duration_s"] == 20.0  # side by side: the slowest shard
    assert merged["interrupted"] is None


def test_a_stopped_shard_makes_the_merged_run_stopped_with_what_each_was_to_run() -> None:
    stopped = _doc(2, 2, ["y"], interrupted="SIGTERM after 3 s")
    stopped["collected"] = [{"suite_id": t, "requirements": ["R"]} for t in ("y", "w")]
    merged = shards.merge([("a", _doc(1, 2, ["x"])), ("b", stopped)])
    assert merged["interrupted"] == "shard 2/2: SIGTERM after 3 s"
    assert [t["suite_id"] for t in merged["collected"]] == ["x", "y", "w"]


def test_a_test_in_two_shards_is_refused() -> None:
    with pytest.raises(shards.ShardError, match="in two shards"):
        shards.merge([("a", _doc(1, 2, ["x"])), ("b", _doc(2, 2, ["x"]))])


def test_the_requirements_selected_in_another_order_are_the_same_run() -> None:
    a, b = _doc(1, 2, ["x"], selected=["A", "B"]), _doc(2, 2, ["y"], selected=["B", "A"])
    assert shards.merge([("a", a), ("b", b)])["shards"]["count"] == 2
    with pytest.raises(shards.ShardError, match="another --requirement"):
        shards.merge([("a", a), ("b", _doc(2, 2, ["y"], selected=["A"]))])


# -- the command line ------------------------------------------------------------------------


def _one_line_exit_2(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    rc = cli.main(list(argv))
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_shard_options_are_checked_before_the_suite_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = str(tmp_path / "r")
    assert "expected K/N" in _one_line_exit_2(capsys, "run", "--shard", "4/3", "--report-dir", d)
    assert "with --shard" in _one_line_exit_2(
        capsys, "run", "--durations", str(tmp_path), "--report-dir", d
    )
    assert "cannot be read" in _one_line_exit_2(
        capsys, "run", "--shard", "1/2", "--durations", str(tmp_path / "no.json"), "--report-dir", d
    )
    assert not (tmp_path / "r").exists()


def test_conformance_mode_allows_shards_and_still_locks_the_rest() -> None:
    opts = runner.RunOptions(mode="conformance", shard="1/2", given={"mode", "shard", "durations"})
    runner.check(opts)  # no error: merged, the shards are the run
    with pytest.raises(
        runner.RunError, match="--shard, --durations, --jobs and --devices-per-worker"
    ):
        runner.check(runner.RunOptions(mode="conformance", given={"mode", "seed"}))


# -- three shards against the unsharded run -------------------------------------------------


NARROW = [*RUN, "--requirement", "BOUNDS-PAST-END", "--requirement", "KIND-OUT-OF-ENUM"]
"""A short run (two requirements' tests), for what needs real shards but not the suite."""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short run unsharded (``whole``) and in three shards (``s1``..``s3``), one seed."""
    d = tmp_path_factory.mktemp("shards")
    assert cli.main(["run", *NARROW, "--report-dir", str(d / "whole")]) == 0
    for k in (1, 2, 3):
        rc = cli.main(["run", *NARROW, "--shard", f"{k}/3", "--report-dir", str(d / f"s{k}")])
        assert rc == 0
    return d


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


def _merge(
    runs: Path, out: str, *names: str, capsys: pytest.CaptureFixture[str] | None = None
) -> int:
    return cli.main(
        [
            "report",
            *(str(runs / n / "results.json") for n in names),
            "--report-dir",
            str(runs / out),
        ]
    )


def _extents(row: dict[str, Any]) -> dict[str, tuple[int, int, bool, bool]]:
    kinds = (row.get("coverage") or {}).get("kinds") or {}
    return {
        k: (e["smallest"], e["largest"], e["odd_offset"], e["odd_host"]) for k, e in kinds.items()
    }


def test_three_merged_shards_are_the_unsharded_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The whole suite, once unsharded and once in three shards, one seed."""
    runs = tmp_path
    assert cli.main(["run", *RUN, "--report-dir", str(runs / "whole")]) == 0
    for k in (1, 2, 3):
        rc = cli.main(["run", *RUN, "--shard", f"{k}/3", "--report-dir", str(runs / f"s{k}")])
        assert rc == 0  # a shard that found no failure
    capsys.readouterr()
    assert _merge(runs, "merged", "s3", "s1", "s2") == 0  # in any order
    assert "Merged from 3 shards" in capsys.readouterr().out
    whole = _json(runs / "whole" / "report.json")
    merged = _json(runs / "merged" / "report.json")
    assert merged["verdict"] == whole["verdict"] and merged["gate"] == whole["gate"]
    counts = {k: v for k, v in whole["summary"].items() if k != "checks"}  # checks: below
    assert {k: v for k, v in merged["summary"].items() if k != "checks"} == counts
    assert [(r["id"], r["status"]) for r in merged["requirements"]] == [
        (r["id"], r["status"]) for r in whole["requirements"]
    ]
    assert merged["run"]["shards"]["count"] == 3
    assert "Merged from 3 shards" in (runs / "merged" / "report.md").read_text()
    assert "Merged from 3 shards" in (runs / "merged" / "report.html").read_text()
    jsonschema = pytest.importorskip("jsonschema")
    from acl_conformance import reports

    jsonschema.validate(merged, reports.schema())
    jsonschema.validate(_json(runs / "s1" / "report.json"), reports.schema())
    # The merged results.json is kept: the --durations file of the next sharded run.
    merged_times = shards.load_durations(runs / "merged" / "results.json")
    assert set(merged_times) == set(shards.load_durations(runs / "whole" / "results.json"))

    # The tests: the shards' are disjoint, and together those of the unsharded run.
    whole_tests = {r["suite_id"]: r for r in _json(runs / "whole" / "results.json")["results"]}
    shard_tests: dict[str, dict[str, Any]] = {}
    for k in (1, 2, 3):
        doc = _json(runs / f"s{k}" / "results.json")
        assert doc["shard"]["index"] == k and doc["shard"]["count"] == 3
        ids = {r["suite_id"] for r in doc["results"]}
        assert ids and not ids & set(shard_tests)
        shard_tests.update({r["suite_id"]: r for r in doc["results"]})
    assert set(shard_tests) == set(whole_tests)
    assert {i: t["status"] for i, t in shard_tests.items()} == {
        i: t["status"] for i, t in whole_tests.items()
    }

    # Check counts.  A few tests count polls of a stream (a query loop, a timer that opens
    # a stream gate), so their checks vary from run to run, sharded or not; every other
    # test makes the same checks in its shard as unsharded.
    # (What a poll saw, pending or complete, and so the tally's other parts, may differ
    # more often: only the counts are held to this.)
    def counts(t: dict[str, Any]) -> Any:
        return t["tally"].get("checks")

    def extents(t: dict[str, Any]) -> Any:
        return t["tally"].get("coverage")

    varying = [i for i in whole_tests if counts(whole_tests[i]) != counts(shard_tests[i])]
    assert len(varying) <= max(3, len(whole_tests) // 50), varying
    drawn = [i for i in whole_tests if extents(whole_tests[i]) != extents(shard_tests[i])]
    for row_w, row_m in zip(whole["requirements"], merged["requirements"], strict=True):
        rid = row_w["id"]

        def checks(t: dict[str, Any], rid: str = rid) -> int:
            return int((t["tally"].get("checks") or {}).get(rid, 0))

        # The merged count is the shards' tests' counts, those of the varying tests
        # differing from the unsharded run's by what their runs differed.
        drift = sum(checks(shard_tests[i]) - checks(whole_tests[i]) for i in varying)
        assert row_m["checks"] == row_w["checks"] + drift, rid
        # What sizes and odd offsets the checks rested on: the same, merged from the shards
        # (but for a requirement a varying test carries: a machine whose steps depend on
        # timing may draw its large copies elsewhere in one run than in the other).
        if not any(
            rid in (extents(t) or {}) for i in drawn for t in (whole_tests[i], shard_tests[i])
        ):
            assert _extents(row_m) == _extents(row_w), rid

    # One shard alone: its rows are the requirements of its tests, and it has no verdict.
    report = _json(runs / "s1" / "report.json")
    assert report["run"]["shard"] == {"index": 1, "count": 3}
    assert report["verdict"] == "not conformant"
    assert any("only shard 1/3" in r for r in report["verdict_reasons"])
    whole = {r["id"] for r in _json(runs / "whole" / "report.json")["requirements"]}
    assert {r["id"] for r in report["requirements"]} < whole  # the requirements of its tests


def test_a_missing_shard_is_one_line_and_exit_2(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _one_line_exit_2(
        capsys,
        "report",
        str(runs / "s1" / "results.json"),
        str(runs / "s3" / "results.json"),
        "--report-dir",
        str(runs / "m"),
    )
    assert "shard 2/3 missing" in err
    assert not (runs / "m").exists()


def test_a_shard_given_twice_is_one_line_and_exit_2(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = runs / "copy"
    copy.mkdir(exist_ok=True)
    (copy / "results.json").write_text((runs / "s2" / "results.json").read_text())
    args = [str(runs / n / "results.json") for n in ("s1", "s2", "copy", "s3")]
    err = _one_line_exit_2(capsys, "report", *args, "--report-dir", str(runs / "m"))
    assert "shard 2/3 given twice" in err


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("profile", "cann", "another profile"),
        ("seed", 8, "another seed"),
        ("adapter", "other", "another adapter"),
        ("suite_version", "9.9", "another suite version"),
        ("examples", 3, "another --examples"),
    ],
)
def test_shards_of_different_runs_are_one_line_and_exit_2(
    runs: Path, capsys: pytest.CaptureFixture[str], field: str, value: object, said: str
) -> None:
    other = runs / f"other-{field}"
    other.mkdir(exist_ok=True)
    doc = _json(runs / "s2" / "results.json")
    doc[field] = value
    (other / "results.json").write_text(json.dumps(doc))
    args = [str(runs / "s1" / "results.json"), str(other / "results.json")]
    args.append(str(runs / "s3" / "results.json"))
    err = _one_line_exit_2(capsys, "report", *args, "--report-dir", str(runs / "m"))
    assert said in err and "not shards of one run" in err


def test_another_number_of_shards_or_an_unsharded_run_is_refused(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = runs / "other-count"
    other.mkdir(exist_ok=True)
    doc = _json(runs / "s2" / "results.json")
    doc["shard"]["count"] = 4
    (other / "results.json").write_text(json.dumps(doc))
    args = [str(runs / n / "results.json") for n in ("s1", "other-count")]
    assert "another number of shards" in _one_line_exit_2(
        capsys, "report", *args, "--report-dir", str(runs / "m")
    )
    args = [str(runs / n / "results.json") for n in ("s1", "whole")]
    assert "not the results of a shard" in _one_line_exit_2(
        capsys, "report", *args, "--report-dir", str(runs / "m")
    )


def test_shards_balanced_by_durations_are_the_tests_of_the_run(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The plugin partitions by the durations file too: two shards of the short run,
    balanced by its unsharded run's times, are its tests, each once; the merged report
    equals the unsharded one."""
    durations = str(runs / "whole" / "results.json")
    for k in (1, 2):
        rc = cli.main(
            [
                "run",
                *NARROW,
                "--shard",
                f"{k}/2",
                "--durations",
                durations,
                "--report-dir",
                str(runs / f"n{k}"),
            ]
        )
        assert rc == 0
    ids = [
        {r["suite_id"] for r in _json(runs / n / "results.json")["results"]} for n in ["n1", "n2"]
    ]
    whole = {r["suite_id"] for r in _json(runs / "whole" / "results.json")["results"]}
    assert ids[0] and ids[1] and not ids[0] & ids[1] and ids[0] | ids[1] == whole
    assert _json(runs / "n1" / "results.json")["shard"]["durations"] is not None
    assert _merge(runs, "nm", "n1", "n2") == 0
    merged, alone = (_json(runs / n / "report.json") for n in ("nm", "whole"))
    assert [(r["id"], r["status"]) for r in merged["requirements"]] == [
        (r["id"], r["status"]) for r in alone["requirements"]
    ]
    capsys.readouterr()


# -- the CI examples -------------------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "ci"


def test_the_github_example_runs_each_shard_of_its_matrix_and_merges_them_all() -> None:
    import yaml_subset

    doc = yaml_subset.load((EXAMPLES / "github-actions-shards.yml").read_text())
    shard, merge = doc["jobs"]["shard"], doc["jobs"]["merge"]
    ks = shard["strategy"]["matrix"]["shard"]
    assert shard["strategy"]["fail-fast"] is False or shard["strategy"]["fail-fast"] == "false"
    run = " ".join(s.get("run", "") for s in shard["steps"])
    assert f"--shard ${{{{ matrix.shard }}}}/{len(ks)}" in run and ks == list(range(1, len(ks) + 1))
    assert merge["needs"] == "shard" and merge["if"] == "always()"
    steps = " ".join(s.get("run", "") for s in merge["steps"])
    assert "acl-conformance report shards/*/results.json" in steps
    uploads = [s["with"] for s in shard["steps"] if "upload-artifact" in s.get("uses", "")]
    downloads = [s["with"] for s in merge["steps"] if "download-artifact" in s.get("uses", "")]
    assert "results.json" in uploads[0]["path"] and "traces/" in uploads[0]["path"]
    assert uploads[0]["name"].startswith(downloads[0]["pattern"].rstrip("*"))


def test_the_gitlab_example_runs_each_parallel_shard_and_merges_them_all() -> None:
    import yaml_subset

    doc = yaml_subset.load((EXAMPLES / "gitlab-ci-shards.yml").read_text())
    shard, merge = doc["acl-conformance-shards"], doc["acl-conformance"]
    assert shard["parallel"] >= 2
    script = " ".join(shard["script"])
    assert '--shard "$CI_NODE_INDEX/$CI_NODE_TOTAL"' in script
    assert (
        '--report-dir "shards/$CI_NODE_INDEX"' in script
        and "shards/" in shard["artifacts"]["paths"]
    )
    assert merge["needs"] == ["acl-conformance-shards"] and merge["when"] == "always"
    assert any("acl-conformance report shards/*/results.json" in line for line in merge["script"])
    assert merge["artifacts"]["reports"]["junit"] == "acl-conformance-report/junit.xml"
